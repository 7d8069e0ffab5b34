"""Roofline-style bounds of a region's GPU time (gpu_models/bounds.py), the host link field of the GPU
descriptions, transfer times, and the bounds table (portcast/bounds_report.py). Expected values are computed
here from the presets' fields by the formulas of the module docstring."""

import io
import json
import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from gpu_models.bounds import (
    COMPUTE_OPS,
    LAUNCH_SECONDS,
    RECORD_DERATE,
    REQUIRED,
    RESOURCES,
    TRANSFER_LATENCY_S,
    bounds,
    transfer_seconds,
)
from gpu_models.simt.config import ConfigError, config_from_json, default_link_gb_per_s, load_config, preset_names
from portcast.bounds_report import meanings, print_bounds
from portcast.formatting import format_seconds


def kernel(threads, per_thread, *, loads=0, stores=0, size=8, sectors_per_group=None, unique_bytes=None,
           simd=1.0, launches=1, outside=0):
    """Counts of a region whose ``threads`` threads each run ``per_thread`` records ({op class: count}, memory
    included via ``loads``/``stores``, ``size`` bytes each, consecutive lanes at consecutive addresses unless
    ``sectors_per_group`` says otherwise), plus ``outside`` records outside the thread space."""
    ideal = 32 * size / 32  # sectors of one fully active warp access of consecutive elements
    mem = loads + stores
    rpt = sum(per_thread.values()) + mem
    R = threads * rpt
    N = R + outside
    c = {"threads": threads, "records": N, "thread_records": R, "loads": threads * loads, "stores": threads * stores,
         "load_bytes": threads * loads * size, "store_bytes": threads * stores * size,
         "unique_bytes": threads * mem * size if unique_bytes is None else unique_bytes,
         "warp_simdEfficiency": simd, "warp_launches": launches,
         "warp_sectorsPerGroup": ideal if sectors_per_group is None else sectors_per_group,
         "warp_coalescing": 1.0 if sectors_per_group is None else min(1.0, ideal / sectors_per_group)}
    for op in COMPUTE_OPS:
        c[f"mica_mix_{op}"] = threads * per_thread.get(op, 0) / N
    return c


SAXPY = {"FP_MUL": 1, "FP_ALU": 1, "INT_ALU": 1, "BRANCH": 1}  # + 2 loads, 1 store: 7 records per thread


def hz(cfg):
    return cfg.core_mhz * 1e6


def bandwidth(cfg):
    """DRAM bytes per second from the preset's fields."""
    return cfg.mem_mhz * 1e6 * cfg.transfers_per_clock * cfg.bus_bits / 8


# --------------------------------------------------------------------------------------------------------------
# hand-computed cases


def test_streaming_kernel_on_p100_is_bound_by_dram():
    cfg = load_config("p100")
    T = 1 << 22
    b = bounds(kernel(T, SAXPY, loads=2, stores=1), cfg)
    # 3 warp memory instructions per 32 threads, 8 sectors each (32 lanes x 8 B): 24 bytes a thread
    moved = 3 * T / 32 * 8 * 32
    assert moved == 24 * T
    assert bandwidth(cfg) == 732.16e9
    assert b.dram == pytest.approx(moved / bandwidth(cfg), rel=1e-12)
    assert b.bound == "dram" and b.total_lower == b.dram
    assert b.details["dram_bytes"] == moved
    assert json.loads(json.dumps(b.to_dict()))["bound"] == "dram"
    frame = b.to_frame()
    assert list(frame.resource) == list(RESOURCES) and frame.loc[frame.bound, "resource"].item() == "dram"
    assert frame.share.max() == 1.0


