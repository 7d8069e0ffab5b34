"""Common base of the feature analyzers."""

from __future__ import annotations

import abc

import numpy as np
from numba import njit

from core.trace_schema import TraceError
from profiler.trace import TraceChunk


def env_int(name: str, minimum: int = 1) -> int | None:
    """The integer value of environment variable ``name`` (None when unset or empty); a value that is not an
    integer, or is below ``minimum``, raises ValueError naming the variable."""
    import os

    env = os.environ.get(name)
    if not env:
        return None
    try:
        n = int(env)
    except ValueError:
        raise ValueError(f"{name}={env!r} is not an integer") from None
    if n < minimum:
        raise ValueError(f"{name}={env!r} must be >= {minimum}")
    return n


def ratio(num, den) -> float:
    """``num / den`` as a float, 0.0 when ``den`` is 0 (the features never contain NaN)."""
    return float(num) / float(den) if den else 0.0


class Analyzer(abc.ABC):
    """One feature family: a small state object fed chunk by chunk.

    Subclasses set ``family`` and implement ``consume`` and ``result``. State is bounded by the number of
    distinct static instructions, blocks, branches and by window sizes, never by the trace length, and the
    result does not depend on how the trace is cut into chunks.
    """

    family: str = ""
    #: (chunk, 1 + its largest pc) when the engine computed it for the next chunk (see :meth:`pc_capacity`)
    pc_hint: tuple | None = None

    def __init__(self) -> None:
        self.n = 0  # records consumed

    def pc_capacity(self, chunk: TraceChunk) -> int:
        """:func:`pc_capacity` of the chunk, taken from ``pc_hint`` when the engine computed it for this very
        chunk object (one pass over the pc column for all analyzers); the hint is used once, then cleared.

        Parameters
        ----------
        chunk : TraceChunk

        Returns
        -------
        int
            1 + the largest pc in the chunk (0 for an empty chunk).
        """
        hint, self.pc_hint = self.pc_hint, None
        if hint is not None and hint[0] is chunk:
            return hint[1]
        return pc_capacity(chunk)

    @abc.abstractmethod
    def consume(self, chunk: TraceChunk) -> None:  # pragma: no cover - interface
        """Feed the next chunk of records (program order continues from the previous chunk).

        Parameters
        ----------
        chunk : TraceChunk
            Consecutive records; may be empty.
        """

    @abc.abstractmethod
    def result(self) -> dict[str, float]:  # pragma: no cover - interface
        """The family's features for everything consumed so far (does not change the state).

        Returns
        -------
        dict[str, float]
            Feature name -> value, never NaN.
        """

    def contributions(self) -> dict[str, dict[int, float]]:
        """Per static instruction contributions to explainable features: ``{feature: {pc: amount}}``."""
        return {}


#: Largest static instruction id the analyzers accept (per-pc state lives in arrays indexed by pc).
MAX_PC = (1 << 24) - 1


def pc_capacity(chunk: TraceChunk) -> int:
    """1 + the largest pc in the chunk (0 for an empty chunk); rejects ids above :data:`MAX_PC`."""
    if not len(chunk):
        return 0
    top = int(chunk.pc.max())
    if top > MAX_PC:
        i = int(np.argmax(chunk.pc))
        raise TraceError(f"record {i} of the chunk: pc={top} exceeds {MAX_PC}; pc must index the static table")
    return top + 1


def grow_1d(arr: np.ndarray, n: int, fill=0) -> np.ndarray:
    """``arr`` extended to at least ``n`` entries (geometric growth), new entries ``fill``."""
    if arr.shape[0] >= n:
        return arr
    new_n = max(n, 2 * arr.shape[0], 64)
    out = np.full((new_n,) + arr.shape[1:], fill, dtype=arr.dtype)
    out[: arr.shape[0]] = arr
    return out


@njit(cache=True, inline="always")
def claim_slot(pcslot, state, p):
    """The dense slot of static instruction ``p``, claimed now if it has none: ``pcslot[p]``, else the next
    free slot (``state[0]`` slots used of ``state[1]``), or -1 when the slot table is full and must grow.
    Hot kernels call it only when ``pcslot[p] < 0``."""
    s = state[0]
    if s >= state[1]:
        return -1
    pcslot[p] = s
    state[0] = s + 1
    return s
