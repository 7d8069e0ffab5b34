"""A slow, obviously correct reference for the feature definitions of docs/features.md (pure Python).

Each function follows the page's wording literally (dicts, lists, sets, a literal window FIFO, a literal
LRU stack), with no attempt at speed; the tests compare the Numba engine against it.
"""

import math
from collections import deque

LOAD, STORE, BRANCH, JUMP, CALL, RET = 8, 9, 10, 11, 12, 13
INT_ALU, INT_MUL, INT_DIV, INT_REM, FP_ALU, FP_MUL, FP_DIV, FP_SPECIAL = range(8)
FP64_ALU, FP64_MUL, FP64_DIV, FP64_SPECIAL = 16, 17, 18, 19
FP_CLASSES = (FP_ALU, FP_MUL, FP_DIV, FP_SPECIAL, FP64_ALU, FP64_MUL, FP64_DIV, FP64_SPECIAL)
#: the operation classes in code order (docs/trace-format.md)
CLASS_NAMES = ("INT_ALU", "INT_MUL", "INT_DIV", "INT_REM", "FP_ALU", "FP_MUL", "FP_DIV", "FP_SPECIAL", "LOAD", "STORE",
               "BRANCH", "JUMP", "CALL", "RET", "MOVE", "OTHER", "FP64_ALU", "FP64_MUL", "FP64_DIV", "FP64_SPECIAL")


def _div(a, b):
    return a / b if b else 0.0


def records(chunk):
    """Records as dicts."""
    names = ("pc", "op", "taken", "src1", "src2", "src3", "dst", "addr", "size", "tid")
    return [dict(zip(names, r)) for r in chunk.records()]


def blocks_of(r, shift=6):
    return list(range(r["addr"] >> shift, ((r["addr"] + r["size"] - 1) >> shift) + 1))


def mix(recs):
    n = len(recs)
    c = [0] * 20
    for r in recs:
        c[r["op"]] += 1
    fp32 = c[FP_ALU] + c[FP_MUL] + c[FP_DIV] + c[FP_SPECIAL]
    fp64 = c[FP64_ALU] + c[FP64_MUL] + c[FP64_DIV] + c[FP64_SPECIAL]
    return {
        "mem": _div(c[LOAD] + c[STORE], n),
        "ctrl": _div(c[BRANCH] + c[JUMP] + c[CALL] + c[RET], n),
        "arith": _div(c[INT_ALU] + c[INT_MUL] + c[INT_DIV] + c[INT_REM], n),
        "fp": _div(fp32 + fp64, n),
        "mul": _div(c[INT_MUL] + c[FP_MUL] + c[FP64_MUL], n),
        "div": _div(c[INT_DIV] + c[FP_DIV] + c[FP64_DIV], n),
        "rem": _div(c[INT_REM], n),
        "spf": _div(c[FP_SPECIAL] + c[FP64_SPECIAL], n),
        "fp64": _div(fp64, fp32 + fp64),
        **{f"mica_mix_{name}": _div(c[k], n) for k, name in enumerate(CLASS_NAMES)},
    }


def bytes_of(r):
    """The byte addresses a LOAD or STORE reads or writes."""
    return range(r["addr"], r["addr"] + r["size"])


def ilp_cycles(recs, w):
    """Drained cycles of MICA's ideal machine with a w-entry window, step by step as the page says (memory
    dependences on exact bytes: a dict of the ready time of every byte ever stored)."""
    c = 0
    ready_reg = {}
    ready_byte = {}
    window = deque()
    cycles = 0
    for r in recs:
        t = c
        for s in (r["src1"], r["src2"], r["src3"]):
            if s:
                t = max(t, ready_reg.get(s, 0))
        if r["op"] == LOAD:
            for b in bytes_of(r):
                t = max(t, ready_byte.get(b, 0))
        if r["dst"]:
            ready_reg[r["dst"]] = t + 1
        if r["op"] == STORE:
            for b in bytes_of(r):
                ready_byte[b] = t + 1
        window.append(t)
        if len(window) == w:
            c += 1
            while window and window[0] < c:
                window.popleft()
        cycles = max(cycles, t + 1)
    return cycles


