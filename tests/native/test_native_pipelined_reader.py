"""The pipelined reader (``StreamDecoder.read_fd_pipelined``: a thread fills chunks with compiled code that
holds no GIL while the sinks run in the main thread) against the one-message-at-a-time reference
``StreamDecoder.feed``: same chunks, same static tables, same regions, same errors.
"""

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_native_stream_blocks import ChunkSink, _block, _msg  # shared stream builders

from core.trace_schema import TraceError
from profiler.native.record import BUF_BYTES, RECORD_BYTES, StreamDecoder, encode_records


class FullSink(ChunkSink):
    """Also keeps each region's info and static table."""

    def __init__(self):
        super().__init__()
        self.statics = []

    def end_region(self, info, static):
        super().end_region(info, static)
        self.statics.append(sorted((e.pc, e.file, e.line, e.text) for e in static))


def _stream(regions, statics_every=0):
    """HELLO, then per region: START, record blocks of the given sizes (with a STATIC entry before every
    ``statics_every``-th block when > 0), END; then FINI."""
    out = _msg(0, f"portcast-vgtool 2 {RECORD_BYTES}".encode())
    start = 0
    for r, sizes in enumerate(regions):
        out += _msg(1, f"r{r}".encode())
        first = start
        for k, n in enumerate(sizes):
            if statics_every and k % statics_every == 0:
                pc = 1 + (start % 7)
                out += _msg(4, f"{pc}\t{4096 + pc}\tload\tk\t/src/k.c\t{10 + pc}".encode())
            out += _msg(2, encode_records(_block(start, n)))
            start += n
        out += _msg(3, f"{start - first} 0 0 0 0 0 r{r}".encode())
    return out + _msg(5, f"0 {start}".encode())


def _pipelined(path, chunk_records, depth=2):
    sink = FullSink()
    dec = StreamDecoder([sink], chunk_records)
    fd = os.open(path, os.O_RDONLY)
    try:
        dec.read_fd_pipelined(fd, depth=depth)
    finally:
        os.close(fd)
    return dec, sink


def _reference(stream, chunk_records):
    sink = FullSink()
    dec = StreamDecoder([sink], chunk_records)
    dec.feed_messages(stream)
    return dec, sink


@settings(max_examples=40, deadline=None)
@given(regions=st.lists(st.lists(st.integers(1, 40), min_size=0, max_size=6), min_size=1, max_size=3),
       chunk_records=st.integers(1, 50), statics_every=st.integers(0, 3), depth=st.integers(1, 3))
def test_pipelined_reader_matches_feed(tmp_path_factory, regions, chunk_records, statics_every, depth):
    stream = _stream(regions, statics_every)
    path = tmp_path_factory.mktemp("pipe") / "s.bin"
    path.write_bytes(stream)
    dec, sink = _pipelined(path, chunk_records, depth)
    rdec, ref = _reference(stream, chunk_records)
    assert sink.chunks == ref.chunks
    assert sink.statics == ref.statics
    assert [(i.name, i.invocation, i.n_records, i.complete, i.n_threads) for i in sink.ended] == \
        [(i.name, i.invocation, i.n_records, i.complete, i.n_threads) for i in ref.ended]
    assert (
        (dec.exit_code, dec.total_instructions)
        == (rdec.exit_code, rdec.total_instructions)
        == (0, sum(map(sum, regions)))
    )
    assert [r for c in sink.chunks for r in c] == _block(0, sum(map(sum, regions))).records()


