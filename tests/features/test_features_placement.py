"""Features do not depend on where the allocator put the arrays (docs/features.md, "Placement").

Realistic regions (a saxpy loop, a 5-point stencil, an in-place prefix sum, a gather through an index
array) are traced twice with the same input values, interpreted and compiled, their arrays placed at
different addresses: views into one large buffer at chosen offsets. Moved by multiples of 4096 bytes, every
feature must be identical. Moved by multiples of the element size that are not multiples of 64, only the
features whose definitions count 64-byte blocks or 4 KiB pages (footprint, reuse distance) or 32-byte
sectors (warp coalescing) may change; every other feature, ILP included, must be identical.
"""

import numpy as np
import pytest

from features import FeatureSink
from profiler.runtime import device_address
from profiler.session import trace_function

#: features defined on 64-byte blocks, 4 KiB pages or 32-byte sectors: their values may follow the alignment
ALIGNMENT_BOUND = frozenset({
    "memInt", "pages", "coldRef", "reuseDist4", "mica_reuse_cold", "mica_loadBlockRefs", "mica_dataBlocks",
    "mica_dataPages", "warp_coalescing", "warp_sectorsPerGroup", "warp_idealSectorsPerGroup",
})

#: bytes between the arrays of a region (all gaps exceed every stride bucket, so gaps move no stride)
SLOT = 1 << 20
PAGE = 4096


def _bound_to_alignment(name: str) -> bool:
    return name in ALIGNMENT_BOUND or name.startswith("mica_reuse_b")


def saxpy(a, x, y):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


def stencil5(u, out):
    n, m = u.shape
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            out[i, j] = 0.2 * (u[i, j] + u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])


def prefix_sum(x):
    for i in range(1, x.shape[0]):
        x[i] += x[i - 1]


def gather(data, idx, out):
    for i in range(idx.shape[0]):
        out[i] = data[idx[i]]


def _inputs():
    """Per region: (function, the arrays' values, how to build the call's arguments from placed arrays)."""
    rng = np.random.default_rng(2026)
    return {
        "saxpy": (saxpy, [rng.random(160), rng.random(160)], lambda x, y: (2.5, x, y)),
        "stencil5": (stencil5, [rng.random((11, 13)).astype(np.float32), np.zeros((11, 13), np.float32)],
                     lambda u, out: (u, out)),
        "prefix_sum": (prefix_sum, [rng.integers(-50, 50, 200).astype(np.int32)], lambda x: (x,)),
        "gather": (gather, [rng.random(300), rng.integers(0, 300, 150), np.zeros(150)],
                   lambda data, idx, out: (data, idx, out)),
    }


def _place(buf, values, offsets):
    """Copies of ``values`` inside ``buf``: array k at byte ``k * SLOT + offsets[k]`` of the buffer's first
    page boundary in the trace's addresses (the allocation's own start: docs/trace-format.md, "Addresses")."""
    start = (-device_address(buf)) % PAGE
    out = []
    for k, (v, off) in enumerate(zip(values, offsets)):
        assert off % v.itemsize == 0
        lo = start + k * SLOT + off
        a = buf[lo: lo + v.nbytes].view(v.dtype).reshape(v.shape)
        a[...] = v
        out.append(a)
    return out


def _features(name, mode, offsets):
    fn, values, args = _inputs()[name]
    buf = np.zeros(len(values) * SLOT + 2 * PAGE, np.uint8)
    sink = FeatureSink()
    res = trace_function(fn, args(*_place(buf, values, offsets)), region=name, sinks=[sink], mode=mode)
    assert res.info.mode == mode
    return sink.results[0][1]


def _unaligned(values, shift):
    """Per array an offset that is a multiple of its element size but not of 64 bytes (different per array)."""
    out = []
    for k, v in enumerate(values):
        off = v.itemsize * (2 * k + shift)
        assert off % 64
        out.append(off)
    return out


REGIONS = ["saxpy", "stencil5", "prefix_sum", "gather"]


@pytest.mark.parametrize("mode", ["interpreted", "compiled"])
@pytest.mark.parametrize("name", REGIONS)
def test_page_multiple_moves_change_no_feature(name, mode):
    values = _inputs()[name][1]
    base = _features(name, mode, [0] * len(values))
    moved = _features(name, mode, [PAGE * (k + 1) for k in range(len(values))])
    assert list(moved.index) == list(base.index)
    diff = {f: (base[f], moved[f]) for f in base.index if base[f] != moved[f]}
    assert diff == {}


@pytest.mark.parametrize("mode", ["interpreted", "compiled"])
@pytest.mark.parametrize("name", REGIONS)
def test_element_moves_change_only_block_page_and_sector_features(name, mode):
    values = _inputs()[name][1]
    base = _features(name, mode, [0] * len(values))
    assert base["ilp32"] > 0 and base["mem"] > 0
    for shift in (1, 3):
        moved = _features(name, mode, _unaligned(values, shift))
        diff = {f: (base[f], moved[f]) for f in base.index if base[f] != moved[f] and not _bound_to_alignment(f)}
        assert diff == {}, shift
