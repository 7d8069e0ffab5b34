"""GPU descriptions for the SIMT timing model: a frozen record read from JSON (``presets/*.json``).

A description (schema ``portcast.simt.gpu``, version 3) holds:

=========================  ====================================================================================
field                      meaning
=========================  ====================================================================================
name, description          identification
generation                 optional: the GPU's architecture generation, one of :data:`GENERATION_ORDER`
                           ("Fermi" ... "Blackwell"); absent: ``None`` (unknown). Every preset has it; the
                           GPU-time model's generation splits (``predictor.gputime_inputs.GENERATIONS``) read it
release_year               optional: the year the GPU (the board described) was released, an integer; absent:
                           ``None``
sm_count                   streaming multiprocessors (SMs)
core_mhz, mem_mhz          nominal core clock and memory clock (MHz)
bus_bits                   DRAM bus width in bits
transfers_per_clock        DRAM data transfers per memory clock (2 for DDR/HBM, 4 for GDDR5 quoted at the
                           command clock); bandwidth = mem_mhz * 1e6 * transfers_per_clock * bus_bits / 8 B/s
schedulers_per_sm          warp schedulers per SM, each issuing at most one warp instruction per core cycle
max_warps_per_sm           resident warps per SM
max_blocks_per_sm          resident thread blocks per SM
lanes                      ``{"int": n, "fp": n, "sfu": n, "fp64": n}``: lanes of each pipeline per scheduler
                           (``fp``: single precision, ``fp64``: double precision); a warp instruction occupies
                           its pipeline for ``ceil(32 / lanes) * repeat`` cycles. int, fp, sfu are integers;
                           fp64 may be a fraction (a GPU with fewer FP64 units per SM than schedulers: 2 units
                           shared by 4 schedulers are 0.5 per scheduler, 64 cycles per warp instruction)
lsu_sectors_per_cycle      32-byte sectors the SM's load/store unit handles per cycle
ops                        per operation class (core.trace_schema.Op name): ``[unit, latency_cycles, repeat]``,
                           unit one of int/fp/sfu/fp64; LOAD and STORE use the load/store unit and the memory
                           system
l1_bytes, l1_ways          L1 data cache per SM (32-byte sectors, set-associative, LRU)
l1_latency_cycles          L1 hit latency in core cycles (the L1 runs at the core clock)
shared_latency_cycles      optional: latency of a shared-memory (on-chip scratchpad) load in core cycles;
                           default ``l1_latency_cycles``. A memory record the stream builder is told is in
                           shared memory touches no sector (docs/simt.md)
mshr_per_sm                L1 miss status holding registers per SM (outstanding missed sectors)
store_queue_per_sm         store-queue entries per SM (outstanding store sectors)
l2_bytes, l2_ways          shared L2 (32-byte sectors, set-associative, LRU, write-back, write-allocate)
l2_latency_ns              L1-miss to L2 data latency including the interconnect (ns; own clock domain)
l2_bytes_per_ns            L2 / interconnect bandwidth shared by all SMs (bytes per ns)
dram_latency_ns            extra latency of an L2 miss (ns)
link_gb_per_s              optional: host<->device link bandwidth in GB/s (1e9 B/s), effective, one direction
                           (what large pinned copies reach, about 75-80% of the raw rate). Default when absent
                           (:func:`default_link_gb_per_s`), by generation read from "compute capability X.Y" or
                           an architecture name in ``description``: Fermi (2.x) PCIe 2.0 x16 6; Kepler to
                           Turing (3.x-7.x) PCIe 3.0 x16 12; Ampere/Ada (8.x) PCIe 4.0 x16 25; Hopper and later
                           (9.x+) PCIe 5.0 x16 50; unknown 12. Used by ``gpu_models.bounds.transfer_seconds``.
power                      ``v_min, v_max, f_v_min_mhz, f_v_max_mhz`` (linear voltage-frequency curve,
                           clamped) and ``pj``: dynamic energy per event at ``v_max`` in picojoules (``int``,
                           ``fp``, ``sfu``, ``fp64``, ``lsu`` per warp instruction; ``l1``, ``l2`` per sector access;
                           ``dram_byte``; ``sm_cycle`` per active SM cycle); scaled by ``(V / v_max)^2``
sweep                      default grid: ``sm_counts`` (8), ``core_mhz`` (8), ``mem_mhz`` (7)
=========================  ====================================================================================

Version 1 (written before the FP64 pipeline) has no ``lanes.fp64``, no ``pj.fp64`` and no FP64_* ``ops``. Such
a file still reads: each FP64_X class gets its FP_X entry, ``lanes.fp64`` = ``lanes.fp`` and ``pj.fp64`` =
``pj.fp``, so double-precision records run as every floating-point record ran under version 1 (at the FP32
rate), and traces of either version give the times they gave. A version-2 description must have all of them;
one it lacks is an error naming the file and the field. A description without ``schema_version`` is read as
the current version.

Version 3 adds the optional ``generation`` and ``release_year``. A file of version 1 or 2 written before them
reads with both ``None`` (one that has them anyway reads them: nothing else changed); a version-2 reader rejects
the fields as unknown, hence the new version, which such a reader refuses with a clear message. The presets are
written in version 3 with both.
"""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

