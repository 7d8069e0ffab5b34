"""The stream reader's record-block path (blocks read straight into the sinks' chunks).

``StreamDecoder.read_stream`` reads each RECORDS block column by column into the chunk it belongs to;
``StreamDecoder.feed`` (one message at a time, from a payload in memory) is the reference: both must
hand the sinks the same chunks, for any block sizes and chunk sizes.
"""

import io

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from core.trace_schema import TraceError
from profiler.native.record import RECORD_BYTES, StreamDecoder, decode_file, encode_records
from profiler.trace import TraceChunk


class ChunkSink:
    """Keeps every chunk as handed over (its length and records)."""

    def __init__(self):
        self.chunks = []
        self.ended = []

    def start_region(self, info, static):
        pass

    def consume(self, chunk):
        self.chunks.append(chunk.records())

    def end_region(self, info, static):
        self.ended.append(info)


def _msg(t, payload):
    return np.array([t, len(payload)], "<u4").tobytes() + payload


def _block(start, n):
    i = np.arange(start, start + n)
    return TraceChunk.from_columns(pc=i % 7 + 1, op=i % 16, taken=i % 2, src1=i, src2=2 * i, src3=3 * i,
                                   dst=i + 5, addr=(i << 33) + 8 * i, size=i % 9, tid=i % 5 - 1)


def _stream(sizes):
    out = _msg(0, f"portcast-vgtool 2 {RECORD_BYTES}".encode()) + _msg(1, b"r")
    start = 0
    for n in sizes:
        out += _msg(2, encode_records(_block(start, n)))
        start += n
    return out + _msg(3, f"{start} 0 0 0 0 0 r".encode()) + _msg(5, b"0 0")


def _by_feed(stream, chunk_records):
    sink = ChunkSink()
    dec = StreamDecoder([sink], chunk_records)
    dec.feed_messages(stream)
    return sink


def test_blocks_straddling_chunks_give_the_same_chunks_as_feed(tmp_path):
    stream = _stream([5, 4, 1, 7])
    path = tmp_path / "s.bin"
    path.write_bytes(stream)
    sink = ChunkSink()
    decode_file(path, [sink], chunk_records=3)
    assert [len(c) for c in sink.chunks] == [3, 3, 3, 3, 3, 2]
    assert sink.chunks == _by_feed(stream, 3).chunks
    flat = [r for c in sink.chunks for r in c]
    assert flat == _block(0, 17).records()
    assert flat[16] == (3, 0, 0, 16, 32, 48, 21, (16 << 33) + 128, 7, 0)
    assert sink.ended[0].n_records == 17 and sink.ended[0].complete


def test_truncated_block_keeps_only_the_complete_blocks(tmp_path):
    full = _stream([4, 6])
    # cut the second block (at byte 8 + 5 * 42 of its payload): 4 complete records, then a broken block
    second = full.index(_msg(2, encode_records(_block(4, 6))))
    path = tmp_path / "s.bin"
    path.write_bytes(full[:second + 8 + 5 * RECORD_BYTES])
    sink = ChunkSink()
    try:
        decode_file(path, [sink], chunk_records=3)
    except TraceError as exc:
        assert str(exc).endswith(f"trace stream byte {second}: truncated message ({5 * RECORD_BYTES} of "
                                 f"{6 * RECORD_BYTES} bytes)")
    else:  # pragma: no cover
        raise AssertionError("no error for a truncated block")
    assert [r for c in sink.chunks for r in c] == _block(0, 4).records()
    assert sink.ended[0].complete is False and sink.ended[0].n_records == 4


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.integers(1, 40), min_size=1, max_size=6), chunk_records=st.integers(1, 50))
def test_read_stream_matches_feed(sizes, chunk_records):
    stream = _stream(sizes)
    sink = ChunkSink()
    StreamDecoder([sink], chunk_records).read_stream(io.BufferedReader(io.BytesIO(stream)))
    assert sink.chunks == _by_feed(stream, chunk_records).chunks
    assert [r for c in sink.chunks for r in c] == _block(0, sum(sizes)).records()
