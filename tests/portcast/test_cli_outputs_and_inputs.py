"""What the commands write and what they read, run as a user runs them (``python -m portcast`` in a folder):

* ``-o``/``--out``'s extension names the format written, or the command refuses it with one line;
* ``--json``: stdout is one JSON document, or nothing when the command fails or is interrupted;
* a trace of a region that did not complete is called incomplete by every command that reads it;
* the libraries' warnings about the user's data (NumPy, Matplotlib) stay out of the output;
* a GPU description out of range, a folder given as a file, a trace with crafted metadata: one line, no
  traceback.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from features.table import read_feature_table

ROOT = Path(__file__).resolve().parents[2]

STOPS = """\
import numpy as np
import portcast

x = np.ones(64)
with portcast.region("partial"):
    for i in portcast.parallel(range(64)):
        x[i] = x[i] * 2.0
        if i == 40:
            raise ValueError("bad row 40")
"""

RAISES = """\
        if i == 40:
            raise ValueError("bad row 40")
"""

INTERRUPTED = """\
import portcast
with portcast.region('first'):
    s = sum(i * 2 for i in range(10))
with portcast.region('second'):
    s = 0
    for i in range(20):
        s += i
    raise KeyboardInterrupt
"""

INCOMPLETE = ("warning: inc/partial.0.parquet: incomplete trace: region 'partial' #0 did not complete "
              "(ValueError: bad row 40); the numbers cover only what it recorded before it stopped")


def portcast(cwd, *args):
    """``python -m portcast ARGS`` in ``cwd`` with this checkout's code."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "portcast", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, env=env, timeout=600)


