"""Benchmarks measure only with ``--benchmark-enable`` (pyproject's addopts disable pytest-benchmark so the
test suite runs fast). Without it they are skipped with that message, instead of failing where a benchmark
reads statistics that a disabled run does not collect."""

import pytest


def pytest_collection_modifyitems(config, items):
    if config.getoption("benchmark_enable", False) or not config.getoption("benchmark_disable", False):
        return
    skip = pytest.mark.skip(reason="benchmarks measure only with --benchmark-enable")
    for item in items:
        item.add_marker(skip)