def test_pipelined_worked_example_chunks_and_large_blocks(tmp_path):
    # blocks of 5, 4, 1, 7 records into chunks of 3: blocks straddle chunks (staged and copied in pieces)
    stream = _stream([[5, 4, 1, 7]], statics_every=2)
    path = tmp_path / "s.bin"
    path.write_bytes(stream)
    dec, sink = _pipelined(path, 3)
    assert [len(c) for c in sink.chunks] == [3, 3, 3, 3, 3, 2]
    assert sink.chunks[-1][-1] == (3, 0, 0, 16, 32, 48, 21, (16 << 33) + 128, 7, 0)
    assert sink.statics == [[(1, "/src/k.c", 11, "0x1001 load"), (3, "/src/k.c", 13, "0x1003 load")]]
    assert sink.ended[0].n_records == 17 and sink.ended[0].complete and sink.ended[0].n_threads == 4
    # a block larger than the staging buffer is decoded by the reference path, chunk boundaries kept
    big = BUF_BYTES // RECORD_BYTES + 10
    stream = _stream([[7, big, 9]])
    path.write_bytes(stream)
    dec, sink = _pipelined(path, 1000)
    assert [len(c) for c in sink.chunks] == [1000] * ((big + 16) // 1000) + [(big + 16) % 1000]
    assert sink.chunks == _reference(stream, 1000)[1].chunks


def test_pipelined_truncated_block_and_header(tmp_path):
    full = _stream([[4, 6]])
    second = full.index(_msg(2, encode_records(_block(4, 6))))
    path = tmp_path / "s.bin"
    for cut, chunk_records, message in (
            (second + 8 + 5 * RECORD_BYTES, 3, f"trace stream byte {second}: truncated message "
                                               f"({5 * RECORD_BYTES} of {6 * RECORD_BYTES} bytes)"),
            (second + 8 + 5 * RECORD_BYTES, 100, f"trace stream byte {second}: truncated message "
                                                 f"({5 * RECORD_BYTES} of {6 * RECORD_BYTES} bytes)"),
            (second + 5, 3, f"trace stream byte {second}: truncated message header")):
        path.write_bytes(full[:cut])
        sink = FullSink()
        dec = StreamDecoder([sink], chunk_records)
        fd = os.open(path, os.O_RDONLY)
        with pytest.raises(TraceError) as err:
            dec.read_fd_pipelined(fd)
        os.close(fd)
        assert str(err.value) == message
        dec.abort(str(err.value))  # as record_program does
        assert [r for c in sink.chunks for r in c] == _block(0, 4).records()
        assert sink.ended[0].complete is False and sink.ended[0].n_records == 4


def test_pipelined_misplaced_records_and_failing_sink(tmp_path):
    path = tmp_path / "s.bin"
    rec = encode_records(_block(0, 3))
    path.write_bytes(_msg(0, f"portcast-vgtool 2 {RECORD_BYTES}".encode()) + _msg(2, rec))
    fd = os.open(path, os.O_RDONLY)
    with pytest.raises(TraceError, match=r"^trace stream byte 28: records outside a region$"):
        StreamDecoder([FullSink()], 10).read_fd_pipelined(fd)
    os.close(fd)

    class Failing(ChunkSink):
        def consume(self, chunk):
            raise RuntimeError("sink failed")

    path.write_bytes(_stream([[30, 30, 30]]))
    called = []
    fd = os.open(path, os.O_RDONLY)
    with pytest.raises(RuntimeError, match="sink failed"):
        StreamDecoder([Failing()], 10).read_fd_pipelined(fd, on_error=lambda: called.append(1))
    os.close(fd)
    assert called == [1]


def _seen_reference(chunks):
    """The decoder's former NumPy bookkeeping (before the compiled pass): pcs used and the thread count."""
    pc_seen, tid_seen, big = np.zeros(1 << 16, bool), np.zeros(0, bool), set()
    for pcs, tids in chunks:
        top = int(pcs.max()) + 1
        if top > len(pc_seen):
            pc_seen = np.concatenate([pc_seen, np.zeros(max(top, 2 * len(pc_seen)) - len(pc_seen), bool)])
        pc_seen[pcs] = True
        if int(tids.max()) >= 0:
            t = tids[tids >= 0]
            tmax = int(t.max()) + 1
            if tmax <= (1 << 26):
                if tmax > len(tid_seen):
                    tid_seen = np.concatenate([tid_seen, np.zeros(max(tmax, 2 * len(tid_seen)) - len(tid_seen), bool)])
                tid_seen[t] = True
            else:
                big.update(np.unique(t).tolist())
    return np.flatnonzero(pc_seen).tolist(), int(tid_seen.sum()) + len(big)


@settings(max_examples=60, deadline=None)
@given(chunks=st.lists(st.tuples(st.lists(st.integers(-3, 70000), min_size=1, max_size=20),
                                 st.lists(st.sampled_from([-1, 0, 1, 5, 1000, (1 << 26) - 1, 1 << 26, 1 << 40]),
                                          min_size=1, max_size=20)), min_size=1, max_size=4))
def test_pc_and_thread_bookkeeping_matches_numpy_reference(chunks):
    from profiler.trace import TraceChunk

    cols = []
    for pcs, tids in chunks:
        n = min(len(pcs), len(tids))
        cols.append((np.array(pcs[:n], np.int32), np.array(tids[:n], np.int64)))
    sink = FullSink()
    dec = StreamDecoder([sink], 1 << 20)
    dec.feed(1, b"r", 0)
    for pcs, tids in cols:
        dec._buf, dec._fill = TraceChunk.from_columns(pc=pcs, tid=tids, op=np.zeros(len(pcs), np.uint8)), len(pcs)
        dec._flush(final=False)
    dec.feed(3, b"0 0 0 0 0 0 r", 0)
    used, n_threads = _seen_reference(cols)
    assert sink.ended[0].n_threads == n_threads
    assert np.flatnonzero(dec._pc_seen).tolist() == used  # the pcs whose static entries the region gets


def test_chunks_are_refilled_only_when_no_sink_kept_them(tmp_path):
    stream = _stream([[40] * 12])  # 480 records, chunks of 20: 24 full chunks
    path = tmp_path / "s.bin"
    path.write_bytes(stream)
    expected = _block(0, 480).records()

    class Ids(ChunkSink):
        def consume(self, chunk):
            super().consume(chunk)
            self.ids = getattr(self, "ids", []) + [id(chunk.addr)]

    class KeepsViews:
        def __init__(self):
            self.views = []

        def start_region(self, info, static):
            pass

        def consume(self, chunk):
            self.views.append((chunk.pc[:], chunk.addr[5:]))  # views only: they keep the memory alive

        def end_region(self, info, static):
            pass

    for sinks in ([Ids()], [Ids(), KeepsViews()]):
        dec = StreamDecoder(sinks, 20)
        fd = os.open(path, os.O_RDONLY)
        try:
            dec.read_fd_pipelined(fd, depth=2)
        finally:
            os.close(fd)
        assert [r for c in sinks[0].chunks for r in c] == expected
        if len(sinks) == 1:  # nothing kept: at most depth + 1 buffers were ever used
            assert len(set(sinks[0].ids)) <= 3
        else:  # the kept views still hold each chunk's own records
            assert len(set(sinks[0].ids)) == 24
            for k, (pc, addr) in enumerate(sinks[1].views):
                assert pc.tolist() == [r[0] for r in expected[20 * k:20 * k + 20]]
                assert addr.tolist() == [r[7] for r in expected[20 * k + 5:20 * k + 20]]


def test_pipelined_stream_cut_in_a_static_entry_keeps_the_records_like_read_stream(tmp_path):
    from profiler.native.record import decode_file

    full = _stream([[6, 5, 4]], statics_every=1)
    offsets, off = [], 0
    while off < len(full):  # (type, offset) of each message
        t, n = np.frombuffer(full[off:off + 8], "<u4").tolist()
        offsets.append((t, off))
        off += 8 + n
    third_static = [o for t, o in offsets if t == 4][2]
    path = tmp_path / "s.bin"
    path.write_bytes(full[:third_static + 8 + 3])  # header and 3 bytes of the third static entry
    sink = FullSink()
    dec = StreamDecoder([sink], 4)
    fd = os.open(path, os.O_RDONLY)
    with pytest.raises(TraceError) as err:
        dec.read_fd_pipelined(fd)
    os.close(fd)
    dec.abort(str(err.value))
    ref = FullSink()
    with pytest.raises(TraceError) as ref_err:
        decode_file(path, [ref], chunk_records=4)
    assert str(ref_err.value).endswith(str(err.value))
    assert str(err.value) == f"trace stream byte {third_static}: truncated message (3 of 25 bytes)"
    assert sink.chunks == ref.chunks and [r for c in sink.chunks for r in c] == _block(0, 11).records()
    assert sink.ended[0].n_records == 11 and not sink.ended[0].complete
