"""Imperfect nests (issue 31): statements between the loop headers that only compute scalars from the outer
indices are sunk into the inner loop, so the nest collapses as a GPU port collapses it (twiddle_nest), and a
statement that carries a value from one row to the next keeps the rows on the host (nest_carried). Both
tracing modes; the sizes are the ones the issue names."""

from __future__ import annotations

import inspect
import io

import numpy as np
import pytest
import realistic_programs as P
from rich.console import Console

import features
from portcast.report import print_thread_space
from profiler.session import trace_function
from profiler.trace import MemorySink

MODES = ("interpreted", "compiled")
FILE = P.__file__


def line_of(fn, text: str) -> str:
    """``file:line`` of the line of ``fn`` whose code (without its comment) is ``text``."""
    lines, first = inspect.getsourcelines(fn)
    hits = [first + i for i, src in enumerate(lines) if src.split("#")[0].strip() == text]
    assert len(hits) == 1, text
    return f"{FILE}:{hits[0]}"


def profile(fn, args, mode):
    fsink, msink = features.FeatureSink(), MemorySink()
    trace_function(fn, args, sinks=[fsink, msink], mode=mode)
    info, series = fsink.results[0]
    assert info.mode == mode, f"{fn.__name__} did not run in {mode} mode"
    meta = msink.regions[0][0].extra["thread_space"]
    return series, fsink.thread_spaces[0], meta, msink.regions[0][2]


def thread_space(report):
    """(location, dims, nest, static, verdict, launches, threads, sunk) of each kernel loop of the source."""
    return [(lp["location"], lp["dims"], lp["nest"], lp["static"], lp["verdict"], lp["launches"], lp["threads"],
             [(s["location"], s["text"]) for s in lp["sunk"]]) for lp in report["loops"] if lp["how"] != "library"]


TW_SUNK = [
    (line_of(P.twiddle_nest, "kk = k if k < n3 // 2 else k - n3"), "kk = k if k < n3 // 2 else k - n3"),
    (line_of(P.twiddle_nest, "kk2 = kk * kk"), "kk2 = kk * kk"),
    (line_of(P.twiddle_nest, "jj = j if j < n2 // 2 else j - n2"), "jj = j if j < n2 // 2 else j - n2"),
    (line_of(P.twiddle_nest, "jk = jj * jj + kk2"), "jk = jj * jj + kk2"),
]


@pytest.mark.parametrize("mode", MODES)
def test_twiddle_nest_collapses_to_three_dimensions_with_the_index_arithmetic_sunk(mode):
    n = 64
    out = np.zeros((n, n, n))
    f, ts, meta, chunk = profile(P.twiddle_nest, (out, 1e-3), mode)
    ref = np.zeros((n, n, n))
    P.twiddle_nest(ref, 1e-3)
    np.testing.assert_array_equal(out, ref)  # the traced run computes what the program computes
    nest = [line_of(P.twiddle_nest, "for k in range(n3):"), line_of(P.twiddle_nest, "for j in range(n2):"),
            line_of(P.twiddle_nest, "for i in range(n1):")]
    assert ts["how"] == "inferred"
    assert thread_space(ts) == [(nest[0], 3, nest, "independent", "parallel", 1, n ** 3, TW_SUNK)]
    assert ts["rejected"] == [] and ts["notes"] == []
    assert f["ts_carriedDeps"] == 0 and f["ts_reductionDeps"] == 0 and f["ts_atomicDeps"] == 0
    assert f["warp_threads"] == n ** 3 and f["warp_launches"] == 1 and f["ts_kernels"] == 1
    # the sunk statements are loop control for the checks: the dependence check does not count reads of
    # what they wrote (each GPU thread recomputes them), the warps leave them out like the index updates
    sunk_pcs = set(meta["sunk_pcs"])
    assert sunk_pcs and sunk_pcs <= set(meta["induction_pcs"]) and sunk_pcs <= set(meta["control_pcs"])
    assert f["warp_simdEfficiency"] == 1.0 and f["warp_bdiv"] == 0.0
    # where their records are: once per outer iteration (as the CPU ran them), in the first thread of the
    # row (plane) that iteration starts; the launch is one
    rec = np.isin(chunk.pc, sorted(sunk_pcs))
    assert rec.sum() > 0
    tids = chunk.tid[rec]
    assert (tids >= 0).all() and (tids % n == 0).all()
    assert sorted(set(tids.tolist())) == list(range(0, n ** 3, n))  # every row's first thread (jj, jk)
    assert set(np.unique(tids[tids % (n * n) == 0]).tolist()) == set(range(0, n ** 3, n * n))  # planes: kk, kk2
    inside = chunk.tid >= 0
    starts = np.flatnonzero(inside & ~np.concatenate([[False], inside[:-1]]))
    assert len(starts) == 1  # no record with tid -1 splits the launch


@pytest.mark.parametrize("mode", MODES)
def test_nest_carried_keeps_the_rows_on_the_host_and_launches_the_columns(mode):
    n2, n1 = 48, 64
    out = np.zeros((n2, n1))
    f, ts, meta, _ = profile(P.nest_carried, (out, 1e-3), mode)
    ref = np.zeros((n2, n1))
    P.nest_carried(ref, 1e-3)
    np.testing.assert_array_equal(out, ref)
    cols = line_of(P.nest_carried, "for i in range(n1):")
    rows = line_of(P.nest_carried, "for j in range(n2):")
    assert thread_space(ts) == [(cols, 1, [cols], "independent", "parallel", n2, n1, [])]
    assert [r["location"] for r in ts["rejected"]] == [rows]
    assert ts["rejected"][0]["why"] == [
        f"{line_of(P.nest_carried, 's = math.sin(s) + j * scale')}: `s` is read before it is assigned in an "
        "iteration and assigned at line " + line_of(P.nest_carried, "s = math.sin(s) + j * scale").split(":")[-1]
        + ": its value is carried from one iteration to the next"]
    assert meta["sunk_pcs"] == []
    assert f["ts_carriedDeps"] == 0 and f["warp_threads"] == n1 and f["warp_launches"] == n2


def test_portcast_profile_lists_the_sunk_statements():
    _, ts, _, _ = profile(P.twiddle_nest, (np.zeros((4, 4, 4)), 1e-3), "interpreted")
    buf = io.StringIO()
    con = Console(file=buf, width=300, color_system=None)
    print_thread_space(con, con, "twiddle_nest", ts)
    text = buf.getvalue()
    line = next(s for s in text.splitlines() if "imperfect nest" in s)
    k = line_of(P.twiddle_nest, "for k in range(n3):").split(":")[-1]
    assert line.startswith(f"  imperfect nest realistic_programs.py:{k}: sunk into the inner loop")
    for loc, src in TW_SUNK:
        assert f"realistic_programs.py:{loc.split(':')[-1]} `{src}`" in line
