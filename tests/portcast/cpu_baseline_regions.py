"""Regions for tests/portcast/test_cpu_baseline.py: an n-body step as a NumPy user writes it (whole-array
operations), run as a script or through --function, and a script whose only region is a marked block."""

import sys

import numpy as np

import portcast


@portcast.region("nbody")
def step(pos, vel, mass, dt):
    d = pos[None, :, :] - pos[:, None, :]
    r2 = (d * d).sum(axis=2) + 1e-3
    inv = mass[None, :] / (r2 * np.sqrt(r2))
    acc = (d * inv[:, :, None]).sum(axis=1)
    vel += dt * acc
    pos += dt * vel
    return pos


def portcast_inputs(n=48):
    rng = np.random.default_rng(0)
    return rng.random((n, 3)), np.zeros((n, 3)), rng.random(n), 0.01


if __name__ == "__main__":
    pos, vel, mass, dt = portcast_inputs(int(sys.argv[1]) if len(sys.argv) > 1 else 48)
    before = pos.copy()
    step(pos, vel, mass, dt)
    assert not np.array_equal(pos, before)  # the traced call updated the script's own arrays, once
    if len(sys.argv) > 2:  # a marked block: traced, never re-run for a CPU time
        with portcast.region("drift"):
            for i in range(pos.shape[0]):
                pos[i, 0] = pos[i, 0] + dt
    print(f"nbody: {pos.sum():.6f}")
