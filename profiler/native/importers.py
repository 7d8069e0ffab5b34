"""Importers: traces recorded by other tools, converted to Portcast traces.

Two formats (mapping documented in ``docs/native.md``):

* **ChampSim** binary traces (``champsim_trace``): a flat array of 64-byte little-endian records
  ``{u64 ip; u8 is_branch; u8 branch_taken; u8 destination_registers[2]; u8 source_registers[4];
  u64 destination_memory[2]; u64 source_memory[4]}``, usually xz- or gzip-compressed.
* **Valgrind lackey** text output (``valgrind --tool=lackey --trace-mem=yes``): lines ``I  addr,size``
  (an instruction), `` L addr,size`` (load), `` S addr,size`` (store), `` M addr,size`` (modify =
  load + store of the same bytes), plus ``==pid==`` message lines which are skipped.

Both stream: records are handed to the sinks in chunks of at most ``chunk_records`` records, so the
memory needed does not grow with the trace. Malformed input raises :class:`core.trace_schema.TraceError`
naming the file and the byte offset (ChampSim) or line number (lackey).
"""

from __future__ import annotations

import gzip
import lzma
import os
import zlib
from pathlib import Path
from typing import BinaryIO, Iterable, Sequence

import numba
import numpy as np

from core.trace_schema import Op, TraceError

from ..trace import DEFAULT_CHUNK_RECORDS, RegionInfo, StaticInstruction, StaticTable, TraceChunk

#: Byte layout of one ChampSim ``input_instr`` record (little-endian, no padding, 64 bytes).
CHAMPSIM_DTYPE = np.dtype(
    [
        ("ip", "<u8"),
        ("is_branch", "u1"),
        ("branch_taken", "u1"),
        ("destination_registers", "u1", (2,)),
        ("source_registers", "u1", (4,)),
        ("destination_memory", "<u8", (2,)),
        ("source_memory", "<u8", (4,)),
    ]
)
assert CHAMPSIM_DTYPE.itemsize == 64

#: x86 register numbers ChampSim's tracer gives the stack pointer, flags and instruction pointer.
CHAMPSIM_REG_SP = 6
CHAMPSIM_REG_FLAGS = 25
CHAMPSIM_REG_IP = 26

# micro-op slots of one imported instruction (static id = one per (instruction address, slot))
SLOT_LOAD0 = 0  # loads use slots 0..3
SLOT_COMPUTE = 4
SLOT_STORE0 = 5  # stores use slots 5..6
N_SLOTS = 8
_SLOT_KIND = {0: "load", 1: "load", 2: "load", 3: "load", 4: "compute", 5: "store", 6: "store"}

#: Dependency tokens for values that live only inside one instruction (load results, the ALU result).
TEMP_TOKEN_BASE = 1 << 16
#: Architectural register ``r`` written for the ``v``-th time (mod 256) carries token ``r + 256 * v``.
REG_VERSIONS = 256

_XZ_MAGIC = b"\xfd7zXZ\x00"
_GZIP_MAGIC = b"\x1f\x8b"


def _open_maybe_compressed(path: Path) -> BinaryIO:
    """Open ``path`` for binary reading, decompressing xz or gzip (detected by magic bytes)."""
    with open(path, "rb") as f:
        head = f.read(6)
    if head.startswith(_XZ_MAGIC):
        return lzma.open(path, "rb")
    if head.startswith(_GZIP_MAGIC):
        return gzip.open(path, "rb")
    return open(path, "rb")


def _read_exact(stream: BinaryIO, n: int, path: Path, offset: int) -> bytes:
    parts, got = [], 0
    try:
        while got < n:
            part = stream.read(n - got)
            if not part:
                break
            parts.append(part)
            got += len(part)
        return b"".join(parts)
    except (EOFError, lzma.LZMAError, gzip.BadGzipFile, OSError, zlib.error) as exc:
        raise TraceError(
            f"{path}: compressed stream is damaged or ends early near decompressed byte offset {offset} ({exc})"
        ) from None


