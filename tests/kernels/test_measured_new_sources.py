"""The measured times and counts of the sources added for current GPUs (HeCBench on an RTX 3080, BabelStream,
KernelBench), read from the vendored files, and every port of those sources against its data: the HeCBench
ports' threads and block equal the first launch's grid x block, their point label is the program's arguments;
every BabelStream and KernelBench port has measured times at each of its points."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest

from gpu_models.simt.config import preset_names
from kernels.measured.harness.faithfulness import faithfulness
from kernels.measured.harness.sources import (
    BABELSTREAM_GPUS,
    DATA_GPUS,
    KERNELBENCH_GPUS,
    babelstream_results,
    hecbench_first_launches,
    kernelbench_times,
    measured_times,
)
from kernels.measured.registry import all_measured

PORTS = all_measured()
HECBENCH = sorted(n for n, s in PORTS.items() if s.source == "hecbench")
OTHERS = sorted(n for n, s in PORTS.items() if s.source in ("babelstream", "kernelbench"))


@functools.lru_cache(maxsize=None)
def _hecbench() -> pd.DataFrame:
    return hecbench_first_launches()


def test_hecbench_first_launch_of_haccmk_as_measured():
    h = _hecbench().set_index(["application", "kernel"])
    r = h.loc[("haccmk", "haccmk_kernel")]
    # first of its two rows: xtime 2990880 ns, grid (4, 1, 1) x block (256, 1, 1)
    assert r.measured_s == pytest.approx(2990880e-9, rel=1e-12)
    assert (r.threads, r.block, r.point, r.gpu) == (1024, 256, "1000", "NVIDIA GeForce RTX 3080")
    assert r.fp32_ops == pytest.approx(133681937309.193 * 2990880e-9, rel=1e-9)
    assert r.dram_bytes == pytest.approx(71855774.89 * 2990880e-9, rel=1e-9)
    assert r.int_ops == 105854832.0 and r.fp64_ops == 0.0


def test_hecbench_rows_are_the_cuda_programs_first_launches_only():
    h = _hecbench()
    assert not h.duplicated(["application", "kernel"]).any()
    assert len(h) == 971
    assert not h.application.str.endswith("-omp").any()


def test_babelstream_time_from_the_bandwidth_column():
    b = babelstream_results()
    a100 = b[(b.file == "2020_babelstream_results_BabelStream-a100_cuda.out") & (b.point == "2^25")]
    copy = a100[a100.kernel == "copy"].iloc[0]
    assert copy.elements == 1 << 25
    assert copy.measured_s == pytest.approx(16 * 2**25 / 1386507.387e6, rel=1e-12)
    dot = a100[a100.kernel == "dot"].iloc[0]
    assert dot.measured_s == pytest.approx(16 * 2**25 / 1257291.261e6, rel=1e-12)
    assert set(b.gpu) == set(BABELSTREAM_GPUS)
    # the large-array runs that failed ("not enough memory") give no rows
    assert set(b[b.gpu == "GeForce RTX 2080 Ti"].point) == {"2^25"}


def test_kernelbench_times_per_file_and_the_left_out_problem():
    k = kernelbench_times()
    r = k[(k.gpu == "before_2025-07/L40S_matx3") & (k.application == "23_Softmax")].iloc[0]
    assert r.measured_s == pytest.approx(0.0116e-3) and r.min_s == pytest.approx(0.0104e-3)
    assert set(k.gpu) == set(KERNELBENCH_GPUS)
    pcie = k[k.gpu == "2026/H100_PCIe_LambdaLabs"]
    assert "92_cumsum_exclusive" not in set(pcie.application) and len(pcie) == 99


def test_every_data_gpu_has_a_preset():
    names = set(preset_names())
    missing = {(src, g, p) for src, m in DATA_GPUS.items() for g, p in m.items() if p not in names}
    assert not missing


@pytest.mark.parametrize("name", HECBENCH)
def test_hecbench_port_matches_its_first_launch(name):
    spec = PORTS[name]
    h = _hecbench().set_index(["application", "kernel"])
    assert (spec.application, spec.kernel) in h.index, "no such HeCBench kernel in the data"
    r = h.loc[(spec.application, spec.kernel)]
    assert list(spec.points) == [r.point]
    assert spec.work(spec.points[r.point]) == (r.threads, r.block)


@pytest.mark.parametrize("name", OTHERS)
def test_port_has_measured_times_at_every_point(name):
    spec = PORTS[name]
    t = measured_times({name: spec})
    assert set(t.point) == set(spec.points)
    assert (t.measured_s > 0).all() and np.isfinite(t.measured_s).all()


def test_measured_times_of_each_new_source_pair_with_their_presets():
    specs = {n: s for n, s in PORTS.items() if s.source in ("hecbench", "babelstream", "kernelbench")}
    if not specs:
        pytest.skip("no ports of the new sources")
    t = measured_times(specs)
    for source in {s.source for s in specs.values()}:
        mine = t[t.port.map(lambda p: specs[p].source) == source]
        assert set(mine.preset) <= set(DATA_GPUS[source].values())


def test_faithfulness_of_a_hecbench_row_divides_by_the_measured_counts():
    h = _hecbench().set_index(["application", "kernel"])
    r = h.loc[("haccmk", "haccmk_kernel")]

    class Spec:
        points = {"1000": {}}

    row = {"port": "hecbench/haccmk/haccmk_kernel", "source": "hecbench", "application": "haccmk",
           "kernel": "haccmk_kernel", "point": "1000", "global_work": 1024, "threads": 1024, "records": 10,
           "sector_bytes": 2 * r.dram_bytes, "thread_fp": r.fp32_ops + 5, "thread_fp64": 5,
           "thread_int": r.int_ops / 4}
    f = faithfulness(pd.DataFrame([row]), {"hecbench/haccmk/haccmk_kernel": Spec()})
    got = f.iloc[0]
    assert got.data_threads == 1024
    assert got.dram_ratio == pytest.approx(2.0) and got.fp32_ratio == pytest.approx(1.0)
    assert np.isnan(got.fp64_ratio)  # five FP64 records where the data counts none
    assert got.int_ratio == pytest.approx(0.25)


def test_feature_points_are_traced_but_never_timed():
    from kernels.measured.harness.cpu_times import selected
    from kernels.measured.harness.points import selected_points
    from kernels.measured.spec import FEATURES_LABEL

    spec = PORTS["babelstream/babelstream/copy"]
    assert spec.params(FEATURES_LABEL) == spec.feature_point and spec.params("2^25") == spec.points["2^25"]
    assert [lab for _, lab in selected_points([spec])] == ["2^25", FEATURES_LABEL]
    assert [lab for _, lab in selected([spec])] == ["2^25"]
    with pytest.raises(KeyError, match="no point 'large'"):
        spec.params("large")


def test_launches_is_for_separate_launches_only():
    import dataclasses

    spec = PORTS["kernelbench/91_cumsum_reverse/forward"]
    assert spec.separate_launches and spec.launches == 3
    with pytest.raises(ValueError, match="launches=3 is for separate launches"):
        dataclasses.replace(spec, separate_launches=False)
    with pytest.raises(ValueError, match="'features' and 'test' are reserved labels"):
        dataclasses.replace(spec, points={"features": {}})
