"""Dataset format, validation messages, files, and the vendored Titan X loader."""

import numpy as np
import pandas as pd
import pytest

from gpu_models.scaling.dataset import DatasetError, Grid, ScalingDataset, load_titanx, read_dataset, validate_frame


def _frame():
    rows = []
    for k, base in (("a", 10.0), ("b", 4.0)):
        for s in (4, 8):
            for c in (500.0, 1000.0):
                for m in (800.0,):
                    rows.append({"kernel": k, "sm_count": s, "core_mhz": c, "mem_mhz": m,
                                 "time": base * 4 / s * 500 / c, "power": 50.0 + s, "ctr_x": 0.5})
    return pd.DataFrame(rows)


def test_valid_frame_is_canonicalised():
    f = validate_frame(_frame())
    assert list(f.columns) == ["kernel", "sm_count", "core_mhz", "mem_mhz", "time", "power", "ctr_x"]
    assert f["sm_count"].dtype == np.int64
    ds = ScalingDataset(_frame())
    assert ds.kernels == ["a", "b"]
    assert ds.counter_columns == ["ctr_x"]
    assert ds.grid() == Grid((4, 8), (500.0, 1000.0), (800.0,))


def test_cube_layout():
    cube = ScalingDataset(_frame()).cube("time")
    assert cube.shape == (2, 2, 2, 1)
    # kernel a, 8 SMs, 500 MHz: 10 * 4/8 * 500/500 = 5
    assert cube[0, 1, 0, 0] == 5.0
    assert cube[1, 0, 1, 0] == 2.0  # b, 4 SMs, 1000 MHz: 4 * 1 * 0.5


@pytest.mark.parametrize("col,value,what", [
    ("time", -1.0, "a positive finite number"),
    ("time", "abc", "a positive finite number"),
    ("power", np.nan, "a positive finite number"),
    ("sm_count", 2.5, "a positive integer"),
    ("sm_count", 0, "a positive integer"),
    ("ctr_x", "zz", "a finite number"),
])
def test_bad_value_names_row_and_column(col, value, what):
    f = _frame().astype({col: object})
    f.loc[3, col] = value
    with pytest.raises(DatasetError) as exc:
        validate_frame(f, "x.csv", csv=True)
    msg = str(exc.value)
    assert f"x.csv: row 3 (line 5), column {col!r}: expected {what}" in msg


def test_missing_column_and_empty_kernel_and_duplicates():
    with pytest.raises(DatasetError, match="missing column\\(s\\) 'power'"):
        validate_frame(_frame().drop(columns="power"))
    f = _frame()
    f.loc[2, "kernel"] = " "
    with pytest.raises(DatasetError, match="row 2, column 'kernel': expected a non-empty name"):
        validate_frame(f)
    f = pd.concat([_frame(), _frame().iloc[[5]]], ignore_index=True)
    with pytest.raises(DatasetError, match=r"row 8, columns kernel/sm_count/core_mhz/mem_mhz: configuration \(b, 4, "
                                           r"1000, 800\)"):
        validate_frame(f)


def test_incomplete_grid_names_kernel_and_configuration():
    f = _frame().drop(index=6).reset_index(drop=True)  # b, 8 SMs, 500 MHz
    with pytest.raises(DatasetError, match="kernel 'b' has no row for configuration sm_count=8, core_mhz=500, "
                                           "mem_mhz=800"):
        ScalingDataset(f).cube()


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_file_round_trip(tmp_path, suffix):
    ds = ScalingDataset(_frame())
    path = ds.write(tmp_path / f"d{suffix}")
    back = read_dataset(path)
    pd.testing.assert_frame_equal(back.frame, ds.frame)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp files left


def test_csv_errors_report_file_and_line(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("kernel,sm_count,core_mhz,mem_mhz,time,power\nk,4,500,800,1.0,3\nk,4,600,800,oops,3\n")
    with pytest.raises(DatasetError, match=r"bad.csv: row 1 \(line 3\), column 'time': expected a positive finite "
                                           r"number, got 'oops'"):
        read_dataset(p)
    with pytest.raises(DatasetError, match="unsupported suffix"):
        read_dataset(tmp_path / "x.txt" if (tmp_path / "x.txt").write_text("") == 0 else p)
    with pytest.raises(FileNotFoundError):
        read_dataset(tmp_path / "none.csv")


def test_newer_parquet_schema_rejected(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pa.Table.from_pandas(_frame(), preserve_index=False)
    t = t.replace_schema_metadata({b"portcast.schema": b"portcast.scaling_dataset/99"})
    pq.write_table(t, tmp_path / "n.parquet")
    with pytest.raises(DatasetError, match="not readable by this version"):
        read_dataset(tmp_path / "n.parquet")


def test_grid_index_off_grid_message():
    g = Grid((24,), (595.0, 975.0), (810.0, 3505.0))
    assert g.index(24, 975, 810) == (0, 1, 0)
    with pytest.raises(DatasetError, match="core_mhz=970 is not on the grid; known values: 595, 975"):
        g.index(24, 970, 810)


def test_titanx_loader_values():
    ds = load_titanx()
    groups = ds.groups()
    assert len(ds.kernels) == 165
    assert sum(g == "micro" for g in groups.values()) == 140
    assert sum(g == "real" for g in groups.values()) == 25
    g = ds.grid()
    assert g.sm_counts == (24,)
    assert len(g.core_mhz) == 16 and g.core_mhz[0] == 595.0 and g.core_mhz[-1] == 1164.0
    assert g.mem_mhz == (810.0, 3505.0)
    f = ds.frame.set_index(["kernel", "core_mhz", "mem_mhz"])
    assert f.loc[("DP", 595.0, 810.0), "time"] == 36.479786        # first line of micro_long.csv
    assert f.loc[("DP", 595.0, 810.0), "power"] == 48.350079
    # the two 'stencil2d' blocks of real_long.csv: the first is taken as stencil2d_double
    assert f.loc[("stencil2d_double", 595.0, 810.0), "time"] == 8.889989
    assert f.loc[("stencil2d", 595.0, 810.0), "time"] == 11.158553
    # fingerprints: 2mm has two kernels with 4096 fma and 8196 ld each; DP one kernel with 4087 fma
    fp = ds.frame.drop_duplicates("kernel").set_index("kernel")
    assert fp.loc["2mm", "ptx_fma"] == 8192 and fp.loc["2mm", "ptx_ld"] == 16392
    assert fp.loc["DP", "ptx_fma"] == 4087
    assert len([c for c in ds.counter_columns if c.startswith("ptx_")]) == 101
    assert ds.cube("time").shape == (165, 1, 16, 2)
