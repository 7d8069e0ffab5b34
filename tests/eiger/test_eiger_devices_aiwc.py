"""Device table and the AIWC trials used by the Eiger experiments."""

import numpy as np
import pytest

from predictor.eiger.aiwc_trials import AIWC_METRICS, aiwc_trials, raw_aiwc
from predictor.eiger.devices import MACHINE_METRICS, load_devices, machine_vectors


@pytest.fixture(scope="module")
def trials():
    return aiwc_trials()


def test_device_table_covers_exactly_the_aiwc_devices(trials):
    dev = load_devices()
    assert sorted(dev.index) == sorted(set(trials["device"]))
    assert len(dev) == 15
    assert (dev[list(MACHINE_METRICS)] > 0).all().all()
    assert (dev["boost_clock_mhz"] >= dev["base_clock_mhz"]).all()
    assert (dev["last_level_cache_kb"] >= dev["l2_cache_kb"]).all()
    assert dev["source"].str.len().min() > 40
    assert set(dev["kind"]) == {"cpu", "gpu", "mic"}


def test_device_values_from_the_specifications():
    dev = load_devices()
    # GDDR bandwidth = data rate (Gbps per pin) * bus width / 8
    assert dev.loc["gtx1080", "memory_bandwidth_gbs"] == 10 * 256 / 8
    assert dev.loc["gtx1080ti", "memory_bandwidth_gbs"] == 11 * 352 / 8
    assert dev.loc["polaris-rx480", "memory_bandwidth_gbs"] == 8 * 256 / 8
    assert dev.loc["tahiti-hd7970", "memory_bandwidth_gbs"] == 5.5 * 384 / 8
    assert dev.loc["hawaii-r9-290x", "memory_bandwidth_gbs"] == 5 * 512 / 8
    # NVIDIA: 128 CUDA cores per Maxwell/Pascal SM, 192 per Kepler SMX; AMD: 64 lanes per CU
    for d in ("titanx", "gtx1080", "gtx1080ti"):
        assert dev.loc[d, "processing_elements"] == 128 * dev.loc[d, "compute_units"]
    for d in ("k20c", "k40c"):
        assert dev.loc[d, "processing_elements"] == 192 * dev.loc[d, "compute_units"]
    for d in ("fiji-furyx", "firepro-s9150", "hawaii-r9-290x", "hawaii-r9-295x2", "polaris-rx480", "tahiti-hd7970"):
        assert dev.loc[d, "processing_elements"] == 64 * dev.loc[d, "compute_units"]
    assert machine_vectors()["knl"]["compute_units"] == 64.0


def test_aiwc_trials_are_medians_of_the_runs(trials):
    assert trials.shape[0] == 1560
    assert trials.groupby(["application", "kernel", "size", "device"]).ngroups == 1560
    assert trials["n_runs"].min() >= 40
    assert trials["application"].nunique() == 11 and trials["device"].nunique() == 15
    raw = raw_aiwc()
    sel = raw[(raw.application == "kmeans") & (raw.kernel == "invert_mapping") & (raw["size"] == "tiny")
              & (raw.device == "xeon_es-2697v2")]
    row = trials[(trials.application == "kmeans") & (trials.kernel == "invert_mapping") & (trials["size"] == "tiny")
                 & (trials.device == "xeon_es-2697v2")].iloc[0]
    assert row["kernel_time"] == float(np.median(sel["kernel_time"]))
    assert row["n_runs"] == len(sel)
    assert row["total_instruction_count"] == 111360.0  # first line of the vendored file
    assert row["memory_bandwidth_gbs"] == 59.7
    assert len(AIWC_METRICS) == 31 and not trials[list(AIWC_METRICS)].isna().any().any()
