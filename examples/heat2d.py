"""2-D heat equation, explicit Euler: 50 time steps of a 5-point stencil and a copy back (100 launches).

    portcast profile examples/heat2d.py              # 200 x 200 grid
    portcast profile examples/heat2d.py -- 64
"""
import sys

import numpy as np

import portcast


@portcast.region("heat")
def heat(u, v, steps, alpha):
    n, m = u.shape
    for _ in range(steps):
        for i in portcast.parallel(range(1, n - 1)):
            for j in range(1, m - 1):
                v[i, j] = u[i, j] + alpha * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j])
        for i in portcast.parallel(range(1, n - 1)):
            for j in range(1, m - 1):
                u[i, j] = v[i, j]
    return u


def portcast_inputs(n=64):
    u = np.zeros((n, n))
    u[n // 2 - 4:n // 2 + 4, n // 2 - 4:n // 2 + 4] = 100.0
    return (u, u.copy(), 50, 0.1)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    u, v, steps, alpha = portcast_inputs(n)
    heat(u, v, steps, alpha)
    print(f"heat n={n}: total {u.sum():.4f}")
