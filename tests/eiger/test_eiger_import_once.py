"""`portcast eiger import` twice with the same source and options imports once (unless --append); a file that is
not a database gives one line."""

import pandas as pd
from typer.testing import CliRunner

from portcast.cli import app

runner = CliRunner()


def _trials(tmp_path):
    t = tmp_path / "t.csv"
    pd.DataFrame({"application": ["a", "a", "b"], "machine": ["m1", "m2", "m1"], "x": [1.0, 2.0, 3.0],
                  "time": [0.5, 0.25, 1.5]}).to_csv(t, index=False)
    return t


def test_the_same_import_twice_adds_nothing(tmp_path):
    t, db = _trials(tmp_path), tmp_path / "trials.db"
    args = ["eiger", "import", str(t), "--db", str(db), "--result", "time", "--application-col", "application",
            "--machine-col", "machine"]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "imported 3 trials" in first.output and "(3 trials in all)" in first.output
    second = runner.invoke(app, args)
    assert second.exit_code == 0, second.output
    out = " ".join(second.output.split())
    assert f"{t} was already imported into this database with the same options (3 trials," in out
    assert "nothing imported; --append imports it again" in out
    third = runner.invoke(app, [*args, "--append"])
    assert third.exit_code == 0 and "(6 trials in all)" in third.output
    # other options are another import
    fourth = runner.invoke(app, [*args[:-4], "--application", "one", "--machine-col", "machine"])
    assert fourth.exit_code == 0 and "imported 3 trials" in fourth.output


def test_a_file_that_is_not_a_database(tmp_path):
    bad = tmp_path / "notes.db"
    bad.write_text("these are my notes, not SQLite\n" * 100)
    res = runner.invoke(app, ["eiger", "import", str(_trials(tmp_path)), "--db", str(bad), "--result", "time"])
    assert res.exit_code == 2, res.output
    out = " ".join(res.output.split())
    assert "not a trials database (file is not a database)" in out and "Traceback" not in res.output
    assert bad.read_text().startswith("these are my notes")
