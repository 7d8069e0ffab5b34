"""Collects the corpus: every module under :mod:`kernels` that defines ``KERNEL``."""

from __future__ import annotations

import importlib
import pkgutil

import kernels as _pkg

from .spec import KernelSpec

_SKIP = {"spec", "registry"}


def all_kernels() -> dict[str, KernelSpec]:
    """Every corpus kernel by name, in name order."""
    found: dict[str, KernelSpec] = {}
    for mod in pkgutil.iter_modules(_pkg.__path__):
        if mod.name.startswith("_") or mod.name in _SKIP:
            continue
        module = importlib.import_module(f"kernels.{mod.name}")
        spec = getattr(module, "KERNEL", None)
        if spec is None:
            continue
        if spec.name in found:
            raise ValueError(f"two corpus kernels are named {spec.name!r}")
        found[spec.name] = spec
    return dict(sorted(found.items()))


def get_kernel(name: str) -> KernelSpec:
    kernels = all_kernels()
    if name not in kernels:
        raise KeyError(f"no corpus kernel {name!r}; known: {', '.join(kernels)}")
    return kernels[name]
