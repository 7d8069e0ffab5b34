"""Kernel x configuration measurements: the table that the scaling models and the taxonomy learn from.

One row is one kernel measured at one hardware configuration:

============  =======  ===========================================================================
column        type     meaning
============  =======  ===========================================================================
``kernel``    str      kernel name (non-empty)
``sm_count``  int      number of SMs / compute units enabled (> 0)
``core_mhz``  float    core (engine) clock in MHz (> 0)
``mem_mhz``   float    memory clock in MHz (> 0)
``time``      float    execution time (> 0; any unit, used only as ratios)
``power``     float    average power in W (> 0; any consistent definition, e.g. dynamic or above idle)
``group``     str      optional: a free label such as ``micro`` / ``real`` / ``synthetic:compute``
other         float    optional counter columns: any further column must be numeric and finite
============  =======  ===========================================================================

A (kernel, sm_count, core_mhz, mem_mhz) combination may appear once. Files are CSV or Parquet
(chosen by suffix); Parquet files carry the schema version in their metadata. Validation raises
:class:`DatasetError` naming the file, the row (and CSV line) and the column at fault.

:func:`load_titanx` reads the vendored GTX Titan X DVFS data (``gpu_models/data/gtxtitanx_dvfs``) and
joins every benchmark with its static PTX instruction-count fingerprint (columns ``ptx_<instruction>``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from core.atomic import make_temp

SCHEMA_NAME = "portcast.scaling_dataset"
SCHEMA_VERSION = 1

KEY_COLUMNS: tuple[str, ...] = ("kernel", "sm_count", "core_mhz", "mem_mhz")
REQUIRED_COLUMNS: tuple[str, ...] = ("kernel", "sm_count", "core_mhz", "mem_mhz", "time", "power")
STRING_COLUMNS: tuple[str, ...] = ("kernel", "group")

TITANX_DIR = Path(__file__).resolve().parents[1] / "data" / "gtxtitanx_dvfs"
#: The GTX Titan X (GM200) has 24 SMs; the vendored data never vary them.
TITANX_SM_COUNT = 24


class DatasetError(ValueError):
    """A dataset file or frame does not follow the format; the message names row and column."""


@dataclass(frozen=True)
class Grid:
    """The configuration grid of a dataset: sorted distinct SM counts, core clocks, memory clocks."""

    sm_counts: tuple[int, ...]
    core_mhz: tuple[float, ...]
    mem_mhz: tuple[float, ...]

    @property
    def shape(self) -> tuple[int, int, int]:
        return (len(self.sm_counts), len(self.core_mhz), len(self.mem_mhz))

    @property
    def n_configs(self) -> int:
        a, b, c = self.shape
        return a * b * c

    def index(self, sm_count: float, core_mhz: float, mem_mhz: float) -> tuple[int, int, int]:
        """Return the (cu, core, mem) indices of a configuration.

        Parameters
        ----------
        sm_count, core_mhz, mem_mhz:
            The configuration; each value must be on the grid.

        Returns
        -------
        tuple of int
            Indices into :attr:`sm_counts`, :attr:`core_mhz`, :attr:`mem_mhz`.
        """
        out = []
        for name, values, v in (
            ("sm_count", self.sm_counts, sm_count),
            ("core_mhz", self.core_mhz, core_mhz),
            ("mem_mhz", self.mem_mhz, mem_mhz),
        ):
            hits = [i for i, g in enumerate(values) if abs(float(g) - float(v)) < 1e-6]
            if not hits:
                raise DatasetError(
                    f"{name}={v:g} is not on the grid; known values: {', '.join(f'{g:g}' for g in values)}"
                )
            out.append(hits[0])
        return tuple(out)  # type: ignore[return-value]

    def configs(self) -> list[tuple[int, float, float]]:
        """All configurations in C order of (cu, core, mem) indices."""
        return [(s, c, m) for s in self.sm_counts for c in self.core_mhz for m in self.mem_mhz]

    def to_json(self) -> dict:
        return {"sm_counts": list(self.sm_counts), "core_mhz": list(self.core_mhz), "mem_mhz": list(self.mem_mhz)}

    @classmethod
    def from_json(cls, data: dict) -> "Grid":
        return cls(
            tuple(int(v) for v in data["sm_counts"]),
            tuple(float(v) for v in data["core_mhz"]),
            tuple(float(v) for v in data["mem_mhz"]),
        )


def _where(source: str, i: int, csv: bool) -> str:
    line = f" (line {i + 2})" if csv else ""
    return f"{source}: row {i}{line}"


def validate_frame(df: pd.DataFrame, source: str = "<frame>", csv: bool = False) -> pd.DataFrame:
    """Check a measurement table and return a clean copy with canonical dtypes.

    Parameters
    ----------
    df:
        The table (one row per kernel x configuration).
    source:
        Name used in error messages (usually the file path).
    csv:
        If true, messages also give the 1-based CSV line (header = line 1).

    Returns
    -------
    pandas.DataFrame
        Columns ``kernel, sm_count, core_mhz, mem_mhz, time, power`` first, then ``group`` if present,
        then counter columns in their original order; ``sm_count`` as int64, numbers as float64.

    Raises
    ------
    DatasetError
        On a missing column, a bad value (naming row and column) or a repeated configuration.
    """
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise DatasetError(f"{source}: missing column(s) {', '.join(map(repr, missing))}; "
                           f"required: {', '.join(REQUIRED_COLUMNS)}")
    if len(df) == 0:
        raise DatasetError(f"{source}: no rows")
    out = {}
    kern = df["kernel"]
    for i, v in enumerate(kern):
        if not isinstance(v, str) or not v.strip():
            raise DatasetError(f"{_where(source, i, csv)}, column 'kernel': expected a non-empty name, got {v!r}")
    out["kernel"] = kern.astype(str).to_numpy()
    for col in REQUIRED_COLUMNS[1:] + tuple(c for c in df.columns if c not in REQUIRED_COLUMNS + STRING_COLUMNS):
        raw = df[col].to_numpy()
        vals = pd.to_numeric(pd.Series(raw), errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(vals)
        if col in REQUIRED_COLUMNS:
            bad |= ~(vals > 0)
        if col == "sm_count":
            bad |= np.isfinite(vals) & (vals != np.round(vals))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            what = {"sm_count": "a positive integer"}.get(
                col, "a positive finite number" if col in REQUIRED_COLUMNS else "a finite number")
            raise DatasetError(f"{_where(source, i, csv)}, column {col!r}: expected {what}, got {raw[i]!r}")
        out[col] = vals.astype(np.int64) if col == "sm_count" else vals
    if "group" in df.columns:
        out["group"] = df["group"].fillna("").astype(str).to_numpy()
    counters = [c for c in df.columns if c not in REQUIRED_COLUMNS + STRING_COLUMNS]
    clean = pd.DataFrame({c: out[c] for c in [*REQUIRED_COLUMNS, *(["group"] if "group" in out else []), *counters]})
    dup = clean.duplicated(list(KEY_COLUMNS), keep="first")
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        r = clean.iloc[i]
        raise DatasetError(
            f"{_where(source, i, csv)}, columns kernel/sm_count/core_mhz/mem_mhz: configuration "
            f"({r.kernel}, {r.sm_count}, {r.core_mhz:g}, {r.mem_mhz:g}) appears more than once")
    return clean


class ScalingDataset:
    """A validated kernel x configuration table.

    Parameters
    ----------
    frame:
        A table in the format of this module; it is validated.
    source:
        Name for error messages.
    """

    def __init__(self, frame: pd.DataFrame, source: str = "<frame>", _csv: bool = False) -> None:
        self.frame = validate_frame(frame, source, csv=_csv)
        self.source = source

    # -- views -----------------------------------------------------------------------------------
    @property
    def kernels(self) -> list[str]:
        """Kernel names in order of first appearance."""
        return list(dict.fromkeys(self.frame["kernel"]))

    @property
    def counter_columns(self) -> list[str]:
        """Names of the optional counter columns."""
        return [c for c in self.frame.columns if c not in REQUIRED_COLUMNS + STRING_COLUMNS]

    def groups(self) -> dict[str, str]:
        """Map kernel -> group label ('' when the dataset has no ``group`` column)."""
        if "group" not in self.frame:
            return {k: "" for k in self.kernels}
        g = self.frame.drop_duplicates("kernel")
        return dict(zip(g["kernel"], g["group"]))

    def grid(self) -> Grid:
        """The sorted distinct configuration values."""
        f = self.frame
        return Grid(
            tuple(int(v) for v in np.unique(f["sm_count"])),
            tuple(float(v) for v in np.unique(f["core_mhz"])),
            tuple(float(v) for v in np.unique(f["mem_mhz"])),
        )

    def subset(self, kernels) -> "ScalingDataset":
        """Return the rows of the given kernels (in the given order)."""
        kernels = list(kernels)
        unknown = sorted(set(kernels) - set(self.kernels))
        if unknown:
            raise DatasetError(f"{self.source}: unknown kernel(s) {', '.join(unknown)}")
        order = {k: i for i, k in enumerate(kernels)}
        f = self.frame[self.frame["kernel"].isin(order)].copy()
        f["_o"] = f["kernel"].map(order)
        f = f.sort_values("_o", kind="stable").drop(columns="_o")
        return ScalingDataset(f.reset_index(drop=True), self.source)

    def cube(self, value: str = "time", kernels=None, grid: Grid | None = None) -> np.ndarray:
        """Arrange one value column as an array (kernel, cu, core, mem).

        Parameters
        ----------
        value:
            ``time``, ``power`` or a counter column.
        kernels:
            Kernel order (default :attr:`kernels`).
        grid:
            Grid to use (default :meth:`grid`).

        Returns
        -------
        numpy.ndarray
            Shape ``(n_kernels, n_cu, n_core, n_mem)``.

        Raises
        ------
        DatasetError
            If some kernel lacks a configuration of the grid (the message names both).
        """
        grid = grid or self.grid()
        kernels = list(kernels) if kernels is not None else self.kernels
        if value not in self.frame.columns:
            raise DatasetError(f"{self.source}: no column {value!r}")
        kidx = {k: i for i, k in enumerate(kernels)}
        out = np.full((len(kernels), *grid.shape), np.nan)
        f = self.frame[self.frame["kernel"].isin(kidx)]
        si = np.searchsorted(np.asarray(grid.sm_counts), f["sm_count"].to_numpy())
        ci = np.searchsorted(np.asarray(grid.core_mhz), f["core_mhz"].to_numpy())
        mi = np.searchsorted(np.asarray(grid.mem_mhz), f["mem_mhz"].to_numpy())
        ki = f["kernel"].map(kidx).to_numpy()
        ok = (si < grid.shape[0]) & (ci < grid.shape[1]) & (mi < grid.shape[2])
        out[ki[ok], si[ok], ci[ok], mi[ok]] = f[value].to_numpy()[ok]
        holes = np.argwhere(np.isnan(out))
        if len(holes):
            k, s, c, m = holes[0]
            raise DatasetError(
                f"{self.source}: kernel {kernels[k]!r} has no row for configuration sm_count="
                f"{grid.sm_counts[s]}, core_mhz={grid.core_mhz[c]:g}, mem_mhz={grid.mem_mhz[m]:g} "
                f"({len(holes)} missing in all); the scaling models need the full grid")
        return out

    def counters_at(self, sm_count: float, core_mhz: float, mem_mhz: float, columns=None, kernels=None) -> np.ndarray:
        """Counter values of every kernel measured at one configuration, shape (n_kernels, n_columns)."""
        columns = list(columns) if columns is not None else self.counter_columns
        kernels = list(kernels) if kernels is not None else self.kernels
        f = self.frame
        sel = f[(f["sm_count"] == sm_count) & np.isclose(f["core_mhz"], core_mhz) & np.isclose(f["mem_mhz"], mem_mhz)]
        sel = sel.set_index("kernel")
        missing = [k for k in kernels if k not in sel.index]
        if missing:
            raise DatasetError(f"{self.source}: kernel {missing[0]!r} has no row at sm_count={sm_count}, "
                               f"core_mhz={core_mhz:g}, mem_mhz={mem_mhz:g}")
        bad = [c for c in columns if c not in sel.columns]
        if bad:
            raise DatasetError(f"{self.source}: no counter column {bad[0]!r}")
        return sel.loc[kernels, columns].to_numpy(dtype=float)

    # -- files -----------------------------------------------------------------------------------
    def write(self, path: str | os.PathLike) -> Path:
        """Write the table atomically as CSV or Parquet (by suffix); returns the path."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix not in (".csv", ".parquet"):
            raise DatasetError(f"{path}: unsupported suffix {path.suffix!r}; use .csv or .parquet")
        fd, tmp = make_temp(path)
        os.close(fd)
        try:
            if suffix == ".csv":
                self.frame.to_csv(tmp, index=False)
            else:
                import pyarrow as pa
                import pyarrow.parquet as pq

                table = pa.Table.from_pandas(self.frame, preserve_index=False)
                meta = dict(table.schema.metadata or {})
                meta[b"portcast.schema"] = f"{SCHEMA_NAME}/{SCHEMA_VERSION}".encode()
                pq.write_table(table.replace_schema_metadata(meta), tmp)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        return path