def test_issue_on_a_full_grid_and_divergence_costs_one_over_simd():
    cfg = load_config("p100")
    T = 56 * 256 * 64  # 3584 blocks of 256: 64 on each of the 56 SMs
    c = kernel(T, {"INT_ALU": 20, "BRANCH": 4})
    b1 = bounds(c, cfg)
    W = 24 * T / 32
    # the bound counts RECORD_DERATE (half) of the warp instructions; the estimate all of them
    assert RECORD_DERATE == 0.5
    assert b1.issue == pytest.approx(0.5 * W / (cfg.sm_count * cfg.schedulers_per_sm * hz(cfg)), rel=1e-12)
    assert b1.terms["issue"] == pytest.approx(2 * b1.issue, rel=1e-12)
    assert b1.details["effective_sms"] == 56
    b4 = bounds({**c, "warp_simdEfficiency": 0.25}, cfg)
    assert b4.issue == pytest.approx(4 * b1.issue, rel=1e-12)
    assert b4.details["warp_instructions"] == 4 * W
    assert b4.waves == pytest.approx(4 * b1.waves, rel=1e-12)
    assert b4.latency == b1.latency  # one thread's chain does not depend on its warp


def test_a_grid_of_64_threads_uses_one_sm():
    cfg = load_config("p100")
    b = bounds(kernel(64, {"FP_ALU": 10000}), cfg)
    d = b.details
    assert (d["blocks"], d["sms_used"], d["effective_sms"]) == (1, 1, 1)
    assert d["occupancy"] == pytest.approx(2 / (56 * 64))
    W = 64 * 10000 / 32
    assert b.issue == pytest.approx(0.5 * W / (1 * cfg.schedulers_per_sm * hz(cfg)), rel=1e-12)
    # one round; a warp's chain: half of its 10000 records x 4 cycles
    assert b.latency == pytest.approx(0.5 * 10000 * 4 / hz(cfg), rel=1e-12)
    assert b.terms["waves"] == pytest.approx(10000 * 4 / hz(cfg), rel=1e-12)
    assert b.waves == b.latency
    assert b.bound == "waves"  # too few threads: one warp's chain is the time


def test_tail_wave_doubles_the_waves_bound():
    cfg = load_config("p100")
    one_wave = 8 * 56  # 256-thread blocks: min(32, 64 // 8) = 8 resident per SM
    full = bounds(kernel(one_wave * 256, {"FP_ALU": 50}), cfg)
    tail = bounds(kernel((one_wave + 1) * 256, {"FP_ALU": 50}), cfg)
    assert full.details["rounds"] == 1 and tail.details["rounds"] == 2
    assert full.waves == pytest.approx(0.5 * 50 * 4 / hz(cfg), rel=1e-12)
    assert tail.waves == pytest.approx(2 * full.waves, rel=1e-12)
    # throughput tail: 449 blocks, the busiest SM holds ceil(449 / 56) = 9 of them
    assert tail.details["effective_sms"] == pytest.approx(449 / 9)


def test_launch_bounds_a_tiny_kernel():
    cfg = load_config("h100")
    b = bounds(kernel(32, SAXPY, loads=2, stores=1), cfg)
    assert b.bound == "launch" and b.total_lower == LAUNCH_SECONDS == 5e-6
    assert bounds(kernel(32, SAXPY, loads=2, stores=1, launches=3), cfg).launch == pytest.approx(15e-6)


def test_special_function_kernel_is_bound_by_the_sfu_pipe():
    cfg = load_config("p100")
    T = 56 * 256 * 8
    b = bounds(kernel(T, {"FP_SPECIAL": 100}), cfg)
    interval = math.ceil(32 / cfg.lanes["sfu"]) * cfg.ops["FP_SPECIAL"][2]
    assert interval == 4
    assert b.pipe == pytest.approx(0.5 * 100 * T / 32 * interval / (56 * cfg.schedulers_per_sm * hz(cfg)),
                                   rel=1e-12)
    assert b.terms["pipe"] == pytest.approx(2 * b.pipe, rel=1e-12)
    assert b.details["busiest_pipe"] == "sfu" and b.bound == "pipe"
    assert b.pipe == pytest.approx(4 * b.issue, rel=1e-12)


N_BODY_FP64 = {"FP64_MUL": 9, "FP64_ALU": 10, "FP64_SPECIAL": 1, "FP64_DIV": 1, "INT_ALU": 1, "BRANCH": 1}


