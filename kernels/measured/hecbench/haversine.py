"""Great-circle distances by the haversine formula, HeCBench ``haversine``: the kernel
``compute_haversine_distance``.

``n = 6 num_cities`` location pairs ``(a_lat, a_lon, b_lat, b_lon)`` in degrees (a ``double4`` each). Thread
``i`` (guard ``i < n``) converts them to radians (``deg * pi / 180``), forms ``x = (b_lon - a_lon) / 2``,
``y = (b_lat - a_lat) / 2`` and writes ``2 R asin(sqrt(sin^2 y + sin^2 x cos(a_lat) cos(b_lat)))`` with ``R =
6371`` km.

Launch: one thread per pair, blocks of 256, ``ceil(n / 256)`` blocks. The program's constants: ``num_cities =
2^21`` cities each paired with 6 reference cities, ``n = 12582912``, 49152 blocks (the arguments are the
locations file and the repeat count ``100``); the timed launch is the first repeat (all identical).

Inputs: the original reads ``num_cities`` (latitude, longitude) pairs from a text file of world cities
(``../geodesic-cuda/locations.txt``, not part of the sources); it is synthesised here with the same size: the
cities uniformly distributed on the sphere (``lat = asin(u)`` for ``u`` uniform in ``[-1, 1]``, ``lon``
uniform in ``[-180, 180)``, NumPy's generator seeded with ``seed``). As in the original, the city list is
repeated 6 times and block ``c`` is paired with reference city ``index_map[c] - 1`` (``index_map = 436483,
1952407, 627919, 377884, 442703, 1863423``; taken modulo ``num_cities`` at the smaller test and feature
points). The kernel has no data-dependent control flow, so the synthetic cities change only the values.

Deliberate differences: ``num_cities`` is a parameter (the program's constant at the measured point).

Precision: double (float64), as the original.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

BLOCK = 256
NUM_REF_CITIES = 6
INDEX_MAP = (436483, 1952407, 627919, 377884, 442703, 1863423)
EARTH_RADIUS_KM = 6371.0

POINTS = {"../geodesic-cuda/locations.txt 100": {"num_cities": 2**21}}
TEST_POINT = {"num_cities": 200}
#: 2^14 cities instead of 2^21 (about 3.5e6 records)
FEATURE_POINT = {"num_cities": 2**14}


def compute_haversine_distance(p, distance, n, n_threads):
    """The haversine distance (km) of every location pair of ``p`` (``(n, 4)``: a_lat, a_lon, b_lat, b_lon in
    degrees) into ``distance``."""
    for i in numba.prange(n_threads):
        if i < n:
            ay = p[i, 0] * math.pi / 180.0
            ax = p[i, 1] * math.pi / 180.0
            by = p[i, 2] * math.pi / 180.0
            bx = p[i, 3] * math.pi / 180.0
            x = (bx - ax) / 2.0
            y = (by - ay) / 2.0
            sinysqrd = np.sin(y) * np.sin(y)
            sinxsqrd = np.sin(x) * np.sin(x)
            scale = np.cos(ay) * np.cos(by)
            distance[i] = 2.0 * EARTH_RADIUS_KM * np.arcsin(np.sqrt(sinysqrd + sinxsqrd * scale))
    return distance


@cuda.jit
def _haversine_gpu(p, distance, n):
    i = cuda.grid(1)
    if i < n:
        ay = p[i, 0] * math.pi / 180.0
        ax = p[i, 1] * math.pi / 180.0
        by = p[i, 2] * math.pi / 180.0
        bx = p[i, 3] * math.pi / 180.0
        x = (bx - ax) / 2.0
        y = (by - ay) / 2.0
        sinysqrd = math.sin(y) * math.sin(y)
        sinxsqrd = math.sin(x) * math.sin(x)
        scale = math.cos(ay) * math.cos(by)
        distance[i] = 2.0 * EARTH_RADIUS_KM * math.asin(math.sqrt(sinysqrd + sinxsqrd * scale))


def _to_device(p, distance, n, n_threads):
    return {"p": cuda.to_device(p), "d": cuda.to_device(distance), "n": int(n), "nt": int(n_threads)}


def _launch(s):
    _haversine_gpu[s["nt"] // BLOCK, BLOCK](s["p"], s["d"], s["n"])


def _from_device(s):
    return s["d"].copy_to_host()


def cities(num_cities, seed):
    """Synthetic city locations (latitude, longitude in degrees), uniform on the sphere."""
    rng = np.random.default_rng(seed)
    lat = np.degrees(np.arcsin(rng.uniform(-1.0, 1.0, num_cities)))
    lon = rng.uniform(-180.0, 180.0, num_cities)
    return lat, lon


def make_inputs(params, seed):
    """The host's pairs: the cities repeated 6 times, block ``c`` paired with reference city ``c``."""
    nc = int(params["num_cities"])
    lat, lon = cities(nc, seed)
    n = NUM_REF_CITIES * nc
    p = np.empty((n, 4))
    for c in range(NUM_REF_CITIES):
        ref = (INDEX_MAP[c] - 1) % nc
        p[c * nc:(c + 1) * nc, 0] = lat
        p[c * nc:(c + 1) * nc, 1] = lon
        p[c * nc:(c + 1) * nc, 2] = lat[ref]
        p[c * nc:(c + 1) * nc, 3] = lon[ref]
    return p, np.zeros(n), n, work(params)[0]


def work(params):
    n = NUM_REF_CITIES * int(params["num_cities"])
    return (n + BLOCK - 1) // BLOCK * BLOCK, BLOCK


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="haversine",
        kernel="compute_haversine_distance",
        description="HeCBench haversine: great-circle distance of every location pair, one thread each",
        cpu=compute_haversine_distance,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=1e-9,
        atol=1e-8,
    ),
]
