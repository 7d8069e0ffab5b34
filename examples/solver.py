"""A whole program: a 2-D Jacobi solver with a time loop, two kernels (the stencil and a relaxation of the new
grid towards its boundary values) and a reduction (the largest change, checked on the host every step).

    portcast program examples/solver.py                          # every region worth porting, on the default GPU
    portcast program examples/solver.py --port stencil           # the stencil alone: the grid crosses every step
    portcast program examples/solver.py --port stencil --port relax --port residual   # all three: it stays
    portcast program examples/solver.py -- 256 40                # a 256 x 256 grid, 40 steps

Porting the stencil alone gains little: the relaxation and the reduction on the host need the new grid back
every step, and the next step's stencil needs it again. Porting all three keeps both grids on the GPU; only the
residual (8 bytes) comes back each step.
"""

import sys

import numpy as np

import portcast


@portcast.region("stencil")
def stencil(u, v):
    n, m = u.shape
    for i in portcast.parallel(range(1, n - 1)):
        for j in range(1, m - 1):
            v[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])


@portcast.region("relax")
def relax(v, w):
    n, m = v.shape
    for i in portcast.parallel(range(1, n - 1)):
        for j in range(1, m - 1):
            v[i, j] = (1.0 - w) * v[i, j] + w * 0.5 * (v[i, 0] + v[i, m - 1])


@portcast.region("residual")
def residual(u, v):
    n, m = u.shape
    r = 0.0
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            d = abs(v[i, j] - u[i, j])
            if d > r:
                r = d
    return r


def main(n=96, steps=20, tol=1e-9):
    u = np.zeros((n, n))
    u[:, 0], u[:, -1] = 1.0, -1.0  # the boundary: held fixed
    v = u.copy()
    r = 0.0
    for step in range(steps):
        stencil(u, v)
        relax(v, 0.05)
        r = residual(u, v)
        if r < tol:
            break
        u, v = v, u
    print(f"solver n={n}: {step + 1} steps, last change {r:.3e}, mean {u.mean():.6f}")


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    main(*args)
