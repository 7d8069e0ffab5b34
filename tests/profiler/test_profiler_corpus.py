"""The corpus kernels (kernels/) trace: their regions compute what they compute untraced, and the two
execution modes emit the same records."""

import copy

import numpy as np
import pytest

from core.trace_schema import Op
from kernels.registry import all_kernels, get_kernel
from profiler.runtime import device_address as _dev
from profiler.session import trace_function
from profiler.trace import MemorySink

KERNELS = all_kernels()


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_kernel_traces_interpreted_and_computes_the_same(name):
    k = KERNELS[name]
    inputs = k.make_inputs(k.sizes["tiny"], 0)
    want = k.cpu.py_func(*copy.deepcopy(inputs)) if hasattr(k.cpu, "py_func") else k.cpu(*copy.deepcopy(inputs))
    sink = MemorySink()
    res = trace_function(k.cpu, copy.deepcopy(inputs), sinks=[sink], mode="interpreted")
    k.check(want, res.value)
    info, static, chunk = sink.regions[0]
    chunk.validate()
    assert info.complete and info.n_records == len(chunk) > 0
    assert info.n_threads >= 1 and info.parallel_loop
    assert np.all(chunk.size[(chunk.op == Op.LOAD) | (chunk.op == Op.STORE)] > 0)
    assert set(np.unique(chunk.pc)) <= {e.pc for e in static}


@pytest.mark.parametrize("name", ["dot", "gather"])
def test_kernel_records_identical_in_both_modes(name):
    k = get_kernel(name)
    inputs = k.make_inputs(k.sizes["tiny"], 0)
    chunks = []
    for mode in ("interpreted", "compiled"):
        sink = MemorySink()
        args = copy.deepcopy(inputs)
        res = trace_function(k.cpu, args, sinks=[sink], mode=mode)
        assert res.info.mode == mode
        chunks.append((sink.regions[0][2], args))
    (ci, ai), (cc, ac) = chunks
    for col in ("pc", "op", "taken", "src1", "src2", "src3", "dst", "size", "tid"):
        assert np.array_equal(getattr(ci, col), getattr(cc, col)), col
    # addresses: the same (input, offset) for accesses to the inputs; arrays the region allocates itself
    # live elsewhere in each run
    mem = ci.size > 0

    def where(addr, arrays):
        out = []
        for a in addr.tolist():
            hit = [(k, a - _dev(arr)) for k, arr in enumerate(arrays)
                   if isinstance(arr, np.ndarray) and _dev(arr) <= a < _dev(arr) + arr.nbytes]
            out.append(hit[0] if hit else None)
        return out

    wi, wc = where(ci.addr[mem], ai), where(cc.addr[mem], ac)
    assert [w is None for w in wi] == [w is None for w in wc]
    assert [w for w in wi if w] == [w for w in wc if w] and any(w for w in wi)