class _Emitter:
    """Collects records into fixed-size column buffers and hands full chunks to the sinks."""

    def __init__(self, sinks: Sequence, chunk_records: int) -> None:
        if chunk_records < 1:
            raise ValueError(f"chunk_records must be >= 1, got {chunk_records}")
        self.sinks = list(sinks)
        self.chunk_records = int(chunk_records)
        self.n_records = 0

    def emit(self, chunk: TraceChunk) -> None:
        for part in chunk.split(self.chunk_records) if len(chunk) > self.chunk_records else [chunk]:
            if len(part):
                for s in self.sinks:
                    s.consume(part)
                self.n_records += len(part)


# ---------------------------------------------------------------------------------------------- ChampSim


@numba.njit(cache=True, inline="always")
def _read_registers(sregs, i, reg_token, rtok):
    """The distinct source registers of instruction ``i``: their current tokens into ``rtok`` (zeros after the
    last); returns how many, and whether the stack pointer, the flags, the instruction pointer or another
    register is read."""
    for j in range(4):
        rtok[j] = 0
    nr = 0
    reads_sp = False
    reads_flags = False
    reads_ip = False
    reads_other = False
    for j in range(4):
        r = sregs[i, j]
        if r == 0:
            continue
        dup = False
        for q in range(j):
            if sregs[i, q] == r:
                dup = True
        if dup:
            continue
        if r == CHAMPSIM_REG_SP:
            reads_sp = True
        elif r == CHAMPSIM_REG_FLAGS:
            reads_flags = True
        elif r == CHAMPSIM_REG_IP:
            reads_ip = True
        else:
            reads_other = True
        rtok[nr] = reg_token[r]
        nr += 1
    return nr, reads_sp, reads_flags, reads_ip, reads_other


@numba.njit(cache=True, inline="always")
def _written_registers(d0, d1):
    """The distinct destination registers ``d0``, ``d1`` of an instruction (0: none): how many, and whether the
    stack pointer or the instruction pointer is written."""
    writes_sp = False
    writes_ip = False
    nd = 0
    for j in range(2):
        r = d0 if j == 0 else d1
        if r == 0 or (j == 1 and d0 == r):
            continue
        if r == CHAMPSIM_REG_SP:
            writes_sp = True
        elif r == CHAMPSIM_REG_IP:
            writes_ip = True
        nd += 1
    return nd, writes_sp, writes_ip


@numba.njit(cache=True, inline="always")
def _distinct_addresses(mem, i, width, out):
    """The distinct non-zero addresses among ``mem[i, :width]`` into ``out``, in order; returns how many."""
    na = 0
    for j in range(width):
        a = mem[i, j]
        if a == 0:
            continue
        dup = False
        for q in range(na):
            if out[q] == a:
                dup = True
        if not dup:
            out[na] = a
            na += 1
    return na


@numba.njit(cache=True, inline="always")
def _control_class(reads_sp, reads_flags, reads_ip, reads_other, writes_sp, writes_ip):
    """The operation class of a branch instruction's compute part, from the registers it reads and writes."""
    if (not reads_sp) and (not reads_flags) and writes_ip:
        return 11  # direct or indirect jump
    if (not reads_sp) and reads_ip and (not writes_sp) and writes_ip and reads_flags and (not reads_other):
        return 10  # conditional branch
    if reads_sp and reads_ip and writes_sp and writes_ip and (not reads_flags):
        return 12  # direct or indirect call
    if reads_sp and (not reads_ip) and writes_sp and writes_ip:
        return 13  # return
    return 11  # other control transfer


@numba.njit(cache=True, inline="always")
def _rename(d0, d1, nd, reg_token, reg_version):
    """A new token for an instruction's destination registers ``d0``, ``d1`` (0: none; no token without any):
    the first one's next version."""
    dtok = 0
    if nd > 0:
        primary = d0 if d0 != 0 else d1
        v = (reg_version[primary] + 1) % 256
        reg_version[primary] = v
        dtok = primary + 256 * v
        if d0 != 0:
            reg_token[d0] = dtok
        if d1 != 0:
            reg_token[d1] = dtok
    return dtok


