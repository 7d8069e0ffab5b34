"""Single-thread CPU times of the measured-kernel ports (kernels.measured.harness.cpu_times, `portcast measured
cpu-times`)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from kernels.measured.harness.cpu_times import (
    COLUMNS,
    CPU_TIMES_SCHEMA_VERSION,
    host_description,
    read_cpu_times,
    time_point,
    time_points,
    write_cpu_times,
)
from kernels.measured.registry import all_measured
from portcast.cli import app

PORT = "aiwc/kmeans/invert_mapping"  # a small region: compiles in about a second


@pytest.fixture(scope="module")
def timed() -> pd.DataFrame:
    """The port timed at its test point (one row)."""
    return time_points([all_measured()[PORT]], ["test"])


def test_time_point_row(timed):
    assert list(timed.columns) == list(COLUMNS)
    assert len(timed) == 1
    r = timed.iloc[0]
    assert (r.port, r.point, r.how) == (PORT, "test", "njit")
    assert r.cpu_s > 0 and r.cpu_median_s > 0 and r.warmup_s > 0
    assert r.cpu_s <= r.cpu_median_s
    assert r.repeats >= 3
    assert bool(r.same_result)
    assert r.schema_version == CPU_TIMES_SCHEMA_VERSION


def test_repeats_adapt_and_limit():
    spec = all_measured()[PORT]
    few = time_point(spec, "test", repeat=3, max_repeat=4, budget_s=0.0)
    assert few["repeats"] == 3  # budget spent: only the minimum
    capped = time_point(spec, "test", repeat=3, limit_s=0.0)
    assert capped["repeats"] == 1  # every further run would pass the limit
    with pytest.raises(ValueError, match="no point 'huge'"):
        time_point(spec, "huge")


def test_write_read_round_trip(timed, tmp_path):
    host = host_description()
    assert host["threads"] == 1 and host["logical_cores"] >= 1 and host["cpu_model"]
    csv, sidecar = write_cpu_times(timed, tmp_path / "cpu_times.csv", host, extra={"seed": 0})
    assert sidecar == tmp_path / "cpu_times.json"
    back = read_cpu_times(csv)
    pd.testing.assert_frame_equal(back, timed, check_exact=True)
    assert back.attrs["host"] == host
    assert back.attrs["sidecar"]["seed"] == 0


def test_round_trip_of_a_row_not_timed(timed, tmp_path):
    frame = pd.concat([timed, timed.assign(point="x", cpu_s=float("nan"), cpu_median_s=float("nan"), repeats=0,
                                           same_result=pd.array([pd.NA], dtype="boolean"),
                                           how="not timed: the region raised ValueError: x")], ignore_index=True)
    csv, _ = write_cpu_times(frame, tmp_path / "t.csv", host_description())
    pd.testing.assert_frame_equal(read_cpu_times(csv), frame, check_exact=True)
    assert json.loads((tmp_path / "t.json").read_text())["n_not_timed"] == 1


def test_read_errors_name_the_file(timed, tmp_path):
    csv, sidecar = write_cpu_times(timed, tmp_path / "c.csv", host_description())
    bad = tmp_path / "v.csv"
    timed.assign(schema_version=99).to_csv(bad, index=False)
    sidecar_text = sidecar.read_text()
    (tmp_path / "v.json").write_text(sidecar_text)
    with pytest.raises(ValueError, match=rf"{bad}: CPU times schema version 99"):
        read_cpu_times(bad)
    gone = tmp_path / "m.csv"
    timed.drop(columns=["cpu_median_s"]).to_csv(gone, index=False)
    with pytest.raises(ValueError, match=rf"{gone}: not a CPU times table \(missing column\(s\) cpu_median_s\)"):
        read_cpu_times(gone)
    meta = json.loads(sidecar_text)
    sidecar.write_text(json.dumps({**meta, "schema_version": 7}))
    with pytest.raises(ValueError, match=rf"{sidecar}: CPU times schema version 7"):
        read_cpu_times(csv)
    sidecar.unlink()
    with pytest.raises(FileNotFoundError, match=rf"{sidecar}: the sidecar"):
        read_cpu_times(csv)
    with pytest.raises(FileNotFoundError, match="nope.csv: no CPU times table"):
        read_cpu_times(tmp_path / "nope.csv")


def test_cli_writes_a_readable_table(tmp_path):
    out = tmp_path / "cpu.csv"
    res = CliRunner().invoke(app, ["measured", "cpu-times", "--port", PORT, "--max-global-work", "4096",
                                   "--out", str(out)])
    assert res.exit_code == 0, res.output
    table = read_cpu_times(out)
    assert list(table.point) == ["tiny", "small"]  # medium and large have more work items
    assert (table.how == "njit").all() and (table.cpu_s > 0).all()
    assert table.attrs["sidecar"]["command"].startswith("portcast measured cpu-times --port " + PORT)
    res = CliRunner().invoke(app, ["measured", "cpu-times", "--port", "nope", "--out", str(tmp_path / "new.csv")])
    assert res.exit_code == 2 and "unknown port(s) nope" in res.output
    res = CliRunner().invoke(app, ["measured", "cpu-times", "--port", PORT, "--out", str(tmp_path / "x.txt")])
    assert res.exit_code == 2 and "--out must be a .csv path" in res.output