def strides(recs):
    def bucket(d):
        return 0 if d == 0 else 1 if d <= 8 else 2 if d <= 128 else 3

    loc = [0] * 4
    glo = [0] * 4
    last = {}
    glast = None
    per_pc_other = {}
    for r in recs:
        if r["op"] not in (LOAD, STORE):
            continue
        a = r["addr"]
        if r["pc"] in last:
            b = bucket(abs(a - last[r["pc"]]))
            loc[b] += 1
            if b == 3:
                per_pc_other[r["pc"]] = per_pc_other.get(r["pc"], 0) + 1
        last[r["pc"]] = a
        if glast is not None:
            glo[bucket(abs(a - glast))] += 1
        glast = a
    names = ("0", "8", "128", "Other")
    out = {f"locStride{n}": _div(loc[k], sum(loc)) for k, n in enumerate(names)}
    out.update({f"gStride{n}": _div(glo[k], sum(glo)) for k, n in enumerate(names)})
    return out, loc, glo, per_pc_other


def footprint(recs):
    blocks, pages, first = set(), set(), {}
    for r in recs:
        if r["op"] in (LOAD, STORE):
            for b in blocks_of(r):
                if b not in blocks:
                    blocks.add(b)
                    first[r["pc"]] = first.get(r["pc"], 0) + 1
            pages.update(blocks_of(r, 12))
    n = len(recs)
    return {
        "memInt": _div(len(blocks), n),
        "pages": _div(len(pages), n),
        "mica_dataBlocks": float(len(blocks)),
        "mica_dataPages": float(len(pages)),
        "mica_instrFootprint": float(len({r["pc"] for r in recs})),
    }, first


def reuse_distances(recs):
    """LRU stack distance of each load block reference (None = cold), with a literal stack (most recent first)."""
    stack = []
    out = []
    for r in recs:
        if r["op"] != LOAD:
            continue
        for b in blocks_of(r):
            if b in stack:
                d = stack.index(b)
                stack.remove(b)
                out.append(d)
            else:
                out.append(None)
            stack.insert(0, b)
    return out


def reuse(recs):
    ds = reuse_distances(recs)
    refs = len(ds)
    hist = [0] * 19
    cold = 0
    for d in ds:
        if d is None:
            cold += 1
        elif d <= 1:
            hist[0] += 1
        elif d >= 2 ** 18:
            hist[18] += 1
        else:
            k = next(k for k in range(1, 18) if 2 ** k <= d < 2 ** (k + 1))
            hist[k] += 1
    out = {"coldRef": _div(cold, refs), "reuseDist4": _div(sum(1 for d in ds if d is not None and d < 4), refs)}
    for k in range(19):
        out[f"mica_reuse_b{k}"] = _div(hist[k], refs)
    out["mica_reuse_cold"] = _div(cold, refs)
    out["mica_loadBlockRefs"] = float(refs)
    return out


def bdiv(recs, windows):
    per_pc = {}
    glob = []
    for r in recs:
        if r["op"] == BRANCH:
            per_pc.setdefault(r["pc"], []).append(r["taken"])
            glob.append(r["taken"])

    def groups(seq, w):
        return [seq[i:i + w] for i in range(0, len(seq) - w + 1, w)]

    out, per_pc_div = {}, {}
    for w in windows:
        g = [grp for seq in per_pc.values() for grp in groups(seq, w)]
        out[f"Lbdiv_{w}"] = _div(sum(1 for grp in g if len(set(grp)) > 1), len(g))
        per_pc_div[w] = {pc: sum(1 for grp in groups(seq, w) if len(set(grp)) > 1) for pc, seq in per_pc.items()}
    for w in windows:
        g = groups(glob, w)
        out[f"Gbdiv_{w}"] = _div(sum(1 for grp in g if len(set(grp)) > 1), len(g))
    return out, per_pc_div


