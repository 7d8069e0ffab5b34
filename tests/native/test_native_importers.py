"""Importers: ChampSim binary traces and Valgrind lackey output -> Portcast records (docs/native.md)."""

import gzip
import lzma

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.trace_schema import Op, TraceError
from profiler.native.importers import CHAMPSIM_DTYPE, champsim_records, import_champsim, import_lackey
from profiler.trace import MemorySink
from profiler.tracefile import ParquetTraceWriter, TraceFile

T = 65536  # first temporary token
SP, FLAGS, IP = 6, 25, 26


def _champsim(tmp_path, instrs, name="t.champsim", compress=None, **kw):
    data = champsim_records(instrs)
    path = tmp_path / name
    if compress == "xz":
        data = lzma.compress(data)
    elif compress == "gz":
        data = gzip.compress(data)
    path.write_bytes(data)
    sink = MemorySink()
    info = import_champsim(path, [sink], **kw)
    return info, sink.regions[0][1], sink.regions[0][2]


# A worked example, checked by hand against the mapping in docs/native.md:
#  i0 0x1000: rax(1) <- [0x2000] + rax, writes rax and flags          -> LOAD (one load, no store: writes dst)
#  i1 0x1004: conditional branch reading ip + flags, taken            -> BRANCH
#  i2 0x1008: add [0x3000], rbx(3); writes flags                      -> LOAD, INT_ALU, STORE
#  i3 0x100c: call: reads sp, ip; writes sp, ip; stores return addr  -> CALL, STORE
#  i4 0x2000: ret: reads sp; writes sp, ip; loads [sp]                -> LOAD, RET
#  i5 0x1010: reads the flags written by i2 (second destination)      -> INT_ALU
WORKED = [
    dict(ip=0x1000, src_regs=[1], dst_regs=[1, FLAGS], src_mem=[0x2000]),
    dict(ip=0x1004, is_branch=1, branch_taken=1, src_regs=[IP, FLAGS], dst_regs=[IP]),
    dict(ip=0x1008, src_regs=[3], dst_regs=[FLAGS], src_mem=[0x3000], dst_mem=[0x3000]),
    dict(ip=0x100C, is_branch=1, branch_taken=1, src_regs=[SP, IP], dst_regs=[SP, IP], dst_mem=[0x7FF0]),
    dict(ip=0x2000, is_branch=1, branch_taken=1, src_regs=[SP], dst_regs=[SP, IP], src_mem=[0x7FF0]),
    dict(ip=0x1010, src_regs=[FLAGS, 1], dst_regs=[2]),
]
WORKED_RECORDS = [
    # pc, op, taken, src1, src2, src3, dst, addr, size, tid
    (1, Op.LOAD, 0, 1, 0, 0, 1 + 256, 0x2000, 8, -1),
    (2, Op.BRANCH, 1, IP, 1 + 256, 0, IP + 256, 0, 0, -1),
    (3, Op.LOAD, 0, 3, 0, 0, T, 0x3000, 8, -1),
    (4, Op.INT_ALU, 0, T, 3, 0, FLAGS + 256, 0, 0, -1),
    (5, Op.STORE, 0, FLAGS + 256, 3, 0, 0, 0x3000, 8, -1),
    (6, Op.CALL, 0, 6, IP + 256, 0, SP + 256, 0, 0, -1),
    (7, Op.STORE, 0, SP + 256, 6, IP + 256, 0, 0x7FF0, 8, -1),
    (8, Op.LOAD, 0, SP + 256, 0, 0, T, 0x7FF0, 8, -1),
    (9, Op.RET, 0, T, SP + 256, 0, SP + 512, 0, 0, -1),
    (10, Op.INT_ALU, 0, FLAGS + 256, 1 + 256, 0, 2 + 256, 0, 0, -1),
]


def test_champsim_worked_example_exact_records(tmp_path):
    info, static, chunk = _champsim(tmp_path, WORKED)
    assert chunk.records() == [tuple(int(v) for v in r) for r in WORKED_RECORDS]
    assert info.mode == "imported" and info.name == "t" and info.complete
    assert info.n_records == 10 and info.extra["instructions"] == 6 and info.extra["dropped_sources"] == 0
    assert [(e.pc, e.text, e.kind) for e in static][:5] == [
        (1, "0x1000 load", "load"), (2, "0x1004 compute", "compute"), (3, "0x1008 load", "load"),
        (4, "0x1008 compute", "compute"), (5, "0x1008 store", "store")]
    chunk.validate()


