"""The message stream of Portcast's Valgrind tool, and its decoder into trace chunks for sinks.

The tool (``vgtool/portcast_main.c``) writes a stream of messages (to a FIFO that :mod:`profiler.native.record`
reads while the program runs, or to a file: :func:`decode_file`). A message is ``u32 type, u32 length,
payload``:

====  ==============  ===============================================================================
type  name            payload
====  ==============  ===============================================================================
0     HELLO           ``portcast-vgtool <version> <bytes per record>``
1     REGION_START    region name
2     RECORDS         ``n = length / 42`` records, column by column: addr, tid (int64), pc, src1, src2,
                      src3, dst, size (int32), op, taken (uint8), each ``n`` values, little-endian
3     REGION_END      ``instructions loads stores branches dropped_sources ended_by_exit name``
4     STATIC          ``pc<TAB>address<TAB>kind<TAB>function<TAB>file<TAB>line``
5     FINI            ``exit_code total_instructions`` (:func:`record_program` reports the process status)
6     RECORDS_SHM     ``u32 slot, u32 n, u32 stride``: ``n`` records in slot ``slot`` of the shared-memory
                      ring, column by column as in RECORDS but each column ``stride`` records long
                      (only with ``--shm``, see below)
====  ==============  ===============================================================================

With ``--shm=FILE --shm-slots=K --credits=FIFO`` (what :func:`record_program` passes by default) the tool
writes its records straight into the next of ``K`` slots of :data:`SHM_SLOT_BYTES` in ``FILE``, which it
maps shared, and sends only a RECORDS_SHM message through the FIFO when a block is complete; the reader
copies the block from its own mapping of ``FILE`` into the chunk and then writes one byte to ``--credits``
(slots are used and returned in order; the tool waits for a credit before it reuses a slot). The records
and the sink calls are exactly those of RECORDS messages; the trace bytes just do not pass through the pipe.

:func:`record_program` reads the FIFO in a second thread with compiled code that holds no GIL
(:meth:`StreamDecoder.read_fd_pipelined`, :mod:`profiler.native._pump`) while the sinks run in the calling
thread, so the tool, the reader and the sinks run at the same time; the sinks get exactly the calls of the
single-threaded :meth:`StreamDecoder.read_stream`.
"""

from __future__ import annotations

import collections
import os
import queue
import signal
import struct
import sys
import threading
import time
from collections import Counter
from typing import BinaryIO, Iterable

import numpy as np

from core.trace_schema import COLUMN_NAMES, TraceError
from core.version import portcast_version

from ..trace import DEFAULT_CHUNK_RECORDS, RegionInfo, StaticInstruction, StaticTable, TraceChunk
from . import _pump

#: Columns of a RECORDS message, in the order the tool writes them (see ``flush_records`` in the tool).
WIRE_COLUMNS: tuple[tuple[str, np.dtype], ...] = tuple(
    (name, np.dtype(dt)) for name, dt in (("addr", "<i8"), ("tid", "<i8"), ("pc", "<i4"), ("src1", "<i4"),
                                          ("src2", "<i4"), ("src3", "<i4"), ("dst", "<i4"), ("size", "<i4"),
                                          ("op", "u1"), ("taken", "u1")))
#: Bytes per record on the wire.
RECORD_BYTES = sum(dt.itemsize for _, dt in WIRE_COLUMNS)
#: Version of the tool's stream this reader understands.
STREAM_VERSION = 2

MSG_HELLO, MSG_REGION_START, MSG_RECORDS, MSG_REGION_END, MSG_STATIC, MSG_FINI, MSG_RECORDS_SHM = range(7)
#: Bytes per slot of the shared-memory ring (the tool's ``SHM_SLOT_BYTES``; holds its largest block).
SHM_SLOT_BYTES = 1 << 21
#: Slots of the ring :func:`record_program` creates.
SHM_SLOTS = 4
_MAX_PAYLOAD = 1 << 26
#: Staging buffer of the pipelined reader: holds the tool's largest RECORDS block (43,690 records).
BUF_BYTES = 1 << 21
_HEADER = struct.Struct("<II")
#: Before each entry of the pipelined reader's static-entry batch: payload length, stream offset.
_STATIC_ENTRY = struct.Struct("<IQ")
#: Size of that batch: static entries (one per translated guest instruction, program start-up included)
#: travel to the decoding thread in batches instead of one queue item each.
STATICS_BATCH_BYTES = 1 << 18


