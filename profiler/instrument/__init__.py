"""Source-level instrumenter: rewrites a region (and every user function it calls) to emit trace records.

The rewriter flattens each statement into three-address form (one Python operation per statement, results
in temporaries ``_pc_t<k>``) and puts a recording primitive after each operation. One rewriter serves both
execution modes; only the few statements that record differ (:class:`_Interp` / :class:`_Compiled`):

* interpreted: ``_pc_a(code)`` appends an int to a list, ``_pc_m(code, a, idx)`` records a memory access;
* compiled: ``_pc_rec(B, p, code)`` writes the same code into a Numba array (memory records:
  ``_pc_recm`` also the address); the registers are added when the buffer is decoded.

Static ids (pc) and registers are allocated per :class:`Program` (one per traced root function or
block), starting at 1, so a region's trace does not depend on what else was traced in the process.
Registers: one per local variable name per function, one per expression site (perfect renaming makes
only read-after-write dependences matter). Every register of a record is a static property of its pc.

What each construct emits is documented in docs/profiler.md. The package, by job:

* :mod:`profiler.user_code` (shared with the thread-space analysis, outside this package so that the two do
  not import each other) finds a function's source, decides which functions are the user's and what a name in
  their code refers to; :mod:`.unsupported` refuses what cannot be traced. The two errors the instrumenter
  raises, :class:`UnsupportedConstruct` and :class:`SourceUnavailable`, are part of this package's interface;
* :mod:`.program` holds the static table and registers of one root; :mod:`.tables` classifies operators;
* :mod:`.rewriter` (with :mod:`.rewrite_expr`, :mod:`.rewrite_stmt`, :mod:`.rewrite_lib`) rewrites one function;
* :mod:`.backends` says what a record statement is in each mode; :mod:`.merge` merges compiled records;
* :mod:`.driver` instruments a root and what it calls and builds the program.
"""


from ..user_code import SourceUnavailable
from .backends import _Compiled, _Interp
from .driver import Instrumenter, instrument, recursive_functions, source_text
from .merge import merge_records
from .program import FuncInfo, Program
from .rewrite_stmt import is_region_call
from .unsupported import UnsupportedConstruct

__all__ = [
    "FuncInfo", "Instrumenter", "Program", "SourceUnavailable", "UnsupportedConstruct", "_Compiled", "_Interp",
    "instrument", "is_region_call", "merge_records", "recursive_functions", "source_text",
]