def test_fp64_kernel_is_bound_by_the_fp64_pipe_on_consumer_boards():
    # an n-body step in double: per thread 9 multiplies, 10 adds, a square root and a division (FP64)
    T = 256 * 1024
    per_warp = T / 32
    for name, lanes, cycles_expected in (("gtx1080", 1, 32), ("p100", 16, 2), ("rtx4090", 0.5, 64)):
        cfg = load_config(name)
        assert cfg.lanes["fp64"] == lanes and math.ceil(32 / lanes) == cycles_expected
        b = bounds(kernel(T, N_BODY_FP64), cfg)
        # fp64 pipe cycles: (9 + 10) x interval + 8 x interval (division) + 16 x interval (special) per warp
        fp64_cycles = per_warp * (19 + 8 + 16) * cycles_expected
        assert b.details["pipe_cycles"]["fp64"] == pytest.approx(fp64_cycles, rel=1e-12)
        assert b.details["pipe_cycles"]["fp"] == 0.0 and b.details["pipe_cycles"]["sfu"] == 0.0
        E = b.details["effective_sms"]
        assert b.pipe == pytest.approx(0.5 * fp64_cycles / (E * cfg.schedulers_per_sm * hz(cfg)), rel=1e-12)
        assert b.details["busiest_pipe"] == "fp64"
    # exact numbers on the GTX 1080: 8192 warps x 43 x 32 cycles; 1024 blocks on 20 SMs, the busiest holding 52
    # (E = 1024 / 52 SMs), 4 schedulers each, at 1607 MHz
    g = bounds(kernel(T, N_BODY_FP64), load_config("gtx1080"))
    assert g.details["pipe_cycles"]["fp64"] == 8192 * 43 * 32 == 11272192
    assert g.pipe == pytest.approx(0.5 * 11272192 / (1024 / 52 * 4 * 1607e6), rel=1e-12) and g.bound == "pipe"
    # the same work in single precision runs on the fp and sfu pipes: not limited by the FP64 rate
    f32 = {k.replace("FP64_", "FP_"): v for k, v in N_BODY_FP64.items()}
    s = bounds(kernel(T, f32), load_config("gtx1080"))
    assert s.details["pipe_cycles"]["fp64"] == 0.0 and s.pipe < g.pipe / 20


def test_a_table_without_the_fp64_shares_reads_them_as_zero():
    cfg = load_config("gtx1080")
    c = kernel(1 << 16, SAXPY, loads=2, stores=1)
    old = {k: v for k, v in c.items() if not k.startswith("mica_mix_FP64_")}  # a feature table from before
    assert bounds(old, cfg).to_dict() == bounds(c, cfg).to_dict()
    assert bounds({**old, "mica_mix_FP64_ALU": float("nan")}, cfg).pipe == bounds(c, cfg).pipe  # a joined table
    with pytest.raises(ValueError, match=r"counts\['mica_mix_FP64_MUL'\] must be a finite number >= 0"):
        bounds({**c, "mica_mix_FP64_MUL": -1.0}, cfg)


def test_dram_bound_is_the_distinct_sectors_and_the_traffic_estimate_counts_every_warp_access():
    cfg = load_config("p100")
    T = 1 << 20
    # every thread reads the same 8 bytes (a broadcast: 1 sector per warp access); the distinct sectors (what DRAM
    # must move at least once) are 32 bytes, the distinct bytes 8 (WorkSink's counts)
    b = bounds({**kernel(T, {"FP_ALU": 1}, loads=1, sectors_per_group=1, unique_bytes=8), "sector_bytes": 32}, cfg)
    assert b.details["traffic_bytes"] == T / 32 * 32 and b.dram == pytest.approx(32 / bandwidth(cfg))
    assert b.terms["traffic"] == pytest.approx(T / bandwidth(cfg), rel=1e-12)  # no reuse between warp accesses
    # a stride of 128 B: each lane its own sector, so 4x the sectors of the coalesced 8-byte access; the counts
    # of WorkSink say so (sector_bytes 4x the distinct bytes)
    c = kernel(T, {"FP_ALU": 1}, loads=1)
    s = bounds({**kernel(T, {"FP_ALU": 1}, loads=1, sectors_per_group=32), "sector_bytes": 4 * 8 * T}, cfg)
    assert s.dram == pytest.approx(4 * bounds(c, cfg).dram, rel=1e-12)
    assert s.terms["traffic"] == pytest.approx(4 * bounds(c, cfg).terms["traffic"], rel=1e-12)
    # without WorkSink's sector count the bound falls back to the distinct bytes
    assert bounds(c, cfg).dram == pytest.approx(8 * T / bandwidth(cfg), rel=1e-12)