@pytest.mark.parametrize("compress", ["xz", "gz"])
def test_champsim_compressed_and_chunked_give_the_same_records(tmp_path, compress):
    _, _, plain = _champsim(tmp_path, WORKED * 3)
    data = champsim_records(WORKED * 3)
    path = tmp_path / f"t.champsim.{compress}"
    path.write_bytes(lzma.compress(data) if compress == "xz" else gzip.compress(data))
    sink = MemorySink()

    class Sizes:
        sizes = []

        def start_region(self, info, static):
            pass

        def consume(self, chunk):
            self.sizes.append(len(chunk))

        def end_region(self, info, static):
            pass

    sizes = Sizes()
    info = import_champsim(path, [sink, sizes], chunk_records=7)
    assert info.name == "t"
    assert sink.regions[0][2].records() == plain.records()
    assert max(sizes.sizes) <= 7 and sum(sizes.sizes) == 30


def test_champsim_branch_kinds():
    # (src regs, dst regs) -> class, following ChampSim's own branch-type rules
    cases = [
        ([IP], [IP], Op.JUMP),  # direct jump
        ([IP, 3], [IP], Op.JUMP),  # indirect jump
        ([IP, FLAGS], [IP], Op.BRANCH),  # conditional
        ([SP, IP], [SP, IP], Op.CALL),  # direct call
        ([SP, IP, 3], [SP, IP], Op.CALL),  # indirect call
        ([SP], [SP, IP], Op.RET),  # return
        ([FLAGS, SP, IP], [IP], Op.JUMP),  # anything else that writes ip
    ]
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        instrs = [dict(ip=0x40 + 4 * i, is_branch=1, branch_taken=1, src_regs=s, dst_regs=t) for i, (s, t, _) in
                  enumerate(cases)]
        _, _, chunk = _champsim(Path(d), instrs)
    assert chunk.op.tolist() == [int(c[2]) for c in cases]
    # taken is kept for conditional branches only
    assert chunk.taken.tolist() == [0, 0, 1, 0, 0, 0, 0]


def test_champsim_register_versions_wrap_after_256_writes(tmp_path):
    instrs = [dict(ip=0x10, src_regs=[5], dst_regs=[5]) for _ in range(257)]
    _, _, chunk = _champsim(tmp_path, instrs)
    assert chunk.dst[:3].tolist() == [5 + 256, 5 + 512, 5 + 768]
    assert chunk.dst[254:257].tolist() == [5 + 255 * 256, 5, 5 + 256]
    assert chunk.src1[1:3].tolist() == [5 + 256, 5 + 512]
    assert set(chunk.pc.tolist()) == {1}


def test_champsim_drops_sources_beyond_three_and_counts_them(tmp_path):
    info, _, chunk = _champsim(tmp_path, [dict(ip=8, src_regs=[1, 2, 3, 4], src_mem=[64, 128], dst_regs=[1])])
    # two loads to temporaries, then the ALU reads T, T+1, r1 (r2, r3, r4 dropped); each LOAD reads r1 r2 r3
    assert chunk.records() == [
        (1, Op.LOAD, 0, 1, 2, 3, T, 64, 8, -1),
        (2, Op.LOAD, 0, 1, 2, 3, T + 1, 128, 8, -1),
        (3, Op.INT_ALU, 0, T, T + 1, 1, 1 + 256, 0, 0, -1),
    ]
    assert info.extra["dropped_sources"] == 1 + 1 + 3


def _bad_file(tmp_path, data):
    path = tmp_path / "bad.champsim"
    path.write_bytes(data)
    return path


