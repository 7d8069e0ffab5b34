"""The DVFS controller of Sec. 4 of the CRISP paper: P-states, a power model, per-interval decisions and a
closed-loop simulation over a sequence of intervals.

Power model (GPUWattch-style scaling from the nominal P-state ``(f_n, V_n)``): the SMs' dynamic power is
``P_dyn(V, f) = P_dyn_n * (V / V_n)^2 * (f / f_n)``, their static power ``P_st(V) = P_st_n * V / V_n``, and
the rest of the GPU (memory, interconnect, L2; not scaled) draws ``P_other``. An interval that takes time
``T`` at ``(V, f)`` uses ``E = (P_dyn(V, f) + P_st(V) + P_other) * T``.

Decision (per interval, assuming the next interval behaves like the one just measured): the controller
reads the counters of the interval it just ran at ``f_c``, predicts ``T(f)`` for every P-state with the
chosen model and ``E(f)`` with the power model, and moves to the P-state that minimises EDP (``E T``),
ED^2P (``E T^2``), or energy subject to ``T(f) <= (1 + bound) * T(f_top)``. Every transition costs
``switch_ns`` (default 100 ns, charged at the static and other power of the higher-voltage state); every
decision costs ``decision_cycles`` cycles (default 109, the paper's software overhead) at the current state.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable, Protocol, Sequence

import numpy as np

from gpu_models.dvfs.counter_record import CounterError, CounterRecord
from gpu_models.dvfs.models import get_model

OBJECTIVES = ("edp", "ed2p", "energy")


@dataclasses.dataclass(frozen=True)
class PState:
    """One performance state: core clock (MHz) and voltage (V)."""

    mhz: float
    volt: float


def default_pstates() -> tuple[PState, ...]:
    """The paper's P-states: 100-700 MHz in 100 MHz steps, voltage linear from 0.55 V to 1.0 V.

    Returns
    -------
    tuple of PState
        Sorted by clock; the last is the nominal state.
    """
    mhz = np.arange(100, 701, 100, dtype=np.float64)
    volt = np.linspace(0.55, 1.0, mhz.size)
    return tuple(PState(float(f), round(float(v), 6)) for f, v in zip(mhz, volt))


def check_pstates(pstates: Sequence[PState]) -> tuple[PState, ...]:
    """Validate a P-state table (positive clocks and voltages, strictly increasing clocks).

    Parameters
    ----------
    pstates : sequence of PState

    Returns
    -------
    tuple of PState
        Sorted by clock.
    """
    ps = tuple(sorted(pstates, key=lambda p: p.mhz))
    if not ps:
        raise CounterError("the P-state table is empty")
    for i, p in enumerate(ps):
        if not (p.mhz > 0 and p.volt > 0 and math.isfinite(p.mhz) and math.isfinite(p.volt)):
            raise CounterError(f"P-state {i}: clock and voltage must be positive (got {p.mhz} MHz, {p.volt} V)")
        if i and p.mhz == ps[i - 1].mhz:
            raise CounterError(f"P-state {i}: clock {p.mhz} MHz appears twice")
    return ps


@dataclasses.dataclass(frozen=True)
class PowerModel:
    """SM power at the nominal P-state and the unscaled rest of the GPU (watts).

    Parameters
    ----------
    dynamic_w : float
        SM dynamic power at the nominal state.
    static_w : float
        SM static power at the nominal state.
    other_w : float
        Power of everything not scaled (memory, interconnect, L2).
    nominal : PState
        The state the powers refer to (default 700 MHz, 1.0 V).
    """

    dynamic_w: float = 60.0
    static_w: float = 30.0
    other_w: float = 20.0
    nominal: PState = PState(700.0, 1.0)

    def power_w(self, p: PState, dynamic_w: float | None = None) -> float:
        """Total power at P-state ``p``.

        Parameters
        ----------
        p : PState
        dynamic_w : float, optional
            The SM dynamic power at the nominal state for this interval (default ``self.dynamic_w``).

        Returns
        -------
        float
        """
        dyn = self.dynamic_w if dynamic_w is None else dynamic_w
        n = self.nominal
        return dyn * (p.volt / n.volt) ** 2 * (p.mhz / n.mhz) + self.static_w * p.volt / n.volt + self.other_w

    def idle_power_w(self, p: PState) -> float:
        """Static plus other power at ``p`` (what a P-state transition costs per second).

        Parameters
        ----------
        p : PState

        Returns
        -------
        float
        """
        return self.static_w * p.volt / self.nominal.volt + self.other_w


@dataclasses.dataclass(frozen=True)
class Decision:
    """The controller's choice for one interval and what it predicted for every P-state."""

    chosen: PState
    predicted_time: np.ndarray
    predicted_energy: np.ndarray
    metric: np.ndarray


