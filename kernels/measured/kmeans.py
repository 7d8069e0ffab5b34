"""k-means clustering (``kmeans`` of Extended OpenDwarfs, from Rodinia): the two kernels AIWC timed.

The host reads (here: generates) ``npoints`` points of ``nfeatures`` features, row-major (one point per row),
and copies them to the device. ``invert_mapping`` transposes them there into feature-major order (one feature
per row), so that in the distance kernel consecutive work items read consecutive addresses. Then the
clustering loop starts: the host picks ``nclusters`` initial centres among the points, and every iteration
launches ``kmeansPoint``, which gives each point the index of its nearest centre (squared Euclidean distance,
the first centre on ties), copies the memberships back and recomputes the centres on the host, until few
points move.

Points and sizes (``-g -f 30 -p N``: ``N`` generated points of 30 features, 5 clusters, the default
``-m 5 -n 5``): tiny 256, small 2048, medium 65600, large 131072. Every feature is ``rand() / RAND_MAX``,
uniform in [0, 1]. The initial centres are ``nclusters`` distinct points drawn by the host's procedure: draw
an index among the points not yet taken, take that point, swap it to the end of the pool, shrink the pool.

Launch geometry (both kernels): a 1-D range of ``npoints`` work items in groups of 16 (the host's work-group
size when none is given on the command line; it requires ``npoints`` to be a multiple of it), one item per
point, each guarded by ``point < npoints`` as in the original.

* ``invert_mapping``: item ``p`` copies the ``nfeatures`` features of point ``p`` into column ``p`` of the
  feature-major array. AIWC's time for this kernel includes the host-to-device copy of the points (``npoints *
  nfeatures * 4`` bytes), which precedes it and is not part of the region or of the GPU port's launch: a
  comparison with the measured time has to add that transfer.
* ``kmeansPoint``: the first launch of the clustering loop (memberships all -1, the initial centres); item
  ``p`` computes the squared distance of point ``p`` to every centre, feature by feature in float32, and stores
  the index of the smallest.

The work of one item is written once, as plain functions compiled by ``numba.njit`` for the CPU regions and as
CUDA device functions for the GPU ports. The state before ``kmeansPoint`` (the transposed features, the
memberships, the initial centres) is made in ``make_inputs`` with NumPy.

Deliberate differences from the original:

* Arrays are 2-D (``[point, feature]`` before the inversion, ``[feature, point]`` after it, centres
  ``[cluster, feature]``) instead of flat pointers: the same elements in the same order.
* Inputs come from NumPy's generator (``seed``) instead of glibc ``rand()`` (features with the default seed,
  centres after ``srand(7)``): the same distributions; the values change no trip count, only which centre
  wins each point's comparisons.
* The region of ``invert_mapping`` allocates and returns the feature-major array (the original writes a
  buffer allocated before); ``kmeansPoint``'s updates the memberships in place and returns them.

Precision: single (float32 features, centres and distance accumulator, as the original's ``float``); every
floating-point record is FP_* (FP64 share 0).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ..spec import GpuPort
from .spec import MeasuredKernel

#: work-group size (the host's default)
BLOCK = 16
#: float32's largest finite value, the distance kernel's starting minimum
FLT_MAX = np.float32(3.4028234663852886e38)

_SIZES = {"tiny": 256, "small": 2048, "medium": 65600, "large": 131072}
_POINTS = {label: {"npoints": n, "nfeatures": 30, "nclusters": 5} for label, n in _SIZES.items()}
_TEST_POINT = _POINTS["tiny"]


def _cpu_and_gpu(fn):
    """``fn`` compiled for the CPU regions (``numba.njit``) and as a CUDA device function (the GPU ports)."""
    return numba.njit(cache=True)(fn), cuda.jit(device=True)(fn)


def _invert_item(points, features, p):
    """Work item ``p``: the features of point ``p`` (row ``p`` of ``points``) into column ``p`` of ``features``."""
    for i in range(points.shape[1]):
        features[i, p] = points[p, i]


def _nearest_item(features, centres, p):
    """Work item ``p``: index of the centre nearest to point ``p`` (column ``p`` of the feature-major
    ``features``), by float32 squared distance; the first of equals."""
    best = FLT_MAX
    index = -1
    for c in range(centres.shape[0]):
        dist = np.float32(0.0)
        for j in range(centres.shape[1]):
            diff = features[j, p] - centres[c, j]
            dist += diff * diff
        if dist < best:
            best = dist
            index = c
    return index


_invert_item_cpu, _invert_item_gpu = _cpu_and_gpu(_invert_item)
_nearest_item_cpu, _nearest_item_gpu = _cpu_and_gpu(_nearest_item)


def invert_mapping(points):
    """CPU region of ``invert_mapping``: the points transposed to feature-major order.

    Parameters
    ----------
    points : numpy.ndarray
        float32 ``(npoints, nfeatures)``, one point per row.

    Returns
    -------
    numpy.ndarray
        float32 ``(nfeatures, npoints)``: feature ``i`` of point ``p`` at ``[i, p]``.
    """
    npoints = points.shape[0]
    features = np.empty((points.shape[1], npoints), dtype=points.dtype)
    for p in numba.prange(npoints):
        if p < npoints:
            _invert_item_cpu(points, features, p)
    return features


def kmeans_point(features, membership, centres):
    """CPU region of ``kmeansPoint``: every point's nearest centre.

    Parameters
    ----------
    features : numpy.ndarray
        float32 ``(nfeatures, npoints)``, the feature-major points (``invert_mapping``'s output).
    membership : numpy.ndarray
        int32 ``(npoints,)``, the memberships before the launch (all -1 at the first); updated in place.
    centres : numpy.ndarray
        float32 ``(nclusters, nfeatures)``, the current centres.

    Returns
    -------
    numpy.ndarray
        ``membership``: the index of each point's nearest centre.
    """
    npoints = features.shape[1]
    for p in numba.prange(npoints):
        if p < npoints:
            membership[p] = _nearest_item_cpu(features, centres, p)
    return membership


@cuda.jit
def _invert_kernel(points, features):
    p = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if p < points.shape[0]:
        _invert_item_gpu(points, features, p)


@cuda.jit
def _point_kernel(features, membership, centres):
    p = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if p < features.shape[1]:
        membership[p] = _nearest_item_gpu(features, centres, p)


def _groups(npoints):
    if npoints % BLOCK:
        raise ValueError(f"kmeans: {npoints} points are not a multiple of the work-group size {BLOCK}")
    return npoints // BLOCK


def _invert_to_device(points):
    points = np.ascontiguousarray(points, dtype=np.float32)
    return {"points": cuda.to_device(points),
            "features": cuda.device_array((points.shape[1], points.shape[0]), dtype=np.float32)}


def _invert_launch(s):
    _invert_kernel[_groups(s["points"].shape[0]), BLOCK](s["points"], s["features"])


def _invert_from_device(s):
    return s["features"].copy_to_host()


def _point_to_device(features, membership, centres):
    return {"features": cuda.to_device(np.ascontiguousarray(features, dtype=np.float32)),
            "membership": cuda.to_device(np.ascontiguousarray(membership, dtype=np.int32)),
            "centres": cuda.to_device(np.ascontiguousarray(centres, dtype=np.float32))}


def _point_launch(s):
    _point_kernel[_groups(s["features"].shape[1]), BLOCK](s["features"], s["membership"], s["centres"])


def _point_from_device(s):
    return s["membership"].copy_to_host()


def generate_points(npoints, nfeatures, rng):
    """The host's ``-g`` feature space: ``npoints`` x ``nfeatures`` float32, each uniform in [0, 1)."""
    return rng.random((npoints, nfeatures), dtype=np.float32)


def initial_centres(points, nclusters, rng):
    """``nclusters`` distinct points as the first centres, drawn as the host does: an index among the points
    not yet taken, that point, then the taken index swapped to the end of the pool and the pool shrunk."""
    pool = np.arange(points.shape[0])
    left = points.shape[0]
    centres = np.empty((nclusters, points.shape[1]), dtype=np.float32)
    for c in range(nclusters):
        k = int(rng.integers(left))
        centres[c] = points[pool[k]]
        pool[k], pool[left - 1] = pool[left - 1], pool[k]
        left -= 1
    return centres


def _invert_inputs(params, seed):
    rng = np.random.default_rng(int(seed))
    return (generate_points(int(params["npoints"]), int(params["nfeatures"]), rng),)


def _point_inputs(params, seed):
    rng = np.random.default_rng(int(seed))
    points = generate_points(int(params["npoints"]), int(params["nfeatures"]), rng)
    centres = initial_centres(points, int(params["nclusters"]), rng)
    membership = np.full(points.shape[0], -1, dtype=np.int32)
    return np.ascontiguousarray(points.T), membership, centres


def _work(params):
    npoints = int(params["npoints"])
    _groups(npoints)
    return npoints, BLOCK


KERNELS = [
    MeasuredKernel(
        source="aiwc",
        application="kmeans",
        kernel="invert_mapping",
        description="transpose of the points to feature-major order, one work item per point (AIWC's time "
        "includes the host-to-device copy of the points)",
        cpu=invert_mapping,
        gpu=GpuPort(_invert_to_device, _invert_launch, _invert_from_device),
        make_inputs=_invert_inputs,
        points=_POINTS,
        work=_work,
        test_point=_TEST_POINT,
        rtol=0.0,
        atol=0.0,
    ),
    MeasuredKernel(
        source="aiwc",
        application="kmeans",
        kernel="kmeansPoint",
        description="nearest of 5 centres for every point (30 float32 features), one work item per point, "
        "first launch of the clustering loop",
        cpu=kmeans_point,
        gpu=GpuPort(_point_to_device, _point_launch, _point_from_device),
        make_inputs=_point_inputs,
        points=_POINTS,
        work=_work,
        test_point=_TEST_POINT,
        rtol=0.0,
        atol=0.0,
    ),
]
