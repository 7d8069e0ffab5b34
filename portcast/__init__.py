"""Portcast: how much faster would this region of CPU code run on a GPU, and why.

Public API: the region markers (``region``, ``region_start``, ``region_end``, ``parallel``), and the pipeline
(:mod:`portcast.pipeline`) for a function call or a script: :func:`profile` (the whole report),
:func:`features` (a feature table), :func:`predict` (GPU time and speedup per region), :func:`simulate` (the
SIMT timing model). Lower-level tracing entry points live in :mod:`portcast.api`.
"""

from core.version import portcast_version
from profiler.markers import parallel, region, region_end, region_start  # noqa: F401

#: the installed distribution's version (pyproject.toml is its one source)
__version__ = portcast_version()


def profile(target, args=None, **options):
    """Profile a function (``target`` callable, called with ``args``) or a script's marked regions (``target``
    a path) and return its :class:`portcast.profile_report.ProfileReport`: each region's summary, features,
    hot lines and predicted GPU time with what bounds it. Rendered inline in Jupyter; ``.to_dict()``,
    ``.write_html(path)``. Options: see :func:`portcast.pipeline.profile` (``gpu``, ``model``, ``mode``,
    ``baseline``, ``baseline_kind`` (``"as-written"`` or ``"njit"``), ``baseline_rule``
    (:class:`portcast.api.RepeatRule`), ``script_args``, ``regions``, ``trace_dir``)."""
    from portcast.pipeline import profile as run

    return run(target, args, **options)


def features(target, args=None, **options):
    """The features of each region invocation of a call or script (a pandas DataFrame, one row each), or of a
    trace file: :func:`portcast.pipeline.features`."""
    from portcast.pipeline import features as run

    return run(target, args, **options)


def predict(target, args=None, **options):
    """The predicted GPU time and speedup of each region invocation of a call or script (a list of
    :class:`portcast.pipeline.stage_predict.RegionPrediction`): :func:`portcast.pipeline.predict` (``gpu``,
    ``model``, ...)."""
    from portcast.pipeline import predict as run

    return run(target, args, **options)


def simulate(target, args=None, **options):
    """Each region invocation of a call, script or trace file on the SIMT timing model (``{label: SimResult}``):
    :func:`portcast.pipeline.simulate` (``gpu``, ``block_size``, ``sm_count``, clocks)."""
    from portcast.pipeline import simulate as run

    return run(target, args, **options)