def test_launches_split_the_estimates_and_a_port_names_its_own():
    cfg = load_config("p100")
    T = 56 * 256 * 8
    one = bounds(kernel(T, SAXPY, loads=2, stores=1), cfg)
    # the same work in 10 launches (a host loop of time steps): ten launch overheads, each launch a tenth
    ten = bounds({**kernel(T, SAXPY, loads=2, stores=1), "thread_records": 10 * one.details["thread_records"],
                  "records": 10 * one.details["records"], "loads": 10 * 2 * T, "stores": 10 * T,
                  "warp_launches": 10, "sector_bytes": 24 * T, "launch_sector_bytes": 10 * 24 * T}, cfg)
    assert ten.launches == 10 and ten.launch == pytest.approx(10 * LAUNCH_SECONDS)
    for t in ("dram", "issue", "pipe", "waves", "traffic"):
        assert ten.terms[t] == pytest.approx(one.terms[t], rel=1e-12), t  # per launch: the same launch
    assert ten.dram == pytest.approx(one.dram, rel=1e-12)  # the distinct sectors move once at least
    assert ten.issue == pytest.approx(10 * one.issue, rel=1e-12)
    # a measured port's barrier phases show as launches in the trace; it says it is one launch
    port = bounds({**kernel(T, SAXPY, loads=2, stores=1), "warp_launches": 7, "launches": 1}, cfg)
    assert port.launches == 1 and port.launch == LAUNCH_SECONDS


def test_records_outside_the_thread_space_are_left_out_in_their_share():
    cfg = load_config("p100")
    T = 1 << 20
    inside = bounds(kernel(T, SAXPY, loads=2, stores=1), cfg)
    c = kernel(T, SAXPY, loads=2, stores=1, outside=7 * T)  # as many records again outside the threads
    c["loads"] *= 2  # the outside half has loads too
    c["stores"] *= 2
    b = bounds(c, cfg)
    assert b.details["thread_share"] == 0.5
    assert b.dram == pytest.approx(inside.dram, rel=1e-12) and b.issue == pytest.approx(inside.issue, rel=1e-12)


def test_a_partial_warp_counts_whole_warp_instructions():
    cfg = load_config("p100")
    b = bounds(kernel(1, {"INT_ALU": 100}), cfg)
    assert b.details["lanes_per_warp"] == 1 and b.details["warp_instructions"] == 100


def test_bad_counts_are_refused():
    cfg = load_config("p100")
    c = kernel(64, SAXPY, loads=2, stores=1)
    with pytest.raises(ValueError, match="lacks warp_sectorsPerGroup"):
        bounds({k: v for k, v in c.items() if k != "warp_sectorsPerGroup"}, cfg)
    with pytest.raises(ValueError, match="no thread space"):
        bounds({**c, "threads": 0}, cfg)
    with pytest.raises(ValueError, match="warp_simdEfficiency"):
        bounds({**c, "warp_simdEfficiency": 1.5}, cfg)
    with pytest.raises(ValueError, match=r"counts\['loads'\] must be a finite number >= 0"):
        bounds({**c, "loads": float("nan")}, cfg)
    with pytest.raises(ValueError, match="exceeds"):
        bounds({**c, "thread_records": c["records"] + 1}, cfg)
    # every compute class's share is required but the four FP64 ones (a table from before them has none)
    assert len(REQUIRED) == 9 + len(COMPUTE_OPS) - 4 and "mica_mix_FP64_ALU" not in REQUIRED


# --------------------------------------------------------------------------------------------------------------
# host link and transfers


