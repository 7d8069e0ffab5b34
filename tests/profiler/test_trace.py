"""The trace contract: chunks, static table, region metadata, and Parquet trace files."""

import os

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from core.trace_schema import FP64_OPS, Op, TraceError, fp64_class
from profiler.trace import MemorySink, RegionInfo, StaticInstruction, StaticTable, TraceChunk
from profiler.tracefile import ParquetTraceWriter, TraceDirectorySink, TraceFile, read_trace, write_trace


def _sample(n=10):
    return TraceChunk.from_columns(
        pc=np.arange(1, n + 1),
        op=[Op.LOAD if i % 2 == 0 else Op.FP_ALU for i in range(n)],
        src1=np.arange(n) % 3,
        dst=(np.arange(n) % 4) + 1,
        addr=[0x1000 + 8 * i if i % 2 == 0 else 0 for i in range(n)],
        size=[8 if i % 2 == 0 else 0 for i in range(n)],
        tid=np.arange(n) // 2,
    )


def _static():
    return StaticTable([StaticInstruction(pc=i, file="k.py", line=10 + i, col=4, text=f"x{i}") for i in range(1, 11)])


def test_chunk_defaults_dtypes_and_records():
    c = TraceChunk.from_columns(pc=[3, 4], op=[Op.BRANCH, Op.STORE], taken=[1, 0], addr=[0, 64], size=[0, 4])
    assert c.tid.tolist() == [-1, -1]
    assert c.addr.dtype == np.int64 and c.op.dtype == np.uint8 and c.pc.dtype == np.int32
    assert c.records() == [(3, 10, 1, 0, 0, 0, 0, 0, 0, -1), (4, 9, 0, 0, 0, 0, 0, 64, 4, -1)]
    assert [len(p) for p in c.split(1)] == [1, 1]
    assert TraceChunk.concat([c, c]).pc.tolist() == [3, 4, 3, 4]
    picked = c.select(np.array([False, True]))
    assert picked.records() == [(4, 9, 0, 0, 0, 0, 0, 64, 4, -1)] and picked.addr.dtype == np.int64
    picked.addr[0] = 128  # a copy: the chunk it came from is unchanged
    assert c.addr.tolist() == [0, 64]


def test_chunk_rejects_bad_shapes_and_values():
    with pytest.raises(TraceError, match="column 'op' has 1 records but column 'pc' has 2"):
        TraceChunk(pc=np.zeros(2), op=np.zeros(1), taken=np.zeros(2), src1=np.zeros(2), src2=np.zeros(2),
                   src3=np.zeros(2), dst=np.zeros(2), addr=np.zeros(2), size=np.zeros(2), tid=np.zeros(2))
    with pytest.raises(TraceError, match="unknown trace column"):
        TraceChunk.from_columns(pcc=[1])
    with pytest.raises(TraceError, match=r"record 1: op=20 is not an operation class \(0..19\)"):
        TraceChunk.from_columns(pc=[1, 2], op=[0, 20]).validate()
    TraceChunk.from_columns(pc=[1, 2], op=[Op.FP64_ALU, Op.FP64_SPECIAL]).validate()
    with pytest.raises(TraceError, match="record 0: LOAD with size 0"):
        TraceChunk.from_columns(pc=[1], op=[Op.LOAD]).validate()


def test_parquet_roundtrip_streams_and_keeps_metadata(tmp_path):
    chunk = _sample(10)
    info = RegionInfo(name="saxpy loop", invocation=2, n_records=10, mode="interpreted")
    path = tmp_path / "t.parquet"
    w = ParquetTraceWriter(path, row_group_records=4)
    w.start_region(info, _static())
    for part in chunk.split(3):
        w.consume(part)
    w.end_region(info, _static())
    tf = TraceFile(path)
    assert tf.n_records == 10 and tf.n_row_groups == 3
    assert tf.info.name == "saxpy loop" and tf.info.invocation == 2 and tf.info.complete
    assert tf.static.where(3) == "k.py:13"
    got = TraceChunk.concat(tf.chunks(chunk_records=3))
    assert got.records() == chunk.records()
    # readable by pandas without Portcast
    df = pd.read_parquet(path)
    assert df["addr"].tolist() == chunk.addr.tolist()
    assert [f for f in os.listdir(tmp_path)] == ["t.parquet"]


def test_directory_sink_and_memory_sink(tmp_path):
    sink, mem = TraceDirectorySink(tmp_path), MemorySink()
    for inv in range(2):
        info = RegionInfo(name="r/x", invocation=inv, n_records=10)
        for s in (sink, mem):
            s.start_region(info, _static())
            s.consume(_sample(10))
            s.end_region(info, _static())
    assert [p.name for p in sink.written] == ["r_x-ce8400d9f0.0.parquet", "r_x-ce8400d9f0.1.parquet"]
    assert len(mem.regions) == 2 and mem.regions[1][2].records() == _sample(10).records()


