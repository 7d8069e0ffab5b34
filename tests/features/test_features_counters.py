"""The counter hand-off: the same vector from a PTX fingerprint, an op-class histogram, XAPP mix features."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.trace_schema import Op
from features.counters import (
    COUNTER_NAMES,
    PTX_CLASS,
    counters_from_mix_features,
    counters_from_op_counts,
    counters_from_ptx,
    counters_from_trace_chunks,
)
from gpu_models.scaling.dataset import ptx_instruction_names
from profiler.trace import TraceChunk

EXPECTED = [0.2, 0.1, 0.0, 0.1, 0.3, 0.1, 0.2]  # alu mul div spf mem ctrl other


def test_names():
    assert COUNTER_NAMES == ("alu", "mul", "div", "spf", "mem", "ctrl", "other")
    assert set(PTX_CLASS) == set(ptx_instruction_names())  # every vendored PTX instruction has a class


def test_ptx_worked_example():
    v = counters_from_ptx({"add": 1, "ptx_setp": 1, "fma": 1, "ld": 2, "st": 1, "bra": 1, "mov": 1,
                           "cvt": 1, "sqrt": 1, "div": 0})
    np.testing.assert_allclose(v, EXPECTED)


def test_op_histogram_gives_the_same_vector():
    counts = {Op.INT_ALU: 1, "FP_ALU": 1, Op.FP_MUL: 1, Op.LOAD: 2, Op.STORE: 1, Op.BRANCH: 1, Op.MOVE: 1,
              Op.OTHER: 1, Op.FP_SPECIAL: 1}
    np.testing.assert_allclose(counters_from_op_counts(counts), EXPECTED)
    hist = np.zeros(len(Op))
    for k, c in counts.items():
        hist[(Op[k] if isinstance(k, str) else k).value] += c
    np.testing.assert_allclose(counters_from_op_counts(hist), EXPECTED)


def test_double_precision_classes_count_with_their_single_precision_ones():
    # the same 10 instructions with the floating-point ones in double precision give the same vector; a
    # version-1 histogram (16 classes, no FP64) reads as before
    counts = {Op.INT_ALU: 1, Op.FP64_ALU: 1, Op.FP64_MUL: 1, Op.LOAD: 2, Op.STORE: 1, Op.BRANCH: 1, Op.MOVE: 1,
              Op.OTHER: 1, Op.FP64_SPECIAL: 1}
    np.testing.assert_allclose(counters_from_op_counts(counts), EXPECTED)
    v1 = np.zeros(16)
    for k in (Op.INT_ALU, Op.FP_ALU, Op.FP_MUL, Op.STORE, Op.BRANCH, Op.MOVE, Op.OTHER, Op.FP_SPECIAL):
        v1[k] += 1
    v1[Op.LOAD] += 2
    np.testing.assert_allclose(counters_from_op_counts(v1), EXPECTED)


def test_trace_chunks_stream():
    ops = [Op.INT_ALU, Op.FP_ALU, Op.FP_MUL, Op.LOAD, Op.LOAD, Op.STORE, Op.BRANCH, Op.MOVE, Op.OTHER,
           Op.FP_SPECIAL]
    chunks = [TraceChunk.from_columns(op=np.array(ops[:4])), TraceChunk.from_columns(op=np.array(ops[4:]))]
    np.testing.assert_allclose(counters_from_trace_chunks(chunks), EXPECTED)


def test_mix_features_give_the_same_vector():
    # the same 10 instructions as XAPP fractions (docs/features.md): arith = INT_*, fp = FP_*
    mix = {"mem": 0.3, "ctrl": 0.1, "arith": 0.1, "fp": 0.3, "mul": 0.1, "div": 0.0, "rem": 0.0, "spf": 0.1}
    np.testing.assert_allclose(counters_from_mix_features(mix), EXPECTED)
    mix2 = dict(mix, div=0.05, rem=0.05, arith=0.2, mem=0.2)
    np.testing.assert_allclose(counters_from_mix_features(mix2), [0.2, 0.1, 0.1, 0.1, 0.2, 0.1, 0.2])


def test_errors():
    with pytest.raises(ValueError, match="unknown PTX instruction 'foo'"):
        counters_from_ptx({"foo": 1})
    with pytest.raises(ValueError, match="no instructions counted"):
        counters_from_ptx({"add": 0})
    with pytest.raises(ValueError, match=r"expected 20 \(or 16\) operation-class counts, got shape \(2,\)"):
        counters_from_op_counts([1, 2])
    with pytest.raises(ValueError, match="missing: spf"):
        counters_from_mix_features({"mem": 0.3, "ctrl": 0.1, "arith": 0.1, "fp": 0.4, "mul": 0.1, "div": 0, "rem": 0})
    with pytest.raises(ValueError, match="inconsistent instruction-mix features: class 'alu'"):
        counters_from_mix_features({"mem": 0.3, "ctrl": 0.1, "arith": 0.1, "fp": 0.1, "mul": 0.3, "div": 0,
                                    "rem": 0, "spf": 0})


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, len(Op) - 1), min_size=1, max_size=200))
def test_features_mix_analyzer_and_trace_route_agree(ops):
    """The hand-off from Portcast's own feature engine equals the direct op-class count."""
    from features.mix import MixAnalyzer

    chunk = TraceChunk.from_columns(op=np.array(ops, dtype=np.uint8))
    a = MixAnalyzer()
    a.consume(chunk)
    np.testing.assert_allclose(counters_from_mix_features(a.result()), counters_from_trace_chunks([chunk]),
                               atol=1e-12)
