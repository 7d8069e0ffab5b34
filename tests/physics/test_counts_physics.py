"""Physical laws of the shipped GPU-time model, as properties over generated families of programs (their work
counts and features, the form the model reads) and sizes, on every GPU preset:

* the predicted time is never below the region's own lower bound;
* it never falls as the input grows;
* a streaming kernel's time grows within 0.8-1.25x of its bytes once past the launch floor;
* a region of k launches costs at least k launch overheads;
* a GPU with more DRAM bandwidth is not slower;
* float64 code is not faster on a GPU with a lower FP64 rate (and float32 code does not care).

The families are written as the work a user's program does: streaming kernels (copies, axpy, triads), stencils
run for many time steps (two launches a step), all-pairs n-body in float64 and float32, reductions, gathers
through an index array. ``tests/physics/test_traced_physics.py`` checks the same laws on programs traced
through the profiler.
"""

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_models.bounds import LAUNCH_SECONDS
from gpu_models.simt.config import load_config, preset_names
from predictor.gputime import DEFAULT_GPUTIME_MODEL, load_gputime_model
from predictor.gputime_inputs import model_inputs
from predictor.physics import _size_of, faster_memory, fewer_fp64_lanes, program, violations

MODEL = load_gputime_model(DEFAULT_GPUTIME_MODEL)
PRESETS = preset_names()


def predict(counts: dict, gpu) -> tuple[float, object]:
    row, b = model_inputs(counts, gpu)
    return float(MODEL.predict(pd.DataFrame([row]))[0]), b


KIND = st.sampled_from(["stream", "stencil", "nbody", "reduce", "gather"])
PARAMS = st.fixed_dictionaries({"fp64": st.booleans(), "arrays": st.integers(2, 5), "flops": st.integers(0, 12),
                                "steps": st.integers(1, 100), "stride": st.integers(1, 64)})
SIZES = st.lists(st.integers(34, 1 << 26), min_size=2, max_size=5, unique=True).map(sorted)


def _sizes(kind, sizes):
    return [_size_of(kind, s) for s in sizes]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=KIND, params=PARAMS, sizes=SIZES, preset=st.sampled_from(PRESETS))
def test_never_below_the_bound_and_never_falls_as_the_input_grows(kind, params, sizes, preset):
    cfg = load_config(preset)
    last = 0.0
    for n in sorted(set(_sizes(kind, sizes))):
        t, b = predict(program(kind, n, **params), cfg)
        assert t >= b.total_lower * (1 - 1e-12), (kind, n, t, b.times)
        assert t >= last * (1 - 1e-12), (kind, n, t, last)
        last = t


@settings(max_examples=200, deadline=None)
@given(params=PARAMS, n=st.integers(1 << 16, 1 << 28), grow=st.floats(1.5, 1000), preset=st.sampled_from(PRESETS))
def test_streaming_time_grows_with_its_bytes_once_past_the_launch_floor(params, n, grow, preset):
    cfg = load_config(preset)
    small, big = program("stream", n, **params), program("stream", int(n * grow), **params)
    t1, _ = predict(small, cfg)
    t2, _ = predict(big, cfg)
    if t1 < 20 * LAUNCH_SECONDS:
        return  # not yet past the launch floor: fixed costs still weigh
    ratio = (t2 / t1) / (big["unique_bytes"] / small["unique_bytes"])
    assert 0.8 <= ratio <= 1.25, (n, grow, t1, t2, ratio)


def test_streaming_bytes_law_holds_on_every_preset_across_the_sizes_of_memory():
    for preset in PRESETS:
        cfg = load_config(preset)
        times = [predict(program("stream", n, arrays=3, flops=2), cfg)[0] for n in (10**7, 10**8, 10**9)]
        assert times[1] / times[0] == pytest.approx(10, rel=0.2) and times[2] / times[1] == pytest.approx(10, rel=0.2)


@settings(max_examples=200, deadline=None)
@given(params=PARAMS, n=st.integers(34, 4096), steps=st.integers(1, 500), preset=st.sampled_from(PRESETS))
def test_k_launches_cost_at_least_k_launch_overheads(params, n, steps, preset):
    params = {**params, "steps": steps}
    t, b = predict(program("stencil", n, **params), load_config(preset))
    assert b.launches == 2 * steps
    assert t >= 2 * steps * LAUNCH_SECONDS


@settings(max_examples=300, deadline=None)
@given(kind=KIND, params=PARAMS, n=st.integers(34, 1 << 26), k=st.floats(1.01, 16), preset=st.sampled_from(PRESETS))
def test_more_bandwidth_is_never_slower(kind, params, n, k, preset):
    cfg = load_config(preset)
    n = _sizes(kind, [n])[0]
    c = program(kind, n, **params)
    assert predict(c, faster_memory(cfg, k))[0] <= predict(c, cfg)[0] * (1 + 1e-12)


@settings(max_examples=300, deadline=None)
@given(kind=KIND, params=PARAMS, n=st.integers(34, 1 << 26), k=st.sampled_from([2, 4, 16, 32]),
       preset=st.sampled_from(PRESETS))
def test_float64_code_is_not_faster_with_a_lower_fp64_rate(kind, params, n, k, preset):
    cfg = load_config(preset)
    n = _sizes(kind, [n])[0]
    c = program(kind, n, **params)
    slow = fewer_fp64_lanes(cfg, k)
    t, t_slow = predict(c, cfg)[0], predict(c, slow)[0]
    assert t_slow >= t * (1 - 1e-12)
    if not params["fp64"]:
        assert t_slow == pytest.approx(t, rel=1e-12)  # float32 code does not use the FP64 pipe


def test_float64_nbody_is_slower_on_consumer_gpus_than_on_the_p100():
    # the case: 256 float64 bodies were predicted faster on an RTX 4090 (FP64 at 1/64) and a GTX 1080
    # (1/32) than on a P100 (1/2)
    c = program("nbody", 2560, fp64=True)
    p100, rtx, gtx = (predict(c, load_config(g))[0] for g in ("p100", "rtx4090", "gtx1080"))
    assert rtx > p100 and gtx > p100
    c32 = program("nbody", 2560, fp64=False)
    assert predict(c32, load_config("rtx4090"))[0] < predict(c32, load_config("p100"))[0]


def test_the_evaluation_counts_no_violation_for_the_shipped_model():
    got = violations(predict, PRESETS, samples=12, seed=3)
    assert got == dict.fromkeys(got, 0)


def test_the_violation_counter_finds_a_model_that_breaks_the_laws():
    def floor_only(counts, cfg):  # the time of one launch whatever the work: below the bound of big programs
        _, b = model_inputs(counts, cfg)
        return LAUNCH_SECONDS, b

    got = violations(floor_only, ["p100"], samples=12, seed=3)
    assert got["bound"] > 0 and got["launches"] > 0 and got["size"] == 0 and got["bandwidth"] == 0
