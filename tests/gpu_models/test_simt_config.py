"""GPU descriptions of the SIMT timing model: presets, derived quantities, validation messages."""

import json

import pytest

from gpu_models.simt.config import ConfigError, config_from_json, load_config, preset_names
from profiler.trace import Op


def test_presets_present():
    assert {"h100", "gtx480"} <= set(preset_names())


def test_gtx480_matches_crisp_setup():
    cfg = load_config("gtx480")
    assert cfg.sm_count == 15 and cfg.core_mhz == 700.0
    # GDDR5 at 924 MHz, 4 transfers per clock, 384-bit bus: 924e6 * 4 * 48 B/s = 177.408 GB/s
    assert cfg.dram_bytes_per_ns() == pytest.approx(177.408)
    assert cfg.dram_bytes_per_ns(462.0) == pytest.approx(88.704)
    assert cfg.l1_sets == 16384 // (32 * 4) == 128
    assert cfg.l2_sets == 786432 // (32 * 8) == 3072


def test_h100_bandwidth_and_grid():
    cfg = load_config("h100")
    assert cfg.dram_bytes_per_ns() == pytest.approx(2619 * 2 * 5120 / 8 / 1000)  # 3352.32 GB/s
    sw = cfg.sweep
    assert (len(sw["sm_counts"]), len(sw["core_mhz"]), len(sw["mem_mhz"])) == (8, 8, 7)


def test_op_tables():
    cfg = load_config("gtx480")
    unit, lat, ivl = cfg.op_tables()
    assert unit[Op.FP_MUL] == 1 and lat[Op.FP_MUL] == 4 and ivl[Op.FP_MUL] == 2  # 16 lanes: 2 cycles a warp
    assert unit[Op.FP_SPECIAL] == 2 and ivl[Op.FP_SPECIAL] == 8  # 4 SFU lanes
    assert unit[Op.INT_DIV] == 2 and ivl[Op.INT_DIV] == 32  # repeat 4
    assert unit[Op.LOAD] == 3 and unit[Op.STORE] == 3


def test_voltage_curve():
    cfg = load_config("gtx480")
    assert cfg.voltage(100) == pytest.approx(0.55)
    assert cfg.voltage(700) == pytest.approx(1.0)
    assert cfg.voltage(400) == pytest.approx(0.775)
    assert cfg.voltage(900) == pytest.approx(1.0)


def test_roundtrip_and_replace():
    cfg = load_config("gtx480")
    again = config_from_json(json.loads(json.dumps(cfg.to_json())))
    assert again == cfg
    assert cfg.replace(sm_count=4).sm_count == 4


def test_errors_name_file_and_field(tmp_path):
    d = load_config("gtx480").to_json()
    d["l2_ways"] = -1
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(d))
    with pytest.raises(ConfigError, match=r"bad.json: field 'l2_ways' must be a positive number"):
        load_config(p)
    d = load_config("gtx480").to_json()
    del d["mshr_per_sm"]
    with pytest.raises(ConfigError, match="missing field"):
        config_from_json(d, "x.json")
    d = load_config("gtx480").to_json()
    d["ops"]["FP_MUL"] = ["tensor", 4, 1]
    with pytest.raises(ConfigError, match=r"ops.FP_MUL"):
        config_from_json(d, "x.json")
    p.write_text("{ not json")
    with pytest.raises(ConfigError, match="line 1"):
        load_config(p)
    with pytest.raises(ConfigError, match="unknown GPU preset 'b300'"):
        load_config("b300")


def test_shared_latency_is_optional_and_defaults_to_the_l1():
    d = load_config("gtx480").to_json()
    assert d["shared_latency_cycles"] == 50 and d["l1_latency_cycles"] == 28
    del d["shared_latency_cycles"]
    assert config_from_json(d).shared_latency_cycles == 28  # a description written before the field
    assert config_from_json({**d, "shared_latency_cycles": 31}).shared_latency_cycles == 31
    with pytest.raises(ConfigError, match="field 'shared_latency_cycles' must be a positive number, got 0"):
        config_from_json({**d, "shared_latency_cycles": 0}, source="x.json")
    with pytest.raises(ConfigError, match="'shared_latency_cycles' must be an integer"):
        config_from_json({**d, "shared_latency_cycles": 2.5})
