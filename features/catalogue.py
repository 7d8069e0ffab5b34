"""The feature catalogue: every feature's name, family, definition, range and source (xapp | mica | warp |
portcast)."""

from __future__ import annotations

from core.trace_schema import Op

from .bdiv import BDIV_WINDOWS
from .branch import PPM_HISTORIES, PPM_KINDS
from .ilp import ILP_WINDOWS, ilp_name
from .regs import DEP_BOUNDS
from .reuse import N_REUSE_BUCKETS
from .strides import MICA_STRIDE_BOUNDS

#: XAPP's features in the order of Portcast's list (papers/004 Table 1; see docs/features.md for the mapping).
XAPP_FEATURES: tuple[str, ...] = (
    "mem", "ctrl", "arith", "fp", "mul", "div", "rem", "spf",
    "ilp32", "ilp256", "ilp2048", "ilp16384", "ilp65536", "ilpRate",
    "locStride0", "locStride8", "locStride128", "locStrideOther",
    "gStride0", "gStride8", "gStride128", "gStrideOther",
    "memInt", "pages", "coldRef", "reuseDist4",
    *(f"Lbdiv_{w}" for w in BDIV_WINDOWS),
    *(f"Gbdiv_{w}" for w in BDIV_WINDOWS),
)

FRACTION = "0..1"


