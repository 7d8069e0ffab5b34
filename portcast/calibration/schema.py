"""The calibration table's schema: columns, statistics, machine fields, default sizes."""

from __future__ import annotations

CALIBRATION_SCHEMA_VERSION = 1
DEFAULT_SIZES = ("small", "medium", "large")
#: Default sizes of ``portcast calibrate --simulate``: the sizes of the shipped feature table (tracing ``large``
#: takes hours).
SIMULATED_DEFAULT_SIZES = ("small", "medium")

#: Machine description columns, in CSV order (also the keys of the sidecar's ``machine`` object).
MACHINE_FIELDS = (
    "cpu_model", "cpu_count", "gpu_name", "gpu_compute_capability", "gpu_sm_count", "gpu_driver",
    "cuda_driver_api", "gpu_sm_clock_mhz", "gpu_mem_clock_mhz", "gpu_max_sm_clock_mhz",
    "gpu_max_mem_clock_mhz", "numba_version", "numba_cuda_version", "numpy_version", "python_version",
    "numba_num_threads", "hostname", "date_utc",
)

#: Statistic suffixes written for each timed quantity.
STATS = ("median", "q1", "q3", "min", "max")
TIMED = ("cpu", "gpu_kernel", "gpu_total")

COLUMNS = (
    ("schema_version", "kernel", "category", "size", "n", "repeats", "warmup")
    + tuple(f"{t}_{s}_s" for t in TIMED for s in STATS)
    + ("speedup_kernel", "speedup_total", "check_ok", "check_message", "expect_gpu_faster")
    + MACHINE_FIELDS
)
