"""The shared-memory ring between the Valgrind tool and the pipelined reader (RECORDS_SHM messages).

With ``--shm`` the tool writes its records straight into slots of a file both sides map and sends only
``u32 slot, u32 n, u32 stride`` through the FIFO; the reader copies the block into the sinks' chunk and
returns the slot with one byte on the credits FIFO. The sinks must get exactly the chunks they get from
RECORDS messages (the reference: ``StreamDecoder.feed``), and the tool's records must be the same whether
they travel through the ring or the pipe.
"""

import glob
import os
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_native_stream_blocks import ChunkSink, _block, _msg  # shared stream builders

import profiler.native.record as record_mod
from core.trace_schema import COLUMN_NAMES, TraceError
from profiler.native import INCLUDE_DIR
from profiler.native.build import NativeToolError, find_toolchain
from profiler.native.record import (
    RECORD_BYTES,
    SHM_SLOT_BYTES,
    WIRE_COLUMNS,
    StreamDecoder,
    decode_file,
    encode_records,
    record_program,
)
from profiler.trace import MemorySink

MSG_RECORDS_SHM = 6


def _put_slot(ring, slot, chunk, stride):
    """Write ``chunk``'s records into ring slot ``slot`` as the tool does: column by column, each column
    ``stride`` records long."""
    base = slot * SHM_SLOT_BYTES
    off = 0
    for name, dt in WIRE_COLUMNS:
        raw = np.ascontiguousarray(getattr(chunk, name), dtype=dt).view(np.uint8)
        ring[base + off:base + off + len(raw)] = raw
        off += stride * dt.itemsize


def _shm_msg(slot, n, stride):
    return _msg(MSG_RECORDS_SHM, np.array([slot, n, stride], "<u4").tobytes())


def _streams(regions, stride_extra=0):
    """A stream whose blocks alternate between ring slots (RECORDS_SHM) and RECORDS messages, the ring, and
    the equivalent stream of RECORDS messages only (the reference). ``regions``: per region, block sizes."""
    hello = _msg(0, f"portcast-vgtool 2 {RECORD_BYTES}".encode())
    n_shm = sum(1 for sizes in regions for k, _ in enumerate(sizes) if k % 2 == 0)
    ring = np.zeros(max(1, n_shm) * SHM_SLOT_BYTES, np.uint8)
    out, ref, start, slot = hello, hello, 0, 0
    for r, sizes in enumerate(regions):
        out += _msg(1, f"r{r}".encode())
        ref += _msg(1, f"r{r}".encode())
        first = start
        for k, n in enumerate(sizes):
            block = _block(start, n)
            if k % 2 == 0:
                _put_slot(ring, slot, block, n + stride_extra)
                out += _shm_msg(slot, n, n + stride_extra)
                slot += 1
            else:
                out += _msg(2, encode_records(block))
            ref += _msg(2, encode_records(block))
            start += n
        end = _msg(3, f"{start - first} 0 0 0 0 0 r{r}".encode())
        out += end
        ref += end
    fini = _msg(5, f"0 {start}".encode())
    return out + fini, ref + fini, ring, slot


def _by_feed(stream, chunk_records):
    sink = ChunkSink()
    dec = StreamDecoder([sink], chunk_records)
    dec.feed_messages(stream)
    return dec, sink


def _with_ring(path, ring, chunk_records, depth=2):
    """Decode ``path`` with the pipelined reader and ``ring``; returns the decoder, sink and credits."""
    sink = ChunkSink()
    dec = StreamDecoder([sink], chunk_records)
    r, w = os.pipe()
    fd = os.open(path, os.O_RDONLY)
    try:
        err = None
        try:
            dec.read_fd_pipelined(fd, depth=depth, ring=ring, credit_fd=w)
        except TraceError as exc:
            err = exc
        os.close(w)
        credits = b""
        while True:
            b = os.read(r, 4096)
            if not b:
                break
            credits += b
    finally:
        os.close(fd)
        os.close(r)
    return dec, sink, credits, err


@settings(max_examples=30, deadline=None)
@given(regions=st.lists(st.lists(st.integers(0, 40), min_size=0, max_size=5), min_size=1, max_size=3),
       chunk_records=st.integers(1, 50), stride_extra=st.integers(0, 9), depth=st.integers(1, 3))
