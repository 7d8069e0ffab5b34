"""A 5-point 2-D stencil (Jacobi step), marked with region_start/region_end around the sweep.

    portcast profile examples/stencil.py -- 128
"""

import sys

import numpy as np

import portcast


def main(n, steps=2):
    a = np.zeros((n, n))
    a[n // 2, n // 2] = 1.0
    b = a.copy()
    for _ in range(steps):
        portcast.region_start("jacobi")
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                b[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])
        portcast.region_end("jacobi")
        a, b = b, a
    print(f"stencil n={n}: total {a.sum():.6f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 64)
