"""The worked vectors V1, V4 and V5 of docs/features.md, exactly."""

import pytest
from vectors import v1, v4, v5

from features import (
    BranchDivergenceAnalyzer,
    FeatureEngine,
    FootprintAnalyzer,
    IlpAnalyzer,
    MixAnalyzer,
    ReuseDistanceAnalyzer,
    StrideAnalyzer,
    WarpAnalyzer,
)
from features.counters import counters_from_op_counts
from features.mix import op_counts


def _engine(chunk, chunk_records=None):
    ilp = IlpAnalyzer((4, 8))
    st = StrideAnalyzer()
    ru = ReuseDistanceAnalyzer()
    fp = FootprintAnalyzer()
    bd = BranchDivergenceAnalyzer((4,))
    e = FeatureEngine([ilp, st, ru, fp, bd])
    for c in (chunk.split(chunk_records) if chunk_records else [chunk]):
        e.consume(c)
    return e, ilp, st, ru, fp, bd


@pytest.mark.parametrize("chunk_records", [None, 1, 7])
def test_v1_array_sum(chunk_records):
    e, ilp, st, ru, fp, bd = _engine(v1(), chunk_records)
    assert len(v1()) == 20
    assert ilp.cycles() == {4: 8, 8: 6}
    assert ilp.cycles(drained=False)[4] == 7  # MICA's undrained count, as the spec says
    r = e.result()
    assert r["mica_ilp4"] == 2.5
    assert r["mica_ilp8"] == 20 / 6
    assert st.local.sum(axis=0).tolist() == [0, 4, 0, 0]
    assert st.glob.tolist() == [0, 4, 0, 0]
    assert (r["locStride8"], r["gStride8"], r["locStrideOther"]) == (1.0, 1.0, 0.0)
    assert r["mica_loadBlockRefs"] == 5
    assert r["coldRef"] == 0.2 and r["reuseDist4"] == 0.8
    assert r["mica_dataBlocks"] == 1 and r["mica_dataPages"] == 1
    assert r["memInt"] == 1 / 20 and r["pages"] == 1 / 20
    assert r["Lbdiv_4"] == 0.0 and r["Gbdiv_4"] == 0.0
    assert int(bd.cnt.sum()) // 4 == 1  # one complete group


@pytest.mark.parametrize("chunk_records", [None, 1, 7])
def test_v4_linked_list(chunk_records):
    e, ilp, st, ru, fp, bd = _engine(v4(), chunk_records)
    assert len(v4()) == 25
    # memory dependences on exact bytes: the next-pointer LOAD at +0 does not wait for the STORE of the sum
    # at +16 (same 64-byte block, different bytes)
    assert ilp.cycles() == {4: 10, 8: 8}
    assert ilp.cycles(drained=False)[4] == 9
    r = e.result()
    assert r["mica_ilp4"] == 2.5 and r["mica_ilp8"] == 3.125
    assert st.local.sum(axis=0).tolist() == [0, 0, 3, 6]
    assert st.glob.tolist() == [0, 4, 5, 2]
    assert r["locStrideOther"] == 6 / 9 and r["gStride128"] == 5 / 11
    assert r["mica_loadBlockRefs"] == 8
    assert r["coldRef"] == 0.375 and r["reuseDist4"] == 0.625
    assert r["mica_dataBlocks"] == 3 and r["mica_dataPages"] == 3
    assert r["Lbdiv_4"] == 1.0 and r["Gbdiv_4"] == 1.0
    # the explanation: pc 1 (value loads) and pc 5 (sum stores) and pc 6 (next loads) make the big strides
    assert st.contributions()["locStrideOther"] == {1: 2.0, 5: 2.0, 6: 2.0}
    assert bd.contributions()["Lbdiv_4"] == {2: 1.0, 7: 1.0}


@pytest.mark.parametrize("chunk_records", [None, 1, 7])
def test_v5_mixed_precision_mix(chunk_records):
    chunk = v5()
    e = FeatureEngine([MixAnalyzer(), WarpAnalyzer()])
    for c in (chunk.split(chunk_records) if chunk_records else [chunk]):
        e.consume(c)
    r = e.result()
    assert len(chunk) == 10
    assert (r["mem"], r["ctrl"], r["arith"], r["fp"]) == (0.2, 0.1, 0.2, 0.5)
    assert (r["mul"], r["div"], r["rem"], r["spf"]) == (0.2, 0.1, 0.0, 0.2)
    assert r["fp64"] == 0.6  # 3 of the 5 floating-point records are double precision
    assert (r["mica_mix_FP64_MUL"], r["mica_mix_FP64_DIV"], r["mica_mix_FP64_SPECIAL"]) == (0.1, 0.1, 0.1)
    assert (r["mica_mix_FP64_ALU"], r["mica_mix_FP_ALU"], r["mica_mix_FP_SPECIAL"]) == (0.0, 0.1, 0.1)
    assert r["warp_arithIntensity"] == 5 / 12  # 5 floating-point records, 8 + 4 bytes loaded and stored
    # the counter-like vector counts both precisions alike: alu FP_ALU + INT_ALU, mul INT_MUL + FP64_MUL, ...
    assert counters_from_op_counts(op_counts([chunk])).tolist() == [0.2, 0.2, 0.1, 0.2, 0.2, 0.1, 0.0]


def test_fp64_share_is_zero_without_floating_point():
    e = FeatureEngine([MixAnalyzer()])
    e.consume(v1())
    assert e.result()["fp64"] == 0.0 and e.result()["fp"] == 0.0
