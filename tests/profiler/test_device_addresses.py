"""The trace's addresses (docs/trace-format.md, "Addresses"): each allocation at a page of its own, every byte at
its offset inside its allocation; the same in both tracing modes, and wherever the CPU put the arrays."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.trace_schema import Op
from profiler import runtime as rt
from profiler.session import trace_function
from profiler.trace import MemorySink


def _reference_owner(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _reference_low(a):
    """Lowest byte address of the elements of ``a``, by enumerating them."""
    if a.size == 0:
        return a.ctypes.data
    idx = np.indices(a.shape).reshape(a.ndim, -1)
    return a.ctypes.data + int(min(np.dot(np.array(a.strides), idx)))


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 40), m=st.integers(1, 9), start=st.integers(0, 8), step=st.sampled_from([1, 2, 3, -1, -2]),
       transpose=st.booleans(), chain=st.integers(0, 3), dtype=st.sampled_from([np.float64, np.float32, np.int16]))
def test_device_address_is_the_offset_in_the_owner_from_a_page_aligned_start(n, m, start, step, transpose, chain,
                                                                              dtype):
    owner = np.zeros((n, m), dtype)
    v = owner[start % n:, :][::step]
    if transpose:
        v = v.T
    for _ in range(chain):  # views of views: the owner is still the first array
        v = v[:]
    low = _reference_low(_reference_owner(v))
    assert low == owner.ctypes.data
    want = rt.DEVICE_BASE + 4096 * low + (v.ctypes.data - low)
    assert rt.device_address(v) == want
    assert rt.device_address(owner) % 4096 == 0
    assert rt.device_address(v) - rt.device_address(owner) == v.ctypes.data - owner.ctypes.data
    assert rt.allocation_of(v) == (low, low + owner.nbytes)


def test_owner_with_negative_strides_starts_at_its_lowest_byte():
    buf = bytearray(80)
    a = np.ndarray((10,), np.float64, buffer=buf, offset=72, strides=(-8,))  # owns nothing: its base is buf
    lo = np.frombuffer(buf, np.uint8).ctypes.data
    assert rt.allocation_of(a) == (lo, lo + 80)
    assert rt.device_address(a) == rt.DEVICE_BASE + 4096 * lo + 72


def _reference_to_device(addr, allocs):
    out = []
    for a in addr:
        hit = [(lo, hi) for lo, hi in allocs if lo <= a < hi]
        out.append(a + rt.device_delta(hit[0][0]) if hit and 0 < a < rt.DEVICE_BASE else a)
    return out


@settings(max_examples=200, deadline=None)
@given(sizes=st.lists(st.tuples(st.integers(0, 300), st.integers(1, 300)), min_size=0, max_size=6),
       probes=st.lists(st.integers(0, 4000), max_size=60), origin=st.integers(1, 1 << 40))
def test_to_device_matches_a_scan_of_the_allocations(sizes, probes, origin):
    allocs, at = [], origin
    for gap, size in sizes:
        at += gap
        allocs.append((at, at + size))
        at += size
    low = np.array([a for a, _ in allocs], np.int64)
    high = np.array([b for _, b in allocs], np.int64)
    delta = np.array([rt.device_delta(a) for a in low], np.int64)
    addr = np.array([origin + p for p in probes] + [0, rt.DEVICE_BASE + 5], np.int64)
    want = _reference_to_device(addr.tolist(), allocs)
    got = addr.copy()
    rt.to_device(got, len(got), low, high, delta)
    assert got.tolist() == want


def test_allocation_table_walks_arguments_and_keeps_one_entry_per_owner():
    x = np.arange(10.0)
    y = np.ones((3, 4))
    low, high, delta = rt.allocation_table((2.0, x[2:], (x, [y[1]]), {"k": y.T}))
    want = sorted([(x.ctypes.data, x.ctypes.data + 80), (y.ctypes.data, y.ctypes.data + 96)])
    assert list(zip(low.tolist(), high.tolist())) == want
    assert delta.tolist() == [rt.device_delta(lo) for lo, _ in want]


def views(x, y, out):
    for i in range(out.shape[0]):
        out[i] = x[i] + y[i]
    return out


def grid(a, b):
    for i in range(1, a.shape[0] - 1):
        for j in range(1, a.shape[1] - 1):
            b[i, j] = 0.5 * (a[i - 1, j] + a[i, j + 1])
    return b


def _chunk(fn, args, mode):
    sink = MemorySink()
    res = trace_function(fn, args, sinks=[sink], mode=mode)
    assert res.info.mode == mode
    return sink.regions[0][2]


@pytest.mark.parametrize("fn,make", [
    (views, lambda: (lambda x: (x[1:9], x[3:11], np.zeros(8)))(np.arange(12.0))),  # overlapping views of one array
    (grid, lambda: (np.arange(30.0).reshape(5, 6)[:, 1:], np.zeros((5, 5)))),
])
def test_both_modes_write_the_same_records_addresses_included(fn, make):
    args = make()
    keep = [a.copy() for a in args]
    chunks = []
    for mode in ("interpreted", "compiled"):
        for a, k in zip(args, keep):  # the same arrays (the same CPU addresses), the same values
            a[...] = k
        chunks.append(_chunk(fn, args, mode))
    ci, cc = (c.columns() for c in chunks)
    for col in ci:
        assert np.array_equal(ci[col], cc[col]), col
    mem = (ci["op"] == Op.LOAD) | (ci["op"] == Op.STORE)
    assert (ci["addr"][mem] >= rt.DEVICE_BASE).all()
    if fn is views:  # x[1:9] and x[3:11] address the same bytes alike: x[1 + 2] is x[3 + 0]
        loads = ci["addr"][ci["op"] == Op.LOAD]
        assert loads[0] == rt.device_address(args[0]) == rt.device_address(args[0].base) + 8
        assert loads[1] == loads[0] + 16 == rt.device_address(args[1])
        assert loads[4] == loads[1]  # x[1:9][2] and x[3:11][0] are x[3]


@pytest.mark.parametrize("mode", ["interpreted", "compiled"])
@pytest.mark.parametrize("shift", [0, 8, 24])
def test_records_inside_a_page_do_not_depend_on_where_the_cpu_put_the_input(mode, shift):
    raw = bytearray(8 * 8 + 8192)
    base = np.frombuffer(raw, np.uint8).ctypes.data
    off = (shift - base) % 4096
    x = np.frombuffer(memoryview(raw)[off:off + 64], np.float64)  # its own allocation, CPU page offset `shift`
    x[...] = np.arange(8.0)
    c = _chunk(views, (x, x, np.zeros(8)), mode)
    loads = c.addr[c.op == Op.LOAD]
    assert (loads % 4096).tolist() == [0, 0, 8, 8, 16, 16, 24, 24, 32, 32, 40, 40, 48, 48, 56, 56]


def alloc_inside(x):
    t = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        t[i] = 2.0 * x[i]
    s = 0.0
    for i in range(x.shape[0]):
        s += t[i]
    return s


@pytest.mark.parametrize("mode", ["interpreted", "compiled"])
def test_an_array_the_region_allocates_starts_a_page(mode):
    x = np.arange(5.0)
    c = _chunk(alloc_inside, (x,), mode)
    alloc = c.addr[(c.op == Op.OTHER) & (c.size > 0)]
    stores = c.addr[c.op == Op.STORE]
    assert len(alloc) == 1 and alloc[0] % 4096 == 0 and alloc[0] >= rt.DEVICE_BASE
    assert (stores - alloc[0]).tolist() == [0, 8, 16, 24, 32]
    loads = c.addr[c.op == Op.LOAD]
    assert (loads[:5] - rt.device_address(x)).tolist() == [0, 8, 16, 24, 32]
    assert (loads[5:] - alloc[0]).tolist() == [0, 8, 16, 24, 32]
