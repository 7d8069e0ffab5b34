"""The trace schema: the record layout, its operation classes and its versions, which tracers write and every
analysis reads (Portcast's contract between them; in ``core`` because every layer reads traces).

A trace is a sequence of dynamic instruction records (micro-operations) in program order, handed from a
tracer to its sinks in chunks of bounded size, plus a static instruction table and region metadata. The
containers that carry them (:class:`profiler.trace.TraceChunk`, ``StaticTable``, ``RegionInfo``, the sink
protocol) are in :mod:`profiler.trace`; the record is defined in ``docs/trace-format.md``; the analyses that
read it are defined in ``docs/features.md``.

Record columns (one NumPy array per column in a :class:`profiler.trace.TraceChunk`):

=======  =======  ===========================================================================
column   dtype    meaning
=======  =======  ===========================================================================
pc       int32    static instruction id (index into the static table)
op       uint8    operation class, an :class:`Op` value
taken    uint8    for BRANCH: 1 taken, 0 not taken; 0 for every other class
src1     int32    source register (dependency token); 0 = none
src2     int32    second source register; 0 = none
src3     int32    third source register; 0 = none
dst      int32    destination register; 0 = none
addr     int64    LOAD/STORE effective address in bytes; of an allocation record (OTHER), the new array's
                  first byte; 0 otherwise
size     int32    LOAD/STORE access size in bytes; of an allocation record, the array's bytes; 0 otherwise
tid      int64    logical thread: iteration index of the region's parallel loop, -1 outside it
=======  =======  ===========================================================================

All columns are signed except ``op`` and ``taken`` so that Numba never mixes signed and unsigned 64-bit
integers (which it would promote to float64).
"""

from __future__ import annotations

import enum

import numpy as np

#: Version of the record layout, the static table and the region metadata. Bump on any change.
TRACE_SCHEMA_VERSION = 3
#: Versions a reader accepts: version 1 has no FP64_* classes (its FP_* records are of unknown precision and
#: stay FP_*), so its operation classes are 0..15; versions 1 and 2 have no allocation records (every record
#: but a LOAD or STORE has address and size 0).
READABLE_SCHEMA_VERSIONS = (1, 2, 3)


class Op(enum.IntEnum):
    """Operation classes of ``docs/features.md`` ("The trace these definitions read").

    FP_* are single-precision operations (float32, float16 and complex64 arithmetic; in version-1 traces,
    floating point of unknown precision); FP64_* the same classes computed in double precision (Python float,
    float64 and complex128 arithmetic)."""

    INT_ALU = 0
    INT_MUL = 1
    INT_DIV = 2
    INT_REM = 3
    FP_ALU = 4
    FP_MUL = 5
    FP_DIV = 6
    FP_SPECIAL = 7
    LOAD = 8
    STORE = 9
    BRANCH = 10
    JUMP = 11
    CALL = 12
    RET = 13
    MOVE = 14
    OTHER = 15
    FP64_ALU = 16
    FP64_MUL = 17
    FP64_DIV = 18
    FP64_SPECIAL = 19


N_OPS = len(Op)
#: Operation classes of a version-1 trace (0..15): no FP64_* classes.
N_OPS_V1 = 16
#: FP64_X - FP_X for each of the four floating-point classes.
FP64_OFFSET = Op.FP64_ALU - Op.FP_ALU
#: The single-precision (or unknown-precision) and the double-precision floating-point classes.
FP32_OPS = (Op.FP_ALU, Op.FP_MUL, Op.FP_DIV, Op.FP_SPECIAL)
FP64_OPS = (Op.FP64_ALU, Op.FP64_MUL, Op.FP64_DIV, Op.FP64_SPECIAL)
FP_OPS = FP32_OPS + FP64_OPS


def fp64_class(op: int) -> Op:
    """The double-precision class of a floating-point class (FP_X -> FP64_X); any other class unchanged."""
    op = Op(int(op))
    return Op(op + FP64_OFFSET) if op in FP32_OPS else op


def n_ops_of_version(version: int) -> int:
    """Operation classes a trace of schema ``version`` may hold (0..n-1)."""
    return N_OPS_V1 if version == 1 else N_OPS


#: (name, dtype) of every record column, in file order.
RECORD_COLUMNS: tuple[tuple[str, np.dtype], ...] = (
    ("pc", np.dtype(np.int32)),
    ("op", np.dtype(np.uint8)),
    ("taken", np.dtype(np.uint8)),
    ("src1", np.dtype(np.int32)),
    ("src2", np.dtype(np.int32)),
    ("src3", np.dtype(np.int32)),
    ("dst", np.dtype(np.int32)),
    ("addr", np.dtype(np.int64)),
    ("size", np.dtype(np.int32)),
    ("tid", np.dtype(np.int64)),
)
COLUMN_NAMES: tuple[str, ...] = tuple(name for name, _ in RECORD_COLUMNS)
COLUMN_DTYPES: dict[str, np.dtype] = dict(RECORD_COLUMNS)


class TraceError(ValueError):
    """A trace (in memory or on disk) that breaks the contract; the message says where and how."""
