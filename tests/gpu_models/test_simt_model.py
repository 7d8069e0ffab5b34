"""The SIMT timing model: hand-checked worked examples and the physics it must obey."""

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.trace_schema import Op
from gpu_models.simt import synthetic_kernels as sy
from gpu_models.simt.config import load_config
from gpu_models.simt.model import simulate
from gpu_models.simt.threads import block_scratch, build_streams
from profiler.trace import TraceChunk

GTX = load_config("gtx480")


def one_warp(rows_per_thread, n_threads=32):
    rows = []
    for t in range(n_threads):
        for r in rows_per_thread(t):
            rows.append(tuple(r) + (t,))
    return build_streams(TraceChunk.from_records(rows), 32)


def test_dependent_chain_takes_latency_per_op():
    # one warp, 10 FP multiplies each reading the previous result: 10 * latency 4 = 40 cycles
    s = one_warp(lambda t: [(1 + k, Op.FP_MUL, 0, 5, 0, 0, 5, 0, 0) for k in range(10)])
    r = simulate(s, GTX, sm_count=1, crisp=False)
    assert r.cycles == 40
    assert r.time_ns == pytest.approx(40 * 1000 / 700)


def test_independent_ops_limited_by_pipeline():
    # 10 independent multiplies: the 16-lane pipeline takes a warp instruction every 2 cycles;
    # the last issues at cycle 18 and is ready at 22
    s = one_warp(lambda t: [(1 + k, Op.FP_MUL, 0, 0, 0, 0, 5 + k, 0, 0) for k in range(10)])
    assert simulate(s, GTX, sm_count=1, crisp=False).cycles == 22


def test_fp64_multiplies_take_the_fp64_pipeline():
    # GTX 480 (GeForce Fermi): 2 FP64 lanes per scheduler, a warp instruction holds the pipeline 16 cycles,
    # latency 21. 10 independent FP64 multiplies: the last issues at 9 x 16 = 144, ready at 165; a dependent
    # chain of 10: 10 x 21 = 210
    s = one_warp(lambda t: [(1 + k, Op.FP64_MUL, 0, 0, 0, 0, 5 + k, 0, 0) for k in range(10)])
    r = simulate(s, GTX, sm_count=1, crisp=False)
    assert r.cycles == 165 and r.stats["fp64_instructions"] == 10 and r.stats["fp_instructions"] == 0
    s = one_warp(lambda t: [(1 + k, Op.FP64_MUL, 0, 5, 0, 0, 5, 0, 0) for k in range(10)])
    assert simulate(s, GTX, sm_count=1, crisp=False).cycles == 210
    # 10 FP32 and 10 FP64 independent multiplies interleaved: the two pipelines work side by side, the FP64 one
    # sets the time (the first FP64 one issues at cycle 1, after an FP32 one; the k-th at 1 + 16 k, the FP32
    # ones in between): 1 + 144 + 21 = 166
    s = one_warp(lambda t: [(1 + k, Op.FP64_MUL if k % 2 else Op.FP_MUL, 0, 0, 0, 0, 5 + k, 0, 0)
                            for k in range(20)])
    r = simulate(s, GTX, sm_count=1, crisp=False)
    assert (r.cycles, r.stats["fp_instructions"], r.stats["fp64_instructions"]) == (1 + 144 + 21, 10, 10)


def test_fewer_fp64_lanes_slow_an_fp64_kernel_and_leave_an_fp32_one_alone():
    cfg = load_config("gtx1080")
    full = cfg.replace(lanes={**cfg.lanes, "fp64": 16})  # as a GP100 scheduler
    f64 = build_streams(sy.compute_kernel(4096, 32, fp64=True), 256)
    f32 = build_streams(sy.compute_kernel(4096, 32), 256)
    slow, fast = simulate(f64, cfg, crisp=False), simulate(f64, full, crisp=False)
    # 4096 threads in 16 blocks of 8 warps: one block on each of 16 SMs, 2 warps per scheduler, 32 multiplies
    # each: 64 warp instructions x 32 cycles of the 1-lane pipeline; the last issues at cycle 63 x 32 = 2016
    # and is ready after the latency 39
    assert slow.cycles == 63 * 32 + 39 == 2055
    # with 16 lanes (2 cycles a warp instruction) the chains' latency bounds it instead: 8 dependent
    # multiplies of 39 cycles per chain, 312 cycles and the issue offsets
    assert fast.cycles == 326 and slow.cycles > 6 * fast.cycles
    assert simulate(f32, cfg, crisp=False).cycles == simulate(f32, full, crisp=False).cycles