def test_every_preset_has_a_host_link():
    expected = {"gtx480": 6.0, "k20": 6.0, "k40": 12.0, "gtx680": 12.0, "p100": 12.0, "gtx1080": 12.0,
                "a100": 25.0, "rtx4090": 25.0, "h100": 50.0}
    for name in preset_names():
        cfg = load_config(name)
        assert cfg.link_gb_per_s > 0
        assert "link_gb_per_s" in json.loads((cfg_path(name)).read_text())
        assert "Host link" in cfg.description and "assumption" in cfg.description
        if name in expected:
            assert cfg.link_gb_per_s == expected[name]


def cfg_path(name):
    from gpu_models.simt.config import PRESET_DIR

    return PRESET_DIR / f"{name}.json"


def test_link_is_optional_with_a_default_by_generation():
    d = load_config("p100").to_json()
    del d["link_gb_per_s"]
    assert config_from_json(d).link_gb_per_s == 12.0  # compute capability 6.0: PCIe 3.0
    assert config_from_json({**d, "link_gb_per_s": 7}).link_gb_per_s == 7.0
    with pytest.raises(ConfigError, match="field 'link_gb_per_s' must be a positive number"):
        config_from_json({**d, "link_gb_per_s": 0}, source="x.json")
    assert default_link_gb_per_s("x", "Fermi board") == 6.0
    assert default_link_gb_per_s("x", "(AD102, Ada Lovelace, compute capability 8.9)") == 25.0
    assert default_link_gb_per_s("x", "Hopper") == 50.0
    assert default_link_gb_per_s("mystery", "") == 12.0
    again = config_from_json(json.loads(json.dumps(load_config("h100").to_json())))
    assert again == load_config("h100") and again.link_gb_per_s == 50.0


def test_transfer_seconds():
    p100 = load_config("p100")
    assert transfer_seconds(1e9, 5e8, p100) == pytest.approx(2 * 10e-6 + 1.5e9 / 12e9, rel=1e-12)
    assert TRANSFER_LATENCY_S == 10e-6
    # one copy per array; a copy of 0 bytes is not made
    assert transfer_seconds([4e6, 4e6, 0], [], p100) == pytest.approx(2 * 10e-6 + 8e6 / 12e9, rel=1e-12)
    assert transfer_seconds(0, 0, p100) == 0.0
    assert transfer_seconds(1e9, 0, load_config("h100"), latency=0) == pytest.approx(1e9 / 50e9)
    with pytest.raises(ValueError, match="bytes_out"):
        transfer_seconds(1, -1, p100)


# --------------------------------------------------------------------------------------------------------------
# monotone in the work

WORK_OF = {
    "dram": ("loads", "stores", "unique_bytes", "warp_sectorsPerGroup", "thread_records"),
    "issue": ("thread_records",),
    "pipe": ("thread_records", "loads", "warp_sectorsPerGroup", *(f"mica_mix_{o}" for o in COMPUTE_OPS)),
    "waves": ("thread_records",),
    "latency": ("thread_records",),
    "launch": ("warp_launches",),
}
PAIRS = [(r, k) for r, keys in WORK_OF.items() for k in keys]


@settings(max_examples=150, deadline=None)
@given(threads=st.integers(1, 1 << 22), rpt=st.floats(1, 1e4), outside=st.floats(0, 1e7),
       mem=st.floats(0, 1), sectors=st.floats(0, 32), simd=st.floats(0.03, 1), launches=st.integers(0, 50),
       unique=st.floats(0, 1e10), mix=st.lists(st.floats(0, 1), min_size=len(COMPUTE_OPS), max_size=len(COMPUTE_OPS)),
       preset=st.sampled_from(["gtx480", "p100", "h100"]), pair=st.sampled_from(PAIRS),
       grow=st.floats(1e-3, 1e3))
