"""Timing a call again and again until its times agree: :class:`RepeatRule`, :func:`time_repeated`, :class:`Timing`.

One timing of a short region says little on a loaded machine (the same region measured 5.9x and 2.1x apart).
:func:`time_repeated` runs the call until the interquartile range of its times, relative to their median, is
at most :attr:`RepeatRule.spread`, or until :attr:`RepeatRule.budget_s` of wall time is spent, and reports the
median, the quartiles, the number of runs and which of the two ended it. A region of microseconds gets
thousands of runs in a fraction of a second (the spread is not looked at before :attr:`RepeatRule.min_time_s`
has passed); a region of seconds gets the few the budget allows (always at least one).

The clock is a parameter (``time.perf_counter`` by default) so that tests can give a fake one.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Callable

import numpy as np

#: what ended a timing (:attr:`Timing.stopped_by`)
STOPPED_BY = ("spread", "budget", "max runs")


@dataclasses.dataclass(frozen=True)
class RepeatRule:
    """When :func:`time_repeated` stops.

    It stops after a run when (checked in this order) the relative spread of the times so far is at most
    ``spread`` (looked at once ``min_runs`` runs are done and ``min_time_s`` has passed, then each time the
    number of runs has grown by an eighth), when ``budget_s`` has passed since the first run began, or after
    ``max_runs`` runs. Times passed count everything between the runs too (the arguments' copies).
    """

    spread: float = 0.10  # target interquartile range / median
    budget_s: float = 1.0  # wall seconds of timing at most (at least one run is always made)
    min_runs: int = 3  # runs before the spread is looked at
    min_time_s: float = 0.1  # wall seconds before the spread is looked at (many runs of a short region)
    max_runs: int = 100_000

    def __post_init__(self) -> None:
        for name in ("spread", "budget_s"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise ValueError(f"RepeatRule.{name} must be a finite number > 0, got {v!r}")
        v = self.min_time_s
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"RepeatRule.min_time_s must be a finite number >= 0, got {v!r}")
        for name in ("min_runs", "max_runs"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"RepeatRule.{name} must be an integer >= 1, got {v!r}")
        if self.max_runs < self.min_runs:
            raise ValueError(f"RepeatRule.max_runs ({self.max_runs}) must be >= min_runs ({self.min_runs})")


def relative_spread(q25: float, median: float, q75: float) -> float:
    """Interquartile range / median: 0 when the quartiles agree, infinite when the median is 0 and they do not."""
    iqr = q75 - q25
    if iqr <= 0:
        return 0.0
    return iqr / median if median > 0 else math.inf


@dataclasses.dataclass(frozen=True)
class Timing:
    """The timed runs of :func:`time_repeated` and their summary (seconds)."""

    times: tuple  # every timed run, in order
    median_s: float
    q25_s: float  # 25th and 75th percentiles (numpy.percentile, linear interpolation)
    q75_s: float
    min_s: float
    max_s: float
    spread: float  # (q75_s - q25_s) / median_s
    reached: bool  # at least rule.min_runs runs and spread <= rule.spread
    stopped_by: str  # one of STOPPED_BY
    rule: RepeatRule

    @property
    def runs(self) -> int:
        return len(self.times)

    @classmethod
    def of(cls, times, rule: RepeatRule, stopped_by: str) -> "Timing":
        """The summary of ``times`` (at least one) under ``rule``."""
        if stopped_by not in STOPPED_BY:
            raise ValueError(f"stopped_by must be one of {STOPPED_BY}, got {stopped_by!r}")
        arr = np.asarray(times, dtype=float)
        if arr.size == 0:
            raise ValueError("a timing needs at least one run")
        q25, med, q75 = (float(v) for v in np.percentile(arr, [25, 50, 75]))
        spread = relative_spread(q25, med, q75)
        return cls(times=tuple(float(t) for t in arr), median_s=med, q25_s=q25, q75_s=q75, min_s=float(arr.min()),
                   max_s=float(arr.max()), spread=spread, reached=bool(arr.size >= rule.min_runs and
                                                                       spread <= rule.spread),
                   stopped_by=stopped_by, rule=rule)

    def to_dict(self) -> dict:
        """The summary as plain data (the runs' times left out): what trace files and reports keep."""
        return {"runs": self.runs, "median_s": self.median_s, "q25_s": self.q25_s, "q75_s": self.q75_s,
                "min_s": self.min_s, "max_s": self.max_s, "spread": self.spread, "target_spread": self.rule.spread,
                "budget_s": self.rule.budget_s, "reached": self.reached, "stopped_by": self.stopped_by}


def time_repeated(run: Callable, prepare: Callable[[], tuple] | None = None, *, rule: RepeatRule | None = None,
                  clock: Callable[[], float] = time.perf_counter) -> Timing:
    """Time ``run(*prepare())`` until ``rule`` says stop (:class:`RepeatRule`); only the call is timed.

    Parameters
    ----------
    run : callable
        What is timed. An exception it raises propagates.
    prepare : callable, optional
        Called before each run, untimed; returns ``run``'s positional arguments (e.g. fresh copies).
    rule : RepeatRule, optional
        When to stop (default ``RepeatRule()``).
    clock : callable
        Seconds as a float; read once at the start and twice around every run.
    """
    rule = rule or RepeatRule()
    times: list[float] = []
    start = clock()
    check_at = rule.min_runs
    while True:
        args = prepare() if prepare is not None else ()
        t0 = clock()
        run(*args)
        t1 = clock()
        times.append(t1 - t0)
        n, elapsed = len(times), t1 - start
        if n >= check_at and elapsed >= rule.min_time_s:
            q25, med, q75 = np.percentile(times, [25, 50, 75])
            if relative_spread(float(q25), float(med), float(q75)) <= rule.spread:
                return Timing.of(times, rule, "spread")
            check_at = n + max(1, n // 8)
        if elapsed >= rule.budget_s:
            return Timing.of(times, rule, "budget")
        if n >= rule.max_runs:
            return Timing.of(times, rule, "max runs")
