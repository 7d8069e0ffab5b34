"""Profiler: region markers, the source-level instrumenter, the trace's containers, trace files and importers
(the trace schema, the record layout and operation classes, is :mod:`core.trace_schema`)."""

from .trace import (  # noqa: F401
    DEFAULT_CHUNK_RECORDS,
    MemorySink,
    RegionInfo,
    StaticInstruction,
    StaticTable,
    TraceChunk,
    TraceSink,
)


def __getattr__(name):
    # the tracer pulls in Numba; import it only when used, so ``import portcast`` (markers) stays cheap
    if name in ("trace_function", "profile_script", "TraceResult", "Session"):
        from . import session

        return getattr(session, name)
    if name in ("measure_uninstrumented", "Baseline"):
        from . import baseline

        return getattr(baseline, name)
    if name in ("UnsupportedConstruct", "SourceUnavailable"):
        from . import instrument

        return getattr(instrument, name)
    raise AttributeError(f"module 'profiler' has no attribute {name!r}")
