"""Portcast: how much faster would this region of CPU code run on a GPU, and why.

Public API: the region markers (``region``, ``region_start``, ``region_end``, ``parallel``); the profiling,
feature and prediction entry points live in :mod:`portcast.api` and are re-exported here as they land.
"""

from profiler.markers import parallel, region, region_end, region_start  # noqa: F401

__version__ = "0.1.0"
