"""The BabelStream ports (kernels/measured/babelstream.py) against NumPy, the state each kernel's first launch
finds (hand-worked), the bytes BabelStream counts against the distinct bytes the regions touch, and the
array sizes of the vendored result files."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import numba
import numpy as np
import pytest

from features.work import WorkSink
from kernels.measured import babelstream as bs
from profiler.session import trace_function

DATA = Path(__file__).resolve().parents[2] / "kernels" / "measured" / "data" / "babelstream"
SPECS = {s.kernel: s for s in bs.KERNELS}
SMALL = {"n": 4096, "tbsize": 256, "dot_blocks": 8}
#: bytes BabelStream counts per element (its bandwidth = these bytes / time)
COUNTED = {"copy": 2 * 8, "mul": 2 * 8, "add": 3 * 8, "triad": 3 * 8, "dot": 2 * 8}


def test_the_five_kernels_are_ported_with_the_data_names():
    assert [(s.source, s.application, s.kernel) for s in bs.KERNELS] == [
        ("babelstream", "babelstream", k) for k in ("copy", "mul", "add", "triad", "dot")]
    assert all(list(s.points) == ["2^25"] and s.points["2^25"]["n"] == 33554432 for s in bs.KERNELS)


def test_state_each_first_launch_finds():
    # init a = 0.1, b = 0.2, c = 0; copy c = 0.1; mul b = 0.04; add c = 0.14; triad a = 0.04 + 0.056 = 0.096
    want = {"copy": (0.1, 0.2, 0.0), "mul": (0.1, 0.2, 0.1), "add": (0.1, 0.04, 0.1),
            "triad": (0.1, 0.04, 0.14), "dot": (0.096, 0.04, 0.14)}
    for kernel, abc in want.items():
        got = bs.state_before(kernel, 1024)
        for arr, value in zip(got, abc):
            np.testing.assert_allclose(arr, np.full(1024, value), rtol=1e-15, atol=0)


@pytest.mark.parametrize("params", [bs.TEST_POINT, SMALL])
def test_stream_kernels_equal_numpy(params):
    n = params["n"]
    a, b, c = bs.state_before("copy", n)
    assert np.array_equal(numba.njit(bs.copy)(a.copy(), c.copy()), a)
    a, b, c = bs.state_before("mul", n)
    np.testing.assert_allclose(numba.njit(bs.mul)(b.copy(), c), 0.4 * c, rtol=1e-15)
    a, b, c = bs.state_before("add", n)
    np.testing.assert_allclose(numba.njit(bs.add)(a, b, c.copy()), a + b, rtol=1e-15)
    a, b, c = bs.state_before("triad", n)
    np.testing.assert_allclose(numba.njit(bs.triad)(a.copy(), b, c), b + 0.4 * c, rtol=1e-15)


@pytest.mark.parametrize("params", [bs.TEST_POINT, SMALL])
def test_dot_partials_are_the_blocks_grid_stride_sums(params):
    rng = np.random.default_rng(4)
    a, b, partial, tbsize = SPECS["dot"].make_inputs(params, 0)
    a, b = rng.random(a.shape[0]), rng.random(a.shape[0])
    got = numba.njit(bs.dot)(a, b, partial, tbsize)
    nthreads = params["dot_blocks"] * tbsize
    per_thread = (a * b).reshape(-1, nthreads).sum(axis=0)  # thread t takes elements t, t + nthreads, ...
    np.testing.assert_allclose(got, per_thread.reshape(params["dot_blocks"], tbsize).sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(got.sum(), np.dot(a, b), rtol=1e-12)  # the host's sum of the partials


def test_dot_of_the_initial_arrays():
    a, b, partial, tbsize = SPECS["dot"].make_inputs(SMALL, 0)
    got = bs.dot(a, b, partial, tbsize)
    assert got.shape == (8,)
    np.testing.assert_allclose(got, np.full(8, 4096 / 8 * 0.096 * 0.04), rtol=1e-12)


def test_gpu_ports_at_a_second_size():
    for spec in bs.KERNELS:
        inputs = spec.make_inputs(SMALL, 0)
        spec.check(spec.cpu(*copy.deepcopy(inputs)), spec.gpu.run(*copy.deepcopy(inputs)))


def _traced(spec, params):
    sink = WorkSink()
    res = trace_function(spec.cpu, spec.make_inputs(params, 0), sinks=[sink], mode="compiled")
    assert res.info.complete
    return sink.results[-1]


@pytest.mark.parametrize("kernel", ["copy", "mul", "add", "triad"])
def test_bytes_touched_are_the_bytes_babelstream_counts(kernel):
    spec = SPECS[kernel]
    row = _traced(spec, SMALL)
    n = SMALL["n"]
    assert row["unique_bytes"] == COUNTED[kernel] * n
    assert row["load_bytes"] + row["store_bytes"] == COUNTED[kernel] * n  # each element read / written once
    assert row["threads"] == spec.work(SMALL)[0] == n


def test_dot_touches_the_counted_bytes_plus_its_shared_tiles_and_partials():
    spec = SPECS["dot"]
    row = _traced(spec, SMALL)
    n, blocks, tbsize = SMALL["n"], SMALL["dot_blocks"], SMALL["tbsize"]
    # a and b (what BabelStream counts), one float64 shared-memory slot per thread, one partial per block
    assert row["unique_bytes"] == COUNTED["dot"] * n + 8 * blocks * tbsize + 8 * blocks
    assert row["threads"] == spec.work(SMALL)[0] == blocks * tbsize
    assert row["load_bytes"] >= COUNTED["dot"] * n


def test_work_is_the_cuda_launch_geometry():
    p = bs.POINTS["2^25"]
    for k in ("copy", "mul", "add", "triad"):
        assert SPECS[k].work(p) == (33554432, 1024)  # N / TBSIZE blocks of 1024
    assert SPECS["dot"].work(p) == (256 * 1024, 1024)  # DOT_NUM_BLOCKS blocks of TBSIZE
    assert all(SPECS[k].feature_point == {"n": 1 << 20, "tbsize": 1024, "dot_blocks": 256}
               for k in ("copy", "mul", "add", "triad"))
    assert SPECS["dot"].feature_point == {"n": 1 << 19, "tbsize": 1024, "dot_blocks": 8}
    assert SPECS["dot"].work(SPECS["dot"].feature_point) == (8192, 1024)


def test_sizes_not_a_multiple_of_the_block_are_refused():
    with pytest.raises(ValueError):
        SPECS["copy"].make_inputs({"n": 1000, "tbsize": 1024, "dot_blocks": 256}, 0)


def _runs(path):
    """(version, array MB, device) of each run in a BabelStream result file."""
    text = path.read_text()
    return list(zip(re.findall(r"^Version: (\S+)", text, re.M), re.findall(r"^Array size: ([\d.]+) MB", text, re.M),
                    re.findall(r"^Using CUDA device (.+)$", text, re.M)))


def test_the_point_is_the_data_s_268_mb_size_and_the_versions_are_3x():
    files = sorted(DATA.glob("*.out"))
    assert files
    mb = f"{bs.POINTS['2^25']['n'] * 8 / 1e6:.1f}"
    assert mb == "268.4"
    sizes = set()
    for f in files:
        runs = _runs(f)
        assert runs, f.name
        assert all(v in ("3.3", "3.4") for v, _, _ in runs), f.name  # DOT_NUM_BLOCKS = 256 in both
        sizes |= {s for _, s, _ in runs}
    # 2^25 and the larger sizes left out (2^28, 2^29, 2^30 doubles)
    assert sizes == {mb, "2147.5", "4295.0", "8589.9"}
