"""The repetition rule of the CPU timing (profiler.repeat_timing) on a fake clock: exact numbers of runs, medians,
quartiles and why the runs stopped. Every duration is a power of two, so all sums are exact."""

import numpy as np
import pytest

from profiler.repeat_timing import RepeatRule, Timing, relative_spread, time_repeated

U = 2.0 ** -10  # one unit of fake time (about 1 ms)


class FakeClock:
    """A clock that stands still until a fake run or copy moves it on."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def runs(self, durations):
        """A ``run`` taking the next of ``durations`` (in units) each call; ``calls`` counts them."""
        it = iter(durations)

        def run(*args):
            run.calls += 1
            self.now += next(it) * U

        run.calls = 0
        return run


def forever(*values):
    while True:
        yield from values


def test_equal_runs_stop_by_spread_after_min_runs():
    clock = FakeClock()
    run = clock.runs(forever(1))
    t = time_repeated(run, rule=RepeatRule(spread=0.1, budget_s=10.0, min_runs=3, min_time_s=0.0), clock=clock)
    assert (t.runs, run.calls, t.stopped_by, t.reached) == (3, 3, "spread", True)
    assert (t.median_s, t.q25_s, t.q75_s, t.min_s, t.max_s, t.spread) == (U, U, U, U, U, 0.0)


def test_a_short_region_runs_until_the_minimum_time_then_stops_by_spread():
    # 2^-16 s per run and 2^-4 s before the spread is looked at: exactly 4096 runs
    clock = FakeClock()
    run = clock.runs(forever(2.0 ** -6))
    t = time_repeated(run, rule=RepeatRule(spread=0.1, budget_s=1.0, min_runs=3, min_time_s=2.0 ** -4), clock=clock)
    assert (t.runs, t.stopped_by, t.reached) == (4096, "spread", True)
    assert t.median_s == 2.0 ** -16 and len(t.times) == 4096


def test_noisy_runs_stop_at_the_budget_with_their_median_and_quartiles():
    # runs alternate 1 and 3 units: IQR / median = (3 - 1) / 2 = 1 never reaches 0.1; the budget of 64 units is
    # spent after exactly 32 runs
    clock = FakeClock()
    t = time_repeated(clock.runs(forever(1, 3)), rule=RepeatRule(spread=0.1, budget_s=64 * U, min_runs=3,
                                                                min_time_s=0.0), clock=clock)
    assert (t.runs, t.stopped_by, t.reached) == (32, "budget", False)
    assert (t.median_s, t.q25_s, t.q75_s, t.min_s, t.max_s) == (2 * U, U, 3 * U, U, 3 * U)
    assert t.spread == 1.0
    d = t.to_dict()
    assert d == {"runs": 32, "median_s": 2 * U, "q25_s": U, "q75_s": 3 * U, "min_s": U, "max_s": 3 * U,
                 "spread": 1.0, "target_spread": 0.1, "budget_s": 64 * U, "reached": False, "stopped_by": "budget"}


def test_the_spread_is_checked_each_time_the_runs_grew_by_an_eighth():
    # 8 noisy runs (1, 3, ...) then steady ones (2): the quartiles are both 2 from 17 runs on, but after the
    # check at 16 runs the next one is at 16 + 16 // 8 = 18
    clock = FakeClock()
    durations = [1, 3] * 4 + [2] * 1000
    t = time_repeated(clock.runs(durations), rule=RepeatRule(spread=0.1, budget_s=1e6, min_runs=3, min_time_s=0.0),
                      clock=clock)
    assert (t.runs, t.stopped_by, t.reached, t.median_s, t.spread) == (18, "spread", True, 2 * U, 0.0)


def test_one_run_longer_than_the_budget_is_the_only_run():
    clock = FakeClock()
    t = time_repeated(clock.runs(forever(4)), rule=RepeatRule(spread=0.1, budget_s=2 * U), clock=clock)
    assert (t.runs, t.stopped_by, t.median_s, t.spread) == (1, "budget", 4 * U, 0.0)
    assert not t.reached  # fewer runs than min_runs


def test_max_runs_ends_the_timing():
    clock = FakeClock()
    t = time_repeated(clock.runs(forever(1, 3)), rule=RepeatRule(spread=0.1, budget_s=1e6, min_runs=3,
                                                                max_runs=7, min_time_s=0.0), clock=clock)
    # four runs of 1 unit, three of 3: median 1, quartiles 1 and 3
    assert (t.runs, t.stopped_by, t.reached, t.median_s, t.q25_s, t.q75_s) == (7, "max runs", False, U, U, 3 * U)


def test_prepare_is_not_timed_but_counts_towards_the_budget():
    clock = FakeClock()
    prepared = []

    def prepare():
        clock.now += U  # a copy of the arguments: one unit
        prepared.append(len(prepared))
        return (len(prepared),)

    seen = []
    run = clock.runs(forever(1))

    def timed(k):
        seen.append(k)
        run()

    t = time_repeated(timed, prepare, rule=RepeatRule(spread=0.1, budget_s=10 * U, min_runs=100, max_runs=1000),
                      clock=clock)
    assert t.runs == 5 and t.stopped_by == "budget" and t.times == (U,) * 5  # 2 units per run, 1 of them timed
    assert seen == [1, 2, 3, 4, 5]  # each run got what its own prepare() returned


def test_timing_summary_is_numpys_percentiles():
    rng = np.random.default_rng(0)
    times = rng.random(101)
    rule = RepeatRule()
    t = Timing.of(times, rule, "budget")
    q25, med, q75 = np.percentile(times, [25, 50, 75])
    assert (t.q25_s, t.median_s, t.q75_s) == (q25, med, q75)
    assert t.spread == (q75 - q25) / med and t.reached == (t.spread <= rule.spread)
    with pytest.raises(ValueError, match="at least one run"):
        Timing.of([], rule, "budget")
    with pytest.raises(ValueError, match="stopped_by"):
        Timing.of([1.0], rule, "tired")


def test_relative_spread_edges():
    assert relative_spread(1.0, 2.0, 3.0) == 1.0
    assert relative_spread(0.0, 0.0, 0.0) == 0.0  # a run too short for the clock: no spread
    assert relative_spread(0.0, 0.0, 1.0) == float("inf")


@pytest.mark.parametrize("field, value, message", [
    ("spread", 0.0, "RepeatRule.spread must be a finite number > 0, got 0.0"),
    ("spread", float("nan"), "RepeatRule.spread must be a finite number > 0, got nan"),
    ("budget_s", -1.0, "RepeatRule.budget_s must be a finite number > 0, got -1.0"),
    ("min_time_s", -0.5, "RepeatRule.min_time_s must be a finite number >= 0, got -0.5"),
    ("min_runs", 0, "RepeatRule.min_runs must be an integer >= 1, got 0"),
    ("max_runs", 2.5, "RepeatRule.max_runs must be an integer >= 1, got 2.5"),
])
def test_rule_refuses_bad_values_naming_the_field(field, value, message):
    with pytest.raises(ValueError) as err:
        RepeatRule(**{field: value})
    assert str(err.value) == message


def test_rule_refuses_max_runs_below_min_runs():
    with pytest.raises(ValueError, match=r"RepeatRule.max_runs \(2\) must be >= min_runs \(3\)"):
        RepeatRule(min_runs=3, max_runs=2)
