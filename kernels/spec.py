"""What a corpus kernel is: its CPU region, its GPU port, its inputs and how to check them.

Every kernel module in :mod:`kernels` defines ``KERNEL = KernelSpec(...)``; :func:`kernels.registry.all_kernels`
collects them. The corpus imports nothing of Portcast: the CPU region is a plain function whose parallel
loop is written with ``numba.prange`` (``range`` under a single-threaded ``numba.njit``), so the same
function is timed compiled and traced by the profiler.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np

CATEGORIES = ("dense", "reduction", "irregular", "divergent", "special", "serial")


@dataclasses.dataclass(frozen=True)
class GpuPort:
    """A GPU version split so that kernel time and transfer time can be measured apart.

    ``to_device(*inputs) -> state``: allocate and copy inputs to the GPU (not timed as kernel time);
    ``launch(state) -> None``: launch the kernel(s) only, asynchronously, on the default stream;
    ``from_device(state) -> result``: copy the result back, same form as the CPU region's result.
    """

    to_device: Callable[..., Any]
    launch: Callable[[Any], None]
    from_device: Callable[[Any], Any]

    def run(self, *inputs):
        """Whole GPU computation: copy in, launch, copy out."""
        state = self.to_device(*inputs)
        self.launch(state)
        return self.from_device(state)


@dataclasses.dataclass(frozen=True)
class KernelSpec:
    """One corpus kernel.

    ``cpu(*inputs) -> result``: the CPU region (valid under ``numba.njit``, single thread, parallel loop
    written as ``numba.prange``); helpers it calls are ``numba.njit`` functions.
    ``make_inputs(n, seed) -> tuple``: inputs for problem size ``n`` (deterministic for a seed).
    ``sizes``: named problem sizes; ``tiny`` is used by tests (traced and run on the CUDA simulator),
    ``small``/``medium``/``large`` by calibration and characterisation.
    """

    name: str
    category: str
    description: str
    cpu: Callable[..., Any]
    gpu: GpuPort
    make_inputs: Callable[[int, int], tuple]
    sizes: dict[str, int]
    rtol: float = 1e-9
    atol: float = 1e-12
    expect_gpu_faster: bool | None = None  # the porter's expectation, for documentation only

    def __post_init__(self):
        if self.category not in CATEGORIES:
            raise ValueError(f"kernel {self.name!r}: category {self.category!r} not in {CATEGORIES}")
        missing = {"tiny", "small", "medium", "large"} - set(self.sizes)
        if missing:
            raise ValueError(f"kernel {self.name!r}: sizes lack {sorted(missing)}")

    def check(self, cpu_result, gpu_result) -> None:
        """Raise AssertionError naming the kernel when the two results differ beyond tolerance."""
        a, b = _as_tuple(cpu_result), _as_tuple(gpu_result)
        if len(a) != len(b):
            raise AssertionError(f"{self.name}: CPU returned {len(a)} results, GPU {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            x, y = np.asarray(x), np.asarray(y)
            if x.shape != y.shape:
                raise AssertionError(f"{self.name}: result {i} shape CPU {x.shape} vs GPU {y.shape}")
            if not np.allclose(x, y, rtol=self.rtol, atol=self.atol, equal_nan=False):
                worst = np.max(np.abs(x.astype(float) - y.astype(float)))
                raise AssertionError(f"{self.name}: result {i} differs, max abs difference {worst:g}")


def _as_tuple(r):
    return tuple(r) if isinstance(r, tuple) else (r,)
