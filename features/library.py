"""Library-call features: how much of a region's work happens in library calls the tracer could not expand.

The profiler traces NumPy operations as the element loops they perform (docs/profiler.md, "Library calls");
calls it cannot expand that way (``np.linalg.eigh``, ``np.fft.fft``, ``np.sort`` ...) stay one OTHER record
each, and their work, estimated from the operands' shapes, goes to the region metadata
``info.extra["library_work"]``. These features put that estimate next to the traced work:

* ``lib_opaqueFlops``: the estimated flops of the unexpanded calls (sum over the call sites);
* ``lib_opaqueFraction``: ``lib_opaqueFlops / (lib_opaqueFlops + N)``, N the trace's records: near 1 when
  the trace misses most of the region's work, 0 when nothing is missing.
"""

from __future__ import annotations

from profiler.trace import TraceChunk

from ._base import Analyzer, ratio

LIBRARY_FEATURES = ("lib_opaqueFlops", "lib_opaqueFraction")


def _extra(info) -> dict:
    if info is None:
        return {}
    if isinstance(info, dict):
        return info.get("extra", info) or {}
    return getattr(info, "extra", None) or {}


def library_features(info, n_records) -> dict[str, float]:
    """The library-call features of a region.

    Parameters
    ----------
    info : RegionInfo, dict or None
        The region's metadata (``info.extra["library_work"]``: list of ``{"call", "location", "calls",
        "flops", "bytes"}``); None or metadata without it: no unexpanded calls.
    n_records : int
        Records of the region's trace.

    Returns
    -------
    dict
        ``lib_opaqueFlops`` and ``lib_opaqueFraction`` (floats, 0 when nothing is missing).
    """
    if n_records < 0:
        raise ValueError(f"n_records must be >= 0, got {n_records}")
    work = _extra(info).get("library_work") or []
    try:
        flops = float(sum(int(w["flops"]) for w in work))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"region metadata library_work is malformed ({exc!r}): expected a list of "
                         "{'call', 'location', 'calls', 'flops', 'bytes'}") from None
    return {"lib_opaqueFlops": flops, "lib_opaqueFraction": ratio(flops, flops + n_records)}


class LibraryAnalyzer(Analyzer):
    """Counts the records and, given the region's metadata (:attr:`info`, set by the feature sink or
    :func:`features.compute_features` from a trace file), computes :func:`library_features`."""

    family = "library"

    def __init__(self) -> None:
        super().__init__()
        self.info = None

    def consume(self, chunk: TraceChunk) -> None:
        self.n += len(chunk)

    def result(self) -> dict[str, float]:
        return library_features(self.info, self.n)
