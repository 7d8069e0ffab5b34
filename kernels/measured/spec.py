"""What a measured-kernel port is: one GPU kernel that another group timed, as a CPU region and a GPU port.

The region is the one invocation that was timed: its parallel loop (``numba.prange``) iterates over the
kernel's global work items, one iteration per work item (GPU thread), with the work each one does; the
state before that invocation (earlier kernels of the application, earlier iterations of its host loop) is
produced by an ordinary run in ``make_inputs``. The GPU port is a ``numba.cuda`` kernel with the same launch
geometry (global and local work size). Like the rest of the corpus, this package imports nothing of
Portcast.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping

import numpy as np

from ..spec import GpuPort, _as_tuple

#: where the measured times come from: AIWC (OpenCL, 2016 GPUs), Amaris (Rodinia CUDA, Kepler to Pascal),
#: HeCBench on an RTX 3080 (gpuFLOPBench, Nsight Compute), BabelStream (K20 to A100) and KernelBench level 1
#: (PyTorch eager, T4 to B200)
SOURCES = ("aiwc", "amaris", "hecbench", "babelstream", "kernelbench")


#: the label under which a port's ``feature_point`` is traced
FEATURES_LABEL = "features"


@dataclasses.dataclass(frozen=True)
class MeasuredKernel:
    """One measured GPU kernel.

    ``name`` (derived): ``"<source>/<application>/<kernel>"``; ``application`` and ``kernel`` exactly as they
    appear in the data (AIWC: its ``application`` and ``kernel`` columns; Amaris: the kernel name of the file).
    ``cpu(*inputs) -> result``: the region (valid under ``numba.njit``, single thread; its parallel loop a
    ``numba.prange`` over the global work items). ``gpu``: the ``numba.cuda`` version, same result.
    ``points``: every measured problem point, by label (AIWC: ``tiny`` ... ``large``; Amaris: the sizes
    of the sweep), each a mapping of the application's parameters. ``make_inputs(params, seed) -> tuple``:
    the region's inputs at a point (deterministic for a seed). ``work(params) -> (global, local)``: the
    invocation's global work items (GPU threads) and local work size (threads per block).
    ``test_point``: a small point (parameters) at which CI traces the region and runs the GPU port on the
    CUDA simulator. ``data_sizes(params) -> (input.size.1, input.size.2)``: the Amaris data's problem-size
    columns of a point (None for AIWC, whose rows are labelled by the size name). ``separate_launches``: the
    region's parallel loops are separate kernel launches of the original (the FFT's passes); by default they
    are the barrier phases of one kernel (a work group's steps between barriers), so the measured time is one
    launch however many parallel loops the trace shows. ``launches``: the kernel launches of the timed
    invocation when its parallel loops are separate launches some of which hold barrier phases of their own
    (a PyTorch operation of several kernels, one of them a block reduction: not every parallel loop is a
    launch); None: one launch, or one per parallel loop with ``separate_launches``. ``feature_point``: a
    smaller problem, not measured, whose features (rates: instruction mix, strides, divergence) stand in for a
    measured point with more records than the feature engine is given (``portcast measured trace
    --feature-records``); traced under the label ``"features"`` and never paired with a measured time. Its work
    counts are not used.
    """

    source: str
    application: str
    kernel: str
    description: str
    cpu: Callable[..., Any]
    gpu: GpuPort
    make_inputs: Callable[[Mapping[str, Any], int], tuple]
    points: Mapping[str, Mapping[str, Any]]
    work: Callable[[Mapping[str, Any]], tuple[int, int]]
    test_point: Mapping[str, Any]
    rtol: float = 1e-9
    atol: float = 1e-12
    data_sizes: Callable[[Mapping[str, Any]], tuple[int, int]] | None = None
    separate_launches: bool = False
    feature_point: Mapping[str, Any] | None = None
    launches: int | None = None

    def __post_init__(self):
        if self.source not in SOURCES:
            raise ValueError(f"measured kernel {self.name!r}: source {self.source!r} not in {SOURCES}")
        if (self.source == "amaris") != (self.data_sizes is not None):
            raise ValueError(f"measured kernel {self.name!r}: data_sizes is required for Amaris ports only")
        if not self.points:
            raise ValueError(f"measured kernel {self.name!r}: no measured points")
        if self.launches is not None and (not self.separate_launches or self.launches < 2):
            raise ValueError(f"measured kernel {self.name!r}: launches={self.launches!r} is for separate launches "
                             "(at least 2)")
        if FEATURES_LABEL in self.points or "test" in self.points:
            raise ValueError(f"measured kernel {self.name!r}: {FEATURES_LABEL!r} and 'test' are reserved labels")

    @property
    def name(self) -> str:
        """``"<source>/<application>/<kernel>"``, the port's key in the registry."""
        return f"{self.source}/{self.application}/{self.kernel}"

    def params(self, label: str) -> Mapping[str, Any]:
        """The parameters of a point label: a measured point, ``"test"`` or ``"features"``."""
        if label in self.points:
            return self.points[label]
        if label == "test":
            return self.test_point
        if label == FEATURES_LABEL and self.feature_point is not None:
            return self.feature_point
        known = ", ".join([*self.points, "test"] + ([FEATURES_LABEL] if self.feature_point is not None else []))
        raise KeyError(f"{self.name}: no point {label!r}; known: {known}")

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
