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

import dataclasses
import math

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_models.bounds import COMPUTE_OPS, LAUNCH_SECONDS
from gpu_models.simt.config import load_config, preset_names
from portcast.gpu_prediction import model_inputs
from predictor.gputime import DEFAULT_GPUTIME_MODEL, load_gputime_model

MODEL = load_gputime_model(DEFAULT_GPUTIME_MODEL)
PRESETS = preset_names()


def program(kind: str, n: int, *, fp64: bool = True, arrays: int = 3, flops: int = 2, steps: int = 1,
            stride: int = 1) -> dict:
    """Work counts and features of one generated program at size ``n`` (elements, bodies or grid side).

    Per thread: ``per[OP]`` records of each class; loads and stores of ``size`` bytes; ``g`` sectors per warp
    memory access; ``launches`` launches of ``threads`` threads; ``footprint`` distinct bytes."""
    size = 8 if fp64 else 4
    sectors = None
    fpa, fpm = ("FP64_ALU", "FP64_MUL") if fp64 else ("FP_ALU", "FP_MUL")
    per = dict.fromkeys(COMPUTE_OPS, 0.0)
    if kind == "stream":  # y = f(x1 .. xk): k-1 loads, 1 store, `flops` operations per element
        threads, launches = n, 1
        loads, stores = arrays - 1, 1
        per.update({fpa: flops // 2 + flops % 2, fpm: flops // 2, "INT_ALU": 1, "BRANCH": 1})
        g, footprint, ilp = size, arrays * n * size, 3.0
    elif kind == "stencil":  # n x n grid, 5-point update then a copy back, `steps` time steps
        threads, launches = (n - 2) ** 2, 2 * steps
        loads, stores = 3, 1  # (5 + 1) / 2 loads and 1 store per thread per launch, on average
        per.update({fpa: 3, fpm: 1, "INT_ALU": 6, "INT_MUL": 2, "BRANCH": 1.5})
        g, footprint, ilp = size, 2 * n * n * size, 4.0
    elif kind == "nbody":  # n bodies, an inner loop over all n: ~20 operations and 4 loads per pair
        threads, launches = n, 1
        loads, stores = 4 * n + 6, 3
        per.update({fpa: 9 * n, fpm: 9 * n, "FP64_SPECIAL" if fp64 else "FP_SPECIAL": n, "INT_ALU": 2 * n,
                    "BRANCH": n})
        g, footprint, ilp = 1.0, 7 * n * size, 6.0  # the j loads are a broadcast: one sector per warp
    elif kind == "reduce":  # s += x[i]: one load and an atomic add per element
        threads, launches = n, 1
        loads, stores = 2, 1
        per.update({fpa: 1, "INT_ALU": 1, "BRANCH": 1})
        g, footprint, ilp = size, n * size + size, 2.0
    elif kind == "gather":  # y[i] = a * x[idx[i]], idx[i] = stride * i: a warp's x elements span stride x
        threads, launches = n, 1
        loads, stores = 2, 1
        per.update({"INT_ALU": 2, "BRANCH": 1, fpm: 1})
        x_sectors = min(32, stride * size)  # sectors of one warp's x access
        g = (8 + x_sectors + size) / 3  # idx (int64, coalesced), x, then the store of y
        footprint, ilp = (8 + 2 * size) * n, 2.0
        sectors = 32 * (math.ceil((8 + size) * n / 32) + math.ceil(n * x_sectors / 32))
    else:
        raise ValueError(kind)
    if sectors is None:
        sectors = 32 * math.ceil(footprint / 32)
    rpt = sum(per.values()) + loads + stores
    R = threads * rpt * launches
    N = R + 4 * launches  # the host loop around the launches
    ideal = size  # sectors of a fully coalesced warp access of `size`-byte elements
    c = {"threads": threads, "records": N, "thread_records": R, "loads": threads * loads * launches,
         "stores": threads * stores * launches, "load_bytes": threads * loads * launches * size,
         "store_bytes": threads * stores * launches * size, "unique_bytes": footprint,
         "launches": launches, "warp_launches": launches, "sector_bytes": sectors,
         "launch_sector_bytes": launches * sectors, "warp_simdEfficiency": 1.0,
         "warp_sectorsPerGroup": g, "warp_coalescing": min(1.0, ideal / g) if g >= 1 else 1.0, "ilp32": ilp,
         "coldRef": 0.2}
    for op in COMPUTE_OPS:
        c[f"mica_mix_{op}"] = threads * launches * per[op] / N
    fp = sum(per[o] for o in COMPUTE_OPS if o.startswith("FP"))
    c["mem"] = c["loads"] / N + c["stores"] / N
    c["fp"] = threads * launches * fp / N
    c["ctrl"] = threads * launches * per["BRANCH"] / N
    fp64 = sum(per[o] for o in COMPUTE_OPS if o.startswith("FP64"))
    c["fp64"] = fp64 / fp if fp else 0.0
    c.update(thread_mem=threads * launches * (loads + stores), thread_ctrl=threads * launches * per["BRANCH"],
             thread_fp=threads * launches * fp, thread_fp64=threads * launches * fp64)
    return c


def predict(counts: dict, gpu) -> tuple[float, object]:
    row, b = model_inputs(counts, gpu)
    return float(MODEL.predict(pd.DataFrame([row]))[0]), b


KIND = st.sampled_from(["stream", "stencil", "nbody", "reduce", "gather"])
PARAMS = st.fixed_dictionaries({"fp64": st.booleans(), "arrays": st.integers(2, 5), "flops": st.integers(0, 12),
                                "steps": st.integers(1, 100), "stride": st.integers(1, 64)})
SIZES = st.lists(st.integers(34, 1 << 26), min_size=2, max_size=5, unique=True).map(sorted)


def _sizes(kind, sizes):
    # n-body and stencil sizes are one side (work grows with its square): keep their work in range
    return [max(34, int(s ** 0.5)) if kind in ("nbody", "stencil") else s for s in sizes]


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


def faster_memory(cfg, k):
    return dataclasses.replace(cfg, mem_mhz=cfg.mem_mhz * k, name=f"{cfg.name}-mem{k:g}")


def fewer_fp64_lanes(cfg, k):
    lanes = dict(cfg.lanes)
    lanes["fp64"] = max(1, int(lanes["fp64"] // k))
    return dataclasses.replace(cfg, lanes=lanes, name=f"{cfg.name}-fp64/{k:g}")


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
