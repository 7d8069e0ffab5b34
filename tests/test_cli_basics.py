"""The `portcast` command itself: --version, help."""

from typer.testing import CliRunner

import portcast
from portcast.cli import app


def test_version_prints_the_package_version():
    res = CliRunner().invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output.strip() == portcast.__version__


def test_no_command_shows_help():
    res = CliRunner().invoke(app, [])
    assert "Usage" in res.output and "profile" in res.output
