"""The shipped characterised feature table of the corpus: complete, well-formed, and reproducible."""

import numpy as np
import pytest

import features
from kernels.registry import all_kernels
from portcast.calibration.characterization import KEY_COLUMNS, SHIPPED_TABLE, load_corpus_features
from profiler.session import trace_function


@pytest.fixture(scope="module")
def table():
    return load_corpus_features()


def test_every_kernel_at_every_shipped_size(table):
    sizes = table.attrs["portcast.features"]["extra"]["sizes"]
    assert set(sizes) >= {"tiny", "small"}
    kernels = all_kernels()
    assert set(table["kernel"]) == set(kernels)
    assert len(table) == len(kernels) * len(sizes)
    assert not table.duplicated(["kernel", "size"]).any()
    for _, r in table.iterrows():
        spec = kernels[r["kernel"]]
        assert r["n"] == spec.sizes[r["size"]] and r["category"] == spec.category


# the features only traces of schema 2 (with FP64 classes) give: a table traced before lacks them (docs/kernels.md)
SCHEMA_2_FEATURES = ("fp64", "mica_mix_FP64_ALU", "mica_mix_FP64_MUL", "mica_mix_FP64_DIV", "mica_mix_FP64_SPECIAL")


def test_columns_are_the_catalogue_and_values_are_finite(table):
    names = list(features.FEATURE_NAMES)
    if "fp64" not in table.columns:
        names = [n for n in names if n not in SCHEMA_2_FEATURES]
    assert list(table.columns) == list(KEY_COLUMNS) + names
    values = table[names].to_numpy(dtype=np.float64)
    assert np.isfinite(values).all()
    assert ((table["mem"] >= 0) & (table["mem"] <= 1)).all()


# features that do not depend on where the allocator put the arrays (mix, branch outcomes, threads)
ADDRESS_FREE = ["mem", "ctrl", "arith", "fp", "mul", "div", "rem", "spf", "Lbdiv_32", "Gbdiv_32", "warp_threads",
                "warp_bdiv", "warp_parallelFraction"]


@pytest.mark.parametrize("name", ["saxpy", "collatz_lengths", "spmv_csr"])
def test_a_row_is_reproduced_by_tracing_again(table, name):
    spec = all_kernels()[name]
    sink = features.FeatureSink()
    trace_function(spec.cpu, spec.make_inputs(spec.sizes["tiny"], table.attrs["portcast.features"]["seed"]),
                   region=name, sinks=[sink], mode="interpreted")
    got = sink.results[0][1]
    row = table[(table["kernel"] == name) & (table["size"] == "tiny")].iloc[0]
    for f in ADDRESS_FREE:
        assert got[f] == pytest.approx(row[f], rel=1e-12, abs=0), f


def test_shipped_file_is_package_data():
    assert SHIPPED_TABLE.is_file() and SHIPPED_TABLE.parent.name == "data"