import numpy as np

from core.jsonfile import JsonFileError, read_json
from core.trace_schema import FP64_OFFSET, FP64_OPS, Op

SCHEMA = "portcast.simt.gpu"
SCHEMA_VERSION = 3
#: NVIDIA GPU architecture generations, oldest first: the values ``generation`` may take, in the order
#: leave-one-generation-out and "train on everything older" splits walk them
GENERATION_ORDER = ("Fermi", "Kepler", "Maxwell", "Pascal", "Volta", "Turing", "Ampere", "Ada Lovelace", "Hopper",
                    "Blackwell")
#: the first and last release years a description may give (a typing error outside)
RELEASE_YEARS = (2000, 2100)
PRESET_DIR = Path(__file__).resolve().parent / "presets"

#: Pipeline units, in the order of the unit index used by the timing kernel: the per-scheduler pipelines
#: (:data:`PIPES`), then the SM's load/store unit.
UNITS = ("int", "fp", "sfu", "fp64", "lsu")
UNIT_INT, UNIT_FP, UNIT_SFU, UNIT_FP64, UNIT_LSU = range(5)
PIPES = UNITS[:UNIT_LSU]
N_PIPES = len(PIPES)
SECTOR_BYTES = 32
WARP_SIZE = 32
PJ_KEYS = ("int", "fp", "sfu", "fp64", "lsu", "l1", "l2", "dram_byte", "sm_cycle")
_COMPUTE_OPS = tuple(o.name for o in Op if o not in (Op.LOAD, Op.STORE))
#: FP64 class -> its single-precision class (the entry a version-1 description gives it)
_FP64_OF = {o.name: Op(o - FP64_OFFSET).name for o in FP64_OPS}


#: Effective one-direction host<->device bandwidth (GB/s) of a x16 link per PCIe generation: about 75-80% of
#: the raw rate (2.0: 5 GT/s, 8b/10b = 8 GB/s; 3.0: 8 GT/s, 128b/130b = 15.75; 4.0: 31.5; 5.0: 63), the
#: figure large pinned-memory copies reach (an assumption; pageable copies are slower).
PCIE_X16_GB_PER_S = {2: 6.0, 3: 12.0, 4: 25.0, 5: 50.0}
#: compute-capability major version -> PCIe generation of the boards of that GPU generation
_CC_PCIE = {1: 2, 2: 2, 3: 3, 4: 3, 5: 3, 6: 3, 7: 3, 8: 4}
_ARCH_CC = (("fermi", 2), ("kepler", 3), ("maxwell", 5), ("pascal", 6), ("volta", 7), ("turing", 7),
            ("ampere", 8), ("ada", 8), ("hopper", 9), ("blackwell", 10))


