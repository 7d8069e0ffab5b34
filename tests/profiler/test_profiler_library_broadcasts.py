"""Broadcasting element-wise NumPy expressions expand to independent element threads (profiler/libcalls.py,
docs/profiler.md "Library calls", "Broadcasting"): a property test over generated expressions of two or three
operands (arrays of random broadcast-compatible shapes, size-1 dimensions, ``None``/``np.newaxis`` and
``...`` indexing, 0-d arrays, scalar parameters and constants). For every expansion site the trace checker
(features/thread_dependences.py) must find one launch of as many threads as the site's result has elements,
parallel, and no carried dependence; every thread loads each of the site's array operands itself; the
records of the two execution modes are the same."""

import linecache
import math

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import features
from core.trace_schema import Op
from profiler.runtime import device_address as _dev
from profiler.session import trace_function
from profiler.trace import MemorySink

MODES = ("interpreted", "compiled")
_SOURCES: dict[str, object] = {}


def _function(src):
    """The function ``f`` defined by ``src``, its source known to ``inspect`` (through linecache) so that the
    instrumenter can read it; one function per distinct source."""
    if src not in _SOURCES:
        name = f"<broadcast case {len(_SOURCES)}>"
        linecache.cache[name] = (len(src), None, src.splitlines(True), name)
        env = {"np": np}
        exec(compile(src, name, "exec"), env)
        _SOURCES[src] = env["f"]
    return _SOURCES[src]


@st.composite
def _cases(draw):
    """(source of ``f``, its arguments): ``f`` returns one expression over 2 or 3 operands."""
    nd = draw(st.integers(1, 3))
    shape = [draw(st.integers(1, 4)) for _ in range(nd)]
    # not float32: with a Python float operand NumPy computes in float32, Numba in float64 (the modes differ)
    dtype = draw(st.sampled_from([np.float64, np.int64]))
    n_ops = draw(st.integers(2, 3))
    params, args, terms = [], [], []
    for k in range(n_ops):
        kind = draw(st.sampled_from(["array", "array", "array", "param", "constant", "0-d"]))
        if kind == "constant":
            terms.append(draw(st.sampled_from(["2.0", "3", "0.5"])))
            continue
        params.append(f"a{k}")
        if kind != "array":
            args.append(draw(st.sampled_from([0.5, 2.0, 3])) if kind == "param" else np.array(2, dtype=dtype))
            terms.append(f"a{k}")
            continue
        # per output dimension: absent on the left (NumPy pads the shape), full, size 1, or inserted by indexing
        lead = draw(st.integers(0, nd - 1))
        dims = [draw(st.sampled_from(["full", "one", "new"])) for _ in range(nd - lead)]
        if all(d == "new" for d in dims):
            dims[draw(st.integers(0, len(dims) - 1))] = "full"
        own = [shape[lead + d] if dk == "full" else 1 for d, dk in enumerate(dims) if dk != "new"]
        args.append((np.arange(math.prod(own), dtype=dtype) + 1).reshape(own))
        if "new" not in dims:
            terms.append(f"a{k}")
            continue
        toks = [draw(st.sampled_from(["None", "np.newaxis"])) if d == "new" else ":" for d in dims]
        if toks[0] == ":" and draw(st.booleans()):  # a leading run of full slices as an Ellipsis
            run = next(i for i, t in enumerate(toks) if t != ":")
            toks = ["..."] + toks[run:]
        terms.append(f"a{k}[{', '.join(toks)}]")
    if not any(isinstance(a, np.ndarray) and a.ndim for a in args):  # an array of 1-3 dimensions: the first term
        params.insert(0, "x")
        args.insert(0, np.arange(1, 1 + math.prod(shape), dtype=dtype).reshape(shape))
        terms[0] = "x"
    t = terms
    if n_ops == 2:
        forms = [f"{t[0]} {draw(st.sampled_from('+-*/'))} {t[1]}", f"np.maximum({t[0]}, {t[1]})",
                 f"({t[0]} - {t[1]}) ** 2", f"np.exp(-({t[0]} * {t[1]}))"]
    else:
        forms = [f"{t[0]} {draw(st.sampled_from('+-*'))} {t[1]} {draw(st.sampled_from('+-*/'))} {t[2]}",
                 f"np.where({t[0]} > {t[1]}, {t[1]}, {t[2]})", f"({t[0]} - {t[1]}) ** 2 * {t[2]}"]
    expr = draw(st.sampled_from(forms))
    return f"def f({', '.join(params)}):\n    return {expr}\n", tuple(args)


def _trace(fn, args, mode):
    fsink, msink = features.FeatureSink(), MemorySink()
    res = trace_function(fn, args, sinks=[fsink, msink], mode=mode)
    info, f = fsink.results[0]
    assert info.mode == mode
    _, static, chunk = msink.regions[0]
    return res, f, fsink.thread_spaces[0], static, chunk


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_cases())
# a comparison of a float with a 0-d array gives a NumPy scalar: the interpreted site's one record took the
# integer class where compiled code takes the operands' (FP64) one
@example(("def f(a0, a1, a2):\n    return np.where(a0 > a1, a1, a2)\n", (0.5, np.array(2.0), np.array([[1.0]]))))
def test_broadcast_expressions_expand_to_independent_element_threads(case):
    src, args = case
    fn = _function(src)
    env = dict(zip(fn.__code__.co_varnames, args), np=np)
    want = eval(src.split("return ", 1)[1], env)
    chunks = []
    for mode in MODES:
        res, f, ts, static, chunk = _trace(fn, args, mode)
        np.testing.assert_allclose(res.value, want, rtol=1e-6)
        sites = [lp for lp in ts["loops"] if lp["launches"]]
        assert sites and all(lp["how"] == "library" for lp in sites), src
        for lp in sites:  # the site's result, computed by NumPy: one thread per element, one launch
            size = np.asarray(eval(lp["header"], env)).size
            assert (lp["verdict"], lp["launches"], lp["threads"]) == ("parallel", 1, size), (src, mode, lp)
            assert lp["counts"]["carried_register"] == lp["counts"]["read_after_write"] == 0
        assert f["ts_carriedDeps"] == 0 and f["ts_reductionDeps"] == 0, (src, mode)
        # every thread of a site loads each of the site's array operands itself
        text = np.array([static[pc].text for pc in chunk.pc])
        for lp in sites:
            loads = (chunk.op == Op.LOAD) & np.char.startswith(text, lp["header"] + ": load")
            kinds = len(set(text[loads]))
            per_thread = np.bincount(chunk.tid[loads], minlength=lp["threads"])
            assert (per_thread == kinds).all(), (src, mode, lp["header"], per_thread)
        chunks.append(chunk)
    a, b = (c.columns() for c in chunks)
    for k in ("pc", "op", "taken", "src1", "src2", "src3", "dst", "size", "tid"):
        assert np.array_equal(a[k], b[k]), (src, k)
    # addresses inside the operands are the same; temporaries may be allocated elsewhere
    for arr in (x for x in args if isinstance(x, np.ndarray)):
        lo, hi = _dev(arr), _dev(arr) + arr.nbytes
        ina, inb = (a["addr"] >= lo) & (a["addr"] < hi), (b["addr"] >= lo) & (b["addr"] < hi)
        assert np.array_equal(ina, inb) and np.array_equal(a["addr"][ina], b["addr"][inb]), src
