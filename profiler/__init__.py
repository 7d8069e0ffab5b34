"""Profiler: region markers, the source-level instrumenter, the trace schema, trace files and importers."""

from .trace import (  # noqa: F401
    COLUMN_NAMES,
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
