"""The code passes ruff with the project's configuration (pyproject.toml [tool.ruff]): the rules check
themselves in every test run, CI's included."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff():
    exe = Path(sys.executable).with_name("ruff")
    if exe.is_file():
        return str(exe)
    found = shutil.which("ruff")
    if found is None:
        pytest.skip("ruff is not installed (it comes with the test extras: pip install -e '.[test]')")
    return found


def test_ruff_is_clean():
    res = subprocess.run([_ruff(), "check", "--no-cache", "--output-format", "concise", "."], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
