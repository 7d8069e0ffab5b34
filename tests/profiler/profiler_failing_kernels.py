"""Regions Numba cannot compile (the fallback notice names why and where): an unsupported NumPy function in a
helper, an unsupported keyword of a NumPy function, a Python object argument, a list of lists, a misspelt
attribute of a complex number, a value that is a scalar on one path and an array on the other."""

import numpy as np


class Config:
    def __init__(self, scale):
        self.scale = scale


def spectrum(v):
    return np.fft.fft(v)


def filtered(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i] * 2.0
    spec = spectrum(x)
    out[0] = spec[0].real
    return out


def median_rows(m):
    return np.percentile(m, 50.0, axis=0)


def scaled_sum(cfg, x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * cfg.scale
    return s


def grid_sum(grid):
    total = 0.0
    for row in grid:
        for v in row:
            total += v
    return total


def rotate(z, out):
    for k in range(out.shape[0]):
        out[k] = z.imaginary * k
    return out


def prefix_or_element(x):
    s = 0.0
    for i in range(1, x.shape[0]):
        s += (x[i] if x[i] > 0 else x[:i]).sum()
    return s