def test_double_precision_n_body_is_slower_on_consumer_boards_than_on_the_p100():
    # the case: float64 arithmetic on the RTX 4090 (1/64) and GTX 1080 (1/32) against the P100 (1/2);
    # in float32 the RTX 4090 is the fastest of the three
    f64 = build_streams(sy.compute_kernel(16384, 64, fp64=True), 256)
    f32 = build_streams(sy.compute_kernel(16384, 64), 256)
    t64 = {g: simulate(f64, load_config(g), crisp=False).time_ns for g in ("p100", "gtx1080", "rtx4090")}
    t32 = {g: simulate(f32, load_config(g), crisp=False).time_ns for g in ("p100", "gtx1080", "rtx4090")}
    assert t64["p100"] < t64["rtx4090"] and t64["p100"] < t64["gtx1080"]
    assert t32["rtx4090"] < t32["p100"]


def test_cold_load_worked_example():
    # one warp loads 128 contiguous bytes (4 sectors), then one multiply uses the value.
    # Each sector misses L1 and L2; DRAM serves sector k (0-based) from k*x to (k+1)*x with
    # x = 32 B / 177.408 B/ns, then dram latency 240 ns and L2 latency 160 ns.
    s = one_warp(lambda t: [(1, Op.LOAD, 0, 0, 0, 0, 5, 4096 + 4 * t, 4), (2, Op.FP_MUL, 0, 5, 5, 0, 6, 0, 0)])
    x = 32 / 177.408
    last_ns = 4 * x + 240 + 160
    ready = math.ceil(last_ns / (1000 / 700))  # 281
    assert ready == 281
    r = simulate(s, GTX, sm_count=1, crisp=True)
    assert r.cycles == ready + 4
    assert r.stats["l1_misses"] == 4 and r.stats["l2_misses"] == 4 and r.stats["dram_read_sectors"] == 4
    # CRISP: the load is outstanding cycles 0..280; cycles 1..280 stall on it; the multiply issues at 281
    c = r.crisp
    assert c.load_stall == pytest.approx(280 * 1000 / 700)
    assert c.lcp == pytest.approx(281 * 1000 / 700)
    assert c.total == pytest.approx(285 * 1000 / 700)


def test_second_access_hits_l1():
    s = one_warp(lambda t: [(1, Op.LOAD, 0, 0, 0, 0, 5, 4096 + 4 * t, 4), (2, Op.FP_MUL, 0, 5, 5, 0, 6, 0, 0),
                            (3, Op.LOAD, 0, 6, 0, 0, 7, 4096 + 4 * t, 4)])
    r = simulate(s, GTX, sm_count=1, crisp=False)
    assert r.stats["l1_hits"] == 4 and r.stats["l1_misses"] == 4
    assert r.cycles == 281 + 4 + GTX.l1_latency_cycles


def test_compute_bound_time_scales_with_core_clock():
    s = build_streams(sy.compute_kernel(2048, 32), 256)
    times = {f: simulate(s, GTX, core_mhz=f, crisp=False).time_ns for f in (100.0, 350.0, 700.0)}
    assert times[100.0] / times[700.0] == pytest.approx(7.0, rel=1e-12)
    assert times[350.0] / times[700.0] == pytest.approx(2.0, rel=1e-12)


def test_streaming_time_scales_with_bandwidth():
    small = GTX.replace(sm_count=4, bus_bits=32)  # 14.8 GB/s: bandwidth-bound
    s = build_streams(sy.stream_kernel(8192, flops=1), 256)
    t_full = simulate(s, small, crisp=False).time_ns
    t_half = simulate(s, small, mem_mhz=462.0, crisp=False).time_ns
    assert 1.8 < t_half / t_full < 2.05
    assert simulate(s, small, core_mhz=350.0, crisp=False).time_ns == pytest.approx(t_full, rel=0.02)
    # and the achieved read bandwidth is close to the peak
    r = simulate(s, small, crisp=False)
    assert r.counters["read_bandwidth_gbs"] > 0.85 * small.dram_bytes_per_ns()