def mica_strides(recs):
    bounds = (0, 8, 64, 512, 4096, 32768, 262144)
    lists = {"mica_locLoadStride": [], "mica_locStoreStride": [], "mica_gLoadStride": [], "mica_gStoreStride": []}
    last_end = {}
    glast = {}
    for r in recs:
        if r["op"] not in (LOAD, STORE):
            continue
        kind = "Load" if r["op"] == LOAD else "Store"
        if r["pc"] in last_end:
            lists[f"mica_loc{kind}Stride"].append(abs(r["addr"] - last_end[r["pc"]]))
        last_end[r["pc"]] = r["addr"] + r["size"]
        if kind in glast:
            lists[f"mica_g{kind}Stride"].append(abs(r["addr"] - glast[kind]))
        glast[kind] = r["addr"] + r["size"]
    out = {}
    for name, ds in lists.items():
        for b in bounds:
            out[f"{name}_le{b}"] = _div(sum(1 for d in ds if d <= b), len(ds))
    return out


def regs(recs):
    last_write = {}
    reads = produced = writes = 0
    dists = []
    for i, r in enumerate(recs):
        for s in (r["src1"], r["src2"], r["src3"]):
            if s:
                reads += 1
                if s in last_write:
                    produced += 1
                    dists.append(i - last_write[s])
        if r["dst"]:
            writes += 1
            last_write[r["dst"]] = i
    n = len(recs)
    out = {
        "mica_regSrcPerInstr": _div(reads, n),
        "mica_regDstPerInstr": _div(writes, n),
        "mica_regDegreeUse": _div(produced, writes),
    }
    for b in (1, 2, 4, 8, 16, 32, 64):
        out[f"mica_regDepDist_le{b}"] = _div(sum(1 for d in dists if d <= b), produced)
    return out


def ppm(recs, histories=(4, 8, 12)):
    """PPM predictors built independently for each (organisation, history length)."""
    branches = [r for r in recs if r["op"] == BRANCH]
    out = {}
    for kind in ("GAg", "PAg", "GAs", "PAs"):
        for h in histories:
            table = {}  # (row, order, context bits) -> [not taken count, taken count]
            ghist = [0] * h  # histories start as all not-taken
            lhist = {}
            miss = 0
            for r in branches:
                hist = ghist if kind[0] == "G" else lhist.setdefault(r["pc"], [0] * h)
                row = 0 if kind[2] == "g" else r["pc"]
                pred = 1
                for j in range(h, -1, -1):
                    ctx = (row, j, tuple(hist[-j:]) if j else ())
                    if ctx in table:
                        nt, tk = table[ctx]
                        pred = 1 if tk >= nt else 0
                        break
                miss += pred != r["taken"]
                for j in range(h + 1):
                    ctx = (row, j, tuple(hist[-j:]) if j else ())
                    table.setdefault(ctx, [0, 0])[r["taken"]] += 1
                hist.append(r["taken"])
            out[f"mica_ppm_{kind}_h{h}"] = _div(miss, len(branches))
    last = {}
    trans = base = 0
    for r in branches:
        if r["pc"] in last:
            base += 1
            trans += last[r["pc"]] != r["taken"]
        last[r["pc"]] = r["taken"]
    out["mica_takenRate"] = _div(sum(r["taken"] for r in branches), len(branches))
    out["mica_transitionRate"] = _div(trans, base)
    out["mica_branches"] = float(len(branches))
    out["mica_staticBranches"] = float(len({r["pc"] for r in branches}))
    return out