def test_incomplete_region_is_kept(tmp_path):
    info = RegionInfo(name="r", n_records=4, complete=False, error="ZeroDivisionError: division by zero")
    write_trace(tmp_path / "r.parquet", info, _static(), _sample(4))
    got_info, _, got = read_trace(tmp_path / "r.parquet")
    assert not got_info.complete and got_info.error.startswith("ZeroDivisionError")
    assert len(got) == 4


def test_bad_files_give_named_errors(tmp_path):
    with pytest.raises(TraceError, match="no such trace file"):
        TraceFile(tmp_path / "missing.parquet")
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(TraceError, match=r"junk.parquet: not a readable Parquet trace file"):
        TraceFile(junk)
    good = write_trace(tmp_path / "g.parquet", RegionInfo(name="g"), _static(), _sample(10))
    data = good.read_bytes()
    trunc = tmp_path / "trunc.parquet"
    trunc.write_bytes(data[: len(data) // 2])
    with pytest.raises(TraceError, match="trunc.parquet"):
        TraceFile(trunc)
    foreign = tmp_path / "foreign.parquet"
    pq.write_table(pd.DataFrame({"a": [1]}).pipe(lambda d: __import__("pyarrow").Table.from_pandas(d)), foreign)
    with pytest.raises(TraceError, match="without Portcast trace metadata"):
        TraceFile(foreign)


def test_is_trace_file_tells_traces_from_other_files(tmp_path):
    from profiler.tracefile import is_trace_file

    trace = write_trace(tmp_path / "t.parquet", RegionInfo(name="t"), _static(), _sample(4))
    table = tmp_path / "features.parquet"
    pd.DataFrame({"mem": [0.5]}).to_parquet(table)
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"not parquet at all")
    assert is_trace_file(trace) and not is_trace_file(table) and not is_trace_file(tmp_path / "none.parquet")
    assert not is_trace_file(junk)
    with pytest.raises(TraceError, match=r"junk.parquet: not a readable Parquet file"):
        is_trace_file(junk, strict=True)


def test_op_classes_and_fp64_mapping():
    assert [o.value for o in Op][-4:] == [16, 17, 18, 19]
    assert [o.name for o in Op][-4:] == ["FP64_ALU", "FP64_MUL", "FP64_DIV", "FP64_SPECIAL"]
    assert [fp64_class(o) for o in (Op.FP_ALU, Op.FP_MUL, Op.FP_DIV, Op.FP_SPECIAL)] == list(FP64_OPS)
    assert fp64_class(Op.FP64_DIV) is Op.FP64_DIV and fp64_class(Op.INT_MUL) is Op.INT_MUL
    assert fp64_class(Op.LOAD) is Op.LOAD


def _write_version(path, version, ops):
    """A trace file whose metadata says schema ``version`` (what an older Portcast wrote)."""
    import json

    write_trace(path, RegionInfo(name="old"), _static(), TraceChunk.from_columns(pc=[1, 2, 3], op=ops))
    table = pq.read_table(path)
    meta = dict(pq.ParquetFile(path).metadata.metadata)
    blob = json.loads(meta[b"portcast.trace"])
    blob["schema_version"] = version
    meta[b"portcast.trace"] = json.dumps(blob).encode()
    pq.write_table(table.replace_schema_metadata(meta), path)
    return path


def test_version_1_files_read_with_their_fp_records_unchanged(tmp_path):
    # a version-1 trace (before FP64 classes): FP_* records stay FP_*, classes 16..19 are not in its range
    path = _write_version(tmp_path / "v1.parquet", 1, [Op.FP_ALU, Op.FP_MUL, Op.INT_ALU])
    tf = TraceFile(path)
    assert tf.schema_version == 1
    assert tf.read().op.tolist() == [Op.FP_ALU, Op.FP_MUL, Op.INT_ALU]
    bad = _write_version(tmp_path / "v1bad.parquet", 1, [Op.FP_ALU, Op.FP64_ALU, Op.INT_ALU])
    with pytest.raises(TraceError, match=r"v1bad.parquet: row 1: op code 16 is not an operation class of trace "
                                         r"schema version 1 \(0..15\)"):
        TraceFile(bad).read()
    new = write_trace(tmp_path / "v3.parquet", RegionInfo(name="new"), _static(),
                      TraceChunk.from_columns(pc=[1, 2], op=[Op.FP64_ALU, Op.FP_ALU]))
    assert TraceFile(new).schema_version == 3 and TraceFile(new).read().op.tolist() == [16, 4]
    v2 = _write_version(tmp_path / "v2.parquet", 2, [Op.FP64_ALU, Op.OTHER, Op.INT_ALU])  # no allocation records
    assert TraceFile(v2).schema_version == 2 and TraceFile(v2).read().op.tolist() == [16, 15, 0]
    future = _write_version(tmp_path / "v4.parquet", 4, [0, 0, 0])
    with pytest.raises(TraceError, match=r"v4.parquet: trace schema version 4; this Portcast reads versions 1, 2, 3"):
        TraceFile(future)
