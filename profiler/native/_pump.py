"""The tool stream's record blocks read into chunk columns by compiled code that runs without the GIL.

:func:`pump` is the inner loop of :meth:`profiler.native.record.StreamDecoder.read_fd_pipelined`: a reader
thread calls it to fill a chunk straight from the FIFO (libc ``read`` into the columns) while the main
thread runs the sinks (the feature engine) on the previous chunk. Because it holds no GIL, the Valgrind
tool, the reader and the engine run at the same time; the sinks see exactly the chunks of
:meth:`~profiler.native.record.StreamDecoder.read_stream`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

#: libc ``read(fd, buf, n)``, called from compiled code (the pointer passed as an integer: same ABI).
_c_read = types.ExternalFunction("read", types.intp(types.intc, types.uintp, types.uintp))
#: libc ``memcpy(dst, src, n)`` (a slice assignment of uint8 arrays in compiled code copies byte by byte)
_c_memcpy = types.ExternalFunction("memcpy", types.uintp(types.uintp, types.uintp, types.uintp))
#: libc ``write(fd, buf, n)``
_c_write = types.ExternalFunction("write", types.intp(types.intc, types.uintp, types.uintp))

#: pump() results
ST_FULL, ST_MSG, ST_EOF, ST_TRUNC_HDR, ST_TRUNC = range(5)
#: pump() result: writing a credit to the tool failed (the tool is gone)
ST_CREDIT = 5
#: indices into pump()'s state array (S_STAGE_SLOT: the ring slot being copied, -1 for ``stage``)
#: (S_STAGE_STRIDE: the staged block's column length, i.e. column c starts at byte stride * sum(isz[:c]))
#: (S_STATICS: bytes used in the static-entry batch ``statics``)
(S_FILL, S_STAGE_N, S_STAGE_USED, S_OFFSET, S_IN_REGION, S_MTYPE, S_LENGTH, S_GOT, S_MSG_OFFSET,
 S_STAGE_SLOT, S_STAGE_STRIDE, S_STATICS) = range(12)
N_STATE = 12
#: bytes before each entry of the static-entry batch: u32 payload length, u64 stream offset of its message
STATIC_ENTRY_HEADER = 12

_MSG_RECORDS = 2
_MSG_RECORDS_SHM = 6
_MSG_STATIC = 4


@njit(nogil=True, cache=True)
def read_full(fd, buf, start, n):
    """Read ``n`` bytes from ``fd`` into ``buf[start:start + n]`` (uint8); returns the bytes read (less at
    end of file or on an error)."""
    got = 0
    base = buf.ctypes.data + start
    while got < n:
        r = _c_read(fd, base + got, n - got)
        if r <= 0:
            break
        got += r
    return got


@njit(nogil=True, cache=True)
def _u32(b, at):
    """The little-endian u32 at ``b[at:at + 4]`` (uint8), as int64."""
    return np.int64(b[at]) | (np.int64(b[at + 1]) << 8) | (np.int64(b[at + 2]) << 16) | (np.int64(b[at + 3]) << 24)


@njit(nogil=True, cache=True)
def _batch_static(fd, length, st, statics):
    """Read a STATIC message's payload (``length`` bytes, it fits) into the batch ``statics`` behind its entry
    header; returns -1, or ST_TRUNC when the stream ends first."""
    used = st[S_STATICS]
    got = read_full(fd, statics, used + STATIC_ENTRY_HEADER, length)
    if got < length:
        st[S_LENGTH] = length
        st[S_GOT] = got
        return ST_TRUNC
    at = st[S_OFFSET]
    for k in range(4):
        statics[used + k] = (length >> (8 * k)) & 0xFF
    for k in range(8):
        statics[used + 4 + k] = (at >> (8 * k)) & 0xFF
    st[S_STATICS] = used + STATIC_ENTRY_HEADER + length
    st[S_OFFSET] += 8 + length
    return -1


@njit(nogil=True, cache=True)
def _ring_block(fd, rec, st, shm_msg, ring, slot_bytes, credit_fd, hdr):
    """Read a RECORDS_SHM message (``rec`` bytes per record) and stage its ring slot for copying; returns -1,
    ST_TRUNC (the stream ends inside it), ST_MSG (it names no valid block: ``st[S_LENGTH]`` -1, the slot in
    ``st[S_GOT]``) or ST_CREDIT (an empty block whose slot could not be given back)."""
    got = read_full(fd, shm_msg, 0, 12)
    if got < 12:
        st[S_LENGTH] = 12
        st[S_GOT] = got
        return ST_TRUNC
    slot = _u32(shm_msg, 0)
    n = _u32(shm_msg, 4)
    stride = _u32(shm_msg, 8)
    st[S_OFFSET] += 20
    if (slot + 1) * slot_bytes > len(ring) or n > stride or stride * rec > slot_bytes:
        st[S_MTYPE] = _MSG_RECORDS_SHM
        st[S_LENGTH] = -1  # an invalid block: the caller names it
        st[S_GOT] = slot
        return ST_MSG
    st[S_STAGE_N] = n
    st[S_STAGE_USED] = 0
    st[S_STAGE_SLOT] = slot
    st[S_STAGE_STRIDE] = stride
    if n == 0:
        st[S_STAGE_SLOT] = -1
        if _c_write(credit_fd, hdr.ctypes.data, 1) != 1:
            return ST_CREDIT
    return -1


@njit(nogil=True, cache=True)
def pump(fd, cols, isz, cap, st, stage, hdr, max_payload, ring, slot_bytes, credit_fd, statics):
    """Fill the chunk columns ``cols`` (uint8 views, item sizes ``isz``, capacity ``cap`` records) from ``fd``.

    Reads messages until the chunk is full (ST_FULL), a message other than an in-region RECORDS block
    that fits the staging buffer (or a valid RECORDS_SHM block) arrives (ST_MSG: its header was read, type
    and length in ``st``, the payload is left for the caller), the stream ends (ST_EOF) or is cut
    (ST_TRUNC_HDR, ST_TRUNC: ``st`` holds the bytes got of the message). A block that fits the chunk is
    read column by column straight into it; one that does not is read into ``stage`` and copied in pieces
    (the rest goes into the next chunk, at the next call). A RECORDS_SHM block (``u32 slot, u32 n, u32
    stride``: ``n`` records in slot ``slot`` of ``ring``, slots of ``slot_bytes``, column by column with
    columns ``stride`` records long) is copied from the ring in the same way; once all of it is copied,
    one byte is written to ``credit_fd`` (the slot is free again; ST_CREDIT when that fails). ``st``
    carries the fill, the staged block and the stream offset between calls. Without a ring, ``ring`` is
    empty and ``slot_bytes`` 0.

    STATIC messages (they do not touch the chunks) are appended to the batch ``statics`` (uint8): per entry
    u32 payload length, u64 stream offset of the message, the payload; ``st[S_STATICS]`` bytes are used. One
    that does not fit is returned as ST_MSG. The caller takes the batch after every return, before acting
    on the status (so entries keep their order relative to the other messages).
    """
    fill = st[S_FILL]
    ncol = len(isz)
    shm_msg = np.empty(12, np.uint8)
    while True:
        sn = st[S_STAGE_N]
        su = st[S_STAGE_USED]
        if su < sn:
            take = min(sn - su, cap - fill)
            slot = st[S_STAGE_SLOT]
            if slot >= 0:
                src = ring.ctypes.data + slot * slot_bytes
            else:
                src = stage.ctypes.data
            stride = st[S_STAGE_STRIDE]
            off = 0
            for c in range(ncol):
                w = isz[c]
                _c_memcpy(cols[c].ctypes.data + fill * w, src + off + su * w, take * w)
                off += stride * w
            fill += take
            st[S_STAGE_USED] = su + take
            st[S_FILL] = fill
            if su + take == sn and slot >= 0:
                st[S_STAGE_SLOT] = -1
                if _c_write(credit_fd, hdr.ctypes.data, 1) != 1:
                    return ST_CREDIT
            if fill == cap:
                return ST_FULL
            continue
        got = read_full(fd, hdr, 0, 8)
        if got == 0:
            return ST_EOF
        st[S_MSG_OFFSET] = st[S_OFFSET]
        if got < 8:
            st[S_GOT] = got
            return ST_TRUNC_HDR
        mtype = _u32(hdr, 0)
        length = _u32(hdr, 4)
        rec = 0
        for c in range(ncol):
            rec += isz[c]
        if (mtype == _MSG_STATIC and length <= max_payload
                and st[S_STATICS] + STATIC_ENTRY_HEADER + length <= len(statics)):
            status = _batch_static(fd, length, st, statics)
            if status >= 0:
                return status
            continue
        if mtype == _MSG_RECORDS_SHM and length == 12 and st[S_IN_REGION] != 0 and slot_bytes > 0:
            status = _ring_block(fd, rec, st, shm_msg, ring, slot_bytes, credit_fd, hdr)
            if status >= 0:
                return status
            continue
        if (mtype != _MSG_RECORDS or st[S_IN_REGION] == 0 or length % rec != 0 or length > max_payload
                or length > len(stage)):
            st[S_MTYPE] = mtype
            st[S_LENGTH] = length
            st[S_OFFSET] += 8
            return ST_MSG
        n = length // rec
        if n <= cap - fill:
            total = 0
            for c in range(ncol):
                w = isz[c]
                g = read_full(fd, cols[c], fill * w, n * w)
                total += g
                if g < n * w:
                    st[S_LENGTH] = length
                    st[S_GOT] = total
                    return ST_TRUNC
            fill += n
            st[S_FILL] = fill
            st[S_OFFSET] += 8 + length
            if fill == cap:
                return ST_FULL
        else:
            g = read_full(fd, stage, 0, length)
            if g < length:
                st[S_LENGTH] = length
                st[S_GOT] = g
                return ST_TRUNC
            st[S_STAGE_N] = n
            st[S_STAGE_USED] = 0
            st[S_STAGE_SLOT] = -1
            st[S_STAGE_STRIDE] = n
            st[S_OFFSET] += 8 + length


@njit(nogil=True, cache=True)
def extent(pc, tid):
    """Smallest and largest pc and largest tid of a non-empty chunk."""
    pmin = np.int64(pc[0])
    pmax = np.int64(pc[0])
    tmax = np.int64(tid[0])
    for i in range(len(pc)):
        p = pc[i]
        if p > pmax:
            pmax = p
        if p < pmin:
            pmin = p
        if tid[i] > tmax:
            tmax = tid[i]
    return pmin, pmax, tmax


@njit(nogil=True, cache=True)
def mark_seen(pc, tid, pc_seen, tid_seen):
    """``pc_seen[pc] = True`` for every record; ``tid_seen[tid] = True`` for every tid >= 0 (arrays large enough)."""
    for i in range(len(pc)):
        pc_seen[pc[i]] = True
        t = tid[i]
        if t >= 0:
            tid_seen[t] = True
