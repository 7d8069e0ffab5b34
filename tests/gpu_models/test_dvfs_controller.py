"""The DVFS controller: P-states, power, decisions, and the closed-loop simulation."""

from __future__ import annotations

import pytest

from gpu_models.dvfs.controller import (
    PowerModel,
    PState,
    TimelineInterval,
    check_pstates,
    decide,
    default_pstates,
    simulate_control,
)
from gpu_models.dvfs.counter_record import CounterError, CounterRecord
from gpu_models.dvfs.timeline import COMPUTE, LOAD, Timeline


def test_default_pstates():
    ps = default_pstates()
    assert [p.mhz for p in ps] == [100, 200, 300, 400, 500, 600, 700]
    assert [p.volt for p in ps] == pytest.approx([0.55, 0.625, 0.7, 0.775, 0.85, 0.925, 1.0])


def test_power_model_hand_checked():
    pw = PowerModel(dynamic_w=60.0, static_w=30.0, other_w=20.0)
    # 60 * 0.775^2 * 400/700 + 30 * 0.775 + 20
    assert pw.power_w(PState(400.0, 0.775)) == pytest.approx(20.592857142857 + 23.25 + 20.0)
    assert pw.power_w(PState(700.0, 1.0)) == 110.0
    assert pw.power_w(PState(700.0, 1.0), dynamic_w=10.0) == 60.0
    assert pw.idle_power_w(PState(100.0, 0.55)) == pytest.approx(36.5)


def test_decisions_hand_checked():
    ps, pw = default_pstates(), PowerModel()
    half = CounterRecord(base_mhz=700.0, total=100.0, crit=50.0)
    d = decide(half, ps, pw, "crit", "edp")
    # T(600) = 50 + 50 * 7/6 = 108.33; P(600) = 60 * .925^2 * 6/7 + 30 * .925 + 20 = 91.7536; EDP = 1.07683e6,
    # the smallest of the seven (700: 1.1e6, 500: 1.10109e6)
    assert d.chosen == PState(600.0, 0.925)
    assert d.metric[5] == pytest.approx(1076830.109, rel=1e-9)
    assert d.metric[6] == pytest.approx(1.1e6)
    assert decide(half, ps, pw, "crit", "ed2p").chosen.mhz == 700.0
    assert decide(half, ps, pw, "crit", "energy", slowdown=0.10).chosen.mhz == 600.0  # 8.3% slower
    assert decide(half, ps, pw, "crit", "energy", slowdown=0.05).chosen.mhz == 700.0
    memory = CounterRecord(base_mhz=700.0, total=100.0, crit=100.0)
    assert decide(memory, ps, pw, "crit", "energy", slowdown=0.0).chosen.mhz == 100.0
    compute = CounterRecord(base_mhz=700.0, total=100.0, crit=0.0)
    assert decide(compute, ps, pw, "crit", "energy", slowdown=0.01).chosen.mhz == 700.0


def test_decision_errors():
    rec = CounterRecord(base_mhz=700.0, total=1.0, crit=0.5)
    with pytest.raises(CounterError, match="unknown objective 'speed'"):
        decide(rec, default_pstates(), PowerModel(), "crit", "speed")
    with pytest.raises(CounterError, match="slowdown"):
        decide(rec, default_pstates(), PowerModel(), "crit", "energy", slowdown=-1)
    with pytest.raises(CounterError, match="appears twice"):
        check_pstates([PState(100, 0.6), PState(100, 0.7)])
    with pytest.raises(CounterError, match="model CRISP needs field 'lcp'"):
        decide(rec, default_pstates(), PowerModel(), "crisp", "edp")


def _compute_interval(n=700):
    return Timeline.from_lists([COMPUTE] * n, [0.0] * n, [[] for _ in range(n)])


def _memory_interval():
    # a chain of 4 loads of 1000 ns each, each needed right away: memory bound at every clock
    kinds = [LOAD, COMPUTE] * 4
    lat = [1000.0, 0.0] * 4
    deps = [[] if i == 0 else [(i - 1) // 2 * 2] for i in range(8)]
    return Timeline.from_lists(kinds, lat, deps)


def test_compute_bound_program_stays_at_top():
    ivs = [TimelineInterval(f"c{i}", _compute_interval(), 60.0) for i in range(5)]
    res = simulate_control(ivs, "crisp", "edp")
    assert res.transitions == 0
    assert res.base_time == pytest.approx(5 * 1000.0)  # 700 cycles at 700 MHz = 1000 ns each
    # only the controller's software cost: 4 decisions x 109 cycles at 700 MHz
    assert res.time == pytest.approx(5000.0 + 4 * 109 * 1000.0 / 700.0)
    assert res.residency[700.0] == 1.0


def test_memory_bound_program_drops_the_clock_and_saves():
    ivs = [TimelineInterval(f"m{i}", _memory_interval(), 60.0) for i in range(6)]
    res = simulate_control(ivs, "crisp", "edp", switch_ns=100.0, decision_cycles=0.0)
    assert res.transitions == 1
    # 4000 ns of memory plus 8 issue cycles; at 100 MHz: 4 x 1000 ns chain, each link + one 10 ns cycle
    t700 = ivs[0].run(700.0)[0]
    t100 = ivs[0].run(100.0)[0]
    assert t100 == pytest.approx(4 * 1000.0 + 4 * 10.0 + 0.0, abs=20.0)
    assert res.time == pytest.approx(t700 + 5 * t100 + 100.0)
    s = res.savings()
    assert s["edp"] > 40 and s["energy"] > 40 and s["time"] < 0
    assert res.residency[100.0] == pytest.approx(5 * t100 / (t700 + 5 * t100))