def test_champsim_rejects_malformed_input_naming_the_byte_offset(tmp_path):
    good = champsim_records(WORKED[:2])
    with pytest.raises(TraceError, match=r"byte offset 128: trailing partial record of 10 bytes"):
        import_champsim(_bad_file(tmp_path, good + b"\0" * 10), [MemorySink()])
    arr = np.frombuffer(good, CHAMPSIM_DTYPE).copy()
    arr["is_branch"][1] = 7
    with pytest.raises(TraceError, match=r"byte offset 72: is_branch=7 in record 1"):
        import_champsim(_bad_file(tmp_path, arr.tobytes()), [MemorySink()])
    arr = np.frombuffer(good, CHAMPSIM_DTYPE).copy()
    arr["branch_taken"][0] = 1
    with pytest.raises(TraceError, match=r"byte offset 9: branch_taken=1 in record 0 which is not a branch"):
        import_champsim(_bad_file(tmp_path, arr.tobytes()), [MemorySink()])
    arr = np.frombuffer(good, CHAMPSIM_DTYPE).copy()
    arr["source_memory"][1, 2] = 2**64 - 8
    with pytest.raises(TraceError, match=r"byte offset 112: source_memory\[2\]=0xfffffffffffffff8 in record 1"):
        import_champsim(_bad_file(tmp_path, arr.tobytes()), [MemorySink()])
    # a cut xz stream: the error says it is damaged, the region is closed as incomplete
    path = tmp_path / "cut.champsim.xz"
    path.write_bytes(lzma.compress(champsim_records(WORKED * 50))[:-30])
    sink = MemorySink()
    with pytest.raises(TraceError, match="compressed stream is damaged or ends early"):
        import_champsim(path, [sink])
    assert sink.regions[0][0].complete is False
    with pytest.raises(TraceError, match="no such ChampSim trace file"):
        import_champsim(tmp_path / "missing.xz", [MemorySink()])


def _reference_champsim(instrs, access_size=8):
    """Slow, direct transcription of the mapping in docs/native.md."""
    tok = {r: r for r in range(256)}
    ver = {r: 0 for r in range(256)}
    pcs = {}
    out = []

    def pc(ip, slot):
        return pcs.setdefault((ip, slot), len(pcs) + 1)

    for ins in instrs:
        srcs = list(dict.fromkeys(r for r in ins.get("src_regs", []) if r))
        dsts = list(dict.fromkeys(r for r in ins.get("dst_regs", []) if r))
        loads = list(dict.fromkeys(a for a in ins.get("src_mem", []) if a))
        stores = list(dict.fromkeys(a for a in ins.get("dst_mem", []) if a))
        rt = [tok[r] for r in srcs]
        branch = bool(ins.get("is_branch", 0))
        op = Op.INT_ALU
        if branch:
            sp, fl, ipr = SP in srcs, FLAGS in srcs, IP in srcs
            other = any(r not in (SP, FLAGS, IP) for r in srcs)
            wsp, wip = SP in dsts, IP in dsts
            if not sp and not fl and wip:
                op = Op.JUMP
            elif not sp and ipr and not wsp and wip and fl and not other:
                op = Op.BRANCH
            elif sp and ipr and wsp and wip and not fl:
                op = Op.CALL
            elif sp and not ipr and wsp and wip:
                op = Op.RET
            else:
                op = Op.JUMP
        d = 0
        if dsts:
            ver[dsts[0]] = (ver[dsts[0]] + 1) % 256
            d = dsts[0] + 256 * ver[dsts[0]]
            for r in dsts:
                tok[r] = d
        compute = branch or not (loads or stores) or (loads and stores) or (dsts and (len(loads) > 1 or stores))
        pad = lambda xs: (list(xs) + [0, 0, 0])[:3]  # noqa: E731
        for j, a in enumerate(loads):
            out.append((pc(ins["ip"], j), Op.LOAD, 0, *pad(rt), T + j if compute else d, a, access_size, -1))
        ctok = 0
        if compute:
            ctok = d or (T + 4 if stores else 0)
            taken = int(op == Op.BRANCH and ins.get("branch_taken", 0))
            out.append((pc(ins["ip"], 4), op, taken, *pad([T + j for j in range(len(loads))] + rt), ctok, 0, 0, -1))
        for j, a in enumerate(stores):
            out.append((pc(ins["ip"], 5 + j), Op.STORE, 0, *pad(([ctok] if ctok else []) + rt), 0, a, access_size, -1))
    return [tuple(int(v) for v in r) for r in out]


_reg = st.sampled_from([0, 1, 2, 3, SP, FLAGS, IP])
_mem = st.sampled_from([0, 0, 0x1000, 0x1008, 0x2000])
_instr = st.fixed_dictionaries({
    "ip": st.sampled_from([0x400, 0x404, 0x408]),
    "is_branch": st.integers(0, 1),
    "src_regs": st.lists(_reg, max_size=4),
    "dst_regs": st.lists(_reg, max_size=2),
    "src_mem": st.lists(_mem, max_size=4),
    "dst_mem": st.lists(_mem, max_size=2),
    "branch_taken": st.integers(0, 1),
})


