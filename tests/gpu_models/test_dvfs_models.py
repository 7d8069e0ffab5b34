"""The six DVFS models on hand-checked records, and their general properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_models.dvfs.counter_record import CounterError, CounterRecord
from gpu_models.dvfs.models import MODEL_NAMES, crisp_time, get_model, linear_time, predict, predict_all

# Fig. 6's record (units of one cycle at 1000 MHz)
FIG6 = CounterRecord(base_mhz=1000.0, total=31.0, load_stall=4.0, store_stall=1.0, lcp=20.0, lcp_comp=17.0,
                     load_outstanding=24.0, lead=18.0, miss_count=3.0, miss_latency=8.0, crit=20.0, name="fig6")


def test_linear_models_hand_checked():
    # (T - M) * r + M at r = 2 and r = 0.5
    assert predict(FIG6, [500, 2000], "stall").tolist() == [58.0, 17.5]  # M = 4
    assert predict(FIG6, [500, 2000], "miss").tolist() == [38.0, 27.5]  # M = 24
    assert predict(FIG6, [500, 2000], "lead").tolist() == [44.0, 24.5]  # M = 18
    assert predict(FIG6, [500, 2000], "crit").tolist() == [42.0, 25.5]  # M = 20


def test_crisp_regimes_hand_checked():
    # r = 2: max(20, 34) + max(11, 20) = 54
    assert predict(FIG6, 500, "crisp").tolist() == [54.0]
    # r = 1.1: max(20, 18.7) + max(11, 11) = 31 -- the slowdown is hidden by the load path and store stalls
    assert predict(FIG6, 1000 / 1.1, "crisp")[0] == pytest.approx(31.0)
    # r = 1.25: max(20, 21.25) + max(11, 12.5) = 33.75
    assert predict(FIG6, 800, "crisp")[0] == pytest.approx(33.75)
    # higher clock (Sec. 5.2), r = 0.5: LCP + store stall + CSP_comp * r = 20 + 1 + 5
    assert predict(FIG6, 2000, "crisp").tolist() == [26.0]
    # plain Eq. 3-5 at a higher clock would keep the whole 31
    assert crisp_time(31.0, 20.0, 17.0, 1.0, 0.5, higher_clock_variant=False) == pytest.approx(31.0)


def test_crisp_from_hardware_counters_only():
    # Sec. 3.5: adjusted LCP 21, load stalls 4 -> overlapped 17, CSP = 31 - 21 = 10 (9 computation + 1 store)
    hw = CounterRecord(base_mhz=1000.0, total=31.0, adjusted_lcp=21.0, load_stall=4.0, store_stall=1.0)
    assert predict(hw, 500, "crisp").tolist() == [max(21, 34) + max(10, 18)]  # 52, where Sec. 3.4 says 54
    assert get_model("crisp").memory_time(hw) == 21.0
    assert "crisp" in predict_all(hw, [500]) and "crit" not in predict_all(hw, [500])
    with pytest.raises(CounterError, match="needs field 'lcp'"):
        predict(CounterRecord(base_mhz=1000.0, total=31.0, adjusted_lcp=21.0, store_stall=1.0), 500, "crisp")


def test_crisp_l_hand_checked():
    # LCP = load outstanding 24, overlapped = 24 - 4 = 20, CSP_comp = 31 - 24 - 1 = 6
    assert predict(FIG6, 500, "crisp-l").tolist() == [max(24, 40) + max(7, 12)]
    assert predict(FIG6, 2000, "crisp-l").tolist() == [24 + 1 + 3]


def test_miss_memory_is_capped_at_total():
    rec = CounterRecord(base_mhz=700.0, total=10.0, miss_count=5.0, miss_latency=4.0)
    assert predict(rec, 350.0, "miss").tolist() == [10.0]
    assert get_model("miss").memory_time(rec) == 10.0
    assert linear_time(10.0, -3.0, 2.0) == 20.0


def test_memory_time_per_model():
    got = {m: get_model(m).memory_time(FIG6) for m in MODEL_NAMES}
    assert got == {"stall": 4.0, "miss": 24.0, "lead": 18.0, "crit": 20.0, "crisp": 20.0, "crisp-l": 24.0}


def test_missing_field_and_bad_inputs():
    rec = CounterRecord(base_mhz=700.0, total=10.0, crit=4.0, name="k1")
    with pytest.raises(CounterError, match="record 'k1': model CRISP needs field 'lcp'"):
        predict(rec, 350.0, "crisp")
    assert set(predict_all(rec, [350.0])) == {"crit"}
    with pytest.raises(CounterError, match="unknown model 'foo'"):
        get_model("foo")
    assert get_model("CRISP_L").name == "crisp-l" and get_model("crispl").name == "crisp-l"
    with pytest.raises(CounterError, match="target clocks must be positive"):
        predict(rec, [0.0], "crit")


@st.composite
def records(draw):
    total = draw(st.floats(1.0, 1e6))
    fr = lambda: draw(st.floats(0.0, 1.0))  # noqa: E731
    lcp = total * fr()
    store = (total - lcp) * fr()
    out = lcp + (total - lcp - store) * fr()
    return CounterRecord(
        base_mhz=draw(st.floats(50.0, 2000.0)), total=total, load_stall=min(out, total - store) * fr(),
        store_stall=store, lcp=lcp, lcp_comp=lcp * fr(), load_outstanding=out, lead=total * fr(),
        miss_count=float(draw(st.integers(0, 50))), miss_latency=total * fr() / 10, crit=total * fr(),
    ).validate()


@settings(max_examples=200, deadline=None)
@given(records(), st.lists(st.floats(10.0, 5000.0), min_size=2, max_size=6))
def test_every_model_is_exact_at_base_and_monotone_in_clock(rec, targets):
    for m in MODEL_NAMES:
        assert float(predict(rec, rec.base_mhz, m)[0]) == pytest.approx(rec.total, rel=1e-9)
        ts = np.sort(np.asarray(targets))
        p = predict(rec, ts, m)
        assert np.all(np.diff(p) <= 1e-9 * rec.total + 1e-12), m  # faster clock, never longer
        assert np.all(p > 0)
        # never faster than perfect scaling, never slower than perfect scaling when slowing down
        r = rec.base_mhz / ts
        assert np.all(p <= rec.total * np.maximum(r, 1.0) * (1 + 1e-9))
        assert np.all(p >= rec.total * np.minimum(r, 1.0) * (1 - 1e-9))
