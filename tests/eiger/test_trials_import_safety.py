"""`portcast eiger import` is one transaction, as a user meets it: killed (kill -9) or interrupted (Ctrl-C) in
the middle it leaves no trials and the re-run imports exactly the file; three imports of one file at once
store it once; a full disk, a file-size limit, a read-only file, folder or file system, and a database that is
not a trials database each end in one line naming the file and the cause, with nothing written.

Every test runs the command in a subprocess (`python -m portcast`), the way a user runs it."""

import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sqlalchemy as sa

from predictor.eiger import db as edb
from predictor.eiger.db import TrialsDB
from predictor.eiger.trials_import import import_table, read_table

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
ENV.pop("PORTCAST_DB", None)
N_METRICS = 24  # wide rows: many bytes per trial, so a few thousand trials fill SQLite's page cache


def _csv(path: Path, n: int) -> Path:
    """A trials table of n rows: 7 applications on 3 machines, N_METRICS metrics and a result."""
    rng = np.random.default_rng(n)
    cols = {"application": [f"app{i % 7}" for i in range(n)], "machine": [f"gpu{i % 3}" for i in range(n)]}
    cols.update({f"m{k}": rng.uniform(1, 1000, n).round(6) for k in range(N_METRICS)})
    cols["time"] = rng.uniform(1, 2, n).round(6)
    pd.DataFrame(cols).to_csv(path, index=False)
    return path


def _args(csv: Path, db: Path | str, *more: str) -> list[str]:
    return [sys.executable, "-m", "portcast", "eiger", "import", str(csv), "--db", str(db), "--result", "time",
            "--application-col", "application", "--machine-col", "machine", *more]


def _run(args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=300, **kw)


def _trials(db: Path) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT count(*) FROM trials").fetchone()[0]


