"""Presets of the GPUs with measured kernel times from issue 33 (HeCBench on an RTX 3080, BabelStream, KernelBench),
and the ``generation`` / ``release_year`` fields every preset has: published figures, the generation order, the
GENERATIONS mapping derived from the presets, older description files without the fields, a streaming run each."""

import json
import re
from pathlib import Path

import pytest

from gpu_models.simt import synthetic_kernels as sy
from gpu_models.simt.config import (
    GENERATION_ORDER,
    SCHEMA_VERSION,
    ConfigError,
    config_from_json,
    generations_up_to,
    load_config,
    preset_generations,
    preset_names,
)
from gpu_models.simt.model import simulate
from gpu_models.simt.threads import build_streams

DOC = Path(__file__).resolve().parents[2] / "docs" / "gpus.md"

# name: (generation, compute capability, SMs, FP32 cores per SM, core_mhz, boost MHz (in the description),
#        published DRAM GB/s, L2 bytes, warps / blocks per SM (the CUDA C Programming Guide's table),
#        FP64 results per SM per clock, host link GB/s) -- the vendor figures of docs/gpus.md (issue 33 section)
PUBLISHED = {
    "rtx3080": ("Ampere", "8.6", 68, 128, 1440.0, 1710, 760.0, 5 * 2**20, 48, 16, 2, 25.0),
    "rtx2080ti": ("Turing", "7.5", 68, 64, 1350.0, 1545, 616.0, 5632 * 1024, 32, 16, 2, 12.0),
    "v100": ("Volta", "7.0", 80, 64, 1312.0, 1530, 900.0, 6 * 2**20, 64, 32, 32, 12.0),
    "t4": ("Turing", "7.5", 40, 64, 585.0, 1590, 320.0, 4 * 2**20, 32, 16, 2, 12.0),
    "l4": ("Ada Lovelace", "8.9", 58, 128, 795.0, 2040, 300.0, 48 * 2**20, 48, 24, 2, 25.0),
    "a10g": ("Ampere", "8.6", 80, 128, 885.0, 1710, 600.0, 6 * 2**20, 48, 16, 2, 25.0),
    "l40s": ("Ada Lovelace", "8.9", 142, 128, 1110.0, 2520, 864.0, 96 * 2**20, 48, 24, 2, 25.0),
    "a100_80gb": ("Ampere", "8.0", 108, 64, 1275.0, 1410, 2039.0, 40 * 2**20, 64, 32, 32, 25.0),
    "h100_sxm": ("Hopper", "9.0", 132, 128, 1590.0, 1980, 3350.0, 50 * 2**20, 64, 32, 64, 50.0),
    # the datasheet rounds the H100 PCIe's bandwidth to 2 TB/s; 1593 MHz HBM2e gives 2039 GB/s (docs/gpus.md)
    "h100_pcie": ("Hopper", "9.0", 114, 128, 1125.0, 1755, 2039.0, 50 * 2**20, 64, 32, 64, 50.0),
    "b200": ("Blackwell", "10.0", 148, 128, 1965.0, 1965, 8000.0, 126 * 2**20, 64, 32, 64, 50.0),
    "k20x": ("Kepler", "3.5", 14, 192, 732.0, None, 250.0, 1536 * 1024, 64, 16, 64, 6.0),
}
#: the generation of each preset that existed before the field (the hand-written table it replaced)
OLD = {"gtx680": "Kepler", "gtxtitan": "Kepler", "k20": "Kepler", "k40": "Kepler", "quadro_k5200": "Kepler",
       "gtx970": "Maxwell", "gtx980": "Maxwell", "titanx": "Maxwell", "gtx1080": "Pascal", "gtx1080ti": "Pascal",
       "p100": "Pascal", "a100": "Ampere", "rtx4090": "Ada Lovelace", "h100": "Hopper", "gtx480": "Fermi"}


def test_every_preset_has_a_known_generation_and_a_release_year():
    assert set(preset_names()) == set(PUBLISHED) | set(OLD)
    for name in preset_names():
        cfg = load_config(name)
        assert cfg.generation in GENERATION_ORDER, name
        assert isinstance(cfg.release_year, int) and 2009 <= cfg.release_year <= 2025, name
        assert f"{cfg.generation.split()[0]}" in cfg.description or name == "h100", name
        assert json.loads((Path(__file__).resolve().parents[2] / "gpu_models" / "simt" / "presets"
                           / f"{name}.json").read_text())["schema_version"] == SCHEMA_VERSION == 3
    for name, gen in OLD.items():
        assert load_config(name).generation == gen, name