@settings(max_examples=60, deadline=None)
@given(st.lists(_instr, min_size=1, max_size=25))
def test_champsim_matches_reference_mapping(tmp_path_factory, instrs):
    for ins in instrs:
        if not ins["is_branch"]:
            ins["branch_taken"] = 0
    tmp = tmp_path_factory.mktemp("cs")
    _, _, chunk = _champsim(tmp, instrs)
    assert chunk.records() == _reference_champsim(instrs)


LACKEY = """==42== Lackey, an example Valgrind tool
==42== Command: ./k
I  04001000,3
I  04001003,4
 L 1ffefff8,8
I  04001007,3
 S 04202010,4
I  0400100a,4
 M 04202010,4
I  04001003,4
 L 1ffefff0,8
I  0400100e,7
 L 04202000,8
 S 04202008,8
==42==\x20
==42== Exit code: 0
"""


def test_lackey_exact_records(tmp_path):
    path = tmp_path / "lk.out"
    path.write_text(LACKEY)
    sink = MemorySink()
    info = import_lackey(path, [sink])
    static, chunk = sink.regions[0][1], sink.regions[0][2]
    assert chunk.records() == [
        (1, Op.INT_ALU, 0, 0, 0, 0, 0, 0, 0, -1),
        (2, Op.LOAD, 0, 0, 0, 0, 0, 0x1FFEFFF8, 8, -1),
        (3, Op.STORE, 0, 0, 0, 0, 0, 0x04202010, 4, -1),
        (4, Op.LOAD, 0, 0, 0, 0, T, 0x04202010, 4, -1),
        (5, Op.INT_ALU, 0, T, 0, 0, T + 4, 0, 0, -1),
        (6, Op.STORE, 0, T + 4, 0, 0, 0, 0x04202010, 4, -1),
        (2, Op.LOAD, 0, 0, 0, 0, 0, 0x1FFEFFF0, 8, -1),
        (7, Op.LOAD, 0, 0, 0, 0, T, 0x04202000, 8, -1),
        (8, Op.INT_ALU, 0, T, 0, 0, T + 4, 0, 0, -1),
        (9, Op.STORE, 0, T + 4, 0, 0, 0, 0x04202008, 8, -1),
    ]
    assert info.extra["instructions"] == 6 and info.n_records == 10 and info.name == "lk"
    assert static[4].text == "0x400100a load"
    # gzip-compressed input and tiny chunks give the same records
    gz = tmp_path / "lk.out.gz"
    gz.write_bytes(gzip.compress(LACKEY.encode()))
    sink2 = MemorySink()
    import_lackey(gz, [sink2], chunk_records=3)
    assert sink2.regions[0][2].records() == chunk.records()


@pytest.mark.parametrize("text,match", [
    ("I  04001000,3\nX 12,3\n", r"lk.out:2: not a lackey trace line: 'X 12,3'"),
    (" L 1000,8\n", r"lk.out:1: data access ' L 1000,8' before any 'I' instruction line"),
    ("I  0400zz00,3\n", r"lk.out:1: malformed lackey line 'I  0400zz00,3'"),
    ("I  04001000,3\n S 1000,0\n", r"lk.out:2: access size 0"),
    ("I  04001000,3\n S 1000\n", r"lk.out:2: malformed lackey line"),
])
def test_lackey_rejects_malformed_lines(tmp_path, text, match):
    path = tmp_path / "lk.out"
    path.write_text(text)
    sink = MemorySink()
    with pytest.raises(TraceError, match=match):
        import_lackey(path, [sink])
    assert sink.regions[0][0].complete is False


def test_lackey_rejects_binary(tmp_path):
    path = tmp_path / "lk.out"
    path.write_bytes(b"I  04001000,3\n\xff\xfe\n")
    with pytest.raises(TraceError, match=r"lk.out:2: not text"):
        import_lackey(path, [MemorySink()])


def test_imported_trace_roundtrips_through_parquet(tmp_path):
    src = tmp_path / "w.champsim.xz"
    src.write_bytes(lzma.compress(champsim_records(WORKED)))
    out = tmp_path / "w.parquet"
    import_champsim(src, [ParquetTraceWriter(out)])
    tf = TraceFile(out)
    assert tf.info.mode == "imported" and tf.info.extra["format"] == "champsim" and tf.info.name == "w"
    assert tf.read().records() == [tuple(int(v) for v in r) for r in WORKED_RECORDS]
    assert tf.static.where(4) == "w.champsim.xz:0"
