"""OpenDwarfs fft port (kernels/measured/fft.py): the region's Stockham passes compute numpy.fft.fft in
single precision, and the passes' work items are AIWC's rows (fftRadix16Kernel ... fftRadix2Kernel) at
every size; the region's thread count (what work() returns) is the largest pass."""

from __future__ import annotations

import functools
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest

from kernels.measured import fft

AIWC = Path(__file__).resolve().parents[2] / "predictor" / "data" / "aiwc" / "full_dat.csv.gz"
FFT = numba.njit(fft.fft)


@functools.lru_cache(maxsize=None)
def _aiwc_fft_rows() -> dict:
    d = pd.read_csv(AIWC, usecols=["application", "kernel", "size", "workitems"])
    d = d[d.application == "fft"]
    return {(k, s): int(w) for (k, s), w in d.groupby(["kernel", "size"])["workitems"].first().items()}


def _as_complex(y):
    return y[:, 0].astype(np.float64) + 1j * y[:, 1].astype(np.float64)


def _check_against_numpy(x, got):
    want = np.fft.fft(_as_complex(x))
    rms_out = np.sqrt(np.mean(np.abs(want) ** 2))  # sqrt(N) times the input's rms (Parseval)
    err = np.max(np.abs(_as_complex(got) - want))
    assert err <= 1e-5 * rms_out, (x.shape[0], err / rms_out)  # single precision, a few passes


def test_sine_wave_at_the_test_point_equals_numpy():
    x, roots, rev = fft.make_inputs(fft.KERNELS[0].test_point, 0)
    got = FFT(x.copy(), roots, rev)
    _check_against_numpy(x, got)
    # a sine of 3 cycles: two spikes of height N/2 at bins 3 and N-3, nothing elsewhere
    n = x.shape[0]
    spec = _as_complex(got)
    assert abs(spec[3] - (-0.5j * n)) < 1e-3 and abs(spec[n - 3] - 0.5j * n) < 1e-3
    spec[[3, n - 3]] = 0
    assert np.max(np.abs(spec)) < 1e-3


@pytest.mark.parametrize("n", [2, 4, 8, 16, 32, 64, 512, 16384])
def test_random_input_equals_numpy(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, 2)).astype(np.float32)
    _check_against_numpy(x, FFT(x.copy(), *fft.tables()))


def test_plain_python_region_on_a_small_transform():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((128, 2)).astype(np.float32)  # 16 * 8: a radix-16 and a radix-8 pass
    _check_against_numpy(x, fft.fft(x.copy(), *fft.tables()))


def test_worked_examples_by_hand():
    roots, rev = fft.tables()
    x = np.array([[1.0, 0.0], [2.0, 0.0]], dtype=np.float32)
    assert FFT(x, roots, rev).tolist() == [[3.0, 0.0], [-1.0, 0.0]]
    # a delta at n = 1 gives exp(-2 pi i q / 4) = 1, -i, -1, i
    x = np.zeros((4, 2), dtype=np.float32)
    x[1, 0] = 1.0
    assert np.allclose(FFT(x, roots, rev), [[1, 0], [0, -1], [-1, 0], [0, 1]], atol=1e-7)
    assert rev.tolist() == [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15]
    assert np.allclose(roots[4], [0.0, -1.0], atol=1e-7)


def test_passes_are_16s_then_the_rest():
    assert fft.passes(2048) == [16, 16, 8]
    assert fft.passes(16384) == [16, 16, 16, 4]
    assert fft.passes(524288) == [16, 16, 16, 16, 8]
    assert fft.passes(2097152) == [16, 16, 16, 16, 16, 2]
    assert fft.passes(256) == [16, 16]
    with pytest.raises(ValueError):
        fft.passes(96)


@pytest.mark.parametrize("size", ["tiny", "small", "medium", "large"])
def test_every_pass_has_the_aiwc_rows_work_items(size):
    rows = {k: w for (k, s), w in _aiwc_fft_rows().items() if s == size}
    params = fft.KERNELS[0].points[size]
    pass_items = fft.pass_work_items(params)
    # every kernel AIWC timed at this size is a pass of ours, and every pass's kernel has a row
    assert {fft.KERNEL_OF_RADIX[r] for r, _ in pass_items} == set(rows)
    for r, items in pass_items:
        assert items == rows[fft.KERNEL_OF_RADIX[r]], (size, r)
    # Portcast counts a region's threads per launch: the largest pass, the last (smallest) radix's
    assert fft.work(params)[0] == params["n"] // fft.passes(params["n"])[-1] == max(rows.values())
