"""Lower bounds of a region's GPU kernel time, one per resource, the per-launch estimates the GPU-time model
builds on, and host<->device copy time.

:func:`bounds` takes the work of one traced region (the counts of ``features.work.WorkSink`` and features of
the feature engine, merged into one mapping: ``{**work_sink_result, **feature_series}``) and a GPU description
(:class:`gpu_models.simt.config.GPUConfig`), and gives two things:

* **lower bounds** (:attr:`Bounds.times`), one per resource: the shortest time the region's kernels could take
  if that resource were the only limit. The largest (:attr:`Bounds.total_lower`) is a floor: no port of the
  region runs faster, and the GPU-time model never predicts less (``predictor.gputime``). They are bounds of
  the *GPU's* work, not of the trace's: the trace's records are Python-level operations, and a GPU compiler
  folds part of them (address arithmetic into memory instructions, loop control, strength reduction), so every
  bound counted in records counts only :data:`RECORD_DERATE` of them. Checked against 2,178 measured kernel
  times (docs/gputime.md): none ran below the DRAM, waves, latency or launch bounds, and none below the
  derated issue and pipeline bounds (the fastest ran at 0.58x the underated pipeline bound);
* **estimates** (:attr:`Bounds.terms`): the time each resource would take per launch on the region's full
  work (no derating, no cache reuse between launches, realistic latencies), the quantities the GPU-time model
  scales by what it learned from measured kernels. They are not bounds: a kernel can beat them.

Every number follows from the inputs by the formulas below; :attr:`Bounds.details` holds every intermediate
quantity, so each can be redone by hand.

Inputs (``counts``; keys exactly as the feature engine and ``WorkSink`` name them, no ``f_`` prefix)
-------------------------------------------------------------------------------------------------------
Required (:data:`REQUIRED`), each a finite number >= 0:

``threads``            T, logical threads of the thread space (one launch's grid; ``WorkSink``), >= 1
``records``            N, all records of the region (``WorkSink``)
``thread_records``     R, records inside the thread space (``WorkSink``), <= N
``loads``, ``stores``  LOAD and STORE records of the region (``WorkSink``)
``unique_bytes``       U, distinct bytes read or written (``WorkSink``)
``warp_simdEfficiency``  s, mean active lanes / threads per warp instruction (0 read as 1: no instructions)
``warp_sectorsPerGroup`` g, 32-byte sectors per warp memory instruction
``warp_launches``      launches of the thread space as the feature engine counts them
``mica_mix_<OP>``      share of the region's records of each compute class OP (the classes of
                       ``core.trace_schema.Op`` but LOAD and STORE: INT_ALU ... OTHER, FP64_ALU ... FP64_SPECIAL);
                       the four ``mica_mix_FP64_*`` (:data:`FP64_MIX`) may be absent: a feature table computed
                       before the FP64 classes existed (or from a version-1 trace) has no double-precision
                       records, so an absent one (or NaN) reads as 0 and its floating point counts on the FP32
                       pipeline

Optional (:data:`OPTIONAL`), read when present:

``launches``           L, kernel launches (default ``warp_launches``; a measured port whose barrier phases the
                       trace shows as launches passes 1)
``sector_bytes``       S, 32 x the distinct 32-byte sectors the threads touch (``WorkSink``; default U)
``launch_sector_bytes`` S_L, the same per launch, summed over launches (``WorkSink``; default L x S)
``mica_mix_<OP>`` of the other compute classes (the FP64 ones): 0 when absent, so older tables still work
``ilp32``              instruction-level parallelism of a thread (default 1)
``mem``                share of loads and stores among the records (default (loads + stores) / N)
``coldRef``            share of first-touch load references (default 1)
``load_bytes``, ``store_bytes``, ``warp_coalescing``: details only.

Formulas (seconds unless said; ``ceil`` rounds up; f = ``core_mhz`` x 1e6 Hz; d = :data:`RECORD_DERATE`)
------------------------------------------------------------------------------------------------------
Thread space share and warps:

* p = R / N: the share of the region inside the thread space; ``loads``, ``stores`` and the mix count the
  whole region, and are taken to hold inside it in that share (exact when ``warp_parallelFraction`` = 1).
* lanes per warp a = T / ceil(T / 32) (32 unless the last warp is partial).
* warp instructions W = R / (a x s); warp memory instructions Wm = (loads + stores) x p / (a x s);
  sectors moved without any reuse: Wm x g.

Grid (block size B, default :data:`DEFAULT_BLOCK`; per launch):

* blocks b = ceil(T / B); warps per block wb = ceil(B / 32);
  resident blocks per SM r = max(1, min(``max_blocks_per_sm``, ``max_warps_per_sm`` // wb));
  one wave holds r x ``sm_count`` blocks; waves = b / (r x ``sm_count``); rounds = ceil(waves).
* effective SMs E = w / min(w, ceil(b / ``sm_count``) x wb), w = ceil(T / 32) warps: the busiest SM holds
  ceil(b / ``sm_count``) blocks (all of the warps when there is one block), so the whole runs no faster than
  w / that many warps' SMs would (57 full blocks on 56 SMs give E = 28.5). The busiest SM's warps never
  decrease as T grows, so neither does a time divided by E.
* occupancy = min(ceil(T / 32), r x ``sm_count`` x wb) / (``sm_count`` x ``max_warps_per_sm``).

Bounds (whole region):

* ``dram`` = S / (``dram_bytes_per_ns()`` x 1e9): every sector the threads touch crosses the DRAM interface
  at least once (the first launch finds it in DRAM). Sectors, not bytes: a strided access moves whole
  sectors.
* ``issue`` = d x W / (E x ``schedulers_per_sm`` x f): one warp instruction per scheduler per cycle, on the
  SMs that get work; divergence (s < 1) raises W by 1/s.
* ``pipe`` = d x max over units u of C_u / (E x P_u x f), the busiest pipeline: for every compute unit u
  (int, fp, sfu, fp64), C_u = sum over classes OP of unit u (``ops[OP][0]``) of ``mica_mix_OP`` x R / (a x s)
  x ceil(32 / ``lanes[u]``) x ``ops[OP][2]`` (repeat) cycles, P_u = ``schedulers_per_sm`` (each scheduler has
  its own lanes; ``lanes["fp64"]`` may be a fraction, 0.5 giving 64 cycles per warp instruction); for the
  load/store unit C_lsu = Wm x g sectors, P_lsu = ``lsu_sectors_per_cycle``.
* ``latency`` = d x R / T x c / f: one thread's records, as if each waited c cycles for the one before it
  (c = :data:`CHAIN_CYCLES`); launches run one after another, so their chains add up.
* ``waves`` = d x rounds x R / (T x s) x c / f: an SM runs at most r blocks at a time, each for at least one
  warp's chain (divergent paths run one after the other), so each launch takes at least ``rounds`` chains.
* ``launch`` = L x :data:`LAUNCH_SECONDS`.

Estimates (:attr:`Bounds.terms`, seconds per launch, the launch's share 1/L of the region's work):

* ``dram``: S_L / L at the DRAM bandwidth (each launch moves its distinct sectors once);
* ``traffic``: Wm x g x 32 / L bytes at the DRAM bandwidth: every sector of every warp access, no reuse;
* ``issue``, ``pipe``, ``waves``: the bounds above without the derating, divided by L;
* ``latency``: rounds x R / (T x L x s) / ilp x (latency of an average record) / f, where a record's latency
  is the ALU latency (``ops["INT_ALU"][1]`` cycles) for a compute record and, for a load or store,
  ``l2_latency_ns`` + ``dram_latency_ns``: the chain of dependent memory round trips of one warp, ilp of them
  overlapping (``latency_l2`` weighs the memory latency by ``coldRef`` and takes the L2 latency,
  ``l2_latency_ns``, for the loads that find their data again; ``latency_cached`` the L1 latency).

:func:`transfer_seconds` is the time of the copies around the kernel over the host link:
sum over copies of (:data:`TRANSFER_LATENCY_S` + bytes / (``link_gb_per_s`` x 1e9)).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

from core.trace_schema import FP64_OPS, Op

from .simt.config import PIPES, SECTOR_BYTES, UNITS, WARP_SIZE, GPUConfig

#: Resources, in the order of the tables (and of preference among equal times).
RESOURCES = ("dram", "issue", "pipe", "waves", "latency", "launch")
#: Per-launch estimates of :attr:`Bounds.terms`, in order.
TERMS = ("dram", "traffic", "issue", "pipe", "waves", "latency", "latency_l2", "latency_cached")
#: Compute operation classes (``mica_mix_<name>`` of each is read; see :data:`REQUIRED` and :data:`FP64_MIX`).
COMPUTE_OPS = tuple(o.name for o in Op if o not in (Op.LOAD, Op.STORE))
#: The double-precision shares: read as 0 when absent (a table from before the FP64 classes, module docstring).
FP64_MIX = tuple(f"mica_mix_{o.name}" for o in FP64_OPS)
#: Keys :func:`bounds` needs in ``counts``.
REQUIRED = ("threads", "records", "thread_records", "loads", "stores", "unique_bytes", "warp_simdEfficiency",
            "warp_sectorsPerGroup", "warp_launches",
            *(f"mica_mix_{o}" for o in COMPUTE_OPS if f"mica_mix_{o}" not in FP64_MIX))
#: Keys :func:`bounds` reads when present.
OPTIONAL = ("launches", "sector_bytes", "launch_sector_bytes", "ilp32", "mem", "coldRef", "load_bytes",
            "store_bytes", "warp_coalescing")

#: Fixed cost of one kernel launch, seconds: no launch of a kernel takes less. The smallest kernel times
#: measured on the GPUs of the training data are 5.0 us (P100) to 10.6 us (Quadro K5200) device-side
#: (nvprof; Amaris et al.) and 11-20 us with a host timer (AIWC); 5 us is the lower end of the ~5-10 us
#: usually quoted for a CUDA launch through the runtime (docs/gpus.md, "launch").
LAUNCH_SECONDS = 5e-6
#: Fixed cost of one host<->device copy, seconds (a cudaMemcpy: driver call and link round trip); the same
#: assumption as ``portcast.calibration.PCIE_LATENCY_S``.
TRANSFER_LATENCY_S = 10e-6
#: Cycles a dependent instruction waits for the one before it in the ``latency`` and ``waves`` bounds (an
#: assumption: simple ALU latency on Maxwell to Hopper; Jia et al. 2018, docs/gpus.md).
CHAIN_CYCLES = 4.0
#: Share of the trace's records the bounds counted in records (issue, pipe, latency, waves) take as GPU
#: instructions: a compiler folds address arithmetic, loop control and strength-reducible operations that the
#: trace records one by one. Portcast's warp instructions are 0.87-1.93x the instructions nvprof counts for the
#: measured Rodinia kernels (docs/measured.md), and the fastest measured kernel ran at 0.58x the pipeline time
#: of all its records; half keeps every bound below every measured time.
RECORD_DERATE = 0.5
#: Threads per block when the caller gives none (the SIMT commands' default).
DEFAULT_BLOCK = 256


@dataclasses.dataclass(frozen=True)
class Bounds:
    """Lower bounds (seconds) of a region's kernel time per resource on one GPU, and the per-launch estimates
    the GPU-time model builds on; see the module docstring.

    Attributes
    ----------
    dram, issue, pipe, waves, latency, launch : float
        Lower bounds, seconds, whole region.
    gpu : str
        The GPU description's name.
    details : dict
        Every intermediate quantity of the formulas (bytes, warp instructions, SMs, waves, ...).
    terms : dict
        ``{estimate: seconds per launch}`` for each of :data:`TERMS`.
    launches : float
        L, the kernel launches the terms are per.
    """

    dram: float
    issue: float
    pipe: float
    waves: float
    latency: float
    launch: float
    gpu: str = ""
    details: dict = dataclasses.field(default_factory=dict)
    terms: dict = dataclasses.field(default_factory=dict)
    launches: float = 1.0

    @property
    def times(self) -> dict[str, float]:
        """``{resource: seconds}`` in :data:`RESOURCES` order."""
        return {r: float(getattr(self, r)) for r in RESOURCES}

    @property
    def bound(self) -> str:
        """The resource with the largest time (the first in :data:`RESOURCES` order among equals)."""
        t = self.times
        return max(RESOURCES, key=lambda r: (t[r], -RESOURCES.index(r)))

    @property
    def total_lower(self) -> float:
        """The largest bound: no kernel doing this work on this GPU runs faster (seconds)."""
        return max(self.times.values())

    def shares(self) -> dict[str, float]:
        """Each time / the largest (1 for the bound; 0 for all when every time is 0)."""
        top = self.total_lower
        return {r: (v / top if top > 0 else 0.0) for r, v in self.times.items()}

    def to_dict(self) -> dict:
        """JSON-ready: ``gpu``, ``bound``, ``total_lower_s``, ``seconds`` per resource, ``launches``,
        ``terms_s`` (estimates per launch), ``details``."""
        return {"gpu": self.gpu, "bound": self.bound, "total_lower_s": self.total_lower, "seconds": self.times,
                "launches": self.launches, "terms_s": dict(self.terms), "details": dict(self.details)}

    def to_frame(self):
        """One row per resource: ``resource``, ``seconds``, ``share`` (of the largest), ``bound`` (bool).

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        sh, b = self.shares(), self.bound
        return pd.DataFrame([{"resource": r, "seconds": v, "share": sh[r], "bound": r == b}
                             for r, v in self.times.items()], columns=["resource", "seconds", "share", "bound"])