def read_dataset(path: str | os.PathLike) -> ScalingDataset:
    """Read and validate a dataset file (``.csv`` or ``.parquet``).

    Parameters
    ----------
    path:
        The file.

    Returns
    -------
    ScalingDataset

    Raises
    ------
    FileNotFoundError, DatasetError
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    suffix = path.suffix.lower()
    if suffix == ".csv":
        try:
            df = pd.read_csv(path, dtype={"kernel": str, "group": str}, keep_default_na=False,
                             na_values=[""])
        except (pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise DatasetError(f"{path}: not a readable CSV file ({exc})") from None
        if "kernel" in df.columns:
            df["kernel"] = df["kernel"].where(df["kernel"].notna(), None)
        return ScalingDataset(df, str(path), _csv=True)
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path)
        except Exception as exc:  # pyarrow raises several types for a broken file
            raise DatasetError(f"{path}: not a readable Parquet file ({exc})") from None
        meta = (table.schema.metadata or {}).get(b"portcast.schema")
        if meta is not None:
            name, _, ver = meta.decode().partition("/")
            if name != SCHEMA_NAME or not ver.isdigit() or int(ver) > SCHEMA_VERSION:
                raise DatasetError(f"{path}: schema {meta.decode()!r} is not readable by this version "
                                   f"(reads {SCHEMA_NAME}/{SCHEMA_VERSION})")
        return ScalingDataset(table.to_pandas(), str(path))
    raise DatasetError(f"{path}: unsupported suffix {path.suffix!r}; use .csv or .parquet")


# -- the vendored GTX Titan X data ---------------------------------------------------------------------

def ptx_instruction_names(folder: Path = TITANX_DIR) -> list[str]:
    """The 101 PTX instruction names, in the column order of the fingerprint files."""
    return [ln.strip() for ln in (folder / "ptx_occurrences" / "ptx_isa.txt").read_text().splitlines() if ln.strip()]


def read_ptx_fingerprint(path: Path, n_instructions: int) -> np.ndarray:
    """Sum the per-kernel rows of one ``outputOccurrences_per_kernel`` file into one count vector.

    Parameters
    ----------
    path:
        The fingerprint CSV (mangled kernel name, then one count per PTX instruction).
    n_instructions:
        Expected number of counts per line.

    Returns
    -------
    numpy.ndarray
        Float array of length ``n_instructions``: static occurrences summed over the file's kernels.
    """
    total = np.zeros(n_instructions)
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split(",")
        if len(fields) != n_instructions + 1:
            raise DatasetError(f"{path}: line {lineno}: expected {n_instructions + 1} fields, got {len(fields)}")
        try:
            total += np.array([float(x) for x in fields[1:]])
        except ValueError:
            raise DatasetError(f"{path}: line {lineno}: non-numeric count") from None
    return total


def _titanx_benchmark_names(df: pd.DataFrame) -> pd.Series:
    """Benchmark names per row; the real set lists two blocks as ``stencil2d``.

    The upstream aggregated file holds the SHOC double-precision block (``s3d_double`` ...) before the
    single-precision one; the first ``stencil2d`` block sits in the double-precision group, so it is
    taken to be ``stencil2d_double`` (the 25th real kernel, whose fingerprint is vendored). This is an
    inference from file order, recorded in docs/scaling.md.
    """
    names = df["benchmark"].astype(str).to_numpy().copy()
    seen: dict[str, int] = {}
    block_start = np.r_[True, names[1:] != names[:-1]]
    current = None
    doubled = int((names == "stencil2d").sum()) == 64
    for i, name in enumerate(names):
        if block_start[i]:
            seen[name] = seen.get(name, 0) + 1
            current = seen[name]
        if doubled and name == "stencil2d" and current == 1:
            names[i] = "stencil2d_double"
    return pd.Series(names, index=df.index)


def load_titanx(sets: tuple[str, ...] = ("micro", "real"), folder: Path | None = None) -> ScalingDataset:
    """Load the vendored GTX Titan X DVFS measurements joined with their PTX fingerprints.

    Parameters
    ----------
    sets:
        Which benchmark sets: ``"micro"`` (140 microbenchmarks) and/or ``"real"`` (25 real kernels).
    folder:
        Data folder (default: the vendored ``gpu_models/data/gtxtitanx_dvfs``).

    Returns
    -------
    ScalingDataset
        Columns ``kernel, sm_count (24), core_mhz, mem_mhz, time, power (avg_power_w), group
        ('micro'|'real')`` and ``ptx_<instruction>`` for the 101 PTX instructions (static counts).
    """
    folder = Path(folder) if folder is not None else TITANX_DIR
    isa = ptx_instruction_names(folder)
    frames = []
    prefix = {"micro": "microbenchmarks", "real": "realbenchmarks"}
    for s in sets:
        if s not in prefix:
            raise DatasetError(f"unknown Titan X set {s!r}; use 'micro' and/or 'real'")
        path = folder / f"{s}_long.csv"
        raw = pd.read_csv(path)
        names = _titanx_benchmark_names(raw)
        fps = {}
        for name in dict.fromkeys(names):
            fp = folder / "ptx_occurrences" / f"{prefix[s]}__{name}.csv"
            if not fp.exists():
                raise DatasetError(f"{path}: benchmark {name!r} has no PTX fingerprint {fp.name}")
            fps[name] = read_ptx_fingerprint(fp, len(isa))
        fpm = np.vstack([fps[n] for n in names])
        df = pd.DataFrame({
            "kernel": names.to_numpy(),
            "sm_count": TITANX_SM_COUNT,
            "core_mhz": raw["core_clock_mhz"].astype(float),
            "mem_mhz": raw["mem_clock_mhz"].astype(float),
            "time": raw["time"].astype(float),
            "power": raw["avg_power_w"].astype(float),
            "group": s,
        })
        ptx = pd.DataFrame(fpm, columns=[f"ptx_{n}" for n in isa])
        frames.append(pd.concat([df, ptx], axis=1))
    return ScalingDataset(pd.concat(frames, ignore_index=True), source=str(folder))