def _stop_mid_import(csv: Path, db: Path, sig: int) -> subprocess.CompletedProcess:
    """Start an import of csv and send it sig once it is writing trials: its write-ahead log has grown past
    what creating the schema writes (300 kB against 80 kB). Before the import was one transaction that
    meant committed batches of trials; now it means uncommitted pages the transaction spilled into the log
    once SQLite's 2 MB page cache was full, about half-way through it."""
    proc = subprocess.Popen(_args(csv, db), cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    wal = Path(f"{db}-wal")
    deadline = time.monotonic() + 240
    while proc.poll() is None and time.monotonic() < deadline:
        if wal.exists() and wal.stat().st_size > 300_000:
            proc.send_signal(sig)
            break
        time.sleep(0.01)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


N_BIG = 5000  # about 4 MB of trials


def test_kill_9_in_the_middle_leaves_no_trials_and_the_rerun_imports_exactly_the_file(tmp_path):
    csv, db = _csv(tmp_path / "big.csv", N_BIG), tmp_path / "trials.db"
    killed = _stop_mid_import(csv, db, signal.SIGKILL)
    assert killed.returncode == -signal.SIGKILL, (killed.stdout, killed.stderr)
    assert _trials(db) == 0
    again = _run(_args(csv, db))
    assert again.returncode == 0, again.stderr
    assert again.stdout == f"imported {N_BIG} trials into sqlite:///{db} ({N_BIG} trials in all)\n"
    assert _trials(db) == N_BIG


def test_ctrl_c_in_the_middle_says_nothing_was_imported_and_exits_130(tmp_path):
    csv, db = _csv(tmp_path / "big.csv", N_BIG), tmp_path / "trials.db"
    stopped = _stop_mid_import(csv, db, signal.SIGINT)
    assert stopped.returncode == 130, stopped.stderr
    assert stopped.stdout == ""
    assert stopped.stderr == f"interrupted: nothing was imported into {db}\n"
    assert _trials(db) == 0
    again = _run(_args(csv, db))
    assert again.returncode == 0, again.stderr
    assert _trials(db) == N_BIG


PG_URL = os.environ.get("PORTCAST_TEST_POSTGRES_URL")


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def db_url(request, tmp_path):
    """A new trials database: an SQLite file, or (PORTCAST_TEST_POSTGRES_URL) PostgreSQL without the trials
    tables."""
    if request.param == "sqlite":
        return str(tmp_path / "trials.db")
    if not PG_URL:
        pytest.skip("no PostgreSQL server: set PORTCAST_TEST_POSTGRES_URL (scripts/test starts one via "
                    "scripts/services when run as root with CI or PORTCAST_START_POSTGRES set)")
    engine = sa.create_engine(edb.normalize_url(PG_URL))
    with engine.begin() as conn:
        edb.metadata.drop_all(conn)
    engine.dispose()
    return PG_URL


def _count(url: str) -> int:
    engine = sa.create_engine(edb.normalize_url(url))
    with engine.connect() as conn:
        n = conn.execute(sa.select(sa.func.count()).select_from(edb.trials)).scalar_one()
    engine.dispose()
    return n


def test_three_imports_of_one_file_at_once_store_it_once(tmp_path, db_url):
    n = 3000
    csv = _csv(tmp_path / "t.csv", n)
    procs = [subprocess.Popen(_args(csv, db_url), cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(3)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [e for _, e in outs]
    imported = [o for o, _ in outs if o.startswith(f"imported {n} trials into ")
                and o.endswith(f" ({n} trials in all)\n")]
    already = [o for o, _ in outs if o.startswith(f"{csv} was already imported into this database with the same "
                                                  f"options ({n} trials, ")]
    assert len(imported) == 1 and len(already) == 2, outs
    assert all(o.endswith("): nothing imported; --append imports it again\n") for o in already)
    assert _count(db_url) == n


def test_a_file_size_limit_mid_import_leaves_nothing_and_says_so(tmp_path):
    n = 1500  # about 1 MB of trials; the limit lets the schema (80 kB) through, not the trials
    csv, db = _csv(tmp_path / "t.csv", n), tmp_path / "trials.db"

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (400_000, 400_000))

    res = _run(_args(csv, db), preexec_fn=limit)
    assert res.returncode == 2, res.stderr
    assert res.stderr == f"error: {db}: cannot write the trials database: disk I/O error; nothing was imported\n"
    assert _trials(db) == 0
    again = _run(_args(csv, db))
    assert again.returncode == 0 and _trials(db) == n


def _can_mount() -> bool:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
                           capture_output=True, timeout=30)
    return probe.returncode == 0


@pytest.mark.skipif(not _can_mount(), reason="needs root allowed to mount a tmpfs in a private mount namespace "
                                              "(unshare -m)")
def test_a_full_and_a_read_only_file_system(tmp_path):
    """A real full disk (a 400 kB tmpfs) and a real read-only file system, in a private mount namespace."""
    n = 1500
    csv, mnt = _csv(tmp_path / "t.csv", n), tmp_path / "mnt"
    mnt.mkdir()
    db = mnt / "trials.db"
    imp = " ".join(_args(csv, db))
    count = f"{sys.executable} -c \"import sqlite3; print('trials', sqlite3.connect('{db}').execute(" \
            "'SELECT count(*) FROM trials').fetchone()[0])\""
    script = "\n".join([
        f"mount -t tmpfs -o size=400k tmpfs {mnt} || exit 99",
        f"{imp}; echo rc=$?", count,
        f"mount -o remount,size=64m {mnt}",
        f"{imp} > /dev/null; echo rc=$?", count,
        f"mount -o remount,ro {mnt}",
        f"{imp} --append; echo rc=$?",
        f"{sys.executable} -m portcast eiger fit --db {db} --result time -o {tmp_path / 'm.json'} > /dev/null; "
        "echo rc=$?",
        f"ls {mnt}",
    ])
    res = _run(["unshare", "-m", "sh", "-c", script])
    assert res.returncode == 0, res.stderr
    assert res.stdout.split("\n") == ["rc=2", "trials 0", "rc=0", f"trials {n}", "rc=2", "rc=0", "trials.db", ""]
    assert res.stderr.split("\n") == [
        f"error: {db}: cannot write the trials database: database or disk is full; nothing was imported",
        f"error: {db}: cannot write the trials database: the file is on a read-only file system; nothing was "
        "imported", ""]


def test_a_read_only_file_or_folder_is_one_line_and_still_read(tmp_path):
    first, second = _csv(tmp_path / "a.csv", 40), _csv(tmp_path / "b.csv", 30)
    folder = tmp_path / "dbs"
    folder.mkdir()
    db = folder / "trials.db"
    with TrialsDB(str(db)) as tdb:
        import_table(tdb, read_table(first), ["time"], application_col="application", machine_col="machine")
    before = db.read_bytes()
    db.chmod(0o444)
    try:
        res = _run(_args(second, db))
        assert res.returncode == 2
        assert res.stderr == (f"error: {db}: cannot write the trials database: the file is read-only (mode 0444); "
                              "nothing was imported\n")
        fit = _run([sys.executable, "-m", "portcast", "eiger", "fit", "--db", str(db), "--result", "time",
                    "-o", str(tmp_path / "m.json")])
        assert fit.returncode == 0 and "on 40 trials; model written to" in fit.stdout, fit.stderr
        assert db.read_bytes() == before and sorted(p.name for p in folder.iterdir()) == ["trials.db"]
        db.chmod(0o644)
        folder.chmod(0o555)
        res = _run(_args(second, db))
        assert res.returncode == 2
        assert res.stderr == (f"error: {db}: cannot write the trials database: its folder {folder} is read-only "
                              "(mode 0555); nothing was imported\n")
        res = _run(_args(second, folder / "new.db"))
        assert res.returncode == 2
        assert res.stderr == (f"error: {folder / 'new.db'}: cannot create the trials database: its folder {folder} "
                              "is read-only (mode 0555)\n")
        assert db.read_bytes() == before and sorted(p.name for p in folder.iterdir()) == ["trials.db"]
    finally:
        folder.chmod(0o755)
        db.chmod(0o644)
    assert _trials(db) == 40


def test_a_database_that_is_not_a_trials_database_is_refused(tmp_path):
    csv, other = _csv(tmp_path / "t.csv", 20), tmp_path / "notes.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE notes (day TEXT, text TEXT)")
        conn.execute("CREATE TABLE people (name TEXT)")
        conn.execute("INSERT INTO notes VALUES ('monday', 'buy milk')")
    res = _run(_args(csv, other))
    assert res.returncode == 2
    assert res.stderr == (f"error: {other}: not a trials database: it has 2 tables (notes, people) but no Portcast "
                          "schema version (eiger_meta); nothing was added to it. Give a trials database, or a new "
                          "or empty file\n")
    with sqlite3.connect(other) as conn:
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master ORDER BY name")] == ["notes", "people"]
        assert conn.execute("SELECT * FROM notes").fetchall() == [("monday", "buy milk")]
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    res = _run(_args(csv, empty))
    assert res.returncode == 0 and res.stdout.startswith("imported 20 trials"), res.stderr
    assert _trials(empty) == 20
