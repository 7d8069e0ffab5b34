"""The presets of recent GPUs with no measured point in the project (A100, RTX 4090; H100 has its own tests):
they load, match the published figures, and a streaming kernel on them is bound by their DRAM bandwidth."""

import pytest

from gpu_models.simt import synthetic_kernels as sy
from gpu_models.simt.config import load_config, preset_names
from gpu_models.simt.model import simulate
from gpu_models.simt.threads import build_streams

# name: (SMs, FP32 cores per SM, base MHz, boost MHz in the description, DRAM GB/s, L2 bytes, CC in the description)
PUBLISHED = {
    "a100": (108, 64, 1095.0, "1410", 1555.0, 40 * 2 ** 20, "8.0"),
    "rtx4090": (128, 128, 2235.0, "2520", 1008.0, 72 * 2 ** 20, "8.9"),
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_matches_published_figures(name):
    sms, cores, base, boost, gbs, l2, cc = PUBLISHED[name]
    assert name in preset_names()
    cfg = load_config(name)
    assert (cfg.sm_count, cfg.core_mhz, cfg.l2_bytes) == (sms, base, l2)
    assert cfg.schedulers_per_sm * cfg.lanes["fp"] == cores
    assert cfg.dram_bytes_per_ns() == pytest.approx(gbs, rel=0.001)
    d = cfg.description
    assert boost in d and f"compute capability {cc}" in d and "Sources:" in d and "Estimates" in d


def test_streaming_kernel_is_bound_by_dram_bandwidth():
    # c[i] = a[i] * b[i] over 1,048,576 threads (8 MiB read): half the memory clock takes 1.85x (A100) and
    # 1.95x (RTX 4090) the time, the reads run at 88% and 95% of the peak, and the order follows the bandwidth
    s = build_streams(sy.stream_kernel(1048576, flops=1), 256)
    out = {}
    for name in ("p100", "a100", "rtx4090"):
        cfg = load_config(name)
        full = simulate(s, cfg, crisp=False)
        half = simulate(s, cfg, mem_mhz=cfg.mem_mhz / 2, crisp=False)
        out[name] = full.time_ns
        if name != "p100":
            assert 1.8 < half.time_ns / full.time_ns < 2.0
            assert 0.85 * cfg.dram_bytes_per_ns() < full.counters["read_bandwidth_gbs"] <= cfg.dram_bytes_per_ns()
    assert out["a100"] < out["rtx4090"] < out["p100"]
