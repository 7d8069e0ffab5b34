"""Scaling values and the chained prediction of Wu et al. (HPCA 2015, Sec. III-B, Fig. 7 and 8, Eq. 1).

A kernel's measurements form an array ``t[cu, core, mem]`` over the configuration grid (values sorted
ascending along each axis). From it:

- engine (core) clock scaling values, per CU count: ``E[cu, j, m] = t[cu, j+1, m] / t[cu, j, m]``:
  the factor from core step ``j`` to ``j+1`` at memory clock ``m`` (Fig. 7c, there with rows = memory
  clock, columns = engine step; here stored as ``[cu, engine step, memory clock]``);
- memory clock scaling values, per CU count: ``M[cu, c, i] = t[cu, c, i+1] / t[cu, c, i]`` (Fig. 7b);
- CU scaling values at the base core and memory clock: ``C[k] = t[k+1, cb, mb] / t[k, cb, mb]`` (Fig. 8).

Prediction from base ``(s, c, m)`` to target ``(s', c', m')`` (Eq. 1, with CU scaling first):
multiply the base value by the CU values from ``s`` to ``s'``, then the engine values of CU count ``s'``
from ``c`` to ``c'`` at memory clock ``m``, then the memory values of ``s'`` from ``m`` to ``m'`` at core
clock ``c'``. Going down a step multiplies by the reciprocal. The implementation adds logarithms of
cumulative products, so all targets of a kernel come out of one vectorised expression.
"""

from __future__ import annotations

import numpy as np


def engine_scaling(cube: np.ndarray) -> np.ndarray:
    """Engine clock scaling values ``E[..., cu, j, m] = t[..., cu, j+1, m] / t[..., cu, j, m]``.

    Parameters
    ----------
    cube:
        Values of shape (..., n_cu, n_core, n_mem).

    Returns
    -------
    numpy.ndarray
        Shape (..., n_cu, n_core - 1, n_mem).
    """
    cube = np.asarray(cube, dtype=float)
    return cube[..., 1:, :] / cube[..., :-1, :]


def memory_scaling(cube: np.ndarray) -> np.ndarray:
    """Memory clock scaling values ``M[..., cu, c, i] = t[..., cu, c, i+1] / t[..., cu, c, i]``.

    Returns
    -------
    numpy.ndarray
        Shape (..., n_cu, n_core, n_mem - 1).
    """
    cube = np.asarray(cube, dtype=float)
    return cube[..., 1:] / cube[..., :-1]


def cu_scaling(cube: np.ndarray, core_index: int, mem_index: int) -> np.ndarray:
    """CU scaling values at one base core/memory clock: ``C[..., k] = t[..., k+1, cb, mb] / t[..., k, cb, mb]``.

    Returns
    -------
    numpy.ndarray
        Shape (..., n_cu - 1).
    """
    col = np.asarray(cube, dtype=float)[..., :, core_index, mem_index]
    return col[..., 1:] / col[..., :-1]


def frequency_features(cube: np.ndarray, cu_index: int) -> np.ndarray:
    """The clustering vector of one CU count: engine values then memory values, flattened.

    Parameters
    ----------
    cube:
        (n_kernels, n_cu, n_core, n_mem).
    cu_index:
        Which CU count.

    Returns
    -------
    numpy.ndarray
        (n_kernels, (n_core-1)*n_mem + n_core*(n_mem-1)).
    """
    e = engine_scaling(cube)[:, cu_index]
    m = memory_scaling(cube)[:, cu_index]
    return np.concatenate([e.reshape(len(e), -1), m.reshape(len(m), -1)], axis=1)


def split_frequency_features(vec: np.ndarray, n_core: int, n_mem: int) -> tuple[np.ndarray, np.ndarray]:
    """Inverse of :func:`frequency_features` for one CU count: (E (n_core-1, n_mem), M (n_core, n_mem-1))."""
    ne = (n_core - 1) * n_mem
    return vec[:ne].reshape(n_core - 1, n_mem), vec[ne:].reshape(n_core, n_mem - 1)


def chain_surface(base_value, base_index, E, M, C) -> np.ndarray:
    """Predicted values at every configuration by chaining scaling values from the base (Eq. 1).

    Parameters
    ----------
    base_value:
        Measured value(s) at the base configuration; scalar or shape (n,).
    base_index:
        (cu, core, mem) indices of the base configuration.
    E:
        Engine values (n, n_cu, n_core-1, n_mem) or (n_cu, n_core-1, n_mem): for each target CU count,
        those of the cluster chosen for that CU count.
    M:
        Memory values (n, n_cu, n_core, n_mem-1) or without the leading axis.
    C:
        CU values at the base clocks (n, n_cu-1) or (n_cu-1,).

    Returns
    -------
    numpy.ndarray
        (n, n_cu, n_core, n_mem), or (n_cu, n_core, n_mem) when ``base_value`` is a scalar.
    """
    scalar = np.ndim(base_value) == 0
    b = np.atleast_1d(np.asarray(base_value, dtype=float))
    E = np.asarray(E, dtype=float)
    M = np.asarray(M, dtype=float)
    C = np.asarray(C, dtype=float)
    if E.ndim == 3:
        E, M, C = E[None], M[None], C[None]
    n, n_cu, _, n_mem = E.shape
    n_core = M.shape[2]
    s, c, m = base_index
    z = lambda shape: np.zeros(shape)  # noqa: E731
    LE = np.concatenate([z((n, n_cu, 1, n_mem)), np.cumsum(np.log(E), axis=2)], axis=2)   # (n,cu,core,mem)
    LM = np.concatenate([z((n, n_cu, n_core, 1)), np.cumsum(np.log(M), axis=3)], axis=3)  # (n,cu,core,mem)
    LC = np.concatenate([z((n, 1)), np.cumsum(np.log(C), axis=1)], axis=1)                # (n,cu)
    log_t = (np.log(b)[:, None, None, None]
             + (LC - LC[:, s:s + 1])[:, :, None, None]
             + (LE[:, :, :, m] - LE[:, :, c:c + 1, m])[:, :, :, None]
             + (LM - LM[:, :, :, m:m + 1]))
    out = np.exp(log_t)
    return out[0] if scalar else out


def chain_reference(base_value: float, base_index, target_index, E, M, C) -> float:
    """Slow, literal Eq. 1 for one kernel and one target: walk step by step, multiplying values or reciprocals.

    Used by the tests as the obviously-correct reference for :func:`chain_surface`.
    """
    s, c, m = base_index
    s2, c2, m2 = target_index
    v = float(base_value)
    k = s
    while k < s2:
        v *= C[k]
        k += 1
    while k > s2:
        k -= 1
        v /= C[k]
    j = c
    while j < c2:
        v *= E[s2][j][m]
        j += 1
    while j > c2:
        j -= 1
        v /= E[s2][j][m]
    i = m
    while i < m2:
        v *= M[s2][c2][i]
        i += 1
    while i > m2:
        i -= 1
        v /= M[s2][c2][i]
    return v
