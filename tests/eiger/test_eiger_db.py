"""Eiger trials database on SQLite and (when PORTCAST_TEST_POSTGRES_URL is set) PostgreSQL."""

import multiprocessing as mp
import os

import numpy as np
import pandas as pd
import pytest
import sqlalchemy as sa

from predictor.eiger import db as edb
from predictor.eiger import trials_import as eimp
from predictor.eiger.db import DatabaseError, TrialsDB

PG_URL = os.environ.get("PORTCAST_TEST_POSTGRES_URL")
PG_SKIP = ("no PostgreSQL server: set PORTCAST_TEST_POSTGRES_URL (scripts/test starts one via scripts/services "
           "when run as root with CI or PORTCAST_START_POSTGRES set)")


def _fresh_postgres(url: str) -> str:
    engine = sa.create_engine(edb.normalize_url(url))
    with engine.begin() as conn:
        edb.metadata.drop_all(conn)
    engine.dispose()
    return url


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'trials.sqlite'}"
    if not PG_URL:
        pytest.skip(PG_SKIP)
    return _fresh_postgres(PG_URL)


def test_trials_round_trip(url):
    with TrialsDB(url) as db:
        db.add_machine("gpu-a", {"bandwidth": 320.0, "sms": 20}, description="test GPU")
        db.add_machine("gpu-b", {"bandwidth": 484.0, "sms": 28})
        db.define_metric("time", "result", units="us")
        t1 = db.add_trial("fft", "gpu-a", {"insts": 1000, "footprint": 64.5}, {"time": 12.5}, dataset="tiny",
                          kernel="fft1", properties={"run": 1})
        t2 = db.add_trial("fft", "gpu-b", {"insts": 1000, "footprint": 64.5}, {"time": 7.25}, dataset="tiny")
        t3 = db.add_trial("bfs", "gpu-a", {"insts": 50}, {"time": 3.0, "energy": 0.5})
        assert (t1, t2, t3) == (1, 2, 3) or t1 < t2 < t3
        assert db.count_trials() == 3
        assert db.names("applications") == ["bfs", "fft"]
        assert db.names("machines") == ["gpu-a", "gpu-b"]
        df = db.trials_frame()
        assert df["application"].tolist() == ["fft", "fft", "bfs"]
        assert df["machine"].tolist() == ["gpu-a", "gpu-b", "gpu-a"]
        assert df["dataset"].tolist()[:2] == ["tiny", "tiny"] and df["dataset"].isna().tolist()[2]
        assert df["kernel"].tolist()[0] == "fft1"
        assert df["properties"].tolist()[0] == '{"run": 1}'
        assert df["insts"].tolist() == [1000.0, 1000.0, 50.0]
        assert df["footprint"].tolist()[:2] == [64.5, 64.5] and np.isnan(df["footprint"].iloc[2])
        assert df["time"].tolist() == [12.5, 7.25, 3.0]
        assert df["energy"].isna().tolist() == [True, True, False]
        assert df["bandwidth"].tolist() == [320.0, 484.0, 320.0]
        assert df["sms"].tolist() == [20.0, 28.0, 20.0]
        assert df.attrs["metric_kinds"] == {"insts": "application", "footprint": "application", "time": "result",
                                            "energy": "result", "bandwidth": "machine", "sms": "machine"}
        # machine vector update replaces values
        db.add_machine("gpu-a", {"bandwidth": 300.0})
        assert db.machines_frame().loc["gpu-a", "bandwidth"] == 300.0
        assert db.machines_frame().loc["gpu-a", "sms"] == 20.0
        # a metric keeps its kind
        with pytest.raises(DatabaseError, match="'time' is already defined as a result metric"):
            db.add_trial("fft", "gpu-a", {"time": 1.0}, {"other": 1.0})
        with pytest.raises(DatabaseError, match="trial 0: a trial needs at least one result"):
            db.add_trial("fft", "gpu-a", {"insts": 1.0}, {})
        with pytest.raises(DatabaseError, match="non-finite value"):
            db.add_trial("fft", "gpu-a", {"insts": float("nan")}, {"time": 1.0})
        with pytest.raises(DatabaseError, match="application must be a non-empty string"):
            db.add_trial("", "gpu-a", {}, {"time": 1.0})
        assert db.count_trials() == 3  # failed inserts left nothing behind


def _worker(url: str, proc: int, n: int) -> None:
    db = TrialsDB(url)
    for i in range(n):
        # shared names (applications, machines, metrics) are created concurrently by every process
        db.add_trial(f"app{i % 3}", f"machine{i % 2}", {"m_shared": float(i), f"m_proc{proc}": float(proc)},
                     {"time": proc * 1000.0 + i}, dataset=f"size{i % 2}", kernel=f"k{proc}")
    db.close()