def encode_records(chunk: TraceChunk) -> bytes:
    """The RECORDS payload the tool would write for ``chunk`` (for tests and tools that feed the decoder)."""
    return b"".join(np.ascontiguousarray(getattr(chunk, name), dtype=dt).tobytes() for name, dt in WIRE_COLUMNS)


def decode_records(payload: bytes) -> dict[str, np.ndarray]:
    """Column views (no copy) of a RECORDS payload; the length must be a multiple of :data:`RECORD_BYTES`."""
    n = len(payload) // RECORD_BYTES
    cols, off = {}, 0
    for name, dt in WIRE_COLUMNS:
        cols[name] = np.frombuffer(payload, dt, count=n, offset=off)
        off += n * dt.itemsize
    return cols


class StreamDecoder:
    """Turns the tool's message stream into sink calls (regions, bounded chunks, static tables).

    Parameters
    ----------
    sinks:
        :class:`profiler.trace.TraceSink` objects; each region is sent to all of them.
    chunk_records:
        Most records per chunk handed to the sinks.
    source:
        What was traced (the command line), stored in each region's metadata.
    """

    def __init__(self, sinks: Iterable, chunk_records: int = DEFAULT_CHUNK_RECORDS, source: str = "") -> None:
        self.sinks = list(sinks)
        self.chunk_records = int(chunk_records)
        self.source = source
        self.static_all: dict[int, StaticInstruction] = {}
        self.regions: list[RegionInfo] = []
        self.exit_code: int | None = None
        self.total_instructions = 0
        self.hello: str | None = None
        self._invocations: Counter = Counter()
        self._info: RegionInfo | None = None
        self._buf: TraceChunk | None = None
        self._fill = 0
        self._pc_seen = np.zeros(1 << 16, bool)
        self._tid_seen = np.zeros(0, bool)
        self._tids_big: set[int] = set()
        self._t0 = 0.0

    # -- messages
    def feed(self, mtype: int, payload: bytes, offset: int) -> None:
        """Handle one message; ``offset`` (byte offset of its header in the stream) is used in errors."""
        if mtype == MSG_RECORDS:
            if self._info is None:
                raise TraceError(f"trace stream byte {offset}: records outside a region")
            if len(payload) % RECORD_BYTES:
                raise TraceError(f"trace stream byte {offset}: record block of {len(payload)} bytes is not a "
                                 f"multiple of {RECORD_BYTES}")
            self._add(decode_records(payload))
        elif mtype == MSG_STATIC:
            self._static(payload.decode("utf-8", "replace"), offset)
        elif mtype == MSG_REGION_START:
            if self._info is not None:
                raise TraceError(f"trace stream byte {offset}: region start inside region {self._info.name!r}")
            name = payload.decode("utf-8", "replace")
            inv = self._invocations[name]
            self._invocations[name] += 1
            self._info = RegionInfo(name=name, invocation=inv, mode="native", source=self.source,
                                    portcast_version=portcast_version(), extra={"recorder": "valgrind"})
            self._pc_seen = np.zeros(1 << 16, bool)
            self._tid_seen = np.zeros(0, bool)
            self._tids_big = set()
            self._t0 = time.perf_counter()
            for s in self.sinks:
                s.start_region(self._info, StaticTable())
        elif mtype == MSG_REGION_END:
            if self._info is None:
                raise TraceError(f"trace stream byte {offset}: region end outside a region")
            fields = payload.decode("utf-8", "replace").split(" ", 6)
            if len(fields) != 7:
                raise TraceError(f"trace stream byte {offset}: malformed region end {payload[:80]!r}")
            ins, loads, stores, branches, dropped, by_exit = (int(x) for x in fields[:6])
            self._flush(final=True)
            info = self._info
            info.wall_time_s = time.perf_counter() - self._t0
            info.extra.update({"guest_instructions": ins, "loads": loads, "stores": stores,
                               "cond_branches": branches, "dropped_sources": dropped})
            if by_exit:
                info.complete = False
                info.error = "the program exited inside the region (no PORTCAST_REGION_END)"
            self._end(info)
        elif mtype == MSG_HELLO:
            self.hello = payload.decode("ascii", "replace")
            parts = self.hello.split()
            if (len(parts) != 3 or parts[0] != "portcast-vgtool" or parts[1] != str(STREAM_VERSION)
                    or int(parts[2]) != RECORD_BYTES):
                raise TraceError(f"trace stream: unexpected tool greeting {self.hello!r} (stale tool build?)")
        elif mtype == MSG_FINI:
            code, total = payload.decode("ascii").split()
            self.exit_code, self.total_instructions = int(code), int(total)
        elif mtype == MSG_RECORDS_SHM:
            if self._info is None:
                raise TraceError(f"trace stream byte {offset}: records outside a region")
            raise TraceError(f"trace stream byte {offset}: shared-memory record block ({len(payload)}-byte "
                             "message) in a stream read without the tool's ring (decode it with the "
                             "pipelined reader and the ring it was recorded with)")
        else:
            raise TraceError(f"trace stream byte {offset}: unknown message type {mtype}")

    def feed_messages(self, stream: bytes) -> None:
        """Decode a whole stream held in memory, one message at a time through :meth:`feed` (the plain
        reference the fast readers are tested against)."""
        off = 0
        while off < len(stream):
            if off + 8 > len(stream):
                raise TraceError(f"trace stream byte {off}: truncated message header")
            t, n = np.frombuffer(stream[off:off + 8], "<u4").tolist()
            self.feed(t, stream[off + 8:off + 8 + n], off)
            off += 8 + n

    def _static(self, text: str, offset: int) -> None:
        parts = text.split("\t")
        if len(parts) != 6:
            raise TraceError(f"trace stream byte {offset}: malformed static entry {text[:120]!r}")
        pc, addr, kind, fn, file, line = parts
        self.static_all[int(pc)] = StaticInstruction(
            pc=int(pc), file=file or "?", line=int(line), col=0, text=f"0x{int(addr):x} {kind}", function=fn,
            kind=kind)

    def _statics(self, batch: bytes) -> None:
        """The static entries of a batch the pipelined reader collected (see :func:`_pump.pump`)."""
        at, n = 0, len(batch)
        while at < n:
            length, offset = _STATIC_ENTRY.unpack_from(batch, at)
            at += _STATIC_ENTRY.size
            self._static(batch[at:at + length].decode("utf-8", "replace"), offset)
            at += length

    def _add(self, cols: dict[str, np.ndarray]) -> None:
        n = len(cols["pc"])
        start = 0
        while start < n:
            if self._buf is None:
                self._buf = TraceChunk.empty(self.chunk_records)
                self._fill = 0
            take = min(n - start, self.chunk_records - self._fill)
            for name in COLUMN_NAMES:
                getattr(self._buf, name)[self._fill:self._fill + take] = cols[name][start:start + take]
            self._fill += take
            start += take
            if self._fill == self.chunk_records:
                self._flush(final=False)

    def _read_records(self, f: BinaryIO, n: int, offset: int) -> None:
        """Read a RECORDS block of ``n`` records straight into the sinks' chunk columns (no staging copy).

        The block is column-major, so each column is read in one or two pieces (two when the block
        straddles a chunk boundary). Chunks filled by the block go to the sinks once all of it is read;
        on a truncated block the chunk state is restored, as if the block had never started.
        """
        buf0, fill0 = self._buf, self._fill
        segs, full = [], []
        start = 0
        while start < n:
            if self._buf is None:
                self._buf = TraceChunk.empty(self.chunk_records)
                self._fill = 0
            take = min(n - start, self.chunk_records - self._fill)
            segs.append((self._buf, self._fill, take))
            self._fill += take
            start += take
            if self._fill == self.chunk_records:
                full.append(self._buf)
                self._buf, self._fill = None, 0
        got = 0
        for name, dt in WIRE_COLUMNS:
            for chunk, at, take in segs:
                col = getattr(chunk, name)
                if col.dtype == dt and col.flags.c_contiguous:
                    k = _read_into(f, memoryview(col[at:at + take].view(np.uint8)))
                else:  # pragma: no cover - the chunk's columns have the wire dtypes
                    raw = _read_full(f, take * dt.itemsize)
                    k = len(raw)
                    col[at:at + k // dt.itemsize] = np.frombuffer(raw, dt, count=k // dt.itemsize)
                got += k
                if k < take * dt.itemsize:
                    self._buf, self._fill = buf0, fill0
                    raise TraceError(f"trace stream byte {offset}: truncated message ({got} of "
                                     f"{n * RECORD_BYTES} bytes)")
        partial = (self._buf, self._fill)
        for chunk in full:
            self._buf, self._fill = chunk, self.chunk_records
            self._flush(final=False)
        self._buf, self._fill = partial

    def _flush(self, final: bool) -> None:
        if self._buf is None or self._fill == 0:
            self._buf = None
            return
        chunk = self._buf if self._fill == self.chunk_records else self._buf.slice(0, self._fill)
        self._buf, self._fill = None, 0
        pcs = chunk.pc
        tids = chunk.tid
        pmin, pmax, tmax = _pump.extent(pcs, tids)
        top = int(pmax) + 1
        if top > len(self._pc_seen):
            self._pc_seen = np.concatenate(
                [self._pc_seen, np.zeros(max(top, 2 * len(self._pc_seen)) - len(self._pc_seen), bool)]
            )
        if pmin >= 0 and tmax < (1 << 26):  # the common case, in one compiled pass
            if tmax + 1 > len(self._tid_seen):
                self._tid_seen = np.concatenate(
                    [self._tid_seen, np.zeros(max(int(tmax) + 1, 2 * len(self._tid_seen)) - len(self._tid_seen), bool)]
                )
            _pump.mark_seen(pcs, tids, self._pc_seen, self._tid_seen)
        else:
            self._mark_seen_slow(pcs, tids)
        self._info.n_records += len(chunk)
        for s in self.sinks:
            s.consume(chunk)

    def _mark_seen_slow(self, pcs: np.ndarray, tids: np.ndarray) -> None:
        self._pc_seen[pcs] = True
        if int(tids.max()) >= 0:
            t = tids[tids >= 0]
            tmax = int(t.max()) + 1
            if tmax <= (1 << 26):
                if tmax > len(self._tid_seen):
                    self._tid_seen = np.concatenate(
                        [self._tid_seen, np.zeros(max(tmax, 2 * len(self._tid_seen)) - len(self._tid_seen), bool)]
                    )
                self._tid_seen[t] = True
            else:
                self._tids_big.update(np.unique(t).tolist())

    def _end(self, info: RegionInfo) -> None:
        info.n_threads = int(self._tid_seen.sum()) + len(self._tids_big)
        if info.n_threads:
            info.parallel_loop = "PORTCAST_THREAD"
        used = np.flatnonzero(self._pc_seen).tolist()
        static = StaticTable(self.static_all[pc] for pc in used if pc in self.static_all)
        for s in self.sinks:
            s.end_region(info, static)
        self.regions.append(info)
        self._info = None
        self._buf, self._fill = None, 0

    def abort(self, reason: str) -> None:
        """End an open region as incomplete (the stream stopped early)."""
        if self._info is None:
            return
        try:
            self._flush(final=True)
        finally:
            self._info.complete = False
            self._info.error = reason
            self._end(self._info)

    # -- streams
    def read_stream(self, f: BinaryIO) -> None:
        """Decode messages from a blocking binary stream until end of file.

        Record blocks are read into one reused buffer (``readinto`` where the stream has it): the
        column views of a block live only until its records are copied into the sinks' chunk, and a
        fresh multi-megabyte ``bytes`` per block would cost an allocation and its page faults.
        """
        offset = 0
        rbuf = bytearray(1 << 21)
        while True:
            hdr = _read_full(f, 8)
            if not hdr:
                return
            if len(hdr) < 8:
                raise TraceError(f"trace stream byte {offset}: truncated message header")
            mtype, length = _HEADER.unpack(hdr)
            if length > _MAX_PAYLOAD:
                raise TraceError(f"trace stream byte {offset}: message of {length} bytes is implausible")
            if mtype == MSG_RECORDS and self._info is not None and length % RECORD_BYTES == 0:
                self._read_records(f, length // RECORD_BYTES, offset)
                offset += 8 + length
                continue
            if mtype == MSG_RECORDS:  # malformed or misplaced: read it, then let feed() name the error
                if length > len(rbuf):
                    rbuf = bytearray(length)
                payload = memoryview(rbuf)[:length]
                got = _read_into(f, payload)
                if got < length:
                    raise TraceError(f"trace stream byte {offset}: truncated message ({got} of {length} bytes)")
            else:
                payload = _read_full(f, length)
                if len(payload) < length:
                    raise TraceError(
                        f"trace stream byte {offset}: truncated message ({len(payload)} of {length} bytes)"
                    )
            self.feed(mtype, payload, offset)
            offset += 8 + length

    def read_fd_pipelined(self, fd: int, offset: int = 0, depth: int = 2, on_error=None,
                          ring: np.ndarray | None = None, credit_fd: int = -1) -> None:
        """Decode messages from the blocking file descriptor ``fd`` until end of file, reading in a thread.

        A reader thread fills chunks straight from ``fd`` with compiled code that holds no GIL
        (:func:`profiler.native._pump.pump`, driven by :class:`_PumpThread`) while this thread hands the
        previous chunk to the sinks, so the tool, the reader and the sinks (the feature engine) run at the same
        time. The sinks get the same calls, in the same order, with the same chunks as :meth:`read_stream`;
        errors are the same.

        Parameters
        ----------
        fd:
            A blocking file descriptor (FIFO or file), positioned at a message boundary.
        offset:
            Stream byte offset of that boundary (for error messages).
        depth:
            Most chunks in flight (being filled or waiting for the sinks): memory stays bounded.
        on_error:
            Called (no arguments) when decoding or a sink fails, before waiting for the reader thread to
            end: it must make ``fd`` reach end of file (e.g. kill the writing program).
        ring:
            The shared-memory ring (uint8, slots of :data:`SHM_SLOT_BYTES`) when the tool runs with
            ``--shm``: RECORDS_SHM blocks are copied from it.
        credit_fd:
            Where a byte is written for each ring slot finished with (the tool's ``--credits`` FIFO).
        """
        reader = _PumpThread(fd, offset, self._info is not None, self.chunk_records, depth, ring, credit_fd)
        thread = threading.Thread(target=reader.run, name="portcast-trace-reader", daemon=True)
        thread.start()
        try:
            self._drain(reader)
        except BaseException:
            reader.stop.set()
            if on_error is not None:
                on_error()
            raise
        finally:
            reader.stop.set()
            for _ in range(4):  # unblock a reader waiting for a chunk slot
                reader.slots.release()
            thread.join(timeout=30)  # it ends at end of file (fd must not be closed while it reads)

    def _drain(self, reader: _PumpThread) -> None:
        """Act on what the reader thread puts on its queue until end of file (an error it read is raised here).
        A full chunk no sink kept goes back to the reader to be filled again."""
        while True:
            ev = reader.events.get()
            kind = ev[0]
            if kind == "chunk":
                chunk, fill = ev[1].pop(), ev[2]
                del ev
                try:
                    self._take_chunk(chunk, fill)
                    if fill == reader.cap and self._buf is not chunk and _unshared(chunk):
                        reader.free.append(chunk)
                    del chunk
                finally:
                    reader.slots.release()
            elif kind == "statics":
                self._statics(ev[1])
            elif kind == "static":
                self._static(ev[1].decode("utf-8", "replace"), ev[2])
            elif kind == "msg":
                self.feed(ev[1], ev[2], ev[3])
            elif kind == "eof":
                return
            else:
                raise ev[1]

    def _take_chunk(self, chunk: TraceChunk, fill: int) -> None:
        """Records a reader thread read into ``chunk[:fill]``: a full chunk goes to the sinks as it is."""
        if fill == 0:
            return
        if self._info is None:  # pragma: no cover - the reader fills chunks only inside a region
            raise TraceError("trace stream: records outside a region")
        if self._buf is None or self._fill == 0:
            self._buf, self._fill = chunk, fill
            if fill == self.chunk_records:
                self._flush(final=False)
        else:  # the decoder holds records of a block it decoded itself: keep the chunk boundaries
            self._add({name: getattr(chunk, name)[:fill] for name, _ in WIRE_COLUMNS})


class _PumpThread:
    """The reader thread of :meth:`StreamDecoder.read_fd_pipelined`: fills chunks from ``fd`` with
    :func:`_pump.pump` and puts on ``events`` what the decoding thread must do, in stream order: ("chunk",
    [chunk], records filled), ("statics", batch), ("static", payload, offset), ("msg", type, payload,
    offset), ("eof",) or ("error", exception). ``slots`` bounds the chunks in flight; ``free`` holds full
    chunks the sinks did not keep, filled again (fresh memory would cost a page fault per 4 KiB)."""

    def __init__(self, fd: int, offset: int, in_region: bool, cap: int, depth: int, ring: np.ndarray | None,
                 credit_fd: int) -> None:
        self.fd = fd
        self.cap = cap
        self.events: queue.Queue = queue.Queue()
        self.free: collections.deque = collections.deque()
        self.slots = threading.Semaphore(max(1, int(depth)))
        self.stop = threading.Event()
        self.isz = np.array([dt.itemsize for _, dt in WIRE_COLUMNS], np.int64)
        if ring is None:
            self.ring, self.slot_bytes = np.zeros(0, np.uint8), 0
        else:
            self.ring, self.slot_bytes = ring, SHM_SLOT_BYTES
        self.credit_fd = credit_fd
        self.st = np.zeros(_pump.N_STATE, np.int64)
        self.st[_pump.S_OFFSET] = offset
        self.st[_pump.S_IN_REGION] = 1 if in_region else 0
        self.st[_pump.S_STAGE_SLOT] = -1
        self.statics = np.zeros(STATICS_BATCH_BYTES, np.uint8)
        self.stage = np.zeros(BUF_BYTES, np.uint8)
        self.hdr = np.zeros(8, np.uint8)
        self.chunk: TraceChunk | None = None
        self.cols: tuple | None = None

    def run(self) -> None:
        """The thread's body: pump until end of file, an error (handed to the decoding thread) or ``stop``."""
        try:
            if hasattr(signal, "pthread_sigmask"):  # signals go to the main thread; reads here are never cut
                signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
            while self._step():
                pass
        except BaseException as exc:  # handed to the main thread, raised there
            self.events.put(("error", exc))

    def _take_slot(self) -> bool:
        """A chunk to fill (a free one or a new one) once a slot is free; False when stopped meanwhile."""
        while not self.slots.acquire(timeout=0.1):
            if self.stop.is_set():
                return False
        self.chunk = self.free.pop() if self.free else TraceChunk.empty(self.cap)
        self.cols = tuple(getattr(self.chunk, name).view(np.uint8) for name, _ in WIRE_COLUMNS)
        self.st[_pump.S_FILL] = 0
        return True

    def _hand_over(self, fill: int) -> None:
        """The chunk being filled, its first ``fill`` records read, to the decoding thread, which takes the only
        reference to it."""
        box = [self.chunk]
        self.chunk = self.cols = None
        self.events.put(("chunk", box, fill))

    def _step(self) -> bool:
        """One call of the pump and what its result asks for; False when the thread is done."""
        st = self.st
        if self.chunk is None and not self._take_slot():
            return False
        status = _pump.pump(self.fd, self.cols, self.isz, self.cap, st, self.stage, self.hdr, _MAX_PAYLOAD,
                            self.ring, self.slot_bytes, self.credit_fd, self.statics)
        if st[_pump.S_STATICS]:  # static entries first: they keep their place among the messages
            self.events.put(("statics", self.statics[:st[_pump.S_STATICS]].tobytes()))
            st[_pump.S_STATICS] = 0
        if self.stop.is_set():
            return False
        if status == _pump.ST_FULL:
            self._hand_over(self.cap)
            return True
        at = int(st[_pump.S_MSG_OFFSET])
        if status == _pump.ST_MSG:
            self._message(at)
            return True
        self._hand_over(int(st[_pump.S_FILL]))
        if status == _pump.ST_CREDIT:
            raise TraceError(f"trace stream byte {at}: returning a ring slot to the tool failed (the tool is gone)")
        if status == _pump.ST_EOF:
            self.events.put(("eof",))
            return False
        if status == _pump.ST_TRUNC_HDR:
            raise TraceError(f"trace stream byte {at}: truncated message header")
        raise TraceError(f"trace stream byte {at}: truncated message ({int(st[_pump.S_GOT])} of "
                         f"{int(st[_pump.S_LENGTH])} bytes)")

    def _message(self, at: int) -> None:
        """A message the pump left to Python (its header read, at stream offset ``at``): a STATIC entry out of
        band, any other after the records read before it."""
        st = self.st
        fill = int(st[_pump.S_FILL])
        mtype, length = int(st[_pump.S_MTYPE]), int(st[_pump.S_LENGTH])
        if mtype == MSG_RECORDS_SHM and length < 0:  # read, but names no valid ring slot
            self._hand_over(fill)
            raise TraceError(f"trace stream byte {at}: shared-memory record block names slot "
                             f"{int(st[_pump.S_GOT])} or more records than a slot holds "
                             f"(ring of {len(self.ring) // max(1, self.slot_bytes)} slots)")
        if mtype == MSG_STATIC and length <= _MAX_PAYLOAD:  # no effect on the chunks: out of band
            payload = _read_fd(self.fd, length)
            if len(payload) < length:
                self._hand_over(fill)  # the records read so far stay
                raise TraceError(f"trace stream byte {at}: truncated message ({len(payload)} of {length} bytes)")
            st[_pump.S_OFFSET] += length
            self.events.put(("static", payload, at))
            return
        self._hand_over(fill)  # the records before the message, then the message
        if length > _MAX_PAYLOAD:
            raise TraceError(f"trace stream byte {at}: message of {length} bytes is implausible")
        payload = _read_fd(self.fd, length)
        if len(payload) < length:
            raise TraceError(f"trace stream byte {at}: truncated message ({len(payload)} of {length} bytes)")
        st[_pump.S_OFFSET] += length
        if mtype == MSG_REGION_START:
            st[_pump.S_IN_REGION] = 1
        elif mtype == MSG_REGION_END:
            st[_pump.S_IN_REGION] = 0
        self.events.put(("msg", mtype, payload, at))


def _read_full(f: BinaryIO, n: int) -> bytes:
    b = f.read(n)  # a blocking stream returns all n bytes unless it ends first
    if len(b) == n or not b:
        return b
    parts, got = [b], len(b)
    while got < n:
        b = f.read(n - got)
        if not b:
            break
        parts.append(b)
        got += len(b)
    return b"".join(parts)


def _unshared(chunk: TraceChunk) -> bool:
    """True when nothing but the caller's one variable refers to ``chunk`` or its column arrays (no sink
    kept the chunk, a column or a view of one), so that its memory can be filled again."""
    return (sys.getrefcount(chunk) == _CHUNK_REFS
            and all(sys.getrefcount(getattr(chunk, name)) == _COLUMN_REFS for name, _ in WIRE_COLUMNS))


def _probe(chunk: TraceChunk) -> tuple[int, int]:
    return sys.getrefcount(chunk), sys.getrefcount(getattr(chunk, "pc"))


def _calibrate() -> tuple[int, int]:
    """The reference counts :func:`_unshared` sees for a chunk held by one variable of its caller."""
    chunk = TraceChunk.empty(1)
    return _probe(chunk)


_CHUNK_REFS, _COLUMN_REFS = _calibrate()


def _read_fd(fd: int, n: int) -> bytes:
    """Up to ``n`` bytes from the blocking descriptor ``fd`` (fewer only at end of file)."""
    parts, got = [], 0
    while got < n:
        b = os.read(fd, n - got)
        if not b:
            break
        parts.append(b)
        got += len(b)
    return b"".join(parts)


def _read_into(f: BinaryIO, view: memoryview) -> int:
    """Fill ``view`` from ``f`` (``readinto`` when available); returns the bytes read (less at end of file)."""
    readinto = getattr(f, "readinto", None)
    got, n = 0, len(view)
    while got < n:
        if readinto is not None:
            k = readinto(view[got:])
            if not k:
                break
        else:
            b = f.read(n - got)
            if not b:
                break
            k = len(b)
            view[got:got + k] = b
        got += k
    return got



def _decode_pipelined(decoder: StreamDecoder, fd: int, first: bytes, on_error=None, ring=None,
                      credit_fd: int = -1) -> None:
    """Decode the stream on ``fd`` whose first bytes, ``first`` (part of the first header), were read."""
    hdr = first + _read_fd(fd, 8 - len(first)) if len(first) < 8 else first[:8]
    if len(hdr) < 8:
        raise TraceError("trace stream byte 0: truncated message header")
    mtype, length = _HEADER.unpack(hdr)
    if length > _MAX_PAYLOAD:
        raise TraceError(f"trace stream byte 0: message of {length} bytes is implausible")
    payload = first[8:] + _read_fd(fd, length - len(first[8:]))
    if len(payload) < length:
        raise TraceError(f"trace stream byte 0: truncated message ({len(payload)} of {length} bytes)")
    decoder.feed(mtype, payload, 0)
    decoder.read_fd_pipelined(fd, offset=8 + length, on_error=on_error, ring=ring, credit_fd=credit_fd)


class _Prefixed:
    """A binary reader that first returns ``prefix``, then reads from ``f``."""

    def __init__(self, prefix: bytes, f: BinaryIO) -> None:
        self._prefix = prefix
        self._f = f

    def read(self, n: int) -> bytes:
        if self._prefix:
            out, self._prefix = self._prefix[:n], self._prefix[n:]
            return out
        return self._f.read(n)

    def readinto(self, view) -> int:
        if self._prefix:
            k = min(len(view), len(self._prefix))
            view[:k] = self._prefix[:k]
            self._prefix = self._prefix[k:]
            return k
        return self._f.readinto(view)


def decode_file(path: str | os.PathLike, sinks: Iterable, chunk_records: int = DEFAULT_CHUNK_RECORDS) -> StreamDecoder:
    """Decode a message stream the tool wrote to a regular file (``valgrind --tool=portcast --out=FILE``).

    Parameters
    ----------
    path:
        The file.
    sinks, chunk_records:
        As for :func:`record_program`.

    Returns
    -------
    StreamDecoder
        The decoder, with its ``regions``.
    """
    decoder = StreamDecoder(sinks, chunk_records, source=str(path))
    with open(path, "rb") as f:
        try:
            decoder.read_stream(f)
        except TraceError as exc:
            decoder.abort(str(exc))
            raise TraceError(f"{path}: {exc}") from None
    decoder.abort("the stream ended inside the region")
    return decoder



__all__ = ["RECORD_BYTES", "SHM_SLOT_BYTES", "SHM_SLOTS", "WIRE_COLUMNS", "encode_records", "decode_records",
           "StreamDecoder", "decode_file"]
