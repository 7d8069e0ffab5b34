"""Single-thread CPU times of the measured-kernel ports (``kernels/measured``) at their measured points.

The speedup evaluation of a GPU-time model needs, beside each measured GPU time, the time the CPU region
takes: :func:`time_point` compiles the port's region with ``numba.njit`` (``parallel=False``: one thread, the
``numba.prange`` loop runs as ``range``), runs it once to compile and warm up, then times it on fresh copies of
the inputs (regions update their inputs in place; copying is outside the timed span) and keeps the best and the
median. The number of timed runs adapts to the point: at least ``repeat``, more until ``budget_s`` seconds of
timed runs or ``max_repeat`` runs, and never a run that would take the timed total past ``limit_s`` (a point of
several seconds a run gets a few runs, one of microseconds fifty).

:func:`time_points` gives one row per point; :func:`write_cpu_times` saves them as CSV (a ``schema_version``
column) with a JSON sidecar (``<stem>.json``: the host, the settings, how the times were taken), each written
atomically; :func:`read_cpu_times` reads them back and checks both. ``portcast measured cpu-times`` is the
command; its default output is the committed ``kernels/measured/data/cpu_times.csv``.

Why not :func:`profiler.session.measure_uninstrumented`: it compiles the same way (``numba.njit`` of the plain
function, so ``parallel=False``, one thread), but takes a fixed number of runs, keeps only the best, and falls
back to plain Python when Numba cannot compile the region (hours at a large point); here a region that does not
compile is reported as such and not timed.
"""

from __future__ import annotations

import copy
import datetime as _dt
import gc
import json
import os
import platform
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from core.atomic import atomic_write_text
from core.jsonfile import read_json

#: Schema version of the CSV (its ``schema_version`` column) and of the sidecar.
CPU_TIMES_SCHEMA_VERSION = 1
#: CPU times schema versions this Portcast reads.
READABLE_SCHEMA_VERSIONS = (1,)
#: ``kind`` of the sidecar.
KIND = "portcast.cpu_times"

ROOT = Path(__file__).resolve().parents[3]
#: The committed table (``portcast measured cpu-times`` writes it by default).
SHIPPED_CPU_TIMES = ROOT / "kernels" / "measured" / "data" / "cpu_times.csv"

#: Columns of the table, in CSV order, with their dtypes (reading gives exactly these).
DTYPES: dict[str, str] = {
    "schema_version": "int64",
    "port": "object",  # "<source>/<application>/<kernel>"
    "point": "object",  # point label (or "test" for the port's test point)
    "global_work": "int64",  # the point's global work items (spec.work)
    "cpu_s": "float64",  # best timed run, seconds (NaN when not timed)
    "cpu_median_s": "float64",  # median of the timed runs
    "repeats": "int64",  # timed runs (0 when not timed)
    "warmup_s": "float64",  # the warm-up run (includes compiling, for the first point of a port)
    "same_result": "boolean",  # every timed run returned exactly the warm-up run's result (NA when not timed)
    "how": "object",  # "njit", or "not timed: <why>"
}
COLUMNS = tuple(DTYPES)

#: How the times are taken (recorded in the sidecar).
TIMING = ("numba.njit(region) with parallel=False (one thread; prange runs as range); one warm-up run "
          "(compiles), then timed runs, each on fresh copies of the inputs (copying not timed, garbage collector "
          "off during a run), time.perf_counter around the call; cpu_s is the best run, cpu_median_s the median")

_DISPATCHERS: dict = {}  # region function -> its single-thread njit dispatcher


def host_description() -> dict[str, Any]:
    """The machine the times are taken on: CPU model (``/proc/cpuinfo``), logical cores, that the regions run on
    one thread, the Numba / NumPy / Python versions, the host name, the date (UTC) and the load average."""
    import numba

    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover - not on Linux
        load = None
    return {
        "cpu_model": cpu_model(),
        "logical_cores": os.cpu_count(),
        "threads": 1,
        "threading": "single thread: numba.njit(parallel=False), prange runs as range",
        "numba_version": numba.__version__,
        "numpy_version": np.__version__,
        "python_version": platform.python_version(),
        "hostname": platform.node(),
        "date_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "load_average": load,
    }


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; else what the platform module says)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _dispatcher(fn: Callable) -> Callable:
    """The single-thread ``numba.njit`` dispatcher of a region (one per region function, so that the points of a
    port share its compiled versions). An njit dispatcher given as the region is recompiled from its Python
    function with its options but ``parallel=False``."""
    import numba
    from numba.core.registry import CPUDispatcher

    disp = _DISPATCHERS.get(fn)
    if disp is None:
        if isinstance(fn, CPUDispatcher):
            opts = {k: v for k, v in fn.targetoptions.items() if k not in ("nopython", "cache", "parallel")}
            disp = numba.njit(parallel=False, **opts)(fn.py_func)
        else:
            disp = numba.njit(parallel=False)(fn)
        _DISPATCHERS[fn] = disp
    return disp