def warp_instances(recs):
    """The region's warp instances, literally as docs/features.md defines them: a list of (launch, warp,
    records in trace order); records with tid -1 belong to none. A launch starts at a record with tid >= 0
    that is the first such record, follows a record with tid -1, or has a smaller tid than the latest earlier
    record with tid >= 0; an instance is a maximal run of consecutive records of one launch and one warp."""
    out = []
    launch = -1
    latest = None  # tid of the latest earlier record with tid >= 0
    prev_outside = False
    for r in recs:
        t = r["tid"]
        if t < 0:
            prev_outside = True
            continue
        starts = latest is None or prev_outside or t < latest
        if starts:
            launch += 1
        if starts or out[-1][1] != t // 32:  # else the record before it is in the same launch and warp
            out.append((launch, t // 32, []))
        out[-1][2].append(r)
        latest = t
        prev_outside = False
    return out, launch + 1


class Loops:
    """The loop table of a static table read literally from its ``loop`` and ``closes`` fields
    (docs/trace-format.md, "Loops"): a loop's parent is the ``loop`` of its control instructions, its body every
    instruction whose chain of innermost loops reaches it."""

    def __init__(self, static):
        entries = list(static) if static is not None else []
        self.inner = {e.pc: e.loop for e in entries if e.loop}
        self.ctl = {e.pc: e.closes for e in entries if e.closes}
        self.parent = {e.closes: e.loop for e in entries if e.closes}

    def in_body(self, pc, loop):
        x = self.inner.get(pc, 0)
        while x:
            if x == loop:
                return True
            x = self.parent[x]
        return False

    def depth(self, loop):
        d, x = 0, self.parent[loop]
        while x:
            d, x = d + 1, self.parent[x]
        return d

    def key(self, pc, closing):
        """A sort key of the layout position: the static id, or for a control instruction that closes an
        iteration, right after the largest id of its loop's body (inner loops first, then the control
        instructions in id order)."""
        if not closing:
            return (pc, 0, 0, 0)
        loop = self.ctl[pc]
        end = max(p for p in self.inner if self.in_body(p, loop))
        rank = sorted(p for p, c in self.ctl.items() if c == loop).index(pc)
        return (end, 1, -self.depth(loop), rank)


def layout_keys(lane_recs, loops):
    """Layout position keys of one lane's records, literally: a control record of loop L closes an iteration
    when, walking back through the same function invocation (records between a CALL and its RET belong to the
    called function; a RET with no open call returns nowhere), the first record that is not a control record of
    L is in L's body."""
    depth, d = [], 0
    for r in lane_recs:
        depth.append(d)
        if r["op"] == CALL:
            d += 1
        elif r["op"] == RET and d > 0:
            d -= 1
    keys = []
    for i, r in enumerate(lane_recs):
        loop = loops.ctl.get(r["pc"])
        closing = False
        if loop:
            j = i - 1
            while j >= 0 and depth[j] >= depth[i]:
                if depth[j] == depth[i] and loops.ctl.get(lane_recs[j]["pc"]) != loop:
                    closing = loops.in_body(lane_recs[j]["pc"], loop)
                    break
                j -= 1
        keys.append(loops.key(r["pc"], closing))
    return keys


def lockstep(instance_recs, loops=None, skip=()):
    """Warp instructions of one warp instance by the minimum-PC rule: a list of the active records of each.
    With ``loops`` (:class:`Loops`) the lanes issue by layout position, without by static id; records whose pc
    is in ``skip`` are then left out (after their lane's positions are known)."""
    lanes = {}
    for r in instance_recs:
        lanes.setdefault(r["tid"] % 32, []).append(r)
    for lane, recs in lanes.items():
        keys = layout_keys(recs, loops) if loops is not None else [r["pc"] for r in recs]
        lanes[lane] = [(k, r) for k, r in zip(keys, recs) if r["pc"] not in skip]
    head = {lane: 0 for lane in lanes}
    steps = []
    while True:
        live = [lane for lane in lanes if head[lane] < len(lanes[lane])]
        if not live:
            return steps, len(lanes)
        key = min(lanes[lane][head[lane]][0] for lane in live)
        active = [lane for lane in live if lanes[lane][head[lane]][0] == key]
        steps.append([lanes[lane][head[lane]][1] for lane in active])
        for lane in active:
            head[lane] += 1


def warp_totals(recs, static=None, skip=()):
    """Integer totals of the warp views (and the exact SIMD efficiency as a Fraction); ``static``: the static
    table whose loops give the layout positions; ``skip``: the pcs left out of the warps."""
    from fractions import Fraction

    loops = Loops(static) if static is not None else None
    instances, launches = warp_instances(recs)
    t = dict(instances=len(instances), launches=launches, instructions=0, active=0, mem=0, sectors=0, ideal=0,
             branches=0, divergent=0, simd=Fraction(0), divergent_pcs={},
             excess_pcs={}, steps=[])
    for _, _, inst in instances:
        steps, threads = lockstep(inst, loops, skip)
        t["steps"].append([(s[0]["pc"], len(s)) for s in steps])
        for active in steps:
            t["instructions"] += 1
            t["active"] += len(active)
            t["simd"] += Fraction(len(active), threads)
            mem = [r for r in active if r["op"] in (LOAD, STORE)]
            if mem:
                touched = set()
                for r in mem:
                    touched.update(range(r["addr"], r["addr"] + r["size"]))
                t["mem"] += 1
                sectors, ideal = len({b >> 5 for b in touched}), -(-len(touched) // 32)
                t["sectors"] += sectors
                t["ideal"] += ideal
                if sectors > ideal:
                    t["excess_pcs"][mem[0]["pc"]] = t["excess_pcs"].get(mem[0]["pc"], 0) + sectors - ideal
            br = [r for r in active if r["op"] == BRANCH]
            if br:
                t["branches"] += 1
                if len({r["taken"] for r in br}) > 1:
                    t["divergent"] += 1
                    pc = br[0]["pc"]
                    t["divergent_pcs"][pc] = t["divergent_pcs"].get(pc, 0) + 1
    return t


def warp(recs, static=None, skip=()):
    t = warp_totals(recs, static, skip)
    inside = [r for r in recs if r["tid"] >= 0]
    fp = sum(1 for r in inside if r["op"] in FP_CLASSES)
    nbytes = sum(r["size"] for r in inside if r["op"] in (LOAD, STORE))
    return {
        "warp_coalescing": _div(t["ideal"], t["sectors"]),
        "warp_sectorsPerGroup": _div(t["sectors"], t["mem"]),
        "warp_idealSectorsPerGroup": _div(t["ideal"], t["mem"]),
        "warp_bdiv": _div(t["divergent"], t["branches"]),
        "warp_simdEfficiency": float(t["simd"] / t["instructions"]) if t["instructions"] else 0.0,
        "warp_threads": float(len({r["tid"] for r in inside})),
        "warp_log2Threads": math.log2(1 + len({r["tid"] for r in inside})),
        "warp_launches": float(t["launches"]),
        "warp_parallelFraction": _div(len(inside), len(recs)),
        "warp_arithIntensity": _div(fp, nbytes),
    }


def all_features(chunk, ilp_windows=(32, 64, 128, 256, 2048, 16384, 65536),
                 bdiv_windows=(16, 32, 64, 128, 256, 512, 1024)):
    """Every feature the reference knows, as a dict."""
    recs = records(chunk)
    n = len(recs)
    out = dict(mix(recs))
    for w in ilp_windows:
        name = f"ilp{w}" if w in (32, 256, 2048, 16384, 65536) else f"mica_ilp{w}"
        out[name] = _div(n, ilp_cycles(recs, w))
    if 32 in ilp_windows and 16384 in ilp_windows:
        out["ilpRate"] = _div(out["ilp16384"], out["ilp32"])
    out.update(strides(recs)[0])
    out.update(footprint(recs)[0])
    out.update(reuse(recs))
    out.update(bdiv(recs, bdiv_windows)[0])
    out.update(mica_strides(recs))
    out.update(regs(recs))
    out.update(ppm(recs))
    out.update(warp(recs))
    return out
