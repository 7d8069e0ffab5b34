"""GPU descriptions of the SIMT timing model: presets, derived quantities, validation messages."""

import json

import pytest

from core.trace_schema import Op
from gpu_models.simt.config import ConfigError, config_from_json, load_config, preset_names


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
    # the FP64 pipeline, unit 3: GeForce Fermi, 4 results per SM per clock = 2 lanes per scheduler, 16 cycles a
    # warp; the division and special functions are 8- and 16-instruction sequences on it
    assert unit[Op.FP64_MUL] == 3 and lat[Op.FP64_MUL] == 21 and ivl[Op.FP64_MUL] == 16
    assert unit[Op.FP64_DIV] == 3 and lat[Op.FP64_DIV] == 168 and ivl[Op.FP64_DIV] == 128
    assert unit[Op.FP64_SPECIAL] == 3 and lat[Op.FP64_SPECIAL] == 336 and ivl[Op.FP64_SPECIAL] == 256
    assert unit[Op.LOAD] == 4 and unit[Op.STORE] == 4
    # a fractional FP64 lane count: the RTX 4090's 2 FP64 units per SM over 4 schedulers, 64 cycles a warp
    r = load_config("rtx4090")
    assert r.lanes["fp64"] == 0.5 and r.op_tables()[2][Op.FP64_ALU] == 64 and r.op_tables()[2][Op.FP_ALU] == 1


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


# FP64 results per SM per clock of each preset (the CUDA C Programming Guide's throughput table by compute
# capability; GeForce GF100 1/8, the Quadro K5200's GK110B 1/24: docs/gpus.md, "Double precision")
FP64_PER_SM = {"gtx480": 4, "gtx680": 8, "gtxtitan": 64, "k20": 64, "k40": 64, "quadro_k5200": 8, "gtx970": 4,
               "gtx980": 4, "titanx": 4, "gtx1080": 4, "gtx1080ti": 4, "p100": 32, "a100": 32, "h100": 64,
               "rtx4090": 2,
               # issue 33: Kepler GK110 1/3, Volta and GA100/GH100 1/2, Turing 1/32, GA102 and Ada 1/64, B200 as
               # published (1/2)
               "k20x": 64, "v100": 32, "rtx2080ti": 2, "t4": 2, "rtx3080": 2, "a10g": 2, "l4": 2, "l40s": 2,
               "a100_80gb": 32, "h100_sxm": 64, "h100_pcie": 64, "b200": 64}


def test_every_preset_has_its_fp64_rate():
    assert set(FP64_PER_SM) == set(preset_names())
    for name, per_sm in FP64_PER_SM.items():
        cfg = load_config(name)
        assert cfg.lanes["fp64"] * cfg.schedulers_per_sm == per_sm, name
        assert all(cfg.ops[f"FP64_{k}"][0] == "fp64" for k in ("ALU", "MUL", "DIV", "SPECIAL")), name
        assert cfg.ops["FP64_DIV"][2] == 8 and cfg.ops["FP64_SPECIAL"][2] == 16, name
        assert cfg.power["pj"]["fp64"] == pytest.approx(2 * cfg.power["pj"]["fp"]), name


def test_version_1_descriptions_run_fp64_as_fp32_and_version_2_needs_the_fields(tmp_path):
    d = load_config("gtx1080").to_json()
    old = {**d, "schema_version": 1, "lanes": {k: v for k, v in d["lanes"].items() if k != "fp64"},
           "ops": {k: v for k, v in d["ops"].items() if not k.startswith("FP64_")},
           "power": {**d["power"], "pj": {k: v for k, v in d["power"]["pj"].items() if k != "fp64"}}}
    cfg = config_from_json(old, "old.json")
    assert cfg.lanes["fp64"] == 32 and cfg.power["pj"]["fp64"] == 3.2
    for k in ("ALU", "MUL", "DIV", "SPECIAL"):
        assert cfg.ops[f"FP64_{k}"] == cfg.ops[f"FP_{k}"]  # the FP_X entry: unit fp (sfu), as before
    unit, lat, ivl = cfg.op_tables()
    assert (unit[Op.FP64_MUL], lat[Op.FP64_MUL], ivl[Op.FP64_MUL]) == (unit[Op.FP_MUL], lat[Op.FP_MUL], ivl[Op.FP_MUL])
    assert cfg.to_json()["schema_version"] == 3 and config_from_json(cfg.to_json()) == cfg
    with pytest.raises(ConfigError, match=r"new.json: field 'lanes' must map exactly int, fp, sfu, fp64 to lane "
                                          r"counts \(lacks fp64\)"):
        config_from_json({**old, "schema_version": 2}, "new.json")
    with pytest.raises(ConfigError, match=r"new.json: field 'ops' lacks operation class FP64_ALU"):
        config_from_json({**old, "schema_version": 2, "lanes": d["lanes"]}, "new.json")
    with pytest.raises(ConfigError, match=r"new.json: field 'power.pj' must map exactly .*fp64"):
        config_from_json({**d, "power": old["power"]}, "new.json")
    with pytest.raises(ConfigError, match=r"x.json: field 'lanes.fp64' must be a positive number, got 0"):
        config_from_json({**d, "lanes": {**d["lanes"], "fp64": 0}}, "x.json")
    with pytest.raises(ConfigError, match=r"x.json: field 'lanes.fp' must be an integer, got 0.5"):
        config_from_json({**d, "lanes": {**d["lanes"], "fp": 0.5}}, "x.json")
    with pytest.raises(ConfigError, match=r"x.json: schema_version 4 is not readable \(reads 1 to 3\)"):
        config_from_json({**d, "schema_version": 4}, "x.json")
