"""All-pairs n-body accelerations and a velocity update, float64 (or float32 with a second argument).

    portcast profile examples/nbody.py --gpu rtx4090 -- 256          # float64: FP64 runs at 1/64 of FP32 there
    portcast profile examples/nbody.py --gpu rtx4090 -- 256 float32
"""
import math
import sys

import numpy as np

import portcast


@portcast.region("nbody")
def nbody(pos, vel, mass, dt, eps2):
    n = pos.shape[0]
    for i in portcast.parallel(range(n)):
        ax = 0.0
        ay = 0.0
        az = 0.0
        for j in range(n):
            dx = pos[j, 0] - pos[i, 0]
            dy = pos[j, 1] - pos[i, 1]
            dz = pos[j, 2] - pos[i, 2]
            d2 = dx * dx + dy * dy + dz * dz + eps2
            inv = 1.0 / (d2 * math.sqrt(d2))
            ax += mass[j] * dx * inv
            ay += mass[j] * dy * inv
            az += mass[j] * dz * inv
        vel[i, 0] += dt * ax
        vel[i, 1] += dt * ay
        vel[i, 2] += dt * az
    return vel


def portcast_inputs(n=256, dtype=np.float64):
    rng = np.random.default_rng(1)
    return (rng.random((n, 3)).astype(dtype), np.zeros((n, 3), dtype), rng.random(n).astype(dtype),
            dtype(0.01), dtype(1e-3))


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    dtype = np.float32 if len(sys.argv) > 2 and sys.argv[2] == "float32" else np.float64
    args = portcast_inputs(n, dtype)
    nbody(*args)
    print(f"nbody n={n} {np.dtype(dtype).name}: {args[1].sum():.6f}")
