"""The report stage of the pipeline: a finished run's sinks and predictions -> one
:class:`portcast.profile_report.ProfileReport` (:func:`build_report`), what every output renders.
"""

from __future__ import annotations

from pathlib import Path


def build_report(setup, predictions: list, *, target: str,
                 exit_code: int = 0, error: BaseException | None = None, no_baseline: str = "not asked for"):
    """The :class:`~portcast.profile_report.ProfileReport` of a finished run (``setup``: its
    :class:`portcast.pipeline.stage_prepare.ProfileSetup`; ``predictions``: its
    :class:`portcast.pipeline.stage_predict.RegionPrediction` list; ``no_baseline``: why regions that were not
    timed uninstrumented were not, when no other reason is known, e.g. ``--no-baseline``)."""
    from portcast.profile_report import ProfileReport, region_report

    fsink = setup.features
    feats = {id(info): k for k, (info, _) in enumerate(fsink.results)} if fsink is not None else {}
    by_index = {p.index: p for p in predictions}
    regions = []
    written = [str(p) for p in setup.written()]
    for k, (info, counts) in enumerate(setup.summary.rows):
        fi = feats.get(id(info))
        series = fsink.results[fi][1] if fi is not None else None
        regions.append(region_report(
            info, counts, hot=setup.hot.results[k] if k < len(setup.hot.results) else [],
            series=series, explanation=fsink.explanations[fi] if fi is not None else None,
            thread_space=fsink.thread_spaces[fi] if fi is not None else None,
            pred=by_index.get(fi) if fi is not None else None,
            trace_files=[w for w in written if _trace_of(w, info)], no_baseline=no_baseline))
    chosen = setup.chosen
    gpu, label = chosen.target(setup.gpu) if chosen else (None, None)
    return ProfileReport(target=target, gpu=gpu, gpu_label=label,
                         model_file=str(chosen.path) if chosen and chosen.path else None,
                         model_kind=chosen.kind if chosen else None,
                         trained_on=chosen.trained_on if chosen else None, exit_code=exit_code,
                         error=None if error is None else f"{type(error).__name__}: {error}", regions=regions)


def _trace_of(path: str, info) -> bool:
    """Whether a written trace file belongs to region invocation ``info``."""
    from profiler.tracefile import region_file_name

    return Path(path).name == region_file_name(info)
