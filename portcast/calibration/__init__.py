"""Calibration and characterisation of the kernel corpus (``portcast calibrate``, ``portcast characterize``).

Calibration times every corpus kernel's CPU region and GPU port on this machine. For each kernel and problem
size the CPU region is compiled with ``numba.njit`` (single thread) and timed with a wall clock; the GPU port
is timed with CUDA events, once as *kernel time* (around ``launch`` only, after ``to_device``, as the XAPP
paper measures) and once as *transfer-inclusive time* (around ``to_device`` + ``launch`` + ``from_device``).
Every point runs ``warmup`` untimed repetitions (which also compile), then ``repeats`` timed ones; the table
keeps the median, the quartiles and the extremes, the speedups of the medians, and whether the GPU result
matched the CPU result (``KernelSpec.check``). The machine (CPU model, GPU name, driver, clocks, library
versions, date) is recorded in every row and in a JSON sidecar next to the CSV.

The package, one module per job:

``schema``            the table's columns, statistics, machine fields, default sizes;
``cuda``              the real back end (:class:`CudaBackend`), the CPU wall clock, why no GPU is usable;
``simulated``         :class:`SimulatedBackend` (``--simulate h100``): the SIMT timing model's time of the traced
                      CPU region plus the copies over a PCIe link (:data:`PCIE_BANDWIDTH_B_PER_S`,
                      :data:`PCIE_LATENCY_S`); its rows say so in ``gpu_name`` (:func:`is_simulated`);
``host``              the machine description;
``run``               choosing points and timing them into rows (:func:`calibrate`);
``table``             writing and reading the CSV + sidecar, and the join with the feature table
                      (:func:`training_table`);
``characterization``  the feature table of the corpus (``portcast characterize``).

Timing goes through a *backend* object so that the table assembly can be tested without a GPU; tests inject a
fake with the same three methods.
"""

from .cuda import CudaBackend, NoGpuError, TimingBackend, gpu_unavailable_reason, time_cpu_wall
from .host import host_machine
from .run import calibrate, limit_by_records, select, summarize
from .schema import (
                     CALIBRATION_SCHEMA_VERSION,
                     COLUMNS,
                     DEFAULT_SIZES,
                     MACHINE_FIELDS,
                     SIMULATED_DEFAULT_SIZES,
                     STATS,
                     TIMED,
)
from .simulated import (
                     PCIE_BANDWIDTH_B_PER_S,
                     PCIE_LATENCY_S,
                     SimulatedBackend,
                     is_simulated,
                     transfer_copies,
                     transfer_time,
)
from .timing_table import (
                     READABLE_SCHEMA_VERSIONS,
                     REQUIRED_COLUMNS,
                     read_calibration,
                     training_table,
                     write_calibration,
)

__all__ = [
    "CALIBRATION_SCHEMA_VERSION", "COLUMNS", "CudaBackend", "DEFAULT_SIZES", "MACHINE_FIELDS", "NoGpuError",
    "PCIE_BANDWIDTH_B_PER_S", "PCIE_LATENCY_S", "READABLE_SCHEMA_VERSIONS", "REQUIRED_COLUMNS",
    "SIMULATED_DEFAULT_SIZES",
    "STATS", "SimulatedBackend", "TIMED", "TimingBackend", "calibrate", "gpu_unavailable_reason", "host_machine",
    "is_simulated", "limit_by_records", "read_calibration", "select", "summarize", "training_table",
    "time_cpu_wall", "transfer_copies", "transfer_time", "write_calibration",
]
