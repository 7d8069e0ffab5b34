"""The whole program of a script (portcast/program_view.py, ``portcast program``): a script built so that its
host code, its regions' arrays and what they return are known, run end to end: the segments, the copies each
plan needs (checked against the bytes the arrays hold), the host code on the critical path, the report's JSON
round trip and the command's text."""

import json
import textwrap

import pytest
from typer.testing import CliRunner

from portcast.cli import app
from portcast.program_view import ProgramReport, profile_program

#: the two regions both scripts run: a scale that writes all of b, and a sum of b returned to the host
REGIONS = textwrap.dedent('''
    import time
    import numpy as np
    import portcast

    @portcast.region("scale")
    def scale(a, b):
        for i in portcast.parallel(range(a.shape[0])):
            b[i] = 2.0 * a[i]

    @portcast.region("total")
    def total(b):
        s = 0.0
        for i in range(b.shape[0]):
            s += b[i]
        return s
''')

SCRIPT = REGIONS + textwrap.dedent('''

    a = np.ones(1000)
    b = np.empty(1000)
    time.sleep(0.2)
    for k in range(3):
        scale(a, b)
        s = total(b)
    time.sleep(0.1)
    print("done", s)
''')


@pytest.fixture(scope="module")
def script(tmp_path_factory):
    p = tmp_path_factory.mktemp("program") / "chain.py"
    p.write_text(SCRIPT)
    return p


@pytest.mark.parametrize("ports, h2d, d2h", [
    # a in once (scale writes all of b: nothing to copy in); the sums back; b back at the end
    (["scale", "total"], 8000, 8000 + 3 * 8),
    # a in once; b back for every sum on the host (and scale, writing all of b, needs nothing in)
    (["scale"], 8000, 3 * 8000),
    # scale writes b on the host every step, so b goes in for every sum; the sums come back
    (["total"], 3 * 8000, 3 * 8),
    ([], 0, 0),
])
def test_each_plan_copies_exactly_the_arrays_that_cross(script, ports, h2d, d2h):
    rep = profile_program(script, gpu="h100", ports=ports, mode="interpreted", sample="exact")
    steps = rep.schedule["steps"]
    assert [s["name"] for s in steps if s["lane"] != "link"] == [
        "host 0", "scale #0", "host 1", "total #0", "host 2", "scale #1", "host 3", "total #1", "host 4",
        "scale #2", "host 5", "total #2", "host 6"]
    assert (rep.schedule["h2d_bytes"], rep.schedule["d2h_bytes"]) == (h2d, d2h)
    assert rep.plan == sorted(ports)
    # the sleeps are host code, on every plan's critical path
    assert rep.schedule["critical_s"]["host"] >= 0.3
    assert rep.total_s >= 0.3 and rep.cpu_total_s >= 0.3
    assert [(r["region"], r["invocations"], r["predicted"]) for r in rep.regions] == [
        ("scale", 3, True), ("total", 3, True)]
    if not ports:
        assert rep.total_s == pytest.approx(rep.cpu_total_s) and rep.speedup == pytest.approx(1.0)
        assert set(rep.gains) == {"scale", "total"}


def test_the_report_reads_back_from_its_json_and_refuses_another_document(script):
    rep = profile_program(script, gpu="h100", ports=["scale"], compare=["a100", "h100"], mode="interpreted",
                          sample="exact")
    assert [c["gpu"] for c in rep.configurations] == ["a100"]
    back = ProgramReport.from_dict(json.loads(rep.to_json()))
    assert back == rep and back.to_html() == rep.to_html()
    assert [(r["name"], r["invocation"]) for r in rep.profile["regions"]] == [
        ("scale", 0), ("total", 0), ("scale", 1), ("total", 1), ("scale", 2), ("total", 2)]
    with pytest.raises(ValueError, match="not a Portcast whole-program report"):
        ProgramReport.from_dict({"format": "portcast.profile-report"})
    d = rep.to_dict()
    d["profile"]["regions"] = {}
    with pytest.raises(ValueError, match=r"x.json: profile: field 'regions' must be a list"):
        ProgramReport.from_dict(d, "x.json")
    d = rep.to_dict()
    del d["schedule"]
    with pytest.raises(ValueError, match="x.json: field 'schedule' is missing"):
        ProgramReport.from_dict(d, "x.json")