def test_concurrent_inserts_lose_nothing(url):
    # no schema yet: the processes also race to create it
    procs, n = 4, 25
    ctx = mp.get_context("fork")
    workers = [ctx.Process(target=_worker, args=(url, p, n)) for p in range(procs)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(180)
    assert [w.exitcode for w in workers] == [0] * procs
    with TrialsDB(url) as db:
        assert db.count_trials() == procs * n
        df = db.trials_frame()
        assert sorted(df["time"].tolist()) == sorted(p * 1000.0 + i for p in range(procs) for i in range(n))
        assert db.names("applications") == ["app0", "app1", "app2"]
        assert db.names("machines") == ["machine0", "machine1"]
        assert df["m_shared"].notna().all()
        for p in range(procs):
            assert (df[f"m_proc{p}"] == p).sum() == n
        with db.engine.connect() as conn:
            assert conn.execute(sa.select(sa.func.count()).select_from(edb.datasets)).scalar_one() == 6


def test_import_csv_parquet_and_feature_table(url, tmp_path):
    df = pd.DataFrame({"app": ["a", "a", "b"], "gpu": ["g1", "g2", "g1"], "size": ["s", "l", "s"],
                       "insts": [10, 20, 30], "ratio": [0.5, 0.25, 1.0], "time": [1.5, 2.5, 3.5]})
    csv = tmp_path / "t.csv"
    df.to_csv(csv, index=False)
    pq = tmp_path / "t.parquet"
    df.to_parquet(pq)
    with TrialsDB(url) as db:
        n = eimp.import_table(db, eimp.read_table(csv), ["time"], application_col="app", machine_col="gpu",
                             dataset_col="size")
        assert n == 3
        n = eimp.import_table(db, eimp.read_table(pq), ["time"], application_col="app", machine="g9",
                             metric_cols=["insts"])
        assert n == 3
        feats = pd.DataFrame({"region": ["saxpy", "matmul"], "ilp": [2.0, 3.5], "gpu_time": [0.1, 0.9]})
        assert eimp.import_feature_table(db, feats, machine="h100", result_cols=["gpu_time"]) == 2
        out = db.trials_frame(machine_metrics_too=False)
        assert out["application"].tolist() == ["a", "a", "b", "a", "a", "b", "saxpy", "matmul"]
        assert out["machine"].tolist() == ["g1", "g2", "g1", "g9", "g9", "g9", "h100", "h100"]
        assert out["insts"].tolist()[:6] == [10.0, 20.0, 30.0, 10.0, 20.0, 30.0]
        assert out["ratio"].tolist()[:3] == [0.5, 0.25, 1.0] and out["ratio"].iloc[3:].isna().all()
        assert out["time"].tolist()[:6] == [1.5, 2.5, 3.5, 1.5, 2.5, 3.5]
        assert out["ilp"].tolist()[-2:] == [2.0, 3.5]
        assert out["gpu_time"].tolist()[-2:] == [0.1, 0.9]


def test_import_errors_name_file_line_and_field(tmp_path):
    csv = tmp_path / "bad.csv"
    csv.write_text("app,gpu,insts,time\na,g,1,2.0\na,g,x7,3.0\n")
    df = eimp.read_table(csv)
    with pytest.raises(DatabaseError, match=r"bad.csv: line 3: field 'insts' is not a finite number: 'x7'"):
        eimp.frame_to_records(df, ["time"], application_col="app", machine_col="gpu")
    with pytest.raises(DatabaseError, match=r"bad.csv: no column 'runtime'"):
        eimp.frame_to_records(df, ["runtime"], application_col="app", machine_col="gpu")
    with pytest.raises(DatabaseError, match="either a machine column or one machine name"):
        eimp.frame_to_records(df, ["time"], application_col="app")
    csv.write_text("app,gpu,insts,time\na,,1,2.0\n")
    with pytest.raises(DatabaseError, match=r"bad.csv: line 2: field 'gpu' is empty"):
        eimp.frame_to_records(eimp.read_table(csv), ["time"], application_col="app", machine_col="gpu")
    (tmp_path / "t.txt").write_text("x\n")
    with pytest.raises(DatabaseError, match="t.txt: unknown table format"):
        eimp.read_table(tmp_path / "t.txt")
    with pytest.raises(FileNotFoundError, match="no such file"):
        eimp.read_table(tmp_path / "nope.csv")


def test_default_location_and_urls(monkeypatch, tmp_path):
    monkeypatch.delenv("PORTCAST_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    if os.name == "posix" and not os.uname().sysname == "Darwin":
        assert edb.default_url() == f"sqlite:///{tmp_path / 'xdg' / 'portcast' / 'eiger.sqlite'}"
    monkeypatch.setenv("PORTCAST_DB", str(tmp_path / "mine.sqlite"))
    assert edb.default_url() == f"sqlite:///{tmp_path / 'mine.sqlite'}"
    monkeypatch.setenv("PORTCAST_DB", "postgresql://u@h:5/d")
    assert edb.default_url() == "postgresql+psycopg2://u@h:5/d"
    with TrialsDB(str(tmp_path / "sub" / "x.sqlite")) as db:  # a plain path; parent folder created
        assert db.count_trials() == 0
    with pytest.raises(DatabaseError, match="unsupported database 'mysql'"):
        TrialsDB("mysql://u@h/d")
