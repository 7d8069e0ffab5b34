"""Corpus kernels chained into a small application and run as a whole program (``portcast program``): a
saxpy, a 2-D stencil step and a sum of the new grid (through a view of it) in a time loop, each kernel's CPU
region as the corpus writes it (returning new arrays). The copies each plan needs are checked against the bytes
the arrays hold: what the GPU makes stays there while the next region reads it, and only what the program still
holds at the end comes back."""

import textwrap

import pytest

from portcast.program_view import profile_program

APP = textwrap.dedent('''
    import numpy as np
    import portcast
    from kernels.reduce_sum import reduce_sum_cpu
    from kernels.saxpy import saxpy_cpu
    from kernels.stencil2d import stencil2d_cpu

    saxpy = portcast.region("saxpy")(saxpy_cpu)
    step = portcast.region("stencil")(stencil2d_cpu)
    total = portcast.region("total")(reduce_sum_cpu)

    x = np.arange(2048, dtype=np.float32)
    y = np.ones(2048, dtype=np.float32)
    u = np.zeros((32, 32))
    u[16, 16] = 1.0
    for k in range(3):
        y = saxpy(np.float32(0.5), x, y)
        u = step(u)
        s = total(u.ravel())
    print(s, float(y[-1]))
''')

X = Y = 2048 * 4
U0, U = 32 * 32 * 8, 32 * 32 * 4  # the first grid is float64; the stencil returns float32 grids
S = 4  # the float32 sum


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    p = tmp_path_factory.mktemp("chain") / "app.py"
    p.write_text(APP)
    return p


@pytest.mark.parametrize("ports, h2d, d2h", [
    # x, the first y and the first grid go in once; the sums come back; the last y and grid at the end
    (["saxpy", "stencil", "total"], X + Y + U0, 3 * S + Y + U),
    # each new grid comes back for the sum on the host, and the next step's stencil takes it from the GPU
    (["saxpy", "stencil"], X + Y + U0, 3 * U + Y),
    # each grid the host made goes in for the sum
    (["total"], 3 * U, 3 * S),
    # saxpy's y stays on the GPU, but comes back at the end
    (["saxpy"], X + Y, Y),
])
def test_the_copies_are_the_bytes_of_the_arrays_that_cross(app, ports, h2d, d2h):
    rep = profile_program(app, gpu="h100", ports=ports, mode="interpreted", sample="exact")
    assert (rep.schedule["h2d_bytes"], rep.schedule["d2h_bytes"]) == (h2d, d2h)
    assert [(r["region"], r["invocations"], r["predicted"]) for r in rep.regions] == [
        ("saxpy", 3, True), ("stencil", 3, True), ("total", 3, True)]
    kinds = [s["kind"] for s in rep.schedule["steps"]]
    assert kinds.count("gpu") == 3 * len(ports)
    assert kinds.count("cpu") == 3 * (3 - len(ports)) + 10  # the regions left on the CPU and 10 host segments
