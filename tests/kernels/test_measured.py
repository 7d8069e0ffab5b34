"""Every measured-kernel port (kernels/measured): the CPU region in plain Python == under numba.njit == its
GPU port on the CUDA simulator at the port's test point; its global work items equal the measured data's
(AIWC's ``workitems`` at every size); and Portcast, tracing the region, finds one logical thread per global
work item."""

from __future__ import annotations

import copy
import functools
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest

from kernels.measured.harness.sources import aiwc_counts, amaris_first_launches
from kernels.measured.registry import all_measured
from kernels.measured.spec import MeasuredKernel
from profiler.session import trace_function
from profiler.trace import MemorySink

PORTS = all_measured()
NAMES = sorted(PORTS)
AIWC = Path(__file__).resolve().parents[2] / "predictor" / "data" / "aiwc" / "full_dat.csv.gz"
AMARIS = Path(__file__).resolve().parents[2] / "kernels" / "measured" / "data" / "amaris" / "launches.parquet"


@functools.lru_cache(maxsize=None)
def _aiwc_workitems() -> dict:
    d = aiwc_counts(AIWC)
    return {(a, k, s): int(w) for a, k, s, w in zip(d.application, d.kernel, d["size"], d.workitems)}


@functools.lru_cache(maxsize=None)
def _amaris_first_launches() -> pd.DataFrame:
    return amaris_first_launches(AMARIS)


def _inputs(spec: MeasuredKernel):
    return spec.make_inputs(spec.test_point, 0)


def test_every_aiwc_kernel_but_gems_is_ported_and_every_amaris_kernel():
    assert all(isinstance(s, MeasuredKernel) for s in PORTS.values())
    ported = {(s.application, s.kernel) for s in PORTS.values() if s.source == "aiwc"}
    fft = {k for (a, k, _) in _aiwc_workitems() if a == "fft"}  # the passes of the one FFT region
    missing = {(a, k) for (a, k, _) in _aiwc_workitems() if a != "gem" and (a, k) not in ported
               and not (a == "fft" and ("fft", "fft") in ported)}
    assert not missing and len(fft) == 4
    amaris = {s.kernel for s in PORTS.values() if s.source == "amaris"}
    assert amaris == set(pd.read_parquet(AMARIS, columns=["kernel"]).kernel)


@pytest.mark.parametrize("name", NAMES)
def test_cpu_region_njit_and_gpu_port_agree(name):
    spec = PORTS[name]
    inputs = _inputs(spec)
    plain = spec.cpu(*copy.deepcopy(inputs))
    jitted = numba.njit(spec.cpu)(*copy.deepcopy(inputs))
    spec.check(plain, jitted)
    spec.check(plain, spec.gpu.run(*copy.deepcopy(inputs)))


@pytest.mark.parametrize("name", [n for n in NAMES if PORTS[n].source == "aiwc"])
def test_global_work_items_equal_aiwc_at_every_size(name):
    # a region standing for several rows of the data (fft: the whole transform, whose passes are rows of
    # their own) has no row of its name: its module's tests compare its passes with those rows
    spec = PORTS[name]
    have = _aiwc_workitems()
    sizes = sorted(s for (a, k, s) in have if a == spec.application and k == spec.kernel)
    if not sizes:
        pytest.skip(f"{name}: no AIWC row of this kernel name (a region over several kernels)")
    assert sorted(spec.points) == sizes
    for size in sizes:
        assert spec.work(spec.points[size])[0] == have[(spec.application, spec.kernel, size)], size


@pytest.mark.parametrize("name", [n for n in NAMES if PORTS[n].source == "amaris"])
def test_launch_geometry_equals_every_gpus_first_launch_in_the_amaris_data(name):
    spec = PORTS[name]
    rows = _amaris_first_launches()
    rows = rows[rows.kernel == spec.kernel]
    want = {spec.data_sizes(p): spec.work(p) for p in spec.points.values()}
    assert set(want) == set(zip(rows["input.size.1"], rows["input.size.2"]))
    for file, size1, size2, gx, gy, bx, by in rows[["file", "input.size.1", "input.size.2", "grid.x", "grid.y",
                                                     "block.x", "block.y"]].itertuples(index=False):
        assert want[(size1, size2)] == (gx * gy * bx * by, bx * by), (file, size1, size2)


@pytest.mark.parametrize("name", NAMES)
def test_traced_threads_are_the_global_work_items(name):
    spec = PORTS[name]
    res = trace_function(spec.cpu, copy.deepcopy(_inputs(spec)), sinks=[MemorySink()], mode="compiled")
    assert res.info.complete
    assert res.info.n_threads == spec.work(spec.test_point)[0]


def test_results_are_deterministic_for_a_seed():
    for spec in PORTS.values():
        a, b = spec.make_inputs(spec.test_point, 3), spec.make_inputs(spec.test_point, 3)
        for x, y in zip(a, b):
            assert np.array_equal(np.asarray(x), np.asarray(y)), spec.name