def decide(
    record: CounterRecord,
    pstates: Sequence[PState],
    power: PowerModel,
    model: str = "crisp",
    objective: str = "edp",
    slowdown: float = 0.01,
    dynamic_w: float | None = None,
) -> Decision:
    """Pick the next P-state from the counters of the interval just run.

    Parameters
    ----------
    record : CounterRecord
        Counters read at the current clock ``record.base_mhz`` (times in ns or s; the metric only ranks).
    pstates : sequence of PState
        Candidate states.
    power : PowerModel
    model : str
        Performance model name.
    objective : {"edp", "ed2p", "energy"}
        What to minimise; ``"energy"`` under ``T <= (1 + slowdown) * T(top)``.
    slowdown : float
        Allowed slowdown for ``"energy"`` (fraction, >= 0).
    dynamic_w : float, optional
        This interval's SM dynamic power at the nominal state.

    Returns
    -------
    Decision
    """
    if objective not in OBJECTIVES:
        raise CounterError(f"unknown objective {objective!r} (known: {', '.join(OBJECTIVES)})")
    if not (slowdown >= 0 and math.isfinite(slowdown)):
        raise CounterError(f"slowdown must be a finite fraction >= 0 (got {slowdown})")
    ps = check_pstates(pstates)
    mod = get_model(model)
    t = mod.predict(record, [p.mhz for p in ps])
    e = np.array([power.power_w(p, dynamic_w) for p in ps]) * t
    if objective == "edp":
        metric = e * t
    elif objective == "ed2p":
        metric = e * t * t
    else:
        metric = np.where(t <= (1.0 + slowdown) * t[-1] * (1 + 1e-12), e, np.inf)
    # ties go to the faster state
    best = int(np.flatnonzero(metric == metric.min())[-1])
    return Decision(ps[best], t, e, metric)


class Interval(Protocol):
    """One interval of work: runs at a clock and reports its true time (ns) and counters there."""

    name: str
    dynamic_w: float

    def run(self, mhz: float) -> tuple[float, CounterRecord]: ...


@dataclasses.dataclass
class TimelineInterval:
    """An interval whose behaviour comes from the event-timeline model (results cached per clock).

    Parameters
    ----------
    name : str
    timeline : Timeline
    dynamic_w : float
        SM dynamic power at the nominal state while running this interval.
    miss_latency_ns : float, optional
        The MISS model's fixed latency.
    """

    name: str
    timeline: object
    dynamic_w: float
    miss_latency_ns: float | None = None
    _cache: dict = dataclasses.field(default_factory=dict, repr=False)

    def run(self, mhz: float) -> tuple[float, CounterRecord]:
        """True time (ns) and counters of the interval at ``mhz``.

        Parameters
        ----------
        mhz : float

        Returns
        -------
        (float, CounterRecord)
        """
        from gpu_models.dvfs.timeline import counters_at

        if mhz not in self._cache:
            rec = counters_at(self.timeline, mhz, self.miss_latency_ns)
            self._cache[mhz] = (rec.total, dataclasses.replace(rec, name=self.name))
        return self._cache[mhz]