def test_the_command_prints_the_plan_and_writes_the_timeline_and_the_page(script, tmp_path):
    out, page = tmp_path / "t.png", tmp_path / "r.html"
    res = CliRunner().invoke(app, ["program", str(script), "--port", "scale", "--port", "total", "--gpu", "h100",
                                   "--mode", "interpreted", "--sample", "exact", "--timeline", str(out),
                                   "--report", str(page)])
    assert res.exit_code == 0, res.output
    assert "on the GPU: scale, total" in res.output
    assert "copies 8 kB in, 8.02 kB out" in res.output
    assert out.read_bytes()[:4] == b"\x89PNG"
    html = page.read_text()
    # the program's section with its timeline, then the traced run's profile of each region's first invocation
    assert "<h1>Whole program: <code>" in html and "copies 8 kB in, 8.02 kB out" in html
    assert html.index("Whole program") < html.index("<svg") < html.index("Portcast profile of")
    assert 'href="#region-scale-0"' in html and 'href="#region-scale-1"' not in html
    res = CliRunner().invoke(app, ["program", str(script), "--port", "nope", "--mode", "interpreted"])
    assert res.exit_code != 0
    assert "the plan names region 'nope', which the run does not have (regions: scale, total)" in res.output


OVERLAP = REGIONS + textwrap.dedent('''

    a = np.ones(1000)
    b = np.empty(1000)
    c = np.zeros(10)
    time.sleep(0.2)
    scale(a, b)
    time.sleep(0.1)      # host code beside the kernel: it touches neither a nor b
    c[0] = 1.0
    s = total(b)
    time.sleep(0.05)
''')


def test_host_code_beside_a_kernel_takes_the_critical_path_as_built(tmp_path):
    """The kernel and its copy run while the host sleeps 0.1 s, so the critical path is the host code, the
    launch it holds back, the sum's copy back, the last host code and the results' copy back: exactly."""
    p = tmp_path / "overlap.py"
    p.write_text(OVERLAP)
    rep = profile_program(p, gpu="h100", ports=["scale", "total"], mode="interpreted", sample="exact")
    steps = rep.schedule["steps"]
    assert [s["name"] for s in steps] == ["host 0", "h2d a", "scale #0", "host 1", "total #0",
                                          "d2h total #0 result", "host 2", "d2h b"]
    assert [s["name"] for s in steps if s["critical"]] == ["host 0", "host 1", "total #0", "d2h total #0 result",
                                                           "host 2", "d2h b"]
    by = {s["name"]: s for s in steps}
    assert by["scale #0"]["end_s"] < by["host 1"]["end_s"]  # the kernel is done before the host code beside it
    assert by["total #0"]["start_s"] == by["host 1"]["end_s"]  # its launch waits for the host code issued before
    assert rep.schedule["critical_s"]["host"] >= 0.35


def test_the_plan_across_a_scaling_models_configurations(script, tmp_path):
    model = tmp_path / "titanx.json"
    res = CliRunner().invoke(app, ["scale", "train", "titanx", "-o", str(model), "--base", "24,975,3505",
                                   "--clusters", "4"])
    assert res.exit_code == 0, res.output
    rep = profile_program(script, gpu="h100", ports=["scale", "total"], mode="interpreted", sample="exact",
                          surface=model)
    sf = rep.surface
    assert len(sf["grid"]) == len(sf["total_s"]) == 32 and sf["base"] == [24, 975.0, 3505.0]
    # at the model's base every region keeps its predicted time: the plan's own total
    assert sf["total_s"][sf["grid"].index(sf["base"])] == pytest.approx(rep.total_s, rel=1e-12)
    assert sf["speedup"] == pytest.approx([rep.cpu_total_s / t for t in sf["total_s"]])
    assert ProgramReport.from_dict(json.loads(rep.to_json())).surface == sf
    assert "Across the scaling model" in rep.to_html()


def test_a_scaling_model_that_cannot_place_a_region_is_refused_before_the_run(script, tmp_path):
    from gpu_models.scaling.generator import generate

    data = tmp_path / "syn.csv"
    generate(n_per_archetype=2, sm_counts=(4, 8), core_mhz=(300, 600), mem_mhz=(475, 925), random_state=0).write(data)
    model = tmp_path / "cols.json"
    res = CliRunner().invoke(app, ["scale", "train", str(data), "-o", str(model), "--clusters", "2"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["program", str(script), "--surface", str(model), "--mode", "interpreted"])
    assert res.exit_code != 0 and "done" not in res.output  # the script never ran
    assert "was trained on counters 'columns'; a region is placed on a model trained with --counters classes" \
        in " ".join(res.output.split())


def test_a_script_that_raises_is_one_line_naming_the_run(tmp_path):
    p = tmp_path / "bad.py"
    p.write_text("import portcast\n\n@portcast.region('r')\ndef r(n):\n    return 1 // n\n\nr(0)\n")
    res = CliRunner().invoke(app, ["program", str(p), "--mode", "interpreted"])
    assert res.exit_code == 2
    assert res.output.strip().splitlines()[-1] == (
        "error: the script raised ZeroDivisionError: integer division or modulo by zero in its untraced run; the "
        "whole-program view needs a run that completes (portcast profile keeps what ran before an error)")
    assert "Traceback" not in res.output