def one_line(res) -> str:
    """A failed command's stderr as its one line (Rich may wrap a long line: the wrap undone)."""
    assert res.stdout == "" and "Traceback" not in res.stderr, res.stderr
    return " ".join(res.stderr.split())


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A folder with a complete trace (tr/saxpy.0.parquet), an incomplete one (inc/partial.0.parquet: the
    region raised at thread 40) and the features of the complete one (f.json)."""
    d = tmp_path_factory.mktemp("work")
    res = portcast(d, "profile", ROOT / "examples" / "saxpy.py", "--no-progress", "--no-features", "--no-baseline",
                   "--trace-dir", "tr", "--", "3000")
    assert res.returncode == 0, res.stderr
    (d / "stops.py").write_text(STOPS)
    res = portcast(d, "profile", "stops.py", "--no-progress", "--no-features", "--no-baseline", "--mode",
                   "interpreted", "--trace-dir", "inc")
    assert (d / "inc" / "partial.0.parquet").exists(), res.stderr
    res = portcast(d, "features", "tr/saxpy.0.parquet", "-o", "f.json", "-q")
    assert res.returncode == 0, res.stderr
    return d


# -- 1. the output's extension decides its format, or the command refuses it ---------------------------------
@pytest.mark.parametrize("ext", ["json", "parquet", "csv"])
def test_features_out_writes_the_format_its_extension_names_and_predict_reads_it(work, ext):
    out = f"out1.{ext}"
    res = portcast(work, "features", "tr/saxpy.0.parquet", "-o", out, "-q")
    assert res.returncode == 0, res.stderr
    table = read_feature_table(work / out)
    assert table["trace"].tolist() == ["tr/saxpy.0.parquet"] and table["warp_threads"].tolist() == [3000.0]
    res = portcast(work, "predict", out, "--quiet")
    assert res.returncode == 0, res.stderr
    assert "predicted speedup" in res.stdout


def test_features_out_of_another_extension_is_a_text_table(work):
    res = portcast(work, "features", "tr/saxpy.0.parquet", "-o", "out1.txt", "-q")
    assert res.returncode == 0, res.stderr
    lines = (work / "out1.txt").read_text().splitlines()
    assert lines[0].split() == ["trace", "tr/saxpy.0.parquet"]
    assert lines[-1].split() == ["lib_opaqueFraction", "0.000000"]


@pytest.mark.parametrize("fmt, out, says", [("table", "t2.json", "json"), ("table", "t2.parquet", "parquet"),
                                             ("csv", "t2.txt", "a text table"), ("json", "t2.csv", "csv")])
def test_features_format_its_out_contradicts_is_refused(work, fmt, out, says):
    res = portcast(work, "features", "tr/saxpy.0.parquet", "-f", fmt, "-o", out)
    assert res.returncode == 2
    assert one_line(res) == f"error: --out {out}: the file name says {says}, --format says {fmt}"
    assert not (work / out).exists()


def test_predict_out_json_is_json(work):
    res = portcast(work, "predict", "f.json", "--quiet", "--out", "p3.json")
    assert res.returncode == 0, res.stderr
    doc = json.loads((work / "p3.json").read_text())
    assert doc["format"] == "portcast.predictions" and doc["schema_version"] == 1
    (row,) = doc["rows"]
    assert row["id"] == "row 0" and row["predicted_speedup"] > 0 and row["extrapolating"] is False


@pytest.mark.parametrize("args, out, line", [
    (["predict", "f.json", "--quiet", "--out"], "p4.parquet", "predict writes .csv or .json there, not .parquet"),
    (["scale", "train", "synthetic", "-o"], "m4.csv", "scale train writes .json there, not .csv"),
    (["dvfs", "predict", "--counters", "tr/saxpy.0.parquet", "--targets", "700", "--out"], "d4.parquet",
     "dvfs predict writes .csv or .json there, not .parquet"),
    (["dvfs", "plot", "--kernel", "overlap-0", "--out"], "plot4.pdf", "dvfs plot writes .png or .svg there, not .pdf"),
    (["eiger", "export", "m4.json", "-f", "python", "-o"], "m4.c",
     "eiger export --format python writes .py there, not .c"),
])
def test_an_out_in_a_format_the_command_does_not_write_is_refused_before_any_work(work, args, out, line):
    res = portcast(work, *args, out)
    assert res.returncode == 2
    assert one_line(res) == f"error: --out {out}: {line}"
    assert not (work / out).exists()


# -- 2. --json: one JSON document on stdout, or nothing ------------------------------------------------------
def test_ctrl_c_with_json_leaves_stdout_empty_and_says_what_was_recorded_on_stderr(work):
    (work / "interrupted.py").write_text(INTERRUPTED)
    res = portcast(work, "profile", "interrupted.py", "--json", "--no-progress", "--mode", "interpreted",
                   "--trace-dir", "intr")
    assert res.returncode == 130
    assert res.stdout == ""
    flat = " ".join(res.stderr.split())
    assert "no (interrupted (KeyboardInterrupt))" in flat and "wrote intr/second.0.parquet" in flat
    assert flat.endswith("interrupted: the traces above are what was recorded; the region open at the interrupt "
                         "is marked incomplete")


def test_ctrl_c_in_a_script_simulate_runs_with_json_leaves_stdout_empty(work):
    (work / "stopped.py").write_text(STOPS.replace('raise ValueError("bad row 40")', "raise KeyboardInterrupt"))
    res = portcast(work, "simulate", "stopped.py", "--mode", "interpreted", "--json")
    assert res.returncode == 130 and res.stdout == ""
    assert res.stderr.splitlines()[-1] == ("interrupted: portcast simulate stopped before it finished; nothing was "
                                           "printed")


def test_a_failing_command_with_json_prints_nothing_on_stdout(work):
    res = portcast(work, "simulate", "tr/saxpy.0.parquet", "--gpu", "nope", "--json")
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.startswith("error: unknown GPU preset 'nope'")


# -- 3. incomplete traces ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [
    ["trace-info", "inc/partial.0.parquet"],
    ["features", "inc/partial.0.parquet", "-q"],
    ["predict", "inc/partial.0.parquet", "--quiet"],
    ["simulate", "inc/partial.0.parquet"],
    ["dvfs", "predict", "--counters", "inc/partial.0.parquet", "--targets", "700"],
    ["scale", "train", "inc/partial.0.parquet", "--sweep", "4,8;700,1000;924", "-o", "scale5.json"],
])
def test_every_reader_of_an_incomplete_trace_says_so_in_text_and_json(work, args):
    res = portcast(work, *args)
    assert res.returncode == 0, res.stderr
    assert INCOMPLETE in [" ".join(line.split()) for line in res.stderr.splitlines()]
    (work / "scale5.json").unlink(missing_ok=True)
    res = portcast(work, *args, "--json")
    assert res.returncode == 0, res.stderr
    assert INCOMPLETE in json.loads(res.stdout)["messages"]
    (work / "scale5.json").unlink(missing_ok=True)


def test_a_complete_trace_gets_no_warning(work):
    res = portcast(work, "simulate", "tr/saxpy.0.parquet")
    assert res.returncode == 0 and "incomplete" not in res.stderr


# -- 4. the libraries' warnings --------------------------------------------------------------------------------
def test_numpy_warnings_about_the_users_features_stay_out_of_stderr(work):
    doc = json.loads((work / "f.json").read_text())
    doc["rows"] = [{k: (1e308 if isinstance(v, float) else v) for k, v in doc["rows"][0].items()}]
    (work / "huge.json").write_text(json.dumps(doc))
    res = portcast(work, "predict", "huge.json")
    assert res.returncode == 0, res.stderr
    assert "RuntimeWarning" not in res.stderr and "overflow" not in res.stderr
    assert "warning: row 0: outside the training data, so clipped to its range" in res.stderr


def test_a_region_name_the_plot_font_lacks_gives_no_glyph_warnings(work):
    (work / "glyph.py").write_text(STOPS.replace('"partial"', '"加速🚀"').replace(RAISES, ""))
    res = portcast(work, "profile", "glyph.py", "--report", "glyph.html", "--no-progress", "--no-baseline")
    assert res.returncode == 0, res.stderr
    assert "Glyph" not in res.stderr and "UserWarning" not in res.stderr
    assert res.stderr.strip().splitlines()[-1] == "wrote the report glyph.html"


def test_the_users_own_script_still_shows_its_warnings(work):
    (work / "warns.py").write_text(STOPS.replace(RAISES, "").replace("x = np.ones(64)\n",
                                                                     "x = np.ones(64)\nprint(np.log(np.zeros(1)))\n"))
    res = portcast(work, "profile", "warns.py", "--no-progress", "--no-baseline", "--no-features")
    assert res.returncode == 0, res.stderr
    assert "warns.py:5: RuntimeWarning: divide by zero encountered in log" in res.stderr


# -- 5. input validation ---------------------------------------------------------------------------------------
def _gpu_file(work, name, path, value):
    doc = json.loads((ROOT / "gpu_models" / "simt" / "presets" / "p100.json").read_text())
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    (work / name).write_text(json.dumps(doc))
    return name


@pytest.mark.parametrize("path, value, line", [
    (["sm_count"], 10 ** 12, "field 'sm_count' = 1000000000000 is out of range: at most 4096"),
    (["core_mhz"], 1e300, "field 'core_mhz' = 1e+300 is out of range: at most 100000"),
    (["l2_bytes"], 1e300, "field 'l2_bytes' = 1e+300 is out of range: at most 4294967296"),
    (["lanes", "fp"], 10 ** 9, "field 'lanes.fp' = 1000000000 is out of range: at most 1024"),
    (["ops", "FP_ALU"], ["fp", 1e300, 1], "field 'ops.FP_ALU[1]' = 1e+300 is out of range: at most 1000000"),
    (["power", "pj", "dram_byte"], 1e300, "field 'power.pj.dram_byte' = 1e+300 is out of range: at most 1e+09"),
    (["power", "v_min"], 2.0, "field 'power.v_min' = 2 is above 'power.v_max' = 1.05"),
    (["sweep", "sm_counts"], [8, 10 ** 12], "field 'sweep.sm_counts[1]' = 1000000000000 is out of range: at most 4096"),
    (["mem_mhz"], 0, "field 'mem_mhz' must be a positive number, got 0"),
    (["core_mhz"], -1405.0, "field 'core_mhz' must be a positive number, got -1405.0"),
])
def test_a_gpu_description_out_of_range_is_one_line_naming_file_and_field(work, path, value, line):
    gpu = _gpu_file(work, f"gpu-{'-'.join(path)}.json", path, value)
    res = portcast(work, "simulate", "tr/saxpy.0.parquet", "--gpu", gpu)
    assert res.returncode == 2
    assert one_line(res) == f"error: {gpu}: {line}"


def test_a_gpu_description_out_of_range_in_profile_names_file_and_field(work):
    gpu = _gpu_file(work, "gpu-profile.json", ["sm_count"], 10 ** 12)
    res = portcast(work, "profile", ROOT / "examples" / "saxpy.py", "--gpu", gpu, "--no-progress")
    assert res.returncode == 2
    assert one_line(res) == f"error: {gpu}: field 'sm_count' = 1000000000000 is out of range: at most 4096"


def test_an_sm_count_override_out_of_range_is_one_line(work):
    res = portcast(work, "simulate", "tr/saxpy.0.parquet", "--sm", str(10 ** 12))
    assert res.returncode == 2
    assert one_line(res) == "error: sm_count = 1e+12 is out of range: at most 4096"


@pytest.mark.parametrize("sweep, line", [("1000000000000;700;924", "SM counts must be in (0, 4096], got 1e+12"),
                                         ("8;1e300;924", "core clocks must be in (0, 100000], got 1e+300")])
def test_a_sweep_out_of_range_is_one_line(work, sweep, line):
    res = portcast(work, "simulate", "tr/saxpy.0.parquet", "--sweep", sweep)
    assert res.returncode == 2
    assert one_line(res) == f"error: --sweep: {line}"


@pytest.mark.parametrize("args", [["simulate", "tr/saxpy.0.parquet", "--gpu", "gdir"],
                                  ["profile", ROOT / "examples" / "saxpy.py", "--gpu", "gdir", "--no-progress"]])
def test_a_folder_as_the_gpu_file_is_one_line(work, args):
    (work / "gdir").mkdir(exist_ok=True)
    res = portcast(work, *args)
    assert res.returncode == 2
    assert one_line(res) == "error: gdir: is a folder, not a GPU description file (.json)"


def test_a_folder_as_the_model_file_is_one_line(work):
    (work / "mdir").mkdir(exist_ok=True)
    res = portcast(work, "predict", "f.json", "--model", "mdir")
    assert res.returncode == 2
    assert one_line(res) == "error: mdir: is a folder, not a Portcast model file"


def _crafted(work, name, key, value):
    """tr/saxpy.0.parquet with one field of its region metadata replaced (``region``: the whole of it)."""
    src = work / "tr" / "saxpy.0.parquet"
    meta = dict(pq.read_metadata(src).metadata)
    blob = json.loads(meta[b"portcast.trace"])
    if key == "region":
        blob["region"] = value
    else:
        blob["region"][key] = value
    meta[b"portcast.trace"] = json.dumps(blob).encode()
    pq.write_table(pq.read_table(src).replace_schema_metadata(meta), work / name)
    return name


READERS = [["trace-info"], ["features"], ["predict"], ["simulate"],
           ["dvfs", "predict", "--targets", "700", "--counters"]]


@pytest.mark.parametrize("key, value, line, reader", [
    *[("region", None, "region metadata must be an object, not null", r) for r in READERS],
    *[("extra", "zz", "region metadata field 'extra' = 'zz' is not an object", r) for r in READERS],
    ("complete", "no", "region metadata field 'complete' = 'no' is not true or false", ["trace-info"]),
    ("n_threads", -3, "region metadata field 'n_threads' = -3 is not an integer >= 0", ["simulate"]),
])
def test_crafted_trace_metadata_is_one_line_in_every_reader(work, key, value, line, reader):
    name = _crafted(work, f"crafted-{key}.parquet", key, value)
    res = portcast(work, *reader, name)
    assert res.returncode == 2
    assert one_line(res) == f"error: {name}: {line}"
