"""The same saxpy (n = 1000, the same inputs) through the Python tracer (``portcast profile --function``) and
the native recorder (``portcast profile --native`` on the Numba version): both are predicted by the one
pipeline function with the same model file and target, and their GPU times agree within a factor of 2.

Why 2: the two tracers record the same loop differently. The Python tracer gives each thread 7 records
(x[i] and y[i] loads, FP_MUL, FP_ALU, the y[i] store, the loop's increment and branch, the last two left out
of the warps as the kernel loop's own latch). The compiled code gives 13: the same two loads, two FP
operations and store, three integer operations (the loop's increment and compare among them), the loop's
branch, and region_thread(i)'s client request (an OTHER and three stores of its argument block); plus 13
records outside the loop (region_end's request, the loop's exit). So the records differ by
13,013 / 7,000 = 1.86x and the memory records, the largest ratio among the work counts the model reads, by
(2,001 + 4,003) / 3,000 = 2.0x; threads (1,000) are equal and the distinct bytes read and written differ by
the markers' argument blocks only (96 bytes written, 8 read: under 1.2%). A time that grew in proportion to
every count would differ by at most that 2x; measured: 5.07 us native against 5.08 us Python on the P100 (both
near the launch floor at this size).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from native_toolchain import needs_tool
from typer.testing import CliRunner

from portcast.cli import app
from portcast.pipeline.stage_predict import NATIVE_CPU_WHY, NATIVE_NOTE

ROOT = Path(__file__).resolve().parents[2]
NUMBA_SAXPY = ROOT / "examples" / "numba_saxpy.py"
SAXPY = ROOT / "examples" / "saxpy.py"
N = 1000
#: the largest ratio between the two tracers' work counts (memory records, see the module docstring)
FACTOR = 2.0

runner = CliRunner()


def _json(args) -> dict:
    res = runner.invoke(app, ["profile", "--no-progress", "--json", *args])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


@needs_tool
def test_python_and_native_saxpy_use_one_model_and_agree(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba_cache"))
    # fill Numba's cache with a plain run, so that the traced run loads the compiled code
    subprocess.run([sys.executable, str(NUMBA_SAXPY), str(N)], capture_output=True, text=True, check=True,
                   env=dict(os.environ))
    py = _json(["--function", f"{SAXPY}:saxpy", "--args", f"portcast_inputs({N})"])
    nat = _json(["--native", str(NUMBA_SAXPY), "--", str(N)])

    # one model file, one target, for both (and for each region's prediction)
    shipped = str(ROOT / "predictor" / "models" / "gputime.json")
    for doc in (py, nat):
        assert doc["model_kind"] == "gputime" and doc["model_file"] == shipped
        assert doc["gpu"] == "a100" and doc["gpu_label"] == "NVIDIA A100 SXM4 40 GB (a100, Ampere)"
    (rp,), (rn,) = py["regions"], nat["regions"]
    pp, pn = rp["prediction"], rn["prediction"]
    assert pp["model_file"] == pn["model_file"] == shipped
    assert pp["gpu_label"] == pn["gpu_label"] == py["gpu_label"]
    assert pp["simulated_s"] is None and pn["simulated_s"] is None  # the shipped model keeps no SIMT sample
    # both at least their own lower bound
    assert pp["kernel_s"] >= py["regions"][0]["bounds"]["lower_bound_s"]
    assert pn["kernel_s"] >= nat["regions"][0]["bounds"]["lower_bound_s"]

    # the two tracers' records (the factor's reason)
    assert (rp["mode"], rn["mode"]) in {("compiled", "native"), ("interpreted", "native")}
    assert rp["records"] == 7 * N and rn["records"] == 13 * N + 13
    assert rp["threads"] == rn["threads"] == N
    mem_py = rp["op_counts"]["LOAD"] + rp["op_counts"]["STORE"]
    mem_nat = rn["op_counts"]["LOAD"] + rn["op_counts"]["STORE"]
    assert (mem_py, mem_nat) == (3 * N, 6 * N + 4)
    assert max(rn["records"] / rp["records"], mem_nat / mem_py) == pytest.approx(FACTOR, abs=0.01)
    # x and y read, y written (16,000 and 8,000 B); natively also the markers' 48-byte argument blocks on the
    # stack (region_thread's, the same slots every iteration, and region_end's)
    assert (pp["read_bytes"], pp["written_bytes"]) == (16_000, 8_000)
    assert pn["written_bytes"] == 8_000 + 2 * 48 and 16_000 <= pn["read_bytes"] <= 16_000 + 2 * 48

    ratio = pn["kernel_s"] / pp["kernel_s"]
    assert 1 / FACTOR <= ratio <= FACTOR, (pn["kernel_s"], pp["kernel_s"])
    # what the native trace lacks is said, not silently replaced
    assert rn["notes"] == [NATIVE_NOTE] and rp["notes"] == []
    assert pn["cpu_s"] is None and pn["speedup"] is None and pn["cpu_why"] == NATIVE_CPU_WHY
    assert pp["cpu_s"] > 0 and pp["speedup"] == pytest.approx(pp["cpu_s"] / pp["kernel_s"])