@numba.njit(cache=True, inline="always")
def _static_id(pc_map, key, next_pc):
    """The static id of ``key`` (``ip * 8 + slot``), a new one when it has none; returns it and the next free id."""
    if key in pc_map:
        pc = pc_map[key]
    else:
        pc = next_pc
        pc_map[key] = pc
        next_pc += 1
    return pc, next_pc


@numba.njit(cache=True)
def _champsim_kernel(ip, is_branch, taken_in, dregs, sregs, dmem, smem, access_size, reg_token, reg_version,
                     pc_map, next_pc, out, counters):
    """Convert ChampSim instructions to Portcast records (see docs/native.md for the rules).

    ``reg_token``/``reg_version`` (256 entries each) carry register renaming state across chunks;
    ``pc_map`` maps ``ip * 8 + slot`` to static ids; ``out`` holds the output columns (pc, op, taken, src1,
    src2, src3, dst, addr, size); ``counters[0]`` counts dropped source tokens. Per instruction: its distinct
    registers and addresses, its operation class, the renaming of its destinations (inlined stages), then
    its LOADs, its compute part and its STOREs (written here: a helper taking the nine columns would count
    references to each of them at every record). Returns (records written, next free static id).
    """
    n = ip.shape[0]
    out_pc, out_op, out_taken, out_s1, out_s2, out_s3, out_dst, out_addr, out_size = out
    k = 0
    srcs = np.zeros(12, np.int32)
    rtok = np.zeros(4, np.int32)
    loads = np.zeros(4, np.int64)
    stores = np.zeros(2, np.int64)
    for i in range(n):
        nr, reads_sp, reads_flags, reads_ip, reads_other = _read_registers(sregs, i, reg_token, rtok)
        d0 = dregs[i, 0]
        d1 = dregs[i, 1]
        nd, writes_sp, writes_ip = _written_registers(d0, d1)
        nl = _distinct_addresses(smem, i, 4, loads)
        ns = _distinct_addresses(dmem, i, 2, stores)
        branch = is_branch[i] != 0
        op = 0  # INT_ALU
        if branch:
            op = _control_class(reads_sp, reads_flags, reads_ip, reads_other, writes_sp, writes_ip)
        # new token for this instruction's destination registers (sources were read above)
        dtok = _rename(d0, d1, nd, reg_token, reg_version)
        base = ip[i] * N_SLOTS
        compute = branch or (nl + ns == 0) or (nl > 0 and ns > 0) or (nd > 0 and (nl > 1 or ns > 0))
        # LOADs: sources = the instruction's source registers (address registers are not distinguished)
        for j in range(nl):
            pc, next_pc = _static_id(pc_map, base + SLOT_LOAD0 + j, next_pc)
            out_pc[k] = pc
            out_op[k] = 8  # LOAD
            out_taken[k] = 0
            out_s1[k] = rtok[0]
            out_s2[k] = rtok[1]
            out_s3[k] = rtok[2]
            if nr > 3:
                counters[0] += nr - 3
            if compute:
                out_dst[k] = TEMP_TOKEN_BASE + j
            else:
                out_dst[k] = dtok
            out_addr[k] = loads[j]
            out_size[k] = access_size
            k += 1
        ctok = 0
        if compute:
            pc, next_pc = _static_id(pc_map, base + SLOT_COMPUTE, next_pc)
            m = 0
            for j in range(nl):
                srcs[m] = TEMP_TOKEN_BASE + j
                m += 1
            for j in range(nr):
                srcs[m] = rtok[j]
                m += 1
            if m > 3:
                counters[0] += m - 3
            out_pc[k] = pc
            out_op[k] = op
            out_taken[k] = 1 if (op == 10 and taken_in[i] != 0) else 0
            out_s1[k] = srcs[0] if m > 0 else 0
            out_s2[k] = srcs[1] if m > 1 else 0
            out_s3[k] = srcs[2] if m > 2 else 0
            ctok = dtok
            if ctok == 0 and ns > 0:
                ctok = TEMP_TOKEN_BASE + SLOT_COMPUTE
            out_dst[k] = ctok
            out_addr[k] = 0
            out_size[k] = 0
            k += 1
        for j in range(ns):
            pc, next_pc = _static_id(pc_map, base + SLOT_STORE0 + j, next_pc)
            m = 0
            if ctok != 0:
                srcs[m] = ctok
                m += 1
            for q in range(nr):
                srcs[m] = rtok[q]
                m += 1
            if m > 3:
                counters[0] += m - 3
            out_pc[k] = pc
            out_op[k] = 9  # STORE
            out_taken[k] = 0
            out_s1[k] = srcs[0] if m > 0 else 0
            out_s2[k] = srcs[1] if m > 1 else 0
            out_s3[k] = srcs[2] if m > 2 else 0
            out_dst[k] = 0
            out_addr[k] = stores[j]
            out_size[k] = access_size
            k += 1
    return k, next_pc


