"""The weak spots ``portcast profile`` lists never contradict the features and bounds printed beside them.

Branch divergence is read from the warp-level measure (``warp_bdiv`` and ``warp_simdEfficiency``, what the
feature table and the bound table print), not from the per-branch sequential ``Lbdiv_32``, which counts the
exit of a loop that every thread runs the same number of times. Uncoalesced access is read from
``warp_coalescing``, not from one instruction's successive strides (``locStrideOther``). Both through the CLI.
"""

import re
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from portcast.cli import app
from portcast.report import MAX_SIMD_EFFICIENCY, MIN_COALESCING

runner = CliRunner()

STENCIL = '''
import numpy as np
import portcast


@portcast.region("rows")
def rows(a, b):
    n, m = a.shape
    for i in portcast.parallel(range(1, n - 1)):
        b[i, 0] = a[i, 0]  # (a store between the headers: the nest is not collapsed, a thread walks a row)
        for j in range(1, m - 1):
            b[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])
    return b


def portcast_inputs(n=130):
    a = np.random.default_rng(0).random((n, n))
    return a, np.zeros_like(a)
'''

BRANCHY = '''
import numpy as np
import portcast


@portcast.region("clip")
def clip(x, out):
    for i in portcast.parallel(range(x.shape[0])):
        v = x[i]
        if v > 0.5:
            out[i] = v * v * v * v + v * v * v + v * v + 1.0
        else:
            out[i] = 0.0
    return out


def portcast_inputs(n=4096):
    x = np.random.default_rng(1).random(n)
    return x, np.zeros_like(x)
'''


def _value(output: str, name: str) -> float:
    m = re.search(rf"│ {re.escape(name)}\s+│ ([^│]+?)\s+│", output)
    assert m, f"no row {name!r} in:\n{output}"
    return float(m.group(1).replace(",", ""))


def _weak_rows(output: str) -> list[str]:
    """The rows of the "lines behind the weak spots" table (empty when there is none)."""
    if "lines behind the weak spots" not in output:
        return []
    table = output.split("lines behind the weak spots", 1)[1]
    table = table.split("└", 1)[0]
    return [line for line in table.splitlines() if line.startswith("│")]


def _profile(tmp_path: Path, source: str, name: str):
    path = tmp_path / f"{name}_kernel.py"
    path.write_text(textwrap.dedent(source))
    res = runner.invoke(app, ["profile", "--no-progress", "--no-baseline", "--function", f"{path}:{name}"])
    assert res.exit_code == 0, res.output
    return res.output


def test_uniform_stencil_lists_no_divergence_but_its_uncoalesced_rows(tmp_path):
    out = _profile(tmp_path, STENCIL, "rows")
    # the sequential per-branch measure counts the inner loop's exit (one mixed 32-group in every ~4 of the
    # 128-iteration loop); in lockstep every lane of a warp leaves the loop at the same step
    assert _value(out, "Lbdiv_32") > 0.1
    assert _value(out, "warp_bdiv") == 0.0 and _value(out, "warp_simdEfficiency") == 1.0
    assert "no divergence" in out  # the bound table
    assert "branch divergence" not in out
    # thread i walks its own row: one instruction's successive strides are 8 B (locStrideOther 0.003: only the
    # boundary copy, once per row, strides a whole row), but the lanes of a warp read 32 different rows, 130 x
    # 8 B apart: a sector per lane where 8 would do
    assert _value(out, "locStrideOther") == 0.003
    coalescing = _value(out, "warp_coalescing")
    assert coalescing == pytest.approx(0.25, abs=0.01) and coalescing < MIN_COALESCING
    rows = _weak_rows(out)
    assert rows and all("uncoalesced access" in r or "footprint" in r for r in rows), rows
    assert any(f"warp_coalescing {coalescing:.3f}" in r for r in rows)
    assert any("rows_kernel.py:12" in r for r in rows)  # b[i, j] = ... (its loads and its store)


def test_data_dependent_if_is_listed_with_its_line(tmp_path):
    out = _profile(tmp_path, BRANCHY, "clip")
    bdiv, simd = _value(out, "warp_bdiv"), _value(out, "warp_simdEfficiency")
    # random x: nearly every warp splits at the if (its only branch once the kernel loop's latch is left out)
    assert bdiv > 0.9 and simd < MAX_SIMD_EFFICIENCY
    rows = _weak_rows(out)
    div = [r for r in rows if "branch divergence" in r]
    assert div, out
    assert "clip_kernel.py:10" in div[0] and "│ v > 0.5 │" in div[0]  # the if's line and its condition
    assert f"warp_bdiv {bdiv:.3f}" in div[0] and f"SIMD efficiency {simd:.2f}" in div[0]
    # the bound table says the same: lanes idle, not "no divergence"
    assert f"SIMD efficiency {simd:.2f}: {1 - simd:.0%} of lanes idle" in " ".join(out.split())
    # out[i] is stored in each arm by the lanes that took it, scattered over the sectors of the whole warp:
    # the uncoalesced-access weak spot is listed exactly when the warp_coalescing printed beside it says so
    coalescing = _value(out, "warp_coalescing")
    assert ("uncoalesced access" in out) == (coalescing < MIN_COALESCING)
