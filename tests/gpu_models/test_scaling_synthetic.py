"""The SYNTHETIC analytic generator: hand-computed values of the documented model."""

import numpy as np
import pytest

from gpu_models.scaling.generator import ARCHETYPES, SyntheticKernel, evaluate, generate, sample_kernels


def test_roofline_worked_example():
    k = SyntheticKernel("k", "compute", ops=2.56e11, dram_gb=16.0, l2_gb=0.0, ws_mb=0.01, parallelism=1e6,
                        latency_s=0.01)
    v = evaluate(k, 4, 500, 1000)
    # t_comp = 2.56e11 / (4 * 128 * 500e6) = 1.0 s; t_dram = 16e9 / (32 * 1000e6) = 0.5 s; t = 0.01 + 1.0
    assert v["time"] == pytest.approx(1.01)
    assert v["comp_util"] == pytest.approx(1 / 1.01) and v["dram_util"] == pytest.approx(0.5 / 1.01)
    assert v["power"] == pytest.approx(4 * 0.5 * (0.8 + 2.4 / 1.01) + 1.0 * (10 + 30 * 0.5 / 1.01))


def test_l2_thrashes_as_cus_grow_and_parallelism_caps_cus():
    k = SyntheticKernel("t", "cache_thrash", ops=1e6, dram_gb=0.0, l2_gb=100.0, ws_mb=0.5, parallelism=1e6,
                        latency_s=0.0)
    v = evaluate(k, np.array([4, 8, 16]), 1000, 1000)
    np.testing.assert_allclose(v["l2_hit"], [1.0, 0.5, 0.25])     # 2 MB / (0.5 MB x active CUs)
    assert v["time"][2] > v["time"][1] > v["time"][0]               # more CUs -> slower
    p = SyntheticKernel("p", "limited_parallelism", ops=2.56e11, dram_gb=0.0, l2_gb=0.0, ws_mb=0.01,
                        parallelism=4, latency_s=0.0)
    t = evaluate(p, np.array([4, 8, 32]), 500, 1000)["time"]
    np.testing.assert_allclose(t, [1.0, 1.0, 1.0])
    assert evaluate(p, 8, 500, 1000)["occupancy"] == 0.5


def test_generated_dataset_is_labelled_synthetic():
    ds = generate(n_per_archetype=2, sm_counts=(4, 8), core_mhz=(300, 600), mem_mhz=(500,), random_state=1)
    assert len(ds.kernels) == 2 * len(ARCHETYPES)
    assert all(k.startswith("syn_") for k in ds.kernels)
    assert all(g.startswith("synthetic:") for g in ds.groups().values())
    assert ds.grid().n_configs == 4 and ds.cube().shape == (12, 2, 2, 1)
    again = generate(n_per_archetype=2, sm_counts=(4, 8), core_mhz=(300, 600), mem_mhz=(500,), random_state=1)
    np.testing.assert_array_equal(ds.frame.to_numpy(), again.frame.to_numpy())
    with pytest.raises(ValueError, match="unknown archetype 'x'"):
        sample_kernels(1, archetypes=("x",))
