"""Collects the measured-kernel ports: every module of :mod:`kernels.measured` and of its subpackages (one per
source with many ports, e.g. ``kernels.measured.hecbench``) that defines ``KERNELS``; the measured-corpus harness
(``kernels.measured.harness``) is not looked in."""

from __future__ import annotations

import importlib
import pkgutil

from . import __path__ as _path
from .spec import MeasuredKernel

_SKIP = {"spec", "registry", "harness"}


def all_measured() -> dict[str, MeasuredKernel]:
    """Every measured-kernel port by name, in name order."""
    found: dict[str, MeasuredKernel] = {}
    for module in _modules(_path, "kernels.measured"):
        for spec in getattr(module, "KERNELS", ()):
            if spec.name in found:
                raise ValueError(f"two measured kernels are named {spec.name!r}")
            found[spec.name] = spec
    return dict(sorted(found.items()))


def _modules(path, prefix: str):
    for mod in pkgutil.iter_modules(path):
        if mod.name.startswith("_") or mod.name in _SKIP or mod.name == "data":
            continue
        module = importlib.import_module(f"{prefix}.{mod.name}")
        if mod.ispkg:
            yield from _modules(module.__path__, f"{prefix}.{mod.name}")
        else:
            yield module


def get_measured(name: str) -> MeasuredKernel:
    kernels = all_measured()
    if name not in kernels:
        raise KeyError(f"no measured kernel {name!r}; known: {', '.join(kernels)}")
    return kernels[name]