def _entries() -> list[tuple[str, str, str, str, str]]:
    e: list[tuple[str, str, str, str, str]] = []

    def add(name, family, definition, rng, source):
        e.append((name, family, definition, rng, source))

    add("mem", "mix", "(LOAD + STORE) / N", FRACTION, "xapp")
    add("ctrl", "mix", "(BRANCH + JUMP + CALL + RET) / N", FRACTION, "xapp")
    add("arith", "mix", "(INT_ALU + INT_MUL + INT_DIV + INT_REM) / N", FRACTION, "xapp")
    add("fp", "mix", "floating-point records of either precision (FP_ALU, FP_MUL, FP_DIV, FP_SPECIAL and their FP64_ "
        "classes) / N", FRACTION, "xapp")
    add("mul", "mix", "(INT_MUL + FP_MUL + FP64_MUL) / N", FRACTION, "xapp")
    add("div", "mix", "(INT_DIV + FP_DIV + FP64_DIV) / N", FRACTION, "xapp")
    add("rem", "mix", "INT_REM / N", FRACTION, "xapp")
    add("spf", "mix", "(FP_SPECIAL + FP64_SPECIAL) / N (transcendental and other special functions)", FRACTION,
        "xapp")
    add("fp64", "mix", "double-precision floating-point records (FP64_*) / all floating-point records; 0 without "
        "floating point", FRACTION, "portcast")
    for w in ILP_WINDOWS:
        src = "xapp" if ilp_name(w).startswith("ilp") else "mica"
        add(ilp_name(w), "ilp", f"N / drained cycles of MICA's ideal machine with a {w}-entry window "
            "(unit latency, RAW through registers and memory bytes, in-order retirement)", f"0..{w}", src)
    add("ilpRate", "ilp", "ilp16384 / ilp32 (growth of ILP with the window)", "0..16384", "xapp")
    for b, rng in zip(("0", "8", "128", "Other"), ("0", "1-8", "9-128", ">128")):
        add(f"locStride{b}", "stride", f"fraction of consecutive-instance address differences of the same static "
            f"LOAD/STORE that are {rng} bytes", FRACTION, "xapp")
    for b, rng in zip(("0", "8", "128", "Other"), ("0", "1-8", "9-128", ">128")):
        add(f"gStride{b}", "stride", f"fraction of address differences between consecutive LOAD/STOREs (any pc) "
            f"that are {rng} bytes", FRACTION, "xapp")
    add("memInt", "footprint", "distinct 64-byte blocks touched by LOAD/STORE / N", FRACTION, "xapp")
    add("pages", "footprint", "distinct 4 KiB pages touched by LOAD/STORE / N", FRACTION, "xapp")
    add("coldRef", "reuse", "first references to a block / all load block references", FRACTION, "xapp")
    add("reuseDist4", "reuse", "load block references with LRU stack distance < 4 / all load block references",
        FRACTION, "xapp")
    for w in BDIV_WINDOWS:
        add(f"Lbdiv_{w}", "bdiv", f"divergent groups / groups, each static BRANCH's outcomes cut into consecutive "
            f"groups of {w} (trailing partial group dropped); divergent = not all equal", FRACTION, "xapp")
    for w in BDIV_WINDOWS:
        add(f"Gbdiv_{w}", "bdiv", f"as Lbdiv_{w} on the global sequence of all BRANCH outcomes", FRACTION, "xapp")
    # ---- MICA
    for o in Op:
        add(f"mica_mix_{o.name}", "mix", f"{o.name} records / N", FRACTION, "mica")
    add("mica_instructions", "mix", "N, the number of records", ">= 0", "mica")
    add("mica_regSrcPerInstr", "regs", "non-zero source registers / N", "0..3", "mica")
    add("mica_regDstPerInstr", "regs", "non-zero destination registers / N", FRACTION, "mica")
    add("mica_regDegreeUse", "regs", "register reads of a value written in the trace / register writes", ">= 0",
        "mica")
    for b in DEP_BOUNDS:
        add(f"mica_regDepDist_le{b}", "regs", f"fraction of reads of a value written in the trace whose producer is "
            f"at most {b} instructions earlier", FRACTION, "mica")
    for kind in PPM_KINDS:
        for h in PPM_HISTORIES:
            add(f"mica_ppm_{kind}_h{h}", "branch", f"misprediction rate of a PPM predictor, {kind} organisation, "
                f"history {h} (longest seen context of order <= {h} predicts its majority outcome)", FRACTION, "mica")
    add("mica_takenRate", "branch", "taken BRANCHes / BRANCHes", FRACTION, "mica")
    add("mica_transitionRate", "branch", "BRANCH executions whose outcome differs from the same branch's previous "
        "outcome / BRANCH executions that have a previous outcome", FRACTION, "mica")
    add("mica_branches", "branch", "number of BRANCH records", ">= 0", "mica")
    add("mica_staticBranches", "branch", "distinct static BRANCHes executed", ">= 0", "mica")
    for k in range(N_REUSE_BUCKETS):
        rng = "{0, 1}" if k == 0 else (f"[{2 ** k}, {2 ** (k + 1)})" if k < 18 else f">= {2 ** 18}")
        add(f"mica_reuse_b{k}", "reuse", f"load block references with LRU stack distance in {rng} / all load "
            "block references", FRACTION, "mica")
    add("mica_reuse_cold", "reuse", "cold load block references / all load block references (= coldRef)",
        FRACTION, "mica")
    add("mica_loadBlockRefs", "reuse", "number of load block references", ">= 0", "mica")
    for row, what in (("mica_locLoadStride", "same static LOAD"), ("mica_locStoreStride", "same static STORE"),
                      ("mica_gLoadStride", "consecutive LOADs"), ("mica_gStoreStride", "consecutive STOREs")):
        for b in MICA_STRIDE_BOUNDS:
            add(f"{row}_le{b}", "mica_stride", f"fraction of {what} whose distance |addr - (previous addr + "
                f"previous size)| is at most {b} bytes", FRACTION, "mica")
    add("mica_dataBlocks", "footprint", "distinct 64-byte blocks touched by LOAD/STORE", ">= 0", "mica")
    add("mica_dataPages", "footprint", "distinct 4 KiB pages touched by LOAD/STORE", ">= 0", "mica")
    add("mica_instrFootprint", "footprint", "distinct static instructions (pc) executed", ">= 0", "mica")
    # ---- warp
    add("warp_coalescing", "warp", "ideal / actual 32-byte sectors summed over warp LOAD/STORE instructions (warps "
        "in lockstep by the minimum-PC rule over layout positions; actual = distinct sectors of the active threads' "
        "bytes, ideal = "
        "ceil(distinct bytes / 32)); 0 without memory instructions", "0..1", "warp")
    add("warp_sectorsPerGroup", "warp", "actual 32-byte sectors per warp memory instruction", ">= 0", "warp")
    add("warp_idealSectorsPerGroup", "warp", "ideal sectors, ceil(distinct bytes / 32), per warp memory "
        "instruction", ">= 0", "warp")
    add("warp_bdiv", "warp", "warp branches whose active threads do not all take the same direction / warp "
        "branches", FRACTION, "warp")
    add("warp_simdEfficiency", "warp", "mean over warp instructions of active threads / threads of the warp "
        "instance", FRACTION, "warp")
    add("warp_threads", "warp", "distinct tids >= 0 (available parallelism: the parallel loop's trip count)",
        ">= 0", "warp")
    add("warp_log2Threads", "warp", "log2(1 + warp_threads): the parallelism on the scale a speedup follows it "
        "(models with a log speedup need it linear)", ">= 0", "warp")
    add("warp_launches", "warp", "launches of the thread space (a launch starts at the first record with tid >= 0, "
        "after a record with tid -1, and where the tid falls below the latest earlier one)", ">= 0", "warp")
    add("warp_parallelFraction", "warp", "records with tid >= 0 / N", FRACTION, "warp")
    add("warp_arithIntensity", "warp", "floating-point records (either precision) / bytes loaded and stored, "
        "records with tid >= 0", ">= 0", "warp")
    # ---- thread space checked on the trace (features/thread_dependences.py)
    add("ts_checked", "threadspace", "1 when the thread space was checked (its loops are known from the region "
        "metadata), else 0", "0 or 1", "portcast")
    add("ts_kernels", "threadspace", "kernel loops of the thread space that ran at least one launch", ">= 0",
        "portcast")
    add("ts_carriedDeps", "threadspace", "dependences between threads of a launch: register reads of another "
        "thread's value (loop variables and reductions excepted), reads after writes, writes after reads and "
        "writes after writes of another thread's bytes (atomic updates excepted), one per record", ">= 0",
        "portcast")
    add("ts_reductionDeps", "threadspace", "reads of a reduction variable last written by another thread", ">= 0",
        "portcast")
    add("ts_atomicDeps", "threadspace", "loads and stores of updates `a[k] op= v` that touch another thread's bytes "
        "(atomic updates on a GPU)", ">= 0", "portcast")
    add("ts_sameValueRaces", "threadspace", "loads and stores touching bytes another thread stored the same "
        "value to (a value every thread computes alike: a benign race a GPU port accepts)", ">= 0", "portcast")
    add("ts_parallelFraction", "threadspace", "records in launches of kernel loops without a carried dependence / "
        "N (unchecked: records with tid >= 0 / N)", FRACTION, "portcast")
    # ---- library calls the tracer could not expand (region metadata library_work; features/library.py)
    add("lib_opaqueFlops", "library", "estimated flops of the region's unexpanded library calls (np.linalg, np.fft, "
        "np.sort, ...: formulas per function in docs/profiler.md)", ">= 0", "portcast")
    add("lib_opaqueFraction", "library", "lib_opaqueFlops / (lib_opaqueFlops + N): share of the region's work "
        "missing from its trace", FRACTION, "portcast")
    return e


def catalogue():
    """All features Portcast computes, in output order.

    Returns
    -------
    pandas.DataFrame
        Columns ``name``, ``family``, ``definition``, ``range``, ``source`` (xapp | mica | warp | portcast).
    """
    import pandas as pd

    return pd.DataFrame(_entries(), columns=["name", "family", "definition", "range", "source"])


FEATURE_NAMES: tuple[str, ...] = tuple(e[0] for e in _entries())