def _check_champsim_block(block: np.ndarray, first_offset: int, path: Path) -> None:
    """Reject impossible field values, naming the byte offset of the offending field."""
    for field, field_off in (("is_branch", 8), ("branch_taken", 9)):
        bad = np.flatnonzero(block[field] > 1)
        if bad.size:
            i = int(bad[0])
            raise TraceError(
                f"{path}: byte offset {first_offset + 64 * i + field_off}: {field}={int(block[field][i])} "
                f"in record {first_offset // 64 + i}, expected 0 or 1"
            )
    bad = np.flatnonzero((block["branch_taken"] == 1) & (block["is_branch"] == 0))
    if bad.size:
        i = int(bad[0])
        raise TraceError(
            f"{path}: byte offset {first_offset + 64 * i + 9}: branch_taken=1 in record {first_offset // 64 + i} "
            f"which is not a branch (is_branch=0)"
        )
    for field, field_off in (("source_memory", 32), ("destination_memory", 16)):
        vals = block[field]
        bad = np.argwhere(vals > np.uint64(2**63 - 1))
        if bad.size:
            i, j = (int(x) for x in bad[0])
            raise TraceError(
                f"{path}: byte offset {first_offset + 64 * i + field_off + 8 * j}: {field}[{j}]=0x{int(vals[i, j]):x} "
                f"in record {first_offset // 64 + i} is not a user-space address"
            )


