"""Portcast's Valgrind tool: built from source, validated against cachegrind and lackey on small C kernels."""

import collections
import subprocess
from pathlib import Path

import numpy as np
import pytest
from native_toolchain import MISSING as _missing
from native_toolchain import needs_tool

from core.trace_schema import FP32_OPS, FP64_OPS, N_OPS, Op, TraceError
from features import IlpAnalyzer
from profiler.native import INCLUDE_DIR
from profiler.native.build import NativeToolError, ensure_tool
from profiler.native.importers import import_lackey
from profiler.native.record import decode_file, encode_records, record_program
from profiler.trace import MemorySink, TraceChunk

DATA = Path(__file__).parent / "data"
N = 1000



@pytest.fixture(scope="module")
def tool_env(tmp_path_factory):
    """A fresh tool cache (so the build from source is exercised) and the compiled test kernels."""
    if _missing:
        pytest.skip(_missing)
    mp = pytest.MonkeyPatch()
    cache = tmp_path_factory.mktemp("vgcache")
    mp.setenv("PORTCAST_CACHE", str(cache))
    folder = ensure_tool()
    work = tmp_path_factory.mktemp("kernels")
    exe = work / "native_kernels"
    subprocess.run(["gcc", "-O1", "-g", "-fno-inline", f"-I{INCLUDE_DIR}", "-o", str(exe),
                    str(DATA / "native_kernels.c"), "-lm"], check=True)
    yield {"folder": folder, "exe": exe, "work": work}
    mp.undo()


@pytest.fixture(scope="module")
def regions(tool_env):
    sink = MemorySink()
    dec = record_program([tool_env["exe"], str(N)], [sink], stdout=subprocess.DEVNULL)
    return dec, {info.name: (info, static, chunk) for info, static, chunk in sink.regions}


@pytest.fixture(scope="module")
def whole(tool_env):
    sink = MemorySink()
    dec = record_program([tool_env["exe"], str(N)], [sink], whole_program=True, stdout=subprocess.DEVNULL)
    return dec, sink.regions[0]


def build(work, name: str, source: str, *flags: str, compiler: str = "gcc", suffix: str = ".c"):
    """Write ``source`` to WORK/NAME.c (or ``suffix``), compile it with the markers' include folder and
    ``flags`` into WORK/NAME, and return the executable's path."""
    src = work / (name + suffix)
    src.write_text(source)
    exe = work / name
    subprocess.run([compiler, *flags, f"-I{INCLUDE_DIR}", "-o", str(exe), str(src)], check=True)
    return exe


def instruction_starts(pc: np.ndarray) -> np.ndarray:
    """True where a record begins a new dynamic instruction (slots rise within one instruction)."""
    pc = pc.astype(np.int64)
    base, slot = (pc - 1) // 8, (pc - 1) % 8
    new = np.ones(len(pc), bool)
    new[1:] = (base[1:] != base[:-1]) | (slot[1:] <= slot[:-1])
    return new