def test_ring_blocks_give_the_chunks_of_records_messages(tmp_path_factory, regions, chunk_records, stride_extra,
                                                         depth):
    stream, ref, ring, n_shm = _streams(regions, stride_extra)
    path = tmp_path_factory.mktemp("ring") / "s.bin"
    path.write_bytes(stream)
    dec, sink, credits, err = _with_ring(path, ring, chunk_records, depth)
    assert err is None
    rdec, rsink = _by_feed(ref, chunk_records)
    assert sink.chunks == rsink.chunks
    assert [(i.name, i.n_records, i.complete) for i in dec.regions] == \
        [(i.name, i.n_records, i.complete) for i in rdec.regions]
    assert len(credits) == n_shm  # every slot returned once, after it was copied


def test_ring_worked_example_straddling_chunks(tmp_path):
    # slot 0: 7 records (stride 10), a RECORDS block of 3, slot 1: 10 records (stride 10); chunks of 4
    hello = _msg(0, f"portcast-vgtool 2 {RECORD_BYTES}".encode())
    ring = np.zeros(2 * SHM_SLOT_BYTES, np.uint8)
    _put_slot(ring, 0, _block(0, 7), 10)
    _put_slot(ring, 1, _block(10, 10), 10)
    stream = (hello + _msg(1, b"r0") + _shm_msg(0, 7, 10) + _msg(2, encode_records(_block(7, 3)))
              + _shm_msg(1, 10, 10) + _msg(3, b"20 0 0 0 0 0 r0") + _msg(5, b"0 20"))
    path = tmp_path / "s.bin"
    path.write_bytes(stream)
    dec, sink, credits, err = _with_ring(path, ring, 4)
    assert err is None and len(credits) == 2
    assert [len(c) for c in sink.chunks] == [4, 4, 4, 4, 4]
    assert [r for c in sink.chunks for r in c] == _block(0, 20).records()
    assert dec.regions[0].n_records == 20 and dec.regions[0].complete