def import_champsim(path: str | os.PathLike, sinks: Iterable, *, name: str | None = None,
                    access_size: int = 8, chunk_records: int = DEFAULT_CHUNK_RECORDS,
                    max_instructions: int | None = None) -> RegionInfo:
    """Convert a ChampSim binary trace (raw, xz or gzip) to Portcast records and stream them into sinks.

    Parameters
    ----------
    path:
        The trace file. Compression is detected from its first bytes.
    sinks:
        Objects with the :class:`profiler.trace.TraceSink` protocol; each receives one region.
    name:
        Region name; default: the file name without its compression and ``.champsim``/``.trace`` suffixes.
    access_size:
        Bytes per memory access (ChampSim records addresses, not sizes).
    chunk_records:
        Most records per chunk handed to the sinks.
    max_instructions:
        Convert only the first this many instructions (``None``: all).

    Returns
    -------
    RegionInfo
        The region's metadata (``mode="imported"``), as passed to ``end_region``.
    """
    path = Path(path)
    if not path.exists():
        raise TraceError(f"{path}: no such ChampSim trace file")
    if access_size < 1:
        raise ValueError(f"access_size must be >= 1, got {access_size}")
    sinks = list(sinks)
    info = RegionInfo(name=name or _stem(path), mode="imported", source=str(path),
                      extra={"format": "champsim", "access_size": int(access_size)})
    static = StaticTable()
    for s in sinks:
        s.start_region(info, static)
    emitter = _Emitter(sinks, chunk_records)
    reg_token = np.arange(256, dtype=np.int32)
    reg_version = np.zeros(256, np.int32)
    pc_map = numba.typed.Dict.empty(numba.types.int64, numba.types.int64)
    next_pc = 1
    counters = np.zeros(1, np.int64)
    # instructions per block: at most 7 records each, keep a block's output within one chunk's size
    per_block = max(1, min(chunk_records // 7 if chunk_records >= 7 else 1, 1 << 18))
    offset = 0
    n_instr = 0
    try:
        with _open_maybe_compressed(path) as stream:
            while max_instructions is None or n_instr < max_instructions:
                want = per_block if max_instructions is None else min(per_block, max_instructions - n_instr)
                data = _read_exact(stream, 64 * want, path, offset)
                if not data:
                    break
                whole = len(data) - len(data) % 64
                block = np.frombuffer(data[:whole], dtype=CHAMPSIM_DTYPE)
                _check_champsim_block(block, offset, path)
                if whole != len(data):
                    raise TraceError(
                        f"{path}: byte offset {offset + whole}: trailing partial record of {len(data) - whole} "
                        f"bytes (ChampSim records are 64 bytes; the file holds {(offset + whole) // 64} whole records)"
                    )
                n = block.shape[0]
                out = TraceChunk.empty(7 * n)
                k, next_pc = _champsim_kernel(
                    block["ip"].astype(np.int64),
                    block["is_branch"],
                    block["branch_taken"],
                    np.ascontiguousarray(block["destination_registers"]),
                    np.ascontiguousarray(block["source_registers"]),
                    block["destination_memory"].astype(np.int64),
                    block["source_memory"].astype(np.int64),
                    np.int32(access_size),
                    reg_token,
                    reg_version,
                    pc_map,
                    next_pc,
                    (out.pc, out.op, out.taken, out.src1, out.src2, out.src3, out.dst, out.addr, out.size),
                    counters,
                )
                emitter.emit(out.slice(0, k))
                offset += len(data)
                n_instr += n
    except BaseException as exc:
        _end_failed(info, exc, emitter, sinks, static)
        raise
    for key, pc in pc_map.items():
        ip, slot = divmod(int(key), N_SLOTS)
        static.add(StaticInstruction(pc=int(pc), file=path.name, line=0, col=0,
                                     text=f"0x{ip:x} {_SLOT_KIND[slot]}", function="", kind=_SLOT_KIND[slot]))
    info.n_records = emitter.n_records
    info.extra.update({"instructions": n_instr, "dropped_sources": int(counters[0])})
    for s in sinks:
        s.end_region(info, static)
    return info


def champsim_records(instructions: Sequence[dict]) -> bytes:
    """Encode instructions as a ChampSim binary trace (for tests and examples).

    Parameters
    ----------
    instructions:
        Dicts with ``ip`` and optionally ``is_branch``, ``branch_taken``, ``dst_regs`` (<= 2),
        ``src_regs`` (<= 4), ``dst_mem`` (<= 2), ``src_mem`` (<= 4).

    Returns
    -------
    bytes
        ``64 * len(instructions)`` bytes in ChampSim's layout.
    """
    arr = np.zeros(len(instructions), CHAMPSIM_DTYPE)
    for i, ins in enumerate(instructions):
        arr["ip"][i] = ins["ip"]
        arr["is_branch"][i] = ins.get("is_branch", 0)
        arr["branch_taken"][i] = ins.get("branch_taken", 0)
        for field, key, width in (("destination_registers", "dst_regs", 2), ("source_registers", "src_regs", 4),
                                  ("destination_memory", "dst_mem", 2), ("source_memory", "src_mem", 4)):
            vals = list(ins.get(key, ()))
            if len(vals) > width:
                raise ValueError(f"instruction {i}: {key} has {len(vals)} entries, ChampSim allows {width}")
            arr[field][i, : len(vals)] = vals
    return arr.tobytes()


# ---------------------------------------------------------------------------------------------- lackey


def _parse_hex_size(text: str, path: Path, lineno: int, line: str) -> tuple[int, int]:
    try:
        a, s = text.split(",")
        addr = int(a, 16)
        size = int(s, 10)
    except ValueError:
        raise TraceError(f"{path}:{lineno}: malformed lackey line {line!r} (expected 'ADDRHEX,SIZE')") from None
    if size <= 0:
        raise TraceError(f"{path}:{lineno}: access size {size} in {line!r}, expected > 0")
    if addr >= 1 << 63:
        raise TraceError(f"{path}:{lineno}: address 0x{addr:x} in {line!r} does not fit a signed 64-bit address")
    return addr, size


class _LackeyRecords:
    """Lackey's instructions as Portcast record columns, handed to the emitter in chunks of at most ``cap``
    records; static ids per (instruction address, micro-op slot) in ``pcs``."""

    def __init__(self, emitter: _Emitter, cap: int) -> None:
        self.emitter = emitter
        self.cap = cap
        self.cols: dict[str, list] = {c: [] for c in ("pc", "op", "src1", "dst", "addr", "size")}
        self.pcs: dict[tuple[int, int], int] = {}

    def pc_of(self, iaddr: int, slot: int) -> int:
        key = (iaddr, slot)
        pc = self.pcs.get(key)
        if pc is None:
            pc = self.pcs[key] = len(self.pcs) + 1
        return pc

    def add(self, pc, op, src1, dst, addr, size) -> None:
        cols = self.cols
        cols["pc"].append(pc)
        cols["op"].append(op)
        cols["src1"].append(src1)
        cols["dst"].append(dst)
        cols["addr"].append(addr)
        cols["size"].append(size)

    def instruction(self, iaddr: int, accesses: list) -> None:
        """The records of one instruction; ``accesses``: (kind, addr, size), kind in "LSM"."""
        loads = [(a, s) for k, a, s in accesses if k in "LM"]
        stores = [(a, s) for k, a, s in accesses if k in "SM"]
        if not loads and not stores:
            self.add(self.pc_of(iaddr, SLOT_COMPUTE), int(Op.INT_ALU), 0, 0, 0, 0)
            return
        compute = bool(loads) and bool(stores)
        for j, (a, s) in enumerate(loads):
            self.add(
                self.pc_of(iaddr, SLOT_LOAD0 + min(j, 3)),
                int(Op.LOAD),
                0,
                TEMP_TOKEN_BASE + min(j, 3) if compute else 0,
                a,
                s,
            )
        ctok = 0
        if compute:
            ctok = TEMP_TOKEN_BASE + 4
            self.add(self.pc_of(iaddr, SLOT_COMPUTE), int(Op.INT_ALU), TEMP_TOKEN_BASE, ctok, 0, 0)
        for j, (a, s) in enumerate(stores):
            self.add(self.pc_of(iaddr, SLOT_STORE0 + min(j, 1)), int(Op.STORE), ctok, 0, a, s)

    def emit(self, full_only: bool = False) -> None:
        """Hand the records gathered to the emitter (with ``full_only``, only once ``cap`` are gathered)."""
        if not self.cols["pc"] or (full_only and len(self.cols["pc"]) < self.cap):
            return
        self.emitter.emit(TraceChunk.from_columns(**{k: np.asarray(v) for k, v in self.cols.items()}))
        for v in self.cols.values():
            v.clear()


def _lackey_text(raw_line: bytes, path: Path, lineno: int) -> str | None:
    """The line without its end, or None for a blank or ``==pid==`` message line."""
    try:
        line = raw_line.decode("ascii")
    except UnicodeDecodeError as exc:
        raise TraceError(f"{path}:{lineno}: not text (byte {exc.start} of that line is not ASCII)") from None
    stripped = line.rstrip("\r\n")
    if not stripped.strip() or stripped.startswith("=="):
        return None
    return stripped


def _read_lackey(raw: BinaryIO, path: Path, recs: _LackeyRecords) -> int:
    """Convert the lines of ``raw`` into ``recs``, all of them emitted at the end; returns the instructions."""
    n_instr = 0
    cur_addr = None
    cur_acc: list = []
    lineno = 0
    try:
        for raw_line in raw:
            lineno += 1
            stripped = _lackey_text(raw_line, path, lineno)
            if stripped is None:
                continue
            if stripped.startswith("I  "):
                if cur_addr is not None:
                    recs.instruction(cur_addr, cur_acc)
                cur_addr, _ = _parse_hex_size(stripped[3:].strip(), path, lineno, stripped)
                cur_acc = []
                n_instr += 1
            elif len(stripped) > 3 and stripped[0] == " " and stripped[1] in "LSM" and stripped[2] == " ":
                if cur_addr is None:
                    raise TraceError(f"{path}:{lineno}: data access {stripped!r} before any 'I' instruction line")
                a, s = _parse_hex_size(stripped[3:].strip(), path, lineno, stripped)
                cur_acc.append((stripped[1], a, s))
            else:
                raise TraceError(
                    f"{path}:{lineno}: not a lackey trace line: {stripped[:80]!r} "
                    "(expected 'I  addr,size', ' L|S|M addr,size' or '==pid== ...')"
                )
            recs.emit(full_only=True)
    except (EOFError, lzma.LZMAError, OSError) as exc:
        raise TraceError(f"{path}:{lineno + 1}: compressed stream is damaged or ends early ({exc})") from None
    if cur_addr is not None:
        recs.instruction(cur_addr, cur_acc)
    recs.emit()
    return n_instr


def import_lackey(path: str | os.PathLike, sinks: Iterable, *, name: str | None = None,
                  chunk_records: int = DEFAULT_CHUNK_RECORDS) -> RegionInfo:
    """Convert Valgrind lackey ``--trace-mem=yes`` output to Portcast records and stream them into sinks.

    Parameters
    ----------
    path:
        The lackey output (text; may be gzip- or xz-compressed).
    sinks:
        Objects with the :class:`profiler.trace.TraceSink` protocol; each receives one region.
    name:
        Region name; default: the file name's stem.
    chunk_records:
        Most records per chunk handed to the sinks.

    Returns
    -------
    RegionInfo
        The region's metadata (``mode="imported"``), as passed to ``end_region``.
    """
    path = Path(path)
    if not path.exists():
        raise TraceError(f"{path}: no such lackey output file")
    sinks = list(sinks)
    info = RegionInfo(name=name or _stem(path), mode="imported", source=str(path), extra={"format": "lackey"})
    static = StaticTable()
    for s in sinks:
        s.start_region(info, static)
    emitter = _Emitter(sinks, chunk_records)
    recs = _LackeyRecords(emitter, max(1, min(chunk_records, 1 << 16)))
    try:
        with _open_maybe_compressed(path) as raw:
            n_instr = _read_lackey(raw, path, recs)
    except BaseException as exc:
        _end_failed(info, exc, emitter, sinks, static)
        raise
    for (iaddr, slot), pc in recs.pcs.items():
        static.add(StaticInstruction(pc=pc, file=path.name, line=0, col=0, text=f"0x{iaddr:x} {_SLOT_KIND[slot]}",
                                     function="", kind=_SLOT_KIND[slot]))
    info.n_records = emitter.n_records
    info.extra["instructions"] = n_instr
    for s in sinks:
        s.end_region(info, static)
    return info


def _end_failed(info: RegionInfo, exc: BaseException, emitter: _Emitter, sinks: list, static: StaticTable) -> None:
    """End the region as incomplete, with the error that stopped the import."""
    info.complete = False
    info.error = str(exc) if isinstance(exc, TraceError) else f"{type(exc).__name__}: {exc}"
    info.n_records = emitter.n_records
    for s in sinks:
        s.end_region(info, static)


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".xz", ".gz", ".champsimtrace", ".champsim", ".trace", ".txt", ".out", ".log"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name or "imported"


__all__ = ["CHAMPSIM_DTYPE", "import_champsim", "import_lackey", "champsim_records"]