def _get(counts: Mapping[str, float], key: str) -> float:
    v = counts[key]
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"counts[{key!r}] must be a number, got {v!r}") from None
    if not math.isfinite(x) or x < 0:
        raise ValueError(f"counts[{key!r}] must be a finite number >= 0, got {v!r}")
    return x


def _absent(v) -> bool:
    """A value a table without the column gives: missing (None) or a missing float (NaN, as pandas fills the
    rows of an older table joined to a newer one)."""
    return v is None or (isinstance(v, float) and math.isnan(v))


def bounds(counts: Mapping[str, float], cfg: GPUConfig, *, block_size: int = DEFAULT_BLOCK,
           chain_cycles: float = CHAIN_CYCLES, launch_seconds: float = LAUNCH_SECONDS) -> Bounds:
    """Lower bounds of the kernel time of a region's work on a GPU, per resource, and the per-launch estimates
    (formulas: module docstring).

    Parameters
    ----------
    counts : mapping
        The region's work: every key of :data:`REQUIRED` (``WorkSink`` counts and feature-engine features,
        unprefixed) and of :data:`FP64_MIX` (each read as 0 when absent or NaN: a table from before the FP64
        classes), optionally those of :data:`OPTIONAL`; other keys are ignored.
    cfg : GPUConfig
        The GPU (``gpu_models.simt.config.load_config("p100")``).
    block_size : int
        Threads per block of the port (default 256).
    chain_cycles : float
        Cycles per record of the ``latency`` and ``waves`` bounds (default :data:`CHAIN_CYCLES`).
    launch_seconds : float
        Cost of one launch (default :data:`LAUNCH_SECONDS`).

    Returns
    -------
    Bounds

    Raises
    ------
    ValueError
        A required key missing or not a finite number >= 0 (an optional one present and not), ``threads`` < 1
        (no thread space: no kernel), ``thread_records`` > ``records``, ``warp_simdEfficiency`` > 1, or a bad
        ``block_size``.
    """
    missing = [k for k in REQUIRED if k not in counts]
    if missing:
        raise ValueError(f"counts lacks {', '.join(missing)} (bounds needs {', '.join(REQUIRED)})")
    c = {k: _get(counts, k) for k in REQUIRED}
    c.update({k: (0.0 if _absent(counts.get(k)) else _get(counts, k)) for k in FP64_MIX})
    opt = {k: _get(counts, k) for k in OPTIONAL if k in counts and not _absent(counts[k])}
    if isinstance(block_size, bool) or int(block_size) != block_size or block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size!r}")
    if not (math.isfinite(chain_cycles) and chain_cycles >= 0 and math.isfinite(launch_seconds)
            and launch_seconds >= 0):
        raise ValueError("chain_cycles and launch_seconds must be finite numbers >= 0")
    T, N, R = c["threads"], c["records"], c["thread_records"]
    if T < 1:
        raise ValueError("counts['threads'] is 0: the region has no thread space, so no GPU kernel to bound")
    if R > N:
        raise ValueError(f"counts['thread_records'] ({R:g}) exceeds counts['records'] ({N:g})")
    s = c["warp_simdEfficiency"]
    if s > 1 + 1e-9:
        raise ValueError(f"counts['warp_simdEfficiency'] must lie in (0, 1], got {s!r}")
    s = min(s, 1.0) if s > 0 else 1.0
    L = max(1.0, opt.get("launches", c["warp_launches"]))
    g = c["warp_sectorsPerGroup"]
    f = cfg.core_mhz * 1e6
    block_size = int(block_size)
    d = RECORD_DERATE

    # thread space and warps
    p = R / N if N > 0 else 0.0
    warps_per_launch = math.ceil(T / WARP_SIZE)
    a = T / warps_per_launch
    W = R / (a * s)
    mem_records = (c["loads"] + c["stores"]) * p
    Wm = mem_records / (a * s)
    sectors = Wm * g

    # grid
    blocks = math.ceil(T / block_size)
    wb = math.ceil(block_size / WARP_SIZE)
    r = max(1, min(cfg.max_blocks_per_sm, cfg.max_warps_per_sm // wb))
    wave_blocks = r * cfg.sm_count
    waves = blocks / wave_blocks
    rounds = math.ceil(waves)
    per_sm = math.ceil(blocks / cfg.sm_count)
    E = warps_per_launch / min(warps_per_launch, per_sm * wb)
    sms_used = min(cfg.sm_count, blocks)
    occupancy = min(warps_per_launch, wave_blocks * wb) / (cfg.sm_count * cfg.max_warps_per_sm)

    # dram
    U = c["unique_bytes"]
    S = opt.get("sector_bytes", U)
    S_L = opt.get("launch_sector_bytes", L * S)
    bw = cfg.dram_bytes_per_ns() * 1e9
    traffic_bytes = SECTOR_BYTES * sectors

    # issue and pipes
    issue_all = W / (E * cfg.schedulers_per_sm * f)
    cycles = {u: 0.0 for u in UNITS}
    for op in COMPUTE_OPS:
        share = c[f"mica_mix_{op}"]
        if share and op not in cfg.ops:
            raise ValueError(f"the GPU description {cfg.name!r} has no entry for operation class {op} in 'ops'")
        if not share:
            continue
        unit, _, repeat = cfg.ops[op]
        cycles[unit] += share * R / (a * s) * math.ceil(WARP_SIZE / cfg.lanes[unit]) * repeat
    cycles["lsu"] = sectors
    per_cycle = {u: float(cfg.schedulers_per_sm) for u in PIPES}
    per_cycle["lsu"] = float(cfg.lsu_sectors_per_cycle)
    pipe_s = {u: cycles[u] / (E * per_cycle[u] * f) for u in UNITS}
    busiest = max(UNITS, key=lambda u: (pipe_s[u], -UNITS.index(u)))

    # chains
    rpt = R / T  # records per thread, all launches
    chain = rpt * chain_cycles / f
    wave_chain = rounds * rpt / s * chain_cycles / f
    ilp = max(1.0, opt.get("ilp32", 1.0))
    m = min(1.0, opt["mem"]) if "mem" in opt else (min(1.0, (c["loads"] + c["stores"]) / N) if N > 0 else 0.0)
    cold = min(1.0, opt.get("coldRef", 1.0))
    alu = float(cfg.ops["INT_ALU"][1])
    mem_cycles = (cfg.l2_latency_ns + cfg.dram_latency_ns) * 1e-9 * f
    steps = rounds * rpt / (L * s) / ilp  # one warp's dependent steps per launch, rounds of them
    lat_est = steps * ((1 - m) * alu + m * mem_cycles) / f
    l2_cycles = cfg.l2_latency_ns * 1e-9 * f
    lat_l2 = steps * ((1 - m) * alu + m * (cold * mem_cycles + (1 - cold) * l2_cycles)) / f
    lat_cached = steps * ((1 - m) * alu + m * (cold * mem_cycles + (1 - cold) * cfg.l1_latency_cycles)) / f

    terms = {"dram": S_L / L / bw, "traffic": traffic_bytes / L / bw, "issue": issue_all / L,
             "pipe": pipe_s[busiest] / L, "waves": wave_chain / L, "latency": lat_est, "latency_l2": lat_l2,
             "latency_cached": lat_cached}
    details = {
        "threads": T, "records": N, "thread_records": R, "thread_share": p, "launches": L,
        "simd_efficiency": s, "lanes_per_warp": a, "warp_instructions": W, "record_derate": d,
        "converged_warp_instructions": W * s, "memory_warp_instructions": Wm, "sectors_per_group": g,
        "sectors": sectors, "traffic_bytes": traffic_bytes, "unique_bytes": U, "dram_bytes": S,
        "launch_dram_bytes": S_L, "dram_bytes_per_s": bw, "block_size": block_size, "blocks": blocks,
        "warps_per_block": wb, "resident_blocks_per_sm": r, "wave_blocks": wave_blocks, "waves": waves,
        "rounds": rounds, "blocks_on_busiest_sm": per_sm, "effective_sms": E, "sms_used": sms_used,
        "sm_count": cfg.sm_count, "occupancy": occupancy, "core_hz": f, "schedulers_per_sm": cfg.schedulers_per_sm,
        "pipe_cycles": dict(cycles), "pipe_per_cycle": per_cycle, "pipe_seconds": pipe_s, "busiest_pipe": busiest,
        "records_per_thread": rpt, "chain_cycles": chain_cycles, "launch_seconds": launch_seconds,
        "ilp": ilp, "memory_share": m, "cold_share": cold, "memory_latency_cycles": mem_cycles,
    }
    if "load_bytes" in opt or "store_bytes" in opt:
        details["requested_bytes"] = opt.get("load_bytes", 0.0) + opt.get("store_bytes", 0.0)
    if "warp_coalescing" in opt:
        details["coalescing"] = opt["warp_coalescing"]
    return Bounds(dram=S / bw, issue=d * issue_all, pipe=d * pipe_s[busiest], waves=d * wave_chain,
                  latency=d * chain, launch=L * launch_seconds, gpu=cfg.name, details=details, terms=terms,
                  launches=L)


def _copies(x, what: str) -> list[float]:
    seq = list(x) if isinstance(x, Sequence) and not isinstance(x, (str, bytes)) else [x]
    out = []
    for v in seq:
        try:
            b = float(v)
        except (TypeError, ValueError):
            raise ValueError(f"{what} must be byte counts, got {v!r}") from None
        if not math.isfinite(b) or b < 0:
            raise ValueError(f"{what} must be byte counts >= 0, got {v!r}")
        if b > 0:
            out.append(b)
    return out


def transfer_seconds(bytes_in, bytes_out, cfg: GPUConfig, *, latency: float = TRANSFER_LATENCY_S) -> float:
    """Time of the host<->device copies around a kernel over the GPU's host link.

    ``sum over copies of (latency + bytes / (cfg.link_gb_per_s x 1e9))``; copies in and out do not overlap
    (in before the kernel, out after it), and a copy of 0 bytes is not made.

    Parameters
    ----------
    bytes_in, bytes_out : int or sequence of int
        Bytes copied to the device and back: one number (one copy) or one per copy (one array each).
    cfg : GPUConfig
        Its ``link_gb_per_s`` (GB/s, effective, one direction).
    latency : float
        Seconds per copy (default :data:`TRANSFER_LATENCY_S`).

    Returns
    -------
    float
        Seconds.
    """
    copies = _copies(bytes_in, "bytes_in") + _copies(bytes_out, "bytes_out")
    return len(copies) * float(latency) + sum(copies) / (float(cfg.link_gb_per_s) * 1e9)