def test_roofline_crossover_at_machine_balance():
    small = GTX.replace(sm_count=4, bus_bits=32)
    peak_flops = small.sm_count * small.schedulers_per_sm * small.lanes["fp"] * small.core_mhz / 1000  # flop/ns
    balance = peak_flops / small.dram_bytes_per_ns()  # flop per DRAM byte: 6.06
    # each thread reads 8 bytes from DRAM (its 4-byte store stays in the write-back L2)
    k_star = balance * 8
    n = 4096
    t = {k: simulate(build_streams(sy.stream_kernel(n, flops=k), 256), small, crisp=False).time_ns
         for k in (2, 4, 12, 192, 256)}
    # memory-bound side: flat
    assert t[12] == pytest.approx(t[2], rel=0.1)
    # compute-bound side: within 20% of the compute roof
    for k in (192, 256):
        assert n * k / peak_flops <= t[k] < 1.2 * n * k / peak_flops
    # the two asymptotes meet at the machine balance
    slope = (t[256] - t[192]) / 64
    crossing = t[2] / slope
    assert crossing == pytest.approx(k_star, rel=0.3)


def test_l2_working_set_overflow_slows_down_with_more_sms():
    # each block re-reads its 2 KiB chunk 8 times; one block per SM: the L2 (16 KiB) holds the chunks of
    # 8 SMs but not of 16 (papers/000 Fig. 1(d))
    ws = GTX.replace(l1_bytes=1024, l1_ways=4, l2_bytes=16384, l2_ways=8, max_blocks_per_sm=1, bus_bits=32)
    s = build_streams(sy.reuse_kernel(n_blocks=32, block_size=64, chunk_bytes=2048, passes=8), 64)
    r = {n: simulate(s, ws, sm_count=n, crisp=False) for n in (2, 4, 8, 16, 32)}
    assert r[2].time_ns > r[4].time_ns > r[8].time_ns  # more SMs help while the working set fits
    assert r[16].time_ns > 2 * r[8].time_ns  # then the L2 thrashes
    assert r[32].time_ns > r[16].time_ns
    assert r[8].counters["cache_hit"] == pytest.approx(7 / 8)  # only the first pass misses
    assert r[32].counters["cache_hit"] == 0.0


def test_divergent_branches_serialise():
    div = build_streams(sy.divergent_kernel(1024, 32, divergent=True), 256)
    uni = build_streams(sy.divergent_kernel(1024, 32, divergent=False), 256)
    assert div.n == 32 * (3 + 2 * 32) and uni.n == 32 * (3 + 32)
    rd, ru = simulate(div, GTX, crisp=False), simulate(uni, GTX, crisp=False)
    assert rd.counters["branch_divergence"] == 1.0 and ru.counters["branch_divergence"] == 0.0
    assert rd.counters["valu_utilization"] < 0.6 < ru.counters["valu_utilization"]
    assert 1.7 < rd.time_ns / ru.time_ns < 2.1


def test_store_queue_holds_entries_until_the_l2_takes_them():
    # 1024 uncoalesced sectors on one SM through an L2 that takes one 32-byte sector every 10 ns: the stores
    # are posted, so the queue drains at the L2's rate (not one L2 round trip per 16 entries)
    s = build_streams(sy.scatter_store_kernel(256, stores=4, flops=16), 256)
    r = simulate(s, dataclasses.replace(GTX, l2_bytes_per_ns=3.2), sm_count=1)
    assert r.time_ns == pytest.approx(1024 * 10.0, rel=0.05)
    assert r.crisp.store_stall > 0.5 * r.crisp.total
    assert r.crisp.load_stall == 0.0