def test_generations_mapping_is_derived_from_the_presets():
    from predictor.gputime_inputs import GENERATIONS

    assert GENERATIONS == preset_generations()
    assert set(GENERATIONS) == set(preset_names())
    assert all(GENERATIONS[n] == g for n, g in OLD.items())
    assert {GENERATIONS[n] for n in PUBLISHED} == {"Kepler", "Volta", "Turing", "Ampere", "Ada Lovelace", "Hopper",
                                                   "Blackwell"}


def test_generation_order_is_oldest_first_and_the_older_side_of_a_split():
    assert GENERATION_ORDER == ("Fermi", "Kepler", "Maxwell", "Pascal", "Volta", "Turing", "Ampere", "Ada Lovelace",
                                "Hopper", "Blackwell")
    # release years never go down along the order (the generation's oldest preset)
    first = {g: min(load_config(n).release_year for n, gg in preset_generations().items() if gg == g)
             for g in GENERATION_ORDER}
    assert list(first.values()) == sorted(first.values())
    assert generations_up_to("Pascal") == ("Fermi", "Kepler", "Maxwell", "Pascal")
    assert generations_up_to("Blackwell") == GENERATION_ORDER
    with pytest.raises(ValueError, match="unknown GPU generation 'Rubin'"):
        generations_up_to("Rubin")


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_new_preset_matches_published_figures(name):
    gen, cc, sms, per_sm, core, boost, gbs, l2, warps, blocks, fp64, link = PUBLISHED[name]
    cfg = load_config(name)
    assert cfg.name == name and cfg.generation == gen
    assert (cfg.sm_count, cfg.core_mhz, cfg.l2_bytes) == (sms, core, l2)
    assert cfg.dram_bytes_per_ns() == pytest.approx(gbs, rel=0.005)
    lanes = cfg.schedulers_per_sm * cfg.lanes["fp"]
    assert lanes == (per_sm if gen != "Kepler" else per_sm * 2 // 3)  # Kepler: no dual issue (docs/gpus.md)
    assert (cfg.max_warps_per_sm, cfg.max_blocks_per_sm) == (warps, blocks)
    assert cfg.lanes["fp64"] * cfg.schedulers_per_sm == fp64
    assert cfg.link_gb_per_s == link
    d = cfg.description
    assert f"compute capability {cc}" in d and gen.split()[0] in d
    assert "Sources:" in d and "Estimates" in d and "docs/gpus.md" in d and "Host link" in d and "Clock:" in d
    if boost is not None:
        assert f"boost {boost} MHz" in d
    assert f"{sms} SMs x {per_sm} FP32 cores = {sms * per_sm}" in d


def test_kernelbench_presets_say_the_boost_clock_likely_ran_and_the_rtx3080_its_base():
    for name in ("t4", "l4", "a10g", "l40s", "a100_80gb", "h100_sxm", "h100_pcie", "b200"):
        assert "without clock locking" in load_config(name).description, name
    d = load_config("rtx3080").description
    assert "BASE clock" in d and "Nsight Compute" in d and "boost 1710 MHz" in d
    assert "V100-SXM2-16GB" in load_config("v100").description


def test_description_files_without_generation_still_load(tmp_path):
    d = load_config("gtx1080").to_json()
    assert d["schema_version"] == 3 and d["generation"] == "Pascal" and d["release_year"] == 2016
    v2 = {k: v for k, v in d.items() if k not in ("generation", "release_year")}
    p = tmp_path / "old.json"
    p.write_text(json.dumps({**v2, "schema_version": 2}))
    old = load_config(p)
    assert old.generation is None and old.release_year is None
    assert old.replace(generation="Pascal", release_year=2016) == load_config("gtx1080")
    assert config_from_json(v2, "no_version.json").generation is None  # no schema_version: the current one
    assert config_from_json({**v2, "schema_version": 3}).sm_count == 20  # both fields are optional in version 3
    v1 = {**v2, "schema_version": 1, "lanes": {k: v for k, v in d["lanes"].items() if k != "fp64"}}
    assert config_from_json(v1).generation is None


def test_bad_generation_or_year_names_the_file_and_the_field(tmp_path):
    d = load_config("t4").to_json()
    p = tmp_path / "bad.json"
    p.write_text(json.dumps({**d, "generation": "Lovelace"}))
    with pytest.raises(ConfigError, match=r"bad.json: field 'generation' must be one of Fermi, .*Blackwell, "
                                          r"got 'Lovelace'"):
        load_config(p)
    for year in (1999, 2018.5, "2018", True):
        with pytest.raises(ConfigError, match=r"x.json: field 'release_year' must be an integer year"):
            config_from_json({**d, "release_year": year}, "x.json")
    with pytest.raises(ConfigError, match=r"x.json: schema_version 4 is not readable \(reads 1 to 3\)"):
        config_from_json({**d, "schema_version": 4}, "x.json")


def test_doc_tables_have_every_new_preset():
    """docs/gpus.md: a key-number row for each new preset (SMs, clocks, bandwidth), a double-precision row, and the
    table from the data's GPU names to presets."""
    text = DOC.read_text()
    section = text[text.index("## GPUs of issue 33"):text.index("## Model choices")]
    rows = {}
    for line in section.splitlines():
        m = re.match(r"\|\s*`(\w+)`\s*\|", line)
        if m and m.group(1) in PUBLISHED and m.group(1) not in rows:
            rows[m.group(1)] = [c.strip() for c in line.strip().strip("|").split("|")]
    assert set(rows) == set(PUBLISHED)
    for name, cells in rows.items():
        _, _, sms, per_sm, core, boost, gbs, *_ = PUBLISHED[name]
        assert cells[2].startswith(f"{sms} x {per_sm} = {sms * per_sm}"), name
        assert f"{core:g}" in cells[3] and (boost is None or str(boost) in cells[3]), name
        exact = f"{load_config(name).dram_bytes_per_ns():g}"
        assert cells[4].startswith(f"{gbs:g}") or cells[4].startswith(exact), name
    fp64 = text[text.index("## Double precision"):text.index("## Caveats")]
    for name in PUBLISHED:
        assert f"| `{name}` |" in fp64, name
    mapping = text[text.index("### Data names"):]
    for data_name, preset in (("NVIDIA GeForce RTX 3080", "rtx3080"), ("K20X", "k20x"), ("V100", "v100"),
                              ("A100-80GB_modal", "a100_80gb"), ("H100_PCIe_LambdaLabs", "h100_pcie"),
                              ("B200_together", "b200"), ("L40S_matx3", "l40s"), ("T4_modal", "t4")):
        assert re.search(rf"{re.escape(data_name)}.*`{preset}`", mapping), data_name


@pytest.fixture(scope="module")
def streaming_times():
    """c[i] = a[i] * b[i] over 1,048,576 threads (8 MiB read, 4 MiB written) on each new preset, and at half its
    memory clock."""
    s = build_streams(sy.stream_kernel(1048576, flops=1), 256)
    out = {}
    for name in PUBLISHED:
        cfg = load_config(name)
        out[name] = (simulate(s, cfg, crisp=False), simulate(s, cfg, mem_mhz=cfg.mem_mhz / 2, crisp=False))
    return out


def test_streaming_kernel_on_each_new_preset_is_bound_by_dram(streaming_times):
    for name, (full, half) in streaming_times.items():
        peak = load_config(name).dram_bytes_per_ns()
        assert full.counters["read_bandwidth_gbs"] <= peak, name
        if name == "b200":
            # 8 TB/s with a 480 ns L2 + DRAM latency needs ~26 KB in flight per SM; 64 resident warps of one
            # element per thread carry 16 KB: latency-bound at about half the peak (docs/gpus.md)
            assert 0.35 * peak < full.counters["read_bandwidth_gbs"] and half.time_ns > 1.1 * full.time_ns
            continue
        assert 1.5 < half.time_ns / full.time_ns < 2.1, name
        assert 0.6 * peak < full.counters["read_bandwidth_gbs"], name


def test_streaming_time_orders_by_bandwidth_within_a_memory_type(streaming_times):
    t = {n: streaming_times[n][0].time_ns for n in PUBLISHED}
    assert t["b200"] < t["h100_sxm"] < t["a100_80gb"] < t["v100"]  # HBM: 8000, 3352, 2039, 899 GB/s
    # GDDR: 864, 760, 616 / 600, 320 / 300 GB/s. Boards within 7% of each other's bandwidth order by their L2
    # instead: the A10G's 6 MB against the RTX 2080 Ti's 5.5 MB, and the L4's 48 MB holds the 4 MiB written
    # (write-back), so only its reads reach the DRAM and it beats the T4
    assert t["l40s"] < t["rtx3080"] < min(t["rtx2080ti"], t["a10g"])
    assert max(t["rtx2080ti"], t["a10g"]) < min(t["t4"], t["l4"])
    assert t["l4"] < t["t4"] and streaming_times["l4"][0].counters["read_bandwidth_gbs"] > 0.95 * 300