def test_ring_block_naming_a_bad_slot_is_an_error(tmp_path):
    hello = _msg(0, f"portcast-vgtool 2 {RECORD_BYTES}".encode())
    ring = np.zeros(2 * SHM_SLOT_BYTES, np.uint8)
    _put_slot(ring, 0, _block(0, 5), 5)
    head = hello + _msg(1, b"r0") + _shm_msg(0, 5, 5)
    path = tmp_path / "s.bin"
    for bad, msg in ((_shm_msg(2, 1, 1), "names slot 2 or more records than a slot holds (ring of 2 slots)"),
                     (_shm_msg(1, 6, 5), "names slot 1 or more records than a slot holds (ring of 2 slots)"),
                     (_shm_msg(1, 1, SHM_SLOT_BYTES // RECORD_BYTES + 1),
                      "names slot 1 or more records than a slot holds (ring of 2 slots)")):
        path.write_bytes(head + bad + _msg(3, b"5 0 0 0 0 0 r0"))
        dec, sink, credits, err = _with_ring(path, ring, 100)
        assert str(err) == f"trace stream byte {len(head)}: shared-memory record block {msg}"
        dec.abort(str(err))  # as record_program does: the records before it stay
        assert [r for c in sink.chunks for r in c] == _block(0, 5).records()
        assert sink.ended[0].complete is False and len(credits) == 1


def test_ring_block_without_a_ring_is_an_error(tmp_path):
    hello = _msg(0, f"portcast-vgtool 2 {RECORD_BYTES}".encode())
    head = hello + _msg(1, b"r0")
    path = tmp_path / "s.bin"
    path.write_bytes(head + _shm_msg(0, 5, 5) + _msg(3, b"5 0 0 0 0 0 r0"))
    with pytest.raises(TraceError, match=rf"^{path}: trace stream byte {len(head)}: shared-memory record block "
                                         r"\(12-byte message\) in a stream read without the tool's ring"):
        decode_file(path, [ChunkSink()])
    fd = os.open(path, os.O_RDONLY)  # the pipelined reader without a ring: the same error
    with pytest.raises(TraceError, match=rf"^trace stream byte {len(head)}: shared-memory record block"):
        StreamDecoder([ChunkSink()], 10).read_fd_pipelined(fd)
    os.close(fd)
    path.write_bytes(hello + _shm_msg(0, 5, 5))
    with pytest.raises(TraceError, match=rf"trace stream byte {len(hello)}: records outside a region$"):
        decode_file(path, [ChunkSink()])


# -- the tool: ring and pipe give the same records

try:
    find_toolchain()
    _missing = None
except NativeToolError as exc:  # pragma: no cover - this machine has gcc and valgrind
    _missing = str(exc)


@pytest.fixture(scope="module")
def kernels_exe(tmp_path_factory):
    if _missing:
        pytest.skip(_missing)
    work = tmp_path_factory.mktemp("ring_kernels")
    exe = work / "native_kernels"
    src = os.path.join(os.path.dirname(__file__), "data", "native_kernels.c")
    subprocess.run(["gcc", "-O1", "-g", "-fno-inline", f"-I{INCLUDE_DIR}", "-o", str(exe), src, "-lm"], check=True)
    return exe


def _rings_left():
    return sorted(glob.glob("/dev/shm/portcast-ring-*"))


def _regions(sink):
    return [(info.name, info.n_records, info.n_threads, info.complete, dict(info.extra),
             sorted((e.pc, e.function, e.file, e.line, e.text) for e in static),
             tuple(getattr(chunk, c).tolist() for c in COLUMN_NAMES))
            for info, static, chunk in sink.regions]


@pytest.mark.parametrize("whole", [False, True])
def test_tool_records_through_ring_equal_pipe(kernels_exe, monkeypatch, whole):
    """Every region (whole program: many 43,690-record blocks, the 4 ring slots reused again and again)
    is the same, record for record, through the ring and through the pipe, with chunks cut mid-block."""
    made = []
    make = record_mod._make_ring
    monkeypatch.setattr(record_mod, "_make_ring", lambda *a, **k: made.append(1) or make(*a, **k))
    before = _rings_left()
    out = {}
    for shm in (None, False) + ((False,) if whole else ()):
        sink = MemorySink()
        record_program([kernels_exe, "1000"], [sink], whole_program=whole, chunk_records=10007, shm=shm,
                       stdout=subprocess.DEVNULL)
        out.setdefault(shm, []).append(sink)
    assert made == ([1] if os.path.isdir("/dev/shm") else [])  # the default uses the ring where it can
    ring, pipe = _regions(out[None][0]), _regions(out[False][0])
    if whole:
        # the dynamic loader's start-up reads a few addresses that differ from run to run (through the
        # pipe too): compare the addresses where two pipe runs agree, all else exactly
        other = out[False][1].regions[0][2].addr
        a, b = out[None][0].regions[0][2].addr, out[False][0].regions[0][2].addr
        assert len(a) == len(b) == len(other)
        stable = b == other
        assert (~stable).sum() < 10 and np.array_equal(a[stable], b[stable])
        addr = COLUMN_NAMES.index("addr")
        ring = [r[:6] + (r[6][:addr] + r[6][addr + 1:],) for r in ring]
        pipe = [r[:6] + (r[6][:addr] + r[6][addr + 1:],) for r in pipe]
    assert ring == pipe
    assert [r[0] for r in ring] == (["program"] if whole else
                                    ["saxpy", "histogram", "branchy", "special", "special_f", "matmul"])
    if whole:
        assert ring[0][1] > 5 * 43690
    assert _rings_left() == before  # the ring file is removed


def test_ring_unavailable(kernels_exe, monkeypatch):
    def no_ring(*a, **k):
        raise OSError("/dev/shm does not exist")

    monkeypatch.setattr(record_mod, "_make_ring", no_ring)
    with pytest.raises(NativeToolError, match=r"^cannot create the shared-memory ring in /dev/shm: "
                                              r"/dev/shm does not exist$"):
        record_program([kernels_exe, "10"], [MemorySink()], shm=True, stdout=subprocess.DEVNULL)
    sink = MemorySink()  # the default falls back to the pipe
    dec = record_program([kernels_exe, "10"], [sink], stdout=subprocess.DEVNULL)
    assert [i.name for i in dec.regions] == ["saxpy", "histogram", "branchy", "special", "special_f", "matmul"]


def test_ring_failing_sink_kills_the_tool_and_removes_the_ring(kernels_exe):
    class Failing:
        def start_region(self, info, static):
            pass

        def consume(self, chunk):
            raise RuntimeError("sink failed")

        def end_region(self, info, static):
            pass

    before = _rings_left()
    with pytest.raises(RuntimeError, match="sink failed"):
        record_program([kernels_exe, "1000"], [Failing()], whole_program=True, chunk_records=1000, shm=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert _rings_left() == before


def test_make_ring_sizes_and_maps_the_file(tmp_path):
    path, mm = record_mod._make_ring(3, folder=str(tmp_path))
    try:
        assert os.path.getsize(path) == 3 * SHM_SLOT_BYTES == len(mm)
        mm[5:8] = b"abc"
        with open(path, "rb") as f:
            f.seek(5)
            assert f.read(3) == b"abc"  # shared with the file (what the tool maps)
    finally:
        mm.close()
        os.unlink(path)
    with pytest.raises(OSError, match="does not exist"):
        record_mod._make_ring(1, folder=str(tmp_path / "missing"))
