"""The terminal is rendered from the same ProfileReport as the JSON and the HTML page: a profile's terminal text
printed again from the report read back from its own JSON is the live run's, character for character."""

import contextlib
import io
import json
from pathlib import Path

from typer.testing import CliRunner

import portcast.pipeline.stage_report as pipeline
from portcast.cli import app
from portcast.commands._regions import print_profile
from portcast.profile_report import ProfileReport

ROOT = Path(__file__).resolve().parents[2]
SAXPY = ROOT / "examples" / "saxpy.py"


def test_a_saved_report_prints_the_live_runs_terminal_text(monkeypatch):
    made = []
    build = pipeline.build_report

    def keep(*args, **kwargs):
        made.append(build(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(pipeline, "build_report", keep)
    res = CliRunner().invoke(app, ["profile", "--function", f"{SAXPY}:saxpy", "--no-progress", "--baseline",
                                   "--baseline-budget", "0.05"])
    assert res.exit_code == 0, res.output
    (live,) = made
    back = ProfileReport.from_dict(json.loads(live.to_json()))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_profile(back, baseline=True)
    text = out.getvalue()
    assert text == res.stdout
    # the invocation number counts this process's earlier calls of saxpy (other tests' too)
    k = live.regions[0].invocation
    for shown in ("traced regions", f"baseline saxpy #{k}: uninstrumented", f"GPU-relevant features of saxpy #{k}",
                  f"GPU time of saxpy #{k} on", f"What bounds the GPU time of saxpy #{k}", "  model: "):
        assert shown in text, shown