def default_link_gb_per_s(name: str = "", description: str = "") -> float:
    """Host<->device bandwidth (GB/s, effective, one direction) assumed for a description without
    ``link_gb_per_s``: :data:`PCIE_X16_GB_PER_S` of the PCIe generation of its GPU generation.

    The generation is the compute-capability major version in ``description`` ("compute capability 6.0"),
    else the first architecture name found in ``description`` or ``name`` (Fermi 2, Kepler 3, Maxwell 5,
    Pascal 6, Volta/Turing 7, Ampere/Ada 8, Hopper 9, Blackwell 10). Major 1-2: PCIe 2.0 (6 GB/s); 3-7:
    PCIe 3.0 (12; the Tesla K20 is a PCIe 2.0 board: its preset says so); 8: PCIe 4.0 (25);
    9 and later: PCIe 5.0 (50); none found: PCIe 3.0 (12).

    Parameters
    ----------
    name, description : str
        The description's ``name`` and ``description`` fields.

    Returns
    -------
    float
    """
    m = re.search(r"compute capability (\d+)\.\d", description)
    major = int(m.group(1)) if m else None
    if major is None:
        text = f"{description} {name}".lower()
        found = [(hit.start(), cc) for k, cc in _ARCH_CC for hit in [re.search(rf"\b{k}\b", text)] if hit]
        major = min(found)[1] if found else None
    if major is None:
        return PCIE_X16_GB_PER_S[3]
    return PCIE_X16_GB_PER_S[_CC_PCIE.get(major, 5)]


class ConfigError(ValueError):
    """A GPU description that cannot be used; the message names the file and the field."""


