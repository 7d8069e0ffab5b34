"""kmeans_assign: the assignment step of k-means: the nearest of ``k`` centroids for each of ``n`` points.

Per point: ``k * d`` squared differences, a running minimum (data-dependent branch). The GPU port keeps the
centroids in shared memory and stores the points feature-major (transposed in ``to_device``, as GPU
k-means codes do) so that consecutive threads read consecutive addresses. Points are drawn around the
centroids so that the nearest centroid is never a rounding-level tie.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ._launch import blocks_for, rng
from .spec import GpuPort, KernelSpec

TPB = 128
K = 32
D = 16


def kmeans_assign_cpu(X, C):
    """CPU region: index of the nearest centroid (squared Euclidean distance, first minimum wins).

    Parameters
    ----------
    X : numpy.ndarray
        float32 points, shape ``(n, d)``.
    C : numpy.ndarray
        float32 centroids, shape ``(k, d)``.

    Returns
    -------
    numpy.ndarray
        int32 labels of length ``n``.
    """
    n, d = X.shape
    k = C.shape[0]
    labels = np.empty(n, dtype=np.int32)
    for i in numba.prange(n):
        best = 0
        best_dist = np.inf
        for c in range(k):
            dist = np.float32(0.0)
            for f in range(d):
                diff = X[i, f] - C[c, f]
                dist += diff * diff
            if dist < best_dist:
                best_dist = dist
                best = c
        labels[i] = best
    return labels


@cuda.jit
def _kmeans_kernel(Xt, C, labels):
    sc = cuda.shared.array(shape=(K, D), dtype=numba.float32)
    t = cuda.threadIdx.x
    e = t
    while e < K * D:
        sc[e // D, e % D] = C[e // D, e % D]
        e += TPB
    cuda.syncthreads()
    i = cuda.grid(1)
    n = Xt.shape[1]
    if i < n:
        best = 0
        best_dist = np.inf
        for c in range(K):
            dist = numba.float32(0.0)
            for f in range(D):
                diff = Xt[f, i] - sc[c, f]
                dist += diff * diff
            if dist < best_dist:
                best_dist = dist
                best = c
        labels[i] = best


def _to_device(X, C):
    if C.shape != (K, D) or X.shape[1] != D:
        raise ValueError(f"kmeans_assign GPU port is compiled for k={K}, d={D}; got X {X.shape}, C {C.shape}")
    return {"Xt": cuda.to_device(np.ascontiguousarray(X.T)), "C": cuda.to_device(C),
            "labels": cuda.device_array(X.shape[0], dtype=np.int32)}


def _launch(s):
    n = s["Xt"].shape[1]
    _kmeans_kernel[blocks_for(n, TPB), TPB](s["Xt"], s["C"], s["labels"])


def _from_device(s):
    return s["labels"].copy_to_host()


def make_inputs(n, seed):
    """``(X, C)``: 32 centroids uniform in [0, 10)^16 and ``n`` points, each a centroid plus N(0, 0.3^2) noise."""
    g = rng(seed)
    C = g.uniform(0.0, 10.0, (K, D)).astype(np.float32)
    owner = g.integers(0, K, n)
    X = (C[owner] + g.normal(0.0, 0.3, (n, D))).astype(np.float32)
    return X, C


KERNEL = KernelSpec(
    name="kmeans_assign",
    category="special",
    description="k-means assignment (k=32, d=16, float32); centroids in shared memory, points feature-major",
    cpu=kmeans_assign_cpu,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 200, "small": 1 << 15, "medium": 1 << 18, "large": 1 << 20},
    rtol=0.0,
    atol=0.0,
    expect_gpu_faster=True,
)