def test_each_bound_is_monotone_in_its_work(threads, rpt, outside, mem, sectors, simd, launches, unique, mix,
                                             preset, pair, grow):
    R = threads * rpt
    N = R + outside
    total = sum(mix) or 1.0
    c = {"threads": threads, "records": N, "thread_records": R, "loads": mem * N * 0.7, "stores": mem * N * 0.3,
         "unique_bytes": unique, "warp_simdEfficiency": simd, "warp_sectorsPerGroup": sectors,
         "warp_launches": launches}
    c.update({f"mica_mix_{o}": m / total * (1 - mem) for o, m in zip(COMPUTE_OPS, mix)})
    resource, key = pair
    more = dict(c)
    more[key] = c[key] * (1 + grow) + grow
    if key == "thread_records":
        more["records"] = c["records"] + (more[key] - c[key])  # inside records are records too
    cfg = load_config(preset)
    before, after = getattr(bounds(c, cfg), resource), getattr(bounds(more, cfg), resource)
    assert after >= before * (1 - 1e-12)


# --------------------------------------------------------------------------------------------------------------
# the table


def explanation(rows):
    return pd.DataFrame([{"feature": f, "rank": i + 1, "pc": i, "location": loc, "text": text, "count": 1.0,
                          "share": share} for i, (f, loc, text, share) in enumerate(rows)],
                        columns=["feature", "rank", "pc", "location", "text", "count", "share"])


def printed(label, b, ex=None, **kw):
    con = Console(record=True, width=80, file=io.StringIO())
    print_bounds(con, label, b, ex, **kw)
    return con.export_text()


def test_print_bounds_shows_every_number_uncut_and_the_lines_behind_poor_coalescing():
    cfg = load_config("p100")
    b = bounds(kernel(1 << 24, SAXPY, loads=2, stores=1, sectors_per_group=32), cfg)
    ex = explanation([("warp_coalescing", "/home/u/strided.py:12", "x[32 * i]", 0.75),
                      ("warp_bdiv", "/home/u/strided.py:10", "if x[i] > 0:", 1.0),
                      ("footprint", "/home/u/strided.py:13", "y[i]", 0.6)])
    text = printed("strided", b, ex, transfer_s=transfer_seconds(1e9, 0, cfg))
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines)
    for r in RESOURCES:
        cell = format_seconds(getattr(b, r))
        assert any(cell in line for line in lines), cell  # each time whole on one line
    assert "732.2" in text and "at 732.2 GB/s" in meanings(b)["dram"] and "coalescing 0.25" in meanings(b)["dram"]
    assert any(line.lstrip("│ ").startswith("DRAM *") for line in lines)
    assert "100%" in text
    # coalescing 0.25 (< MIN_COALESCING): the uncoalesced access is behind the DRAM bound, with the footprint
    assert "│ uncoalesced access (32-B sectors beyond  │   75% │ strided.py:12 │ x[32 * i] │" in lines
    assert "strided.py:12" in text and "x[32 * i]" in text and "/home/u" not in text
    assert "footprint (first-touched 64-B blocks)" in text and "strided.py:13" in text
    assert "strided.py:10" not in text  # branch lines do not explain a DRAM bound (and nothing diverges)
    assert "lines behind the DRAM bound" in text
    assert f"host<->device copies: {format_seconds(1e9 / 12e9 + 10e-6)}" in text


def test_print_bounds_divergent_kernel_lists_the_branch_lines():
    cfg = load_config("h100")
    b = bounds(kernel(132 * 256 * 16, {"INT_ALU": 200, "BRANCH": 50}, simd=0.25), cfg)
    assert b.bound in ("issue", "pipe")
    ex = explanation([("warp_bdiv", "k.py:7", "if i % 4 == 0:", 0.9), ("footprint", "k.py:9", "a[i]", 1.0),
                      ("Lbdiv_32", "k.py:5", "for j in range(m):", 1.0)])
    text = printed("divergent", b, ex)
    # SIMD efficiency 0.25: the divergent warp branch is behind the issue bound; the sequential Lbdiv_32 rows
    # (a uniform loop's exit) never are, nor the footprint of a bound that is not DRAM
    assert "k.py:7" in text and "branch divergence (warp" in text
    assert "k.py:9" not in text and "k.py:5" not in text
    assert "SIMD efficiency 0.25: 75% of lanes idle, 4x the converged count" in meanings(b)["issue"]
    assert format_seconds(b.issue) in text
    tiny = printed("tiny", bounds(kernel(32, SAXPY, loads=2, stores=1), cfg), ex)
    assert "launch *" in tiny and "lines behind" not in tiny
