"""Profiler: region markers, the source-level instrumenter, the trace schema, trace files and importers."""

from .trace import (  # noqa: F401
    COLUMN_NAMES,
    DEFAULT_CHUNK_RECORDS,
    TRACE_SCHEMA_VERSION,
    MemorySink,
    Op,
    RegionInfo,
    StaticInstruction,
    StaticTable,
    TraceChunk,
    TraceError,
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