@dataclasses.dataclass(frozen=True)
class ControlResult:
    """Outcome of a closed-loop run against always running at the top state (times ns, energies nJ
    when powers are W and times ns)."""

    model: str
    objective: str
    time: float
    energy: float
    base_time: float
    base_energy: float
    transitions: int
    residency: dict

    @property
    def edp(self) -> float:
        """Energy x delay."""
        return self.energy * self.time

    @property
    def ed2p(self) -> float:
        """Energy x delay^2."""
        return self.energy * self.time**2

    @property
    def base_edp(self) -> float:
        """EDP always at the top state."""
        return self.base_energy * self.base_time

    @property
    def base_ed2p(self) -> float:
        """ED^2P always at the top state."""
        return self.base_energy * self.base_time**2

    def savings(self) -> dict:
        """Percent savings vs the top state (positive = better; time: negative = slowdown).

        Returns
        -------
        dict with keys energy, time, edp, ed2p
        """
        return {
            "energy": 100.0 * (1 - self.energy / self.base_energy),
            "time": 100.0 * (1 - self.time / self.base_time),
            "edp": 100.0 * (1 - self.edp / self.base_edp),
            "ed2p": 100.0 * (1 - self.ed2p / self.base_ed2p),
        }


def simulate_control(
    intervals: Sequence[Interval],
    model: str = "crisp",
    objective: str = "edp",
    pstates: Sequence[PState] | None = None,
    power: PowerModel | None = None,
    slowdown: float = 0.01,
    switch_ns: float = 100.0,
    decision_cycles: float = 109.0,
    progress: Callable[[int], None] | None = None,
) -> ControlResult:
    """Run the intervals in order under the controller and compare with always running at the top state.

    The first interval runs at the top state; after each interval the controller decides the state of the
    next one from that interval's counters (the paper's "next interval like the current one").

    Parameters
    ----------
    intervals : sequence of Interval
    model : str
        Predictor used by the controller.
    objective : {"edp", "ed2p", "energy"}
    pstates : sequence of PState, optional
        Default :func:`default_pstates`.
    power : PowerModel, optional
        Default ``PowerModel()``.
    slowdown : float
        Bound for the ``"energy"`` objective.
    switch_ns : float
        Time per P-state transition (ns).
    decision_cycles : float
        Controller software cost per decision, in cycles of the current clock.
    progress : callable, optional
        Called with the index of each finished interval.

    Returns
    -------
    ControlResult
    """
    ps = check_pstates(pstates or default_pstates())
    pw = power or PowerModel()
    top = ps[-1]
    cur = top
    time = energy = 0.0
    base_t = base_e = 0.0
    transitions = 0
    residency: dict[float, float] = {p.mhz: 0.0 for p in ps}
    for k, iv in enumerate(intervals):
        t, rec = iv.run(cur.mhz)
        time += t
        energy += pw.power_w(cur, iv.dynamic_w) * t
        residency[cur.mhz] += t
        tb, _ = iv.run(top.mhz)
        base_t += tb
        base_e += pw.power_w(top, iv.dynamic_w) * tb
        if k + 1 < len(intervals):
            dt = decision_cycles * 1000.0 / cur.mhz
            time += dt
            energy += pw.power_w(cur, iv.dynamic_w) * dt
            nxt = decide(rec, ps, pw, model, objective, slowdown, iv.dynamic_w).chosen
            if nxt != cur:
                transitions += 1
                time += switch_ns
                energy += max(pw.idle_power_w(cur), pw.idle_power_w(nxt)) * switch_ns
                cur = nxt
        if progress is not None:
            progress(k)
    total = sum(residency.values())
    res = {mhz: v / total for mhz, v in residency.items()} if total > 0 else residency
    return ControlResult(get_model(model).name, objective, time, energy, base_t, base_e, transitions, res)
