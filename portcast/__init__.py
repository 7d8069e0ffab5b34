"""Portcast: how much faster would this region of CPU code run on a GPU, and why.

Public API: the region markers (``region``, ``region_start``, ``region_end``, ``parallel``), :func:`profile`
(the report of a function or script); the lower-level profiling, feature and prediction entry points live in
:mod:`portcast.api`.
"""

from profiler.markers import parallel, region, region_end, region_start  # noqa: F401
from profiler.version import portcast_version

#: the installed distribution's version (pyproject.toml is its one source)
__version__ = portcast_version()


def profile(target, args=None, **options):
    """Profile a function (``target`` callable, called with ``args``) or a script's marked regions (``target``
    a path) and return its :class:`portcast.profile_report.ProfileReport`: each region's summary, features,
    hot lines and predicted GPU time with what bounds it. Rendered inline in Jupyter; ``.to_dict()``,
    ``.write_html(path)``. Options: see :func:`portcast.pipeline.profile` (``gpu``, ``model``, ``mode``,
    ``baseline``, ``script_args``, ``regions``, ``trace_dir``)."""
    from portcast.pipeline import profile as run

    return run(target, args, **options)