def _copies(inputs: Iterable) -> list:
    """Fresh copies of the inputs (arrays keep their memory order; scalars are passed as they are)."""
    out = []
    for a in inputs:
        if isinstance(a, np.ndarray):
            out.append(np.array(a, copy=True, order="K"))
        elif isinstance(a, (list, tuple, dict)):
            out.append(copy.deepcopy(a))
        else:
            out.append(a)
    return out


def _same(a, b) -> bool:
    """Whether two region results are exactly equal (element by element; NaN equals NaN)."""
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, tuple) else (b,)
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        try:
            if not np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"):
                return False
        except TypeError:  # pragma: no cover - object arrays
            if not np.array_equal(x, y):
                return False
    return True


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".strip()


def time_point(spec, label: str, *, seed: int = 0, repeat: int = 3, max_repeat: int = 50, budget_s: float = 0.5,
               limit_s: float = 60.0) -> dict:
    """Time one port's region at one point, compiled with ``numba.njit`` on one thread.

    Parameters
    ----------
    spec : kernels.measured.spec.MeasuredKernel
        The port.
    label : str
        A key of ``spec.points``, or ``"test"`` for ``spec.test_point``.
    seed : int
        Seed of ``spec.make_inputs``.
    repeat : int
        Timed runs at least (after the warm-up run), unless ``limit_s`` stops them earlier.
    max_repeat : int
        Timed runs at most.
    budget_s : float
        After ``repeat`` runs, keep running until the timed runs add up to this many seconds (or ``max_repeat``).
    limit_s : float
        Never start a run that would, at the best time so far, take the timed runs past this many seconds (a
        region of more than ``limit_s / repeat`` seconds a run gets fewer than ``repeat`` runs, at least one).

    Returns
    -------
    dict
        ``port``, ``point``, ``global_work``, ``cpu_s`` (best), ``cpu_median_s``, ``repeats`` (timed runs),
        ``warmup_s``, ``same_result`` (every timed run returned exactly the warm-up run's result) and ``how``
        (``"njit"``; ``"not timed: <why>"`` when Numba cannot compile the region or it raised, then the times
        are NaN, ``repeats`` 0 and ``same_result`` None).

    Raises
    ------
    ValueError
        An unknown point label or bad settings.
    """
    if label != "test" and label not in spec.points:
        raise ValueError(f"{spec.name}: no point {label!r}; known: {', '.join(spec.points)}, test")
    if repeat < 1 or max_repeat < repeat:
        raise ValueError(f"repeat must be >= 1 and max_repeat >= repeat, got repeat={repeat}, max_repeat={max_repeat}")
    from numba.core.errors import NumbaError

    params = spec.test_point if label == "test" else spec.points[label]
    row: dict[str, Any] = {"port": spec.name, "point": label, "global_work": int(spec.work(params)[0]),
                           "cpu_s": float("nan"), "cpu_median_s": float("nan"), "repeats": 0,
                           "warmup_s": float("nan"), "same_result": None, "how": "njit"}
    inputs = tuple(spec.make_inputs(params, seed))
    fn = _dispatcher(spec.cpu)
    try:
        args = _copies(inputs)
        t0 = time.perf_counter()
        first = fn(*args)
        row["warmup_s"] = time.perf_counter() - t0
    except NumbaError as exc:
        row["how"] = f"not timed: Numba cannot compile the region ({_first_line(exc)})"
        return row
    except Exception as exc:
        row["how"] = f"not timed: the region raised {_first_line(exc)}"
        return row
    del args
    times: list[float] = []
    same = True
    while len(times) < max_repeat:
        total = sum(times)
        if len(times) >= repeat and total >= budget_s:
            break
        if times and total + min(times) > limit_s:
            break
        args = _copies(inputs)
        enabled = gc.isenabled()
        gc.disable()
        try:
            t0 = time.perf_counter()
            value = fn(*args)
            dt = time.perf_counter() - t0
        except Exception as exc:
            row["how"] = f"not timed: the region raised {_first_line(exc)} in timed run {len(times) + 1}"
            return row
        finally:
            if enabled:
                gc.enable()
        times.append(dt)
        same = same and _same(first, value)
        del args, value
    row.update(cpu_s=min(times), cpu_median_s=float(np.median(times)), repeats=len(times), same_result=same)
    return row


def selected(specs: Iterable, labels: Iterable[str] | None = None,
             max_global_work: int | None = None) -> list[tuple[Any, str]]:
    """The (port, label) pairs :func:`time_points` times (:func:`kernels.measured.harness.points.selected_points`,
    without the feature points: nothing was measured there)."""
    from kernels.measured.harness.points import selected_points
    from kernels.measured.spec import FEATURES_LABEL

    return [(s, lab) for s, lab in selected_points(list(specs), labels, max_global_work) if lab != FEATURES_LABEL]


