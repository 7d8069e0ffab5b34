"""Privatisation (issue 31): row and block buffers every iteration writes before it reads are private to the
thread, so the loops around them are the thread space (NAS MG resid, NAS FT cffts1); a buffer carrying the
previous row into the next iteration (the negative twin) keeps its loop on the host. Both tracing modes."""

from __future__ import annotations

import io

import numpy as np
import pytest
import realistic_programs as P
from rich.console import Console
from test_realistic_programs import MODES, SRC, library_of, line_of, loops_of, profile

from portcast.report import print_thread_space


def line_with(text: str) -> str:
    """``file:line`` of the one line of realistic_programs.py that contains ``text``."""
    hits = [i + 1 for i, t in enumerate(SRC) if text in t]
    assert len(hits) == 1, text
    return f"{P.__file__}:{hits[0]}"


def kernel(ts, tag):
    return next(lp for lp in ts["loops"] if lp["location"] == line_of(tag))


def mg_reference(u, v, a):
    r = np.zeros_like(u)
    c = u[1:-1, :-2] + u[1:-1, 2:] + u[:-2, 1:-1] + u[2:, 1:-1]  # u1 of every (i3, i2) row
    e = u[:-2, :-2] + u[:-2, 2:] + u[2:, :-2] + u[2:, 2:]  # u2
    r[1:-1, 1:-1, 1:-1] = (v[1:-1, 1:-1, 1:-1] - a[0] * u[1:-1, 1:-1, 1:-1]
                           - a[2] * (e[..., 1:-1] + c[..., :-2] + c[..., 2:]) - a[3] * (e[..., :-2] + e[..., 2:]))
    return r


@pytest.mark.parametrize("mode", MODES)
def test_mg_resid_row_buffers_are_private_and_the_row_nest_is_a_2d_thread_space(mode):
    rng = np.random.default_rng(0)
    u, v, a = rng.random((10, 10, 34)), rng.random((10, 10, 34)), np.array([1.0, 0.0, 0.5, 0.25])
    r = np.zeros_like(u)
    res, f, ts, _ = profile(P.mg_resid, (u, v, r, a), mode)
    np.testing.assert_allclose(r, mg_reference(u, v, a), rtol=1e-12)
    assert ts["how"] == "inferred" and ts["rejected"] == []
    assert loops_of(ts) == [(line_of("mgr.i3"), 2, "parallel", 1, 8 * 8)]  # (n3 - 2) * (n2 - 2) threads
    assert library_of(ts) == []
    k = kernel(ts, "mgr.i3")
    assert k["nest"] == [line_of("mgr.i3"), line_of("mgr.i2")] and k["static"] == "independent"
    assert k["private"] == [f"`u1` ({line_with('u1[i1] = ')})", f"`u2` ({line_with('u2[i1] = ')})"]
    assert k["reasons"] == []  # local buffers, not read after the loop: no last value
    # every thread after the first stores its 34 + 34 buffer elements over the previous thread's
    assert k["privatised"] == 63 * 68
    assert f["ts_carriedDeps"] == 0 and f["ts_kernels"] == 1


def test_mg_resid_report_names_the_per_thread_buffers():
    rng = np.random.default_rng(0)
    u = rng.random((5, 5, 6))
    _, _, ts, _ = profile(P.mg_resid, (u, u.copy(), np.zeros_like(u), np.array([1.0, 0.0, 0.5, 0.25])),
                          "interpreted")
    out, err = io.StringIO(), io.StringIO()
    print_thread_space(Console(file=out, width=300), Console(file=err, width=300), "mg_resid #0", ts)
    assert "  private: realistic_programs.py:{} `for i3 in range(1, n3 - 1)`: per-thread buffers `u1` " \
           "(realistic_programs.py:{}), `u2` (realistic_programs.py:{})".format(
               *(s.rsplit(":", 1)[1] for s in (line_of("mgr.i3"), line_with("u1[i1] = "), line_with("u2[i1] = ")))
           ) in out.getvalue()
    assert "host loop" not in out.getvalue() and err.getvalue() == ""


@pytest.mark.parametrize("mode", MODES)
def test_fft_blocked_lines_scratch_blocks_are_private_and_planes_by_blocks_are_threads(mode):
    rng = np.random.default_rng(2)
    x = rng.random((3, 8, 8)) + 1j * rng.random((3, 8, 8))
    want = np.fft.fft(x, axis=2)
    res, f, ts, _ = profile(P.fft_lines_blocked, (x, P.dft_twiddles(8), 2), mode)
    np.testing.assert_allclose(x, want, atol=1e-12)
    assert ts["how"] == "inferred" and ts["rejected"] == []
    assert loops_of(ts) == [(line_of("ftb.planes"), 2, "parallel", 1, 3 * (8 // 2))]  # n3 * (n2 // fftblock)
    assert library_of(ts) == []
    k = kernel(ts, "ftb.planes")
    assert k["nest"] == [line_of("ftb.planes"), line_of("ftb.blocks")] and k["static"] == "independent"
    assert k["private"] == [f"`scratch` ({line_with('scratch[j, i] = ')})", f"`work` ({line_with('work[j, m] = ')})"]
    assert k["reasons"] == []
    assert k["privatised"] == 11 * (16 + 16)  # threads 1..11: a 2 x 8 block of each buffer
    assert f["ts_carriedDeps"] == 0 and f["ts_kernels"] == 1


@pytest.mark.parametrize("mode", MODES)
def test_row_recurrence_buffer_carries_a_value_and_its_rows_stay_on_the_host(mode):
    rng = np.random.default_rng(3)
    u = rng.random((6, 8))
    out = np.zeros_like(u)
    res, f, ts, _ = profile(P.row_recurrence, (u, out), mode)
    prev = np.zeros(8)
    for i2 in range(6):
        prev = 0.5 * (prev + u[i2])
        np.testing.assert_allclose(out[i2], prev, rtol=1e-12)
    assert loops_of(ts) == [(line_of("rowrec.use"), 1, "parallel", 6, 8), (line_of("rowrec.keep"), 1, "parallel", 6, 8)]
    assert all(lp["private"] == [] for lp in ts["loops"] if lp["how"] != "library")
    assert [r["location"] for r in ts["rejected"]] == [line_of("rowrec.rows")]
    use = line_with("out[i2, i1] = 0.5 * (prev[i1]")
    assert ts["rejected"][0]["why"] == [
        f"{line_with('prev[i1] = out[i2, i1]')}: every iteration stores `prev[i1]` (the element does not depend on "
        "i2): conflicting writes",
        f"{use}: reads `prev[i1]` before the iteration has written it (every iteration stores `prev` at the same "
        "elements): a value may flow in from an earlier iteration",
    ]
    assert f["ts_carriedDeps"] == 0