def _cachegrind(exe, work):
    out = work / "cachegrind.out"
    subprocess.run(["valgrind", "-q", "--tool=cachegrind", "--cache-sim=yes", "--branch-sim=yes",
                    f"--cachegrind-out-file={out}", str(exe), str(N)], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    events, fn, totals = None, None, collections.defaultdict(lambda: 0)
    for line in out.read_text().splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("fn="):
            fn = line[3:]
        elif line[:1].isdigit() and fn:
            vals = np.array(line.split()[1:], np.int64)
            totals[fn] = totals[fn] + np.pad(vals, (0, len(events) - len(vals)))
    return {fn: dict(zip(events, v.tolist())) for fn, v in totals.items()}


@needs_tool
def test_build_is_cached_and_complete(tool_env):
    folder = tool_env["folder"]
    assert (folder / "portcast-amd64-linux").exists() and (folder / "vgpreload_core-amd64-linux.so").exists()
    mtime = (folder / "portcast-amd64-linux").stat().st_mtime
    assert ensure_tool() == folder and (folder / "portcast-amd64-linux").stat().st_mtime == mtime


@needs_tool
def test_counts_per_function_agree_with_cachegrind(tool_env, whole):
    """Instructions, loads and conditional branches agree exactly with cachegrind for each kernel function;
    stores agree once read-modify-write accesses (cachegrind: one 'modify', counted as a read) are removed."""
    cg = _cachegrind(tool_env["exe"], tool_env["work"])
    _, (info, static, chunk) = whole
    fn_of = {e.pc: e.function for e in static}
    funcs = np.array([fn_of.get(int(p), "") for p in chunk.pc])
    starts = instruction_starts(chunk.pc)
    base = (chunk.pc.astype(np.int64) - 1) // 8
    # a STORE is a modify when the same instruction instance loaded the same address
    rmw = np.zeros(len(chunk), bool)
    for i in np.flatnonzero((chunk.op == Op.STORE) & ~starts):
        j = i - 1
        while j >= 0 and base[j] == base[i]:
            if chunk.op[j] == Op.LOAD and chunk.addr[j] == chunk.addr[i]:
                rmw[i] = True
            if starts[j]:
                break
            j -= 1
    checked = 0
    for fn in ("k_saxpy", "k_histogram", "k_branchy", "k_special", "k_special_f", "k_matmul"):
        sel = funcs == fn
        mine = {
            "Ir": int((starts & sel).sum()),
            "Dr": int(((chunk.op == Op.LOAD) & sel).sum()),
            "Dw": int(((chunk.op == Op.STORE) & sel & ~rmw).sum()),
            "Bc": int(((chunk.op == Op.BRANCH) & sel).sum()),
        }
        theirs = {k: cg[fn][k] for k in mine}
        assert mine == theirs, fn
        checked += mine["Ir"]
    assert checked > 100_000
    # k_histogram's hist[k] += 1 is the one read-modify-write kernel: N modifies
    assert int((rmw & (funcs == "k_histogram")).sum()) == N


@needs_tool
def test_whole_program_totals_agree_with_lackey(tool_env, whole):
    """Whole-program loads/stores/instructions within 1% of lackey's (the runs differ in environment)."""
    log = tool_env["work"] / "lackey.txt"
    subprocess.run(["valgrind", "--tool=lackey", "--trace-mem=yes", f"--log-file={log}", str(tool_env["exe"]),
                    str(N)], check=True, stdout=subprocess.DEVNULL)
    sink = MemorySink()
    linfo = import_lackey(log, [sink])
    lchunk = sink.regions[0][2]
    dec, (info, _, chunk) = whole
    assert info.extra["guest_instructions"] == dec.total_instructions
    pairs = [(info.extra["guest_instructions"], linfo.extra["instructions"]),
             (int((chunk.op == Op.LOAD).sum()), int((lchunk.op == Op.LOAD).sum())),
             (int((chunk.op == Op.STORE).sum()), int((lchunk.op == Op.STORE).sum()))]
    for mine, theirs in pairs:
        assert abs(mine - theirs) <= 0.01 * theirs, pairs


@needs_tool
def test_regions_classes_threads_and_dependences(regions):
    dec, regs = regions
    assert list(regs) == ["saxpy", "histogram", "branchy", "special", "special_f", "matmul"]
    assert dec.exit_code == 0
    info, static, c = regs["saxpy"]
    assert info.mode == "native" and info.complete and info.invocation == 0
    counts = np.bincount(c.op, minlength=N_OPS)
    # per iteration: mulsd, addsd (y), addsd (s), all on doubles; plus N + 1 loop tests
    assert counts[Op.FP64_MUL] == N and counts[Op.FP64_ALU] == 2 * N and counts[Op.BRANCH] == N + 1
    assert counts[list(FP32_OPS)].sum() == 0
    assert info.extra["loads"] == counts[Op.LOAD] and info.extra["stores"] == counts[Op.STORE]
    assert info.extra["cond_branches"] == counts[Op.BRANCH]
    # PORTCAST_THREAD(i) names the iteration: FP records carry tids 0..N-1, in order
    fp_tids = c.tid[c.op == Op.FP64_MUL]
    assert fp_tids.tolist() == list(range(N)) and info.n_threads == N
    # the static table knows the source: the mulsd is on the line of y[i] = a * x[i] + y[i]
    mul_pc = int(c.pc[c.op == Op.FP64_MUL][0])
    src_line = [i + 1 for i, t in enumerate((DATA / "native_kernels.c").read_text().splitlines())
                if "y[i] = a * x[i] + y[i];" in t][0]
    assert static[mul_pc].function == "k_saxpy" and static[mul_pc].line == src_line
    assert static[mul_pc].file.endswith("native_kernels.c")
    # loop-carried dependence: the accumulating addsd reads what its previous instance wrote
    acc_pc = [p for p in np.unique(c.pc[c.op == Op.FP64_ALU]) if static[int(p)].line == src_line + 1]
    assert len(acc_pc) == 1
    idx = np.flatnonzero(c.pc == acc_pc[0])
    for a, b in zip(idx[:-1], idx[1:]):
        assert c.dst[a] != 0 and c.dst[a] in (c.src1[b], c.src2[b], c.src3[b])
    # special: one sqrtsd and one divsd per element (double precision); special_f the same in float: one
    # sqrtss, divss, mulss per element, and no double-precision record
    sc = np.bincount(regs["special"][2].op, minlength=N_OPS)
    assert sc[Op.FP64_SPECIAL] == N and sc[Op.FP64_DIV] == N and sc[list(FP32_OPS)].sum() == 0
    sf = np.bincount(regs["special_f"][2].op, minlength=N_OPS)
    assert sf[Op.FP_SPECIAL] == N and sf[Op.FP_DIV] == N and sf[Op.FP_MUL] == N and sf[list(FP64_OPS)].sum() == 0
    # histogram: hist[k] += 1 is LOAD, INT_ALU, STORE of the same address, the STORE reading the ALU result
    _, hstatic, hc = regs["histogram"]
    in_kernel = np.array([hstatic[int(p)].function == "k_histogram" for p in hc.pc])
    st = np.flatnonzero((hc.op == Op.STORE) & in_kernel)
    assert len(st) == N
    assert all(hc.op[i - 1] == Op.INT_ALU and hc.op[i - 2] == Op.LOAD and hc.addr[i - 2] == hc.addr[i]
               and hc.dst[i - 1] == hc.src1[i] and hc.src1[i - 1] == hc.dst[i - 2] for i in st)
    for info, _, chunk in regs.values():
        chunk.validate()
        assert info.n_records == len(chunk)


@needs_tool
def test_region_filter_and_small_chunks(tool_env, regions):
    _, regs = regions
    sizes = []

    class Sizes:
        def start_region(self, info, static):
            pass

        def consume(self, chunk):
            sizes.append(len(chunk))

        def end_region(self, info, static):
            pass

    sink = MemorySink()
    dec = record_program([tool_env["exe"], str(N)], [sink, Sizes()], region="matmul", chunk_records=5000,
                         stdout=subprocess.DEVNULL)
    assert [r.name for r in dec.regions] == ["matmul"]
    got = sink.regions[0][2]
    assert max(sizes) <= 5000 and sum(sizes) == len(got) == len(regs["matmul"][2])
    assert got.op.tolist() == regs["matmul"][2].op.tolist()


@needs_tool
def test_program_exiting_inside_a_region_is_incomplete(tool_env):
    src = tool_env["work"] / "exits.c"
    src.write_text('#include <stdlib.h>\n#include "portcast.h"\nint main(void){ volatile int s = 0; '
                   'PORTCAST_REGION_START("loop"); for (int i = 0; i < 100; i++) s += i; exit(3); }\n')
    exe = tool_env["work"] / "exits"
    subprocess.run(["gcc", "-O1", f"-I{INCLUDE_DIR}", "-o", str(exe), str(src)], check=True)
    sink = MemorySink()
    dec = record_program([exe], [sink])
    info = sink.regions[0][0]
    assert info.name == "loop" and not info.complete and "exited inside the region" in info.error
    assert dec.exit_code == 3
    assert np.bincount(sink.regions[0][2].op, minlength=16)[Op.BRANCH] >= 100


FORKS_C = r"""
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
#include "portcast.h"
static volatile long sink;
static void work(long n) { long s = 0; for (long i = 0; i < n; i++) s += i * 3; sink = s; }
/* usage: forks CHILD_STEPS; the region forks a child that works CHILD_STEPS steps and marks a region of its own,
   then runs a shell through system() */
int main(int argc, char** argv) {
    long child = atol(argv[1]);
    PORTCAST_REGION_START("parent");
    work(1000);
    pid_t p = fork();
    if (p == 0) { work(child); PORTCAST_REGION_START("child"); work(10); PORTCAST_REGION_END("child"); _exit(0); }
    waitpid(p, NULL, 0);
    if (system("true") != 0) return 3; /* glibc: posix_spawn, a vfork-like clone */
    work(2000);
    PORTCAST_REGION_END("parent");
    return 0;
}
"""


@needs_tool
@pytest.mark.parametrize("shm", [True, False])
def test_a_forked_child_is_not_traced_and_leaves_the_parents_trace_intact(tool_env, shm):
    """The child inherits the tool, the FIFO and the ring; it must record nothing (before, its records
    interleaved with the parent's and the stream was rejected). The parent's trace does not depend on
    what the child does, and the whole-program mode stops at the fork in the child too."""
    exe = build(tool_env["work"], "forks", FORKS_C, "-O1")
    traces = []
    for child_steps in (10, 300_000):
        sink = MemorySink()
        dec = record_program([exe, str(child_steps)], [sink], shm=shm)
        assert dec.exit_code == 0
        assert [info.name for info, _, _ in sink.regions] == ["parent"]
        info, _, chunk = sink.regions[0]
        assert info.complete
        traces.append(chunk)
    a, b = traces
    # static ids are numbered in translation order, which parsing a longer argument changes: compare the
    # instructions numbered in order of first execution instead
    def first_seen(pc):
        ids = {}
        return [ids.setdefault(p, len(ids)) for p in pc.tolist()]

    assert len(a) == len(b) and a.op.tolist() == b.op.tolist() and first_seen(a.pc) == first_seen(b.pc)
    # the two work loops of the parent (3,000 iterations) are in it; the child's 300,000 are not
    assert 3_000 <= int(np.bincount(a.op, minlength=16)[Op.BRANCH]) < 10_000
    sink = MemorySink()
    record_program([exe, "300000"], [sink], whole_program=True, shm=shm)
    assert [info.name for info, _, _ in sink.regions] == ["program"] and sink.regions[0][0].complete
    assert int(np.bincount(sink.regions[0][2].op, minlength=16)[Op.BRANCH]) < 300_000


THREADS_C = r"""
#include <stdlib.h>
#include <pthread.h>
#include "portcast.h"
#define T 3
#define SPAN 100000000L
static long n;
static double data[T][4096];
static void* worker(void* arg) {
    long k = (long)arg;
    double s = 0;
    for (long i = 0; i < n; i++) { PORTCAST_THREAD(k * SPAN + i); s += data[k][i & 4095] * 1.5; }
    data[k][0] = s;
    return NULL;
}
/* usage: threads N; the main thread (k = 0) and two pthreads (k = 1, 2) each run N iterations in one region;
   iteration i of thread k is PORTCAST_THREAD(k * SPAN + i) */
int main(int argc, char** argv) {
    pthread_t th[T];
    n = atol(argv[1]);
    PORTCAST_REGION_START("par");
    for (long k = 1; k < T; k++) pthread_create(&th[k], NULL, worker, (void*)k);
    worker((void*)0);
    for (long k = 1; k < T; k++) pthread_join(th[k], NULL);
    PORTCAST_REGION_END("par");
    return 0;
}
"""


@needs_tool
def test_threads_keep_their_own_registers_and_logical_thread(tool_env):
    """Valgrind runs the threads one at a time and switches between them; each thread's register tokens and
    PORTCAST_THREAD value are its own across switches. Before, one thread's registers were read as the
    producers of another's (false dependences) and records after a switch carried the other thread's
    logical thread."""
    exe = build(tool_env["work"], "threads", THREADS_C, "-O1", "-pthread")
    sink = MemorySink()
    record_program([exe, "200000"], [sink])
    info, _, c = sink.regions[0]
    assert info.name == "par" and info.complete
    k = np.where(c.tid >= 0, c.tid // 100_000_000, -1)
    inside = k >= 0
    # the threads really were interleaved (several switches between the loops), so the test sees switches
    assert int(np.count_nonzero(np.diff(k[inside]))) >= 6
    counts = np.bincount(k[inside], minlength=3)
    assert counts[1] == counts[2]  # the two pthreads run the same code: the same records, none misattributed
    toks = np.stack([c.src1, c.src2, c.src3, c.dst])
    owners = []
    for kk in range(3):
        t = toks[:, k == kk]
        t = t[(t != 0) & ((t < 65536) | (t >= 2 * 65536))]  # registers, not the per-instruction temporaries
        owners.append(set(np.unique(t >> 16).tolist()))
    # main thread (Valgrind thread 1): tokens below 65536; the others offset by 65536 x their thread id (2 and
    # 3, or 2 for both when Valgrind reuses the first pthread's slot because it ended before the second began:
    # seen on a loaded 2-core machine)
    assert owners[0] == {0} and len(owners[1]) == len(owners[2]) == 1 and owners[1] | owners[2] <= {2, 3}
    ilp = IlpAnalyzer()
    ilp.consume(c)
    assert ilp.direct  # the threads' tokens stay in ILP's direct table


CPP_SRC = r"""
#include <vector>
#include <stdexcept>
#include <cstdio>
#include <cstdlib>
#include "portcast.h"
template <typename T> T dot(const std::vector<T>& a, const std::vector<T>& b) {
    T s = 0;
    for (size_t i = 0; i < a.size(); i++) { PORTCAST_THREAD(i); s += a[i] * b[i]; }
    PORTCAST_THREAD(-1);
    return s;
}
static int checked(int v) { if (v % 97 == 0) throw std::runtime_error("multiple of 97"); return v; }
int main(int argc, char** argv) {
    int n = atoi(argv[1]);
    std::vector<double> a(n, 1.5), b(n, 2.0);
    PORTCAST_REGION_START("cpp");
    double s = dot(a, b);
    int caught = 0;
    for (int i = 1; i < 300; i++) { try { checked(i); } catch (const std::exception& e) { caught++; } }
    PORTCAST_REGION_END("cpp");
    printf("%.1f %d\n", s, caught);
}
"""


@needs_tool
def test_cpp_region_with_templates_and_exceptions(tool_env):
    """C++ (g++ -O2): a template loop and exceptions thrown and caught inside the region (unwinding runs
    through libgcc and the dynamic loader under the tool)."""
    exe = build(tool_env["work"], "kcpp", CPP_SRC, "-O2", "-g", compiler="g++", suffix=".cpp")
    log = tool_env["work"] / "kcpp.out"
    sink = MemorySink()
    with open(log, "w") as f:
        dec = record_program([exe, "1000"], [sink], stdout=f)
    assert dec.exit_code == 0 and log.read_text() == "3000.0 3\n"  # the program ran as it does natively
    info, _, c = sink.regions[0]
    assert info.name == "cpp" and info.complete and info.n_threads == 1000
    ops = np.bincount(c.op, minlength=N_OPS)
    assert ops[Op.FP64_MUL] == ops[Op.FP64_ALU] == 1000  # the dot product (doubles), one multiply and one add per i
    assert sorted(set(c.tid[c.op == Op.FP64_MUL].tolist())) == list(range(1000))
    assert ops[Op.CALL] > 100 and ops[Op.RET] > 100  # throw / unwind / catch


CALLS_C = r"""
#include <stdio.h>
void portcast_region_start(const char* name);
void portcast_region_end(const char* name);
void portcast_thread(long i);
static volatile double y[64];
/* usage: calls; no portcast.h: the markers are the functions of portcast_markers.c, linked in */
int main(void) {
    for (int rep = 0; rep < 2; rep++) {
        portcast_region_start("ffi");
        for (long i = 0; i < 64; i++) { portcast_thread(i); y[i] = 3.0 * y[i] + 1.0; }
        portcast_thread(-1);
        portcast_region_end("ffi");
    }
    printf("%.1f\n", y[5]);
    return 0;
}
"""


@needs_tool
def test_marker_functions_for_other_languages(tool_env):
    """include/portcast_markers.c: the markers as functions with C linkage (what Fortran's bind(C), ctypes
    or Rust call), compiled separately and linked; a program without portcast.h marks its regions."""
    work = tool_env["work"]
    obj = work / "portcast_markers.o"
    subprocess.run(["gcc", "-O2", "-c", f"-I{INCLUDE_DIR}", "-o", str(obj), str(INCLUDE_DIR / "portcast_markers.c")],
                   check=True)
    exe = build(work, "calls", CALLS_C, "-O1", str(obj))
    native = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    assert native == "4.0\n"  # outside the tool the calls do nothing
    sink = MemorySink()
    record_program([exe], [sink], stdout=subprocess.DEVNULL)
    assert [(info.name, info.invocation, info.complete) for info, _, _ in sink.regions] == [
        ("ffi", 0, True), ("ffi", 1, True)]
    for info, _, c in sink.regions:
        assert info.n_threads == 64
        ops = np.bincount(c.op, minlength=N_OPS)
        assert ops[Op.FP64_MUL] == ops[Op.FP64_ALU] == 64  # 3.0 * y[i] + 1.0 in double
        assert sorted(set(c.tid[c.op == Op.FP64_MUL].tolist())) == list(range(64))
        assert ops[Op.CALL] == ops[Op.RET] == 66  # portcast_thread x 65 and portcast_region_end


SETUP_C = r"""
#include <stdlib.h>
#include "portcast.h"
static volatile double x[4096];
__attribute__((noinline)) void fill_inputs(void) { for (int i = 0; i < 4096; i++) x[i] = i * 0.25; }
__attribute__((noinline)) double kernel_sum(void) { double s = 0; for (int i = 0; i < 4096; i++) s += x[i]; return s; }
int main(void) {
    fill_inputs();                 /* set-up: runs before any region */
    PORTCAST_REGION_START("sum");
    volatile double s = kernel_sum();
    PORTCAST_REGION_END("sum");
    return 0;
}
"""


@needs_tool
def test_code_before_the_first_region_is_not_instrumented(tool_env):
    """Until the first region starts the tool leaves translations uninstrumented: no static entries for the
    set-up code or the dynamic loader. The region's records are complete, and the whole-program mode still
    instruments (and sees) the set-up."""
    exe = build(tool_env["work"], "setup", SETUP_C, "-O1", "-g")
    sink = MemorySink()
    dec = record_program([exe], [sink])
    info, static, c = sink.regions[0]
    assert info.name == "sum" and info.complete and "kernel_sum" in {e.function for e in static}
    ops = np.bincount(c.op, minlength=N_OPS)
    assert ops[Op.FP64_ALU] == 4096 and ops[Op.BRANCH] == 4096
    # every static entry the tool sent (one per instrumented instruction): none from the set-up or the
    # dynamic loader's start-up (about 13,000 when everything was instrumented; now the region and the exit)
    sent = {e.function for e in dec.static_all.values()}
    assert "kernel_sum" in sent and "fill_inputs" not in sent and len(dec.static_all) < 3000
    whole = MemorySink()
    wdec = record_program([exe], [whole], whole_program=True)
    assert "fill_inputs" in {e.function for e in wdec.static_all.values()} and len(wdec.static_all) > 10_000


@needs_tool
def test_missing_program_is_a_clear_error(tmp_path):
    with pytest.raises(NativeToolError, match="does not exist or is not executable"):
        record_program([str(tmp_path / "nope")], [MemorySink()])
    with pytest.raises(NativeToolError, match="not found on PATH"):
        record_program(["portcast-no-such-program-xyz"], [MemorySink()])


def _msg(t, payload):
    return np.array([t, len(payload)], "<u4").tobytes() + payload


def test_stream_decoder_messages_and_errors(tmp_path):
    rec = TraceChunk.from_columns(pc=[9, 10, 9], op=[Op.LOAD, Op.INT_ALU, Op.LOAD], addr=[64, 0, 72],
                                  size=[8, 0, 8], dst=[65536, 300, 65536], tid=[0, 0, 1])
    stream = (_msg(0, b"portcast-vgtool 2 42") + _msg(4, b"9\t4096\tload\tk\t/src/k.c\t12")
              + _msg(4, b"10\t4096\tINT_ALU\tk\t/src/k.c\t12") + _msg(1, b"kern") + _msg(2, encode_records(rec))
              + _msg(3, b"3 2 0 0 0 0 kern") + _msg(5, b"0 3"))
    path = tmp_path / "s.bin"
    path.write_bytes(stream)
    sink = MemorySink()
    dec = decode_file(path, [sink], chunk_records=2)
    info, static, chunk = sink.regions[0]
    assert chunk.records() == [(9, 8, 0, 0, 0, 0, 65536, 64, 8, 0), (10, 0, 0, 0, 0, 0, 300, 0, 0, 0),
                               (9, 8, 0, 0, 0, 0, 65536, 72, 8, 1)]
    assert info.extra["guest_instructions"] == 3 and info.n_threads == 2 and info.complete
    assert static.where(9) == "/src/k.c:12" and static[10].function == "k"
    assert dec.total_instructions == 3 and dec.exit_code == 0
    # a record block cut short
    path.write_bytes(stream[:8 + 20] + _msg(1, b"kern") + _msg(2, encode_records(rec)[:100]))
    with pytest.raises(TraceError, match=r"trace stream byte 40: record block of 100 bytes is not a multiple of 42"):
        decode_file(path, [MemorySink()])
    path.write_bytes(_msg(0, b"portcast-vgtool 2 42") + _msg(1, b"r") + _msg(2, encode_records(rec))[:60])
    sink = MemorySink()
    with pytest.raises(TraceError, match=r"trace stream byte 37: truncated message \(52 of 126 bytes\)"):
        decode_file(path, [sink])
    assert sink.regions[0][0].complete is False


def test_missing_compiler_is_named(monkeypatch, capsys):
    from profiler.native import build

    monkeypatch.setenv("CC", "portcast-no-such-cc")
    with pytest.raises(NativeToolError, match=r"cannot build Portcast's Valgrind tool; missing: the C compiler "
                                              r"'portcast-no-such-cc'"):
        ensure_tool()
    assert build.main([]) == 2
    assert "error: cannot build Portcast's Valgrind tool; missing: the C compiler" in capsys.readouterr().err