@dataclasses.dataclass(frozen=True)
class GPUConfig:
    """A GPU description (see the module docstring for the fields)."""

    name: str
    sm_count: int
    core_mhz: float
    mem_mhz: float
    bus_bits: int
    transfers_per_clock: float
    schedulers_per_sm: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    lanes: dict
    lsu_sectors_per_cycle: int
    ops: dict
    l1_bytes: int
    l1_ways: int
    l1_latency_cycles: int
    mshr_per_sm: int
    store_queue_per_sm: int
    l2_bytes: int
    l2_ways: int
    l2_latency_ns: float
    l2_bytes_per_ns: float
    dram_latency_ns: float
    power: dict
    sweep: dict
    description: str = ""
    shared_latency_cycles: int | None = None
    link_gb_per_s: float | None = None
    generation: str | None = None
    release_year: int | None = None

    def __post_init__(self) -> None:
        if self.shared_latency_cycles is None:
            object.__setattr__(self, "shared_latency_cycles", self.l1_latency_cycles)
        if self.link_gb_per_s is None:
            object.__setattr__(self, "link_gb_per_s", default_link_gb_per_s(self.name, self.description))

    # -- derived ------------------------------------------------------------------------------------
    def dram_bytes_per_ns(self, mem_mhz: float | None = None) -> float:
        """DRAM bandwidth in bytes per ns at a memory clock.

        Parameters
        ----------
        mem_mhz : float, optional
            Memory clock (default: the nominal one).

        Returns
        -------
        float
            ``mem_mhz * transfers_per_clock * bus_bits / 8 / 1000``.
        """
        m = self.mem_mhz if mem_mhz is None else float(mem_mhz)
        return m * self.transfers_per_clock * self.bus_bits / 8.0 / 1000.0

    @property
    def l1_sets(self) -> int:
        """Sets of the L1 (sectors / ways)."""
        return max(1, self.l1_bytes // (SECTOR_BYTES * self.l1_ways))

    @property
    def l2_sets(self) -> int:
        """Sets of the L2 (sectors / ways)."""
        return max(1, self.l2_bytes // (SECTOR_BYTES * self.l2_ways))

    def op_tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per operation class: unit index, latency in cycles, pipeline occupancy in cycles.

        Returns
        -------
        unit, latency, interval : ndarray of int64, shape (number of operation classes,)
            LOAD/STORE get the load/store unit with latency 0 and interval 0 (the memory model decides).
        """
        n = len(Op)
        unit = np.full(n, UNIT_LSU, np.int64)
        lat = np.zeros(n, np.int64)
        ivl = np.zeros(n, np.int64)
        for name in _COMPUTE_OPS:
            u, latency, repeat = self.ops[name]
            k = UNITS.index(u)
            unit[Op[name]] = k
            lat[Op[name]] = int(latency)
            ivl[Op[name]] = int(math.ceil(WARP_SIZE / self.lanes[u])) * int(repeat)
        return unit, lat, ivl

    def voltage(self, core_mhz: float) -> float:
        """Supply voltage at a core clock (linear between the two points of ``power``, clamped).

        Parameters
        ----------
        core_mhz : float

        Returns
        -------
        float
        """
        p = self.power
        f0, f1, v0, v1 = p["f_v_min_mhz"], p["f_v_max_mhz"], p["v_min"], p["v_max"]
        if f1 <= f0:
            return float(v1)
        x = min(max((core_mhz - f0) / (f1 - f0), 0.0), 1.0)
        return float(v0 + x * (v1 - v0))

    def replace(self, **changes) -> "GPUConfig":
        """A copy with some fields changed (validated).

        Parameters
        ----------
        **changes
            Field values.

        Returns
        -------
        GPUConfig
        """
        d = self.to_json()
        d.update(changes)
        return config_from_json(d, source=f"{self.name} (modified)")

    def to_json(self) -> dict:
        """The description as a JSON-ready dict (with schema and version).

        Returns
        -------
        dict
        """
        d = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION}
        d.update(dataclasses.asdict(self))
        return d


_INT_FIELDS = ("sm_count", "bus_bits", "schedulers_per_sm", "max_warps_per_sm", "max_blocks_per_sm",
               "lsu_sectors_per_cycle", "l1_bytes", "l1_ways", "l1_latency_cycles", "mshr_per_sm",
               "store_queue_per_sm", "l2_bytes", "l2_ways")
_FLOAT_FIELDS = ("core_mhz", "mem_mhz", "transfers_per_clock", "l2_latency_ns", "l2_bytes_per_ns", "dram_latency_ns")


#: The largest value each numeric field may take (a field path as in the error messages; ``ops.*`` for each
#: operation class's latency and repeat). Far above any GPU built (the presets' largest values are 10 to 1000
#: times smaller), low enough that the timing model's cycle counts, cache arrays and sweeps stay within memory
#: and 64-bit integers: a description beyond them is a typing error, named with the file and the field.
MAX_VALUE = {
    "sm_count": 4096, "core_mhz": 100_000.0, "mem_mhz": 100_000.0, "bus_bits": 65_536, "transfers_per_clock": 64.0,
    "schedulers_per_sm": 64, "max_warps_per_sm": 4096, "max_blocks_per_sm": 4096, "lanes": 1024,
    "lsu_sectors_per_cycle": 1024, "l1_bytes": 1 << 30, "l1_ways": 1024, "l1_latency_cycles": 1_000_000,
    "shared_latency_cycles": 1_000_000, "mshr_per_sm": 1_000_000, "store_queue_per_sm": 1_000_000,
    "l2_bytes": 1 << 32, "l2_ways": 1024, "l2_latency_ns": 1e6, "l2_bytes_per_ns": 1e7, "dram_latency_ns": 1e6,
    "link_gb_per_s": 1e6, "ops.*": 1_000_000, "power.v_min": 10.0, "power.v_max": 10.0,
    "power.f_v_min_mhz": 100_000.0, "power.f_v_max_mhz": 100_000.0, "power.pj": 1e9,
    "sweep.sm_counts": 4096, "sweep.core_mhz": 100_000.0, "sweep.mem_mhz": 100_000.0,
}


def _limit(field: str):
    """The :data:`MAX_VALUE` entry of a field path (``lanes.fp`` -> ``lanes``, ``ops.FP_ADD[1]`` -> ``ops.*``,
    ``sweep.core_mhz[3]`` -> ``sweep.core_mhz``)."""
    base = field.split("[")[0]
    if base.startswith("ops."):
        return MAX_VALUE["ops.*"]
    if base.startswith(("lanes.", "power.pj.")):
        return MAX_VALUE[base.rsplit(".", 1)[0]]
    return MAX_VALUE.get(base)


def _pos(source: str, field: str, v, integer: bool):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise ConfigError(f"{source}: field {field!r} must be a positive number, got {v!r}")
    top = _limit(field)
    if top is not None and v > top:
        shown = f"{top:g}" if isinstance(top, float) else str(top)
        raise ConfigError(f"{source}: field {field!r} = {v!r} is out of range: at most {shown}")
    if integer:
        if v != int(v):
            raise ConfigError(f"{source}: field {field!r} must be an integer, got {v!r}")
        return int(v)
    return float(v)


def config_from_json(data: dict, source: str = "<config>") -> GPUConfig:
    """Validate a GPU description dict and build a :class:`GPUConfig`.

    Parameters
    ----------
    data : dict
        As in the module docstring; ``schema``/``schema_version`` are checked when present.
    source : str
        Name for error messages (file path).

    Returns
    -------
    GPUConfig

    Raises
    ------
    ConfigError
        Naming the file and the field at fault.
    """
    data = _readable_fields(data, source)
    kw = {"name": str(data["name"]), "description": str(data.get("description", ""))}
    for f in _INT_FIELDS:
        kw[f] = _pos(source, f, data[f], True)
    for f in _FLOAT_FIELDS:
        kw[f] = _pos(source, f, data[f], False)
    kw.update(_optional_fields(data, source))
    kw["lanes"] = _lanes(data["lanes"], source)
    kw["ops"] = _ops(data["ops"], source)
    kw["power"] = _power(data["power"], source)
    kw["sweep"] = _sweep(data["sweep"], source)
    if kw["l1_bytes"] < SECTOR_BYTES * kw["l1_ways"] or kw["l2_bytes"] < SECTOR_BYTES * kw["l2_ways"]:
        raise ConfigError(f"{source}: a cache must hold at least one set (bytes >= 32 * ways)")
    return GPUConfig(**kw)


def _readable_fields(data, source: str) -> dict:
    """``data`` checked for its schema, its version (a version-1 description given version 2's defaults) and
    its set of fields: none missing, none unknown."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a JSON object")
    if data.get("schema", SCHEMA) != SCHEMA:
        raise ConfigError(f"{source}: schema {data.get('schema')!r} is not {SCHEMA!r}")
    ver = data.get("schema_version", SCHEMA_VERSION)
    if isinstance(ver, bool) or not isinstance(ver, int) or not 1 <= ver <= SCHEMA_VERSION:
        raise ConfigError(f"{source}: schema_version {ver!r} is not readable (reads 1 to {SCHEMA_VERSION})")
    if ver == 1:
        data = _with_version_1_defaults(data)
    fields = {f.name for f in dataclasses.fields(GPUConfig)}
    required = fields - {"description", "shared_latency_cycles", "link_gb_per_s", "generation", "release_year"}
    missing = sorted(required - set(data))
    if missing:
        raise ConfigError(f"{source}: missing field(s) {', '.join(missing)}")
    unknown = sorted(set(data) - fields - {"schema", "schema_version"})
    if unknown:
        raise ConfigError(f"{source}: unknown field(s) {', '.join(unknown)}")
    return data


def _optional_fields(data: dict, source: str) -> dict:
    """The optional fields the description gives (not null), checked."""
    kw = {}
    if data.get("shared_latency_cycles") is not None:
        kw["shared_latency_cycles"] = _pos(source, "shared_latency_cycles", data["shared_latency_cycles"], True)
    if data.get("link_gb_per_s") is not None:
        kw["link_gb_per_s"] = _pos(source, "link_gb_per_s", data["link_gb_per_s"], False)
    if data.get("generation") is not None:
        gen = data["generation"]
        if gen not in GENERATION_ORDER:
            raise ConfigError(f"{source}: field 'generation' must be one of {', '.join(GENERATION_ORDER)}, "
                              f"got {gen!r}")
        kw["generation"] = gen
    if data.get("release_year") is not None:
        year = data["release_year"]
        lo, hi = RELEASE_YEARS
        if isinstance(year, bool) or not isinstance(year, int) or not lo <= year <= hi:
            raise ConfigError(f"{source}: field 'release_year' must be an integer year from {lo} to {hi}, "
                              f"got {year!r}")
        kw["release_year"] = year
    return kw


def _lanes(lanes, source: str) -> dict:
    """The field ``lanes``, checked: exactly the pipes, each a lane count (fp64's may be fractional)."""
    if not isinstance(lanes, dict) or set(lanes) != set(PIPES):
        missing = sorted(set(PIPES) - set(lanes)) if isinstance(lanes, dict) else []
        what = f" (lacks {', '.join(missing)})" if missing else ""
        raise ConfigError(f"{source}: field 'lanes' must map exactly {', '.join(PIPES)} to lane counts{what}")
    return {k: _pos(source, f"lanes.{k}", lanes[k], k != "fp64") for k in PIPES}


def _ops(ops, source: str) -> dict:
    """The field ``ops``, checked: every compute operation class as [unit, latency, repeat], nothing else."""
    if not isinstance(ops, dict):
        raise ConfigError(f"{source}: field 'ops' must be an object")
    clean_ops = {}
    for name in _COMPUTE_OPS:
        if name not in ops:
            raise ConfigError(f"{source}: field 'ops' lacks operation class {name}")
        v = ops[name]
        if not (isinstance(v, (list, tuple)) and len(v) == 3 and v[0] in PIPES):
            raise ConfigError(f"{source}: field 'ops.{name}' must be [unit ({'|'.join(PIPES)}), latency, repeat], "
                              f"got {v!r}")
        clean_ops[name] = [v[0], _pos(source, f"ops.{name}[1]", v[1], True), _pos(source, f"ops.{name}[2]", v[2], True)]
    extra = sorted(set(ops) - set(_COMPUTE_OPS))
    if extra:
        raise ConfigError(f"{source}: field 'ops' has unknown or memory operation class(es) {', '.join(extra)}")
    return clean_ops


def _power(power, source: str) -> dict:
    """The field ``power``, checked: the voltage/frequency corners and the energies (``pj``) per event."""
    if not isinstance(power, dict):
        raise ConfigError(f"{source}: field 'power' must be an object")
    pw = {}
    for k in ("v_min", "v_max", "f_v_min_mhz", "f_v_max_mhz"):
        if k not in power:
            raise ConfigError(f"{source}: field 'power.{k}' is missing")
        pw[k] = _pos(source, f"power.{k}", power[k], False)
    if pw["v_min"] > pw["v_max"]:
        raise ConfigError(f"{source}: field 'power.v_min' = {pw['v_min']:g} is above 'power.v_max' = {pw['v_max']:g}")
    pj = power.get("pj")
    if not isinstance(pj, dict) or set(pj) != set(PJ_KEYS):
        raise ConfigError(f"{source}: field 'power.pj' must map exactly {', '.join(PJ_KEYS)} to energies")
    pw["pj"] = {}
    for k in PJ_KEYS:
        v = pj[k]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ConfigError(f"{source}: field 'power.pj.{k}' must be a finite number >= 0, got {v!r}")
        if v > MAX_VALUE["power.pj"]:
            raise ConfigError(f"{source}: field 'power.pj.{k}' = {v!r} is out of range: "
                              f"at most {MAX_VALUE['power.pj']:g}")
        pw["pj"][k] = float(v)
    return pw


def _sweep(sweep, source: str) -> dict:
    """The field ``sweep``, checked: non-empty lists of SM counts, core and memory clocks."""
    if not isinstance(sweep, dict) or set(sweep) != {"sm_counts", "core_mhz", "mem_mhz"}:
        raise ConfigError(f"{source}: field 'sweep' must have exactly sm_counts, core_mhz, mem_mhz")
    sw = {}
    for k in ("sm_counts", "core_mhz", "mem_mhz"):
        vals = sweep[k]
        if not isinstance(vals, list) or not vals:
            raise ConfigError(f"{source}: field 'sweep.{k}' must be a non-empty list")
        sw[k] = [_pos(source, f"sweep.{k}[{i}]", v, k == "sm_counts") for i, v in enumerate(vals)]
    return sw


def _with_version_1_defaults(data: dict) -> dict:
    """A version-1 description with the fields version 2 added (module docstring): each FP64_X class as its FP_X
    entry, ``lanes.fp64`` = ``lanes.fp``, ``pj.fp64`` = ``pj.fp`` (where the file has what they copy; what it
    lacks is reported by the checks that follow)."""
    data = dict(data)
    lanes = data.get("lanes")
    if isinstance(lanes, dict) and "fp64" not in lanes and "fp" in lanes:
        data["lanes"] = {**lanes, "fp64": lanes["fp"]}
    ops = data.get("ops")
    if isinstance(ops, dict):
        data["ops"] = {**{d: ops[s] for d, s in _FP64_OF.items() if d not in ops and s in ops}, **ops}
    power = data.get("power")
    if isinstance(power, dict) and isinstance(power.get("pj"), dict) and "fp64" not in power["pj"] \
            and "fp" in power["pj"]:
        data["power"] = {**power, "pj": {**power["pj"], "fp64": power["pj"]["fp"]}}
    return data


def preset_names() -> list[str]:
    """Names of the vendored presets.

    Returns
    -------
    list of str
    """
    return sorted(p.stem for p in PRESET_DIR.glob("*.json"))


def preset_generations() -> dict[str, str]:
    """The ``generation`` of every vendored preset (:func:`preset_names`), read from the files.

    Returns
    -------
    dict of str to str
        preset name -> generation (one of :data:`GENERATION_ORDER`).

    Raises
    ------
    ConfigError
        A preset without ``generation`` (every vendored preset must have one).
    """
    out = {}
    for name in preset_names():
        gen = load_config(name).generation
        if gen is None:
            raise ConfigError(f"{PRESET_DIR / (name + '.json')}: field 'generation' is missing (every preset has one)")
        out[name] = gen
    return out


def generations_up_to(generation: str) -> tuple[str, ...]:
    """The generations of :data:`GENERATION_ORDER` from the oldest to ``generation`` included (the training side
    of a "train on everything older, test on this one" split is the tuple without its last entry).

    Parameters
    ----------
    generation : str
        One of :data:`GENERATION_ORDER`.

    Returns
    -------
    tuple of str

    Raises
    ------
    ValueError
        An unknown generation.
    """
    if generation not in GENERATION_ORDER:
        raise ValueError(f"unknown GPU generation {generation!r}; known: {', '.join(GENERATION_ORDER)}")
    return GENERATION_ORDER[:GENERATION_ORDER.index(generation) + 1]


def load_config(name_or_path: str | Path) -> GPUConfig:
    """Load a preset by name (``h100``, ``gtx480``, ``p100``, ... see :func:`preset_names`) or a file by path.

    Parameters
    ----------
    name_or_path : str or Path

    Returns
    -------
    GPUConfig

    Raises
    ------
    ConfigError, FileNotFoundError
    """
    text = str(name_or_path)
    path = Path(text)
    if not (path.suffix == ".json" or path.exists()):
        if text not in preset_names():
            raise ConfigError(f"unknown GPU preset {text!r}; presets: {', '.join(preset_names())} (or a .json file)")
        path = PRESET_DIR / f"{text}.json"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such GPU description file")
    if path.is_dir():
        raise ConfigError(f"{path}: is a folder, not a GPU description file (.json)")
    try:
        data = read_json(path, what="GPU description")
    except JsonFileError as exc:
        raise ConfigError(str(exc)) from None
    return config_from_json(data, source=str(path))
