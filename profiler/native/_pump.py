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

#: pump() results
ST_FULL, ST_MSG, ST_EOF, ST_TRUNC_HDR, ST_TRUNC = range(5)
#: indices into pump()'s state array
S_FILL, S_STAGE_N, S_STAGE_USED, S_OFFSET, S_IN_REGION, S_MTYPE, S_LENGTH, S_GOT, S_MSG_OFFSET = range(9)
N_STATE = 9

_MSG_RECORDS = 2


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
def pump(fd, cols, isz, cap, st, stage, hdr, max_payload):
    """Fill the chunk columns ``cols`` (uint8 views, item sizes ``isz``, capacity ``cap`` records) from ``fd``.

    Reads messages until the chunk is full (ST_FULL), a message other than an in-region RECORDS block
    that fits the staging buffer arrives (ST_MSG: its header was read, type and length in ``st``, the
    payload is left for the caller), the stream ends (ST_EOF) or is cut (ST_TRUNC_HDR, ST_TRUNC: ``st``
    holds the bytes got of the message). A block that fits the chunk is read column by column straight
    into it; one that does not is read into ``stage`` and copied in pieces (the rest goes into the next
    chunk, at the next call). ``st`` carries the fill, the staged block and the stream offset between calls.
    """
    fill = st[S_FILL]
    ncol = len(isz)
    while True:
        sn = st[S_STAGE_N]
        su = st[S_STAGE_USED]
        if su < sn:
            take = min(sn - su, cap - fill)
            off = 0
            for c in range(ncol):
                w = isz[c]
                col = cols[c]
                col[fill * w:(fill + take) * w] = stage[off + su * w:off + (su + take) * w]
                off += sn * w
            fill += take
            st[S_STAGE_USED] = su + take
            st[S_FILL] = fill
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
        mtype = np.int64(hdr[0]) | (np.int64(hdr[1]) << 8) | (np.int64(hdr[2]) << 16) | (np.int64(hdr[3]) << 24)
        length = np.int64(hdr[4]) | (np.int64(hdr[5]) << 8) | (np.int64(hdr[6]) << 16) | (np.int64(hdr[7]) << 24)
        rec = 0
        for c in range(ncol):
            rec += isz[c]
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