def test_streaming_kernel_is_bound_by_dram_bandwidth():
    # c[i] = a[i] * b[i] over 3 MiB (4x the 768 KB L2) on all 15 SMs of the GTX 480: the time follows the
    # memory clock (3x the bandwidth: 2.79x faster) and the DRAM moves 98% / 97% / 92% of its peak
    s = build_streams(sy.stream_kernel(262144, flops=1), 256)
    runs = [simulate(s, GTX, mem_mhz=m, crisp=False) for m in (462.0, 924.0, 1386.0)]
    assert runs[0].time_ns / runs[2].time_ns == pytest.approx(2.79, abs=0.01)
    for m, r in zip((462.0, 924.0, 1386.0), runs):
        moved = r.counters["read_bandwidth_gbs"] + r.counters["write_bandwidth_gbs"]
        assert 0.9 * GTX.dram_bytes_per_ns(m) < moved <= GTX.dram_bytes_per_ns(m)


def test_power_rises_with_clock_and_energy_is_activity():
    s = build_streams(sy.compute_kernel(2048, 32), 256)
    lo, hi = simulate(s, GTX, core_mhz=100.0, crisp=False), simulate(s, GTX, core_mhz=700.0, crisp=False)
    # same events; dynamic energy scales with V^2 (0.55 V at 100 MHz, 1.0 V at 700 MHz)
    assert lo.energy_j / hi.energy_j == pytest.approx(0.55 ** 2, rel=1e-9)
    assert hi.power_w > lo.power_w
    assert hi.stats["fp_instructions"] == 2048 * 32 / 32


def reference_lru(seq, sets, ways):
    cache = [[] for _ in range(sets)]
    hits = []
    for x in seq:
        line = cache[x % sets]
        if x in line:
            line.remove(x)
            line.append(x)
            hits.append(True)
        else:
            if len(line) == ways:
                line.pop(0)
            line.append(x)
            hits.append(False)
    return hits


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=60))
def test_cache_hits_match_reference_lru(sectors):
    # one thread, loads chained through a register so they run one at a time
    rows = [(1 + i, Op.LOAD, 0, 5, 0, 0, 5, 32 * x, 4, 0) for i, x in enumerate(sectors)]
    cfg = GTX.replace(l1_bytes=32 * 2 * 2, l1_ways=2, l2_bytes=32 * 4 * 2, l2_ways=2)
    r = simulate(build_streams(TraceChunk.from_records(rows), 32), cfg, sm_count=1, crisp=False)
    l1 = reference_lru(sectors, 2, 2)
    misses = [x for x, h in zip(sectors, l1) if not h]
    l2 = reference_lru(misses, 4, 2)
    assert r.stats["l1_hits"] == sum(l1)
    assert r.stats["l2_hits"] == sum(l2)
    assert r.stats["dram_read_sectors"] == len(misses) - sum(l2)


def test_shared_memory_tile_is_served_at_the_shared_latency():
    # one warp stores a 128-byte tile and loads it back into a multiply. In shared memory (block_scratch
    # marks both): the store issues at cycle 0, the load at 1 (the load/store unit is busy one cycle) and
    # returns 50 cycles later (the GTX 480's shared latency), the multiply takes 4: 55 cycles, no sector moved.
    # In global memory the load misses L1 (stores do not allocate there) and waits for the L2: 118 cycles.
    rows = []
    for t in range(32):
        rows += [(1, Op.STORE, 0, 0, 0, 0, 0, 8192 + 4 * t, 4, t), (2, Op.LOAD, 0, 0, 0, 0, 5, 8192 + 4 * t, 4, t),
                 (3, Op.FP_MUL, 0, 5, 5, 0, 6, 0, 0, t)]
    chunk = TraceChunk.from_records(rows)
    shared = block_scratch(chunk, 32)
    assert shared.tolist() == [True, True, False] * 32
    r = simulate(build_streams(chunk, 32, shared), GTX, sm_count=1, crisp=False)
    assert GTX.shared_latency_cycles == 50 and r.cycles == 1 + 50 + 4
    assert r.stats["load_sectors"] == r.stats["store_sectors"] == r.stats["l1_hits"] == 0
    assert simulate(build_streams(chunk, 32), GTX, sm_count=1, crisp=False).cycles == 118
