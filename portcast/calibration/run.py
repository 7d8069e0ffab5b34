"""Running a calibration: choose the points, time each with a back end, summarise the repeats into a row."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

import numpy as np

from .cuda import TimingBackend
from .schema import CALIBRATION_SCHEMA_VERSION, COLUMNS, DEFAULT_SIZES, MACHINE_FIELDS
from .timing_table import _ratio


def summarize(times: Sequence[float]) -> dict[str, float]:
    """Median, quartiles (linear interpolation) and extremes of a list of times.

    Parameters
    ----------
    times : at least one time in seconds.

    Returns
    -------
    dict with keys ``median``, ``q1``, ``q3``, ``min``, ``max``.
    """
    if len(times) == 0:
        raise ValueError("no timings to summarise")
    a = np.asarray(times, dtype=np.float64)
    q1, med, q3 = np.percentile(a, [25, 50, 75])
    return {"median": float(med), "q1": float(q1), "q3": float(q3), "min": float(a.min()), "max": float(a.max())}


def select(kernels: dict, names: Iterable[str] | None, sizes: Iterable[str] | None):
    """The (spec, size name) points to run, validating the names.

    Parameters
    ----------
    kernels : name -> KernelSpec (the corpus).
    names : kernel names, or None for all.
    sizes : size names, or None for ``small, medium, large``.

    Returns
    -------
    list of (KernelSpec, size name) pairs in kernel then size order.
    """
    names = list(kernels) if not names else list(names)
    unknown = [n for n in names if n not in kernels]
    if unknown:
        raise ValueError(f"unknown kernel(s) {', '.join(unknown)}; known: {', '.join(kernels)}")
    sizes = list(DEFAULT_SIZES) if not sizes else list(sizes)
    for name in names:
        missing = [s for s in sizes if s not in kernels[name].sizes]
        if missing:
            raise ValueError(f"kernel {name!r} has no size(s) {', '.join(missing)}; it has "
                             f"{', '.join(kernels[name].sizes)}")
    return [(kernels[n], s) for n in names for s in sizes]


def limit_by_records(points, records: dict, max_records: float):
    """Split points into those whose traced instruction count is at most ``max_records`` and the rest.

    Parameters
    ----------
    points : list of (KernelSpec, size name).
    records : (kernel, size) -> traced thread instructions (e.g. ``mica_instructions`` of the shipped feature
        table); a point missing from it is kept.
    max_records : the limit.

    Returns
    -------
    (kept points, list of (kernel, size, records) skipped)
    """
    kept, skipped = [], []
    for spec, size in points:
        r = records.get((spec.name, size))
        if r is not None and float(r) > max_records:
            skipped.append((spec.name, size, float(r)))
        else:
            kept.append((spec, size))
    return kept, skipped


def calibrate(points, backend: TimingBackend, *, repeats: int = 10, warmup: int = 2, seed: int = 0,
              compile_cpu: Callable[[Callable], Callable] | None = None,
              progress: Callable[[str, str], None] | None = None):
    """Time every point and return the calibration table.

    Parameters
    ----------
    points : list of (KernelSpec, size name), as from :func:`select`.
    backend : the timing backend (:class:`CudaBackend` on a real GPU).
    repeats, warmup : timed and untimed repetitions per point (``repeats >= 1``, ``warmup >= 0``).
    seed : input seed passed to ``make_inputs``.
    compile_cpu : turns a CPU region into the callable that is timed (default ``numba.njit``).
    progress : called with (kernel, size) after each point.

    Returns
    -------
    (pandas.DataFrame with :data:`COLUMNS`, machine dict)
    """
    import pandas as pd

    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    if warmup < 0:
        raise ValueError(f"warmup must be at least 0, got {warmup}")
    if compile_cpu is None:
        import numba

        compile_cpu = numba.njit
    machine = backend.machine()
    compiled: dict[str, Callable] = {}
    rows = []
    for spec, size in points:
        n = spec.sizes[size]
        inputs = spec.make_inputs(n, seed)
        if spec.name not in compiled:
            compiled[spec.name] = compile_cpu(spec.cpu)
        cpu_result, cpu_times = backend.time_cpu(compiled[spec.name], inputs, warmup, repeats)
        point = getattr(backend, "time_gpu_point", None)
        if point is not None:
            gpu_result, k_times, t_times = point(spec, size, inputs, warmup, repeats)
        else:
            gpu_result, k_times, t_times = backend.time_gpu(spec.gpu, inputs, warmup, repeats)
        try:
            spec.check(cpu_result, gpu_result)
            ok, message = True, ""
        except AssertionError as exc:
            ok, message = False, str(exc)
        row: dict[str, Any] = {"schema_version": CALIBRATION_SCHEMA_VERSION, "kernel": spec.name,
                               "category": spec.category, "size": size, "n": n, "repeats": repeats,
                               "warmup": warmup}
        for label, times in (("cpu", cpu_times), ("gpu_kernel", k_times), ("gpu_total", t_times)):
            for stat, value in summarize(times).items():
                row[f"{label}_{stat}_s"] = value
        row["speedup_kernel"] = _ratio(row["cpu_median_s"], row["gpu_kernel_median_s"])
        row["speedup_total"] = _ratio(row["cpu_median_s"], row["gpu_total_median_s"])
        row["check_ok"] = ok
        row["check_message"] = message
        row["expect_gpu_faster"] = spec.expect_gpu_faster
        for key in MACHINE_FIELDS:
            row[key] = machine.get(key)
        rows.append(row)
        if progress is not None:
            progress(spec.name, size)
    return pd.DataFrame(rows, columns=list(COLUMNS)), machine