def time_points(specs: Iterable, labels: Iterable[str] | None = None, *, seed: int = 0,
                max_global_work: int | None = None, progress: Callable[[dict], None] | None = None,
                **settings: Any) -> pd.DataFrame:
    """Rows of :func:`time_point` at the points of ``specs`` (all of each port's points, or those in ``labels``,
    chosen as :func:`kernels.measured.harness.points.selected_points` does), in the columns :data:`COLUMNS`.

    ``progress(row)`` is called after each point; ``settings`` (``repeat``, ``max_repeat``, ``budget_s``,
    ``limit_s``) go to :func:`time_point`.
    """
    rows = []
    for spec, label in selected(specs, labels, max_global_work):
        row = time_point(spec, label, seed=seed, **settings)
        rows.append(row)
        if progress is not None:
            progress(row)
    frame = pd.DataFrame([{"schema_version": CPU_TIMES_SCHEMA_VERSION, **r} for r in rows], columns=list(COLUMNS))
    return _typed(frame)


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.astype(DTYPES)


def _sidecar(path: Path) -> Path:
    return path.with_suffix(".json")


def write_cpu_times(frame: pd.DataFrame, path: str | os.PathLike, host: Mapping[str, Any], *,
                    extra: Mapping[str, Any] | None = None) -> tuple[Path, Path]:
    """Write the table as CSV and its JSON sidecar (``<stem>.json``: schema version, host, timing method, row
    counts, ``extra`` such as the command and settings), each atomically.

    Parameters
    ----------
    frame : the DataFrame of :func:`time_points` (columns :data:`COLUMNS`).
    path : CSV path (its folder must exist).
    host : the machine description (:func:`host_description`).
    extra : more entries for the sidecar.

    Returns
    -------
    (csv path, sidecar path)
    """
    path = Path(path)
    if path.suffix.lower() != ".csv":
        raise ValueError(f"{path}: the CPU times table is written as CSV; give a path ending in .csv")
    if not path.parent.exists():
        raise FileNotFoundError(f"{path.parent}: output folder does not exist")
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: the frame to write lacks column(s) {', '.join(missing)}")
    frame = _typed(frame[list(COLUMNS)])
    timed = frame["repeats"] > 0
    meta = {
        "schema_version": CPU_TIMES_SCHEMA_VERSION,
        "kind": KIND,
        "csv": path.name,
        "host": dict(host),
        "timing": TIMING,
        "n_rows": int(len(frame)),
        "n_not_timed": int((~timed).sum()),
        "n_result_differs": int((frame["same_result"] == False).sum()),  # noqa: E712 - nullable boolean
        **dict(extra or {}),
    }
    sidecar = _sidecar(path)
    atomic_write_text(path, frame.to_csv(index=False, lineterminator="\n"))
    atomic_write_text(sidecar, json.dumps(meta, indent=2) + "\n")
    return path, sidecar


def read_cpu_times(path: str | os.PathLike | None = None) -> pd.DataFrame:
    """Read a CPU times table written by :func:`write_cpu_times` (default: the committed one).

    Returns
    -------
    pandas.DataFrame
        The columns :data:`COLUMNS` with their dtypes (floats read back exactly); ``attrs["host"]`` is the
        machine description and ``attrs["sidecar"]`` the whole sidecar.

    Raises
    ------
    FileNotFoundError, ValueError
        Naming the file (CSV or sidecar) and what is wrong: missing, unreadable, a missing column, another
        kind or schema version.
    """
    path = Path(path or SHIPPED_CPU_TIMES)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no CPU times table (make one with `portcast measured cpu-times`)")
    try:
        text = ("port", "point", "how")
        frame = pd.read_csv(path, dtype=dict.fromkeys(text, str), keep_default_na=False,
                            na_values={c: ["", "NaN", "nan"] for c in DTYPES if c not in text})
    except (ValueError, OSError) as exc:
        raise ValueError(f"{path}: cannot read the CPU times CSV ({exc})") from None
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: not a CPU times table (missing column(s) {', '.join(missing)})")
    versions = sorted({int(v) for v in pd.to_numeric(frame["schema_version"], errors="coerce").fillna(-1)})
    bad = [v for v in versions if v not in READABLE_SCHEMA_VERSIONS]
    if bad:
        raise ValueError(f"{path}: CPU times schema version {bad[0]}; this Portcast reads "
                         f"{', '.join(map(str, READABLE_SCHEMA_VERSIONS))}")
    try:
        frame = _typed(frame[list(COLUMNS)])
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{path}: a column has values of the wrong type ({exc})") from None
    sidecar = _sidecar(path)
    if not sidecar.is_file():
        raise FileNotFoundError(f"{sidecar}: the sidecar of {path.name} (host description) is missing")
    meta = read_json(sidecar, what="CPU times sidecar")
    kind = meta.get("kind") if isinstance(meta, dict) else None
    if kind != KIND:
        raise ValueError(f"{sidecar}: not a CPU times sidecar (kind {kind!r}, expected {KIND!r})")
    if meta.get("schema_version") not in READABLE_SCHEMA_VERSIONS:
        raise ValueError(f"{sidecar}: CPU times schema version {meta.get('schema_version')!r}; this Portcast reads "
                         f"{', '.join(map(str, READABLE_SCHEMA_VERSIONS))}")
    if not isinstance(meta.get("host"), dict):
        raise ValueError(f"{sidecar}: missing field 'host' (the machine description)")
    frame.attrs["host"] = meta["host"]
    frame.attrs["sidecar"] = meta
    return frame
