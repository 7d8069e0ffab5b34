"""Irregular, divergent and serial kernels: CPU region (plain Python) == numba.njit(CPU) == GPU port on the CUDA
simulator == an independent NumPy/SciPy/zlib reference, at the ``tiny`` size; plus worked examples with
hand-checked numbers and hypothesis property tests of the compiled regions against slow references."""

from __future__ import annotations

import importlib
import zlib

import numba
import numpy as np
import pytest
import scipy.linalg
import scipy.sparse
import scipy.sparse.csgraph
import scipy.sparse.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

CORPUS_B = [
    "bellman_ford", "bfs", "bitonic_sort", "collatz_lengths", "crc32", "dp_loop_carried",
    "floyd_warshall", "gather", "gups", "lu_panel", "mandelbrot", "needleman_wunsch", "pagerank",
    "particle_resample", "ray_sphere", "scatter", "spmv_csr", "sptrsv", "string_match", "tree_traversal",
    "tridiagonal",
]

_JIT: dict = {}


def spec_of(name):
    return importlib.import_module(f"kernels.{name}").KERNEL


def jitted(name):
    """numba.njit of the kernel's CPU region, compiled once per test session."""
    if name not in _JIT:
        _JIT[name] = numba.njit(cache=True)(spec_of(name).cpu)
    return _JIT[name]


# ---- independent references -------------------------------------------------------------------------


def ref_spmv_csr(indptr, indices, data, x):
    n = indptr.shape[0] - 1
    return scipy.sparse.csr_matrix((data, indices, indptr), shape=(n, x.shape[0])) @ x


def ref_gather(src, idx):
    return src[idx]


def ref_scatter(src, perm):
    out = np.full(src.shape[0], np.nan)
    out[perm] = src
    return out


def ref_bfs(indptr, indices, source):
    n = indptr.shape[0] - 1
    g = scipy.sparse.csr_matrix((np.ones(indices.shape[0]), indices, indptr), shape=(n, n))
    d = scipy.sparse.csgraph.shortest_path(g, directed=True, unweighted=True, indices=source)
    return np.where(np.isinf(d), -1, d).astype(np.int32)


def ref_bellman_ford(indptr, src, weight, source):
    n = indptr.shape[0] - 1
    dst = np.repeat(np.arange(n), np.diff(indptr))
    dense = np.full((n, n), np.inf)
    np.minimum.at(dense, (src, dst), weight)
    g = scipy.sparse.csgraph.csgraph_from_dense(dense, null_value=np.inf)
    return scipy.sparse.csgraph.dijkstra(g, directed=True, indices=source)


def ref_pagerank(indptr, src, outdeg, iterations):
    n = indptr.shape[0] - 1
    dst = np.repeat(np.arange(n), np.diff(indptr))
    M = np.zeros((n, n))
    np.add.at(M, (dst, src), 1.0 / outdeg[src])
    r = np.full(n, 1.0 / n)
    for _ in range(iterations):
        r = (1 - 0.85) / n + 0.85 * (M @ r)
    return r


def ref_tree_traversal(key, left, right, queries):
    where = {int(k): i for i, k in enumerate(key)}
    depth_of = np.zeros(key.shape[0], dtype=np.int64)
    stack = [0]
    while stack:  # depth of every node, root first
        v = stack.pop()
        for c in (left[v], right[v]):
            if c != -1:
                depth_of[c] = depth_of[v] + 1
                stack.append(c)
    found = np.array([where.get(int(q), -1) for q in queries], dtype=np.int64)
    return found, depth_of


def ref_mandelbrot(xs, ys, max_iter):
    c = xs[None, :] + 1j * ys[:, None]
    z = np.zeros_like(c)
    count = np.zeros(c.shape, dtype=np.int32)
    alive = np.ones(c.shape, dtype=bool)
    for _ in range(max_iter):
        alive &= (z.real * z.real + z.imag * z.imag) <= 4.0
        if not alive.any():
            break
        z[alive] = z[alive] * z[alive] + c[alive]
        count[alive] += 1
    return count


def ref_needleman_wunsch(a, b):
    n = a.shape[0]
    H = [[0] * (n + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        H[i][0] = H[0][i] = -2 * i
    for i in range(1, n + 1):
        for j in range(1, n + 1):
            s = 2 if a[i - 1] == b[j - 1] else -1
            H[i][j] = max(H[i - 1][j - 1] + s, H[i - 1][j] - 2, H[i][j - 1] - 2)
    return np.array(H, dtype=np.int32)


def collatz_py(v):
    steps = 0
    while v != 1:
        v = v // 2 if v % 2 == 0 else 3 * v + 1
        steps += 1
    return steps


def ref_collatz_lengths(starts):
    return np.array([collatz_py(int(v)) for v in starts], dtype=np.int64)


def ref_particle_resample(weights, u0):
    cdf = np.cumsum(weights)
    n = weights.shape[0]
    return np.searchsorted(cdf, (np.arange(n) + u0) * cdf[-1] / n, side="right")


def ref_ray_sphere(origins, dirs, spheres):
    L = origins[:, None, :] - spheres[None, :, :3]
    b = np.einsum("nk,nsk->ns", dirs, L)
    c = np.einsum("nsk,nsk->ns", L, L) - spheres[None, :, 3] ** 2
    disc = b * b - c
    sq = np.sqrt(np.where(disc >= 0, disc, 0.0))
    t = np.where(-b - sq >= 1e-9, -b - sq, -b + sq)
    t = np.where((disc >= 0) & (t > 1e-9), t, np.inf)
    hit = np.where(np.isinf(t.min(axis=1)), -1, t.argmin(axis=1))
    return t.min(axis=1), hit


def ref_crc32(buf):
    return zlib.crc32(buf.tobytes())


def ref_tridiagonal(a, b, c, d):
    out = np.empty_like(b)
    for s in range(b.shape[0]):
        ab = np.zeros((3, b.shape[1]))
        ab[0, 1:] = c[s, :-1]
        ab[1] = b[s]
        ab[2, :-1] = a[s, 1:]
        out[s] = scipy.linalg.solve_banded((1, 1), ab, d[s])
    return out


def ref_dp_loop_carried(weights, values, capacity):
    best = np.zeros(capacity + 1, dtype=np.int64)
    for w, v in zip(weights, values):
        if w <= capacity:
            shifted = best.copy()
            shifted[w:] = np.maximum(best[w:], best[:-w] + v)
            best = shifted
    return best


def ref_floyd_warshall(dist):
    return scipy.sparse.csgraph.floyd_warshall(dist, directed=True)


def ref_bitonic_sort(x):
    return np.sort(x)


def ref_string_match(text, pattern):
    win = np.lib.stride_tricks.sliding_window_view(text, pattern.shape[0])
    return np.all(win == pattern, axis=1).astype(np.uint8)


def ref_sptrsv(indptr, indices, data, diag, b, level_ptr, level_rows):
    n = b.shape[0]
    L = scipy.sparse.csr_matrix((data, indices, indptr), shape=(n, n)) + scipy.sparse.diags(diag)
    return scipy.sparse.linalg.spsolve_triangular(L.tocsr(), b, lower=True)


def ref_gups(table, idx, val):
    out = table.copy()
    np.bitwise_xor.at(out, idx, val)
    return out


def compare_reference(name, inputs, result):
    """Check ``result`` (the CPU region's) against the independent reference of kernel ``name``."""
    if name == "tree_traversal":
        found, depth = result
        ref_found, depth_of = ref_tree_traversal(*inputs)
        np.testing.assert_array_equal(found, ref_found)
        hit = found >= 0
        np.testing.assert_array_equal(depth[hit], depth_of[found[hit]])
        key, queries = inputs[0], inputs[3]
        np.testing.assert_array_equal(key[found[hit]], queries[hit])
        return
    if name == "lu_panel":
        (A,) = inputs
        LU, piv = result
        m, b = A.shape
        L = np.tril(LU, -1)[:, :b] + np.eye(m, b)
        U = np.triu(LU[:b])
        PA = A.copy()
        for k in range(b):  # apply the row swaps in order
            PA[[k, piv[k]]] = PA[[piv[k], k]]
        np.testing.assert_allclose(L @ U, PA, rtol=1e-10, atol=1e-12)
        _, L_ref, U_ref = scipy.linalg.lu(A)
        np.testing.assert_allclose(U, U_ref, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(L, L_ref, rtol=1e-10, atol=1e-12)
        return
    ref = globals()[f"ref_{name}"](*inputs)
    if name == "ray_sphere":
        np.testing.assert_allclose(result[0], ref[0], rtol=1e-9)
        np.testing.assert_array_equal(result[1], ref[1])
    elif name in ("crc32",):
        assert result == ref
    else:
        np.testing.assert_allclose(np.asarray(result), np.asarray(ref), rtol=1e-9, atol=1e-12)


# ---- the corpus contract ------------------------------------------------------------------------------


def test_irregular_kernels_are_registered():
    from kernels.registry import all_kernels

    corpus = all_kernels()
    assert set(CORPUS_B) <= set(corpus)
    assert len(CORPUS_B) >= 20
    for name in CORPUS_B:
        spec = corpus[name]
        assert spec.name == name
        assert spec.expect_gpu_faster in (True, False)
        assert spec.sizes["tiny"] < spec.sizes["small"] < spec.sizes["medium"] < spec.sizes["large"]
    slow = {n for n in CORPUS_B if corpus[n].expect_gpu_faster is False}
    assert slow == {"crc32", "dp_loop_carried", "lu_panel", "sptrsv", "tridiagonal"}


@pytest.mark.parametrize("name", CORPUS_B)
def test_cpu_njit_gpu_and_reference_agree(name):
    spec = spec_of(name)
    inputs = spec.make_inputs(spec.sizes["tiny"], 0)
    py = spec.cpu(*inputs)
    compare_reference(name, inputs, py)
    spec.check(py, jitted(name)(*inputs))
    spec.check(py, spec.gpu.run(*inputs))


@pytest.mark.parametrize("name", CORPUS_B)
def test_make_inputs_is_deterministic(name):
    spec = spec_of(name)
    a = spec.make_inputs(spec.sizes["tiny"], 7)
    b = spec.make_inputs(spec.sizes["tiny"], 7)
    c = spec.make_inputs(spec.sizes["tiny"], 8)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    assert any(not np.array_equal(np.asarray(x), np.asarray(z)) for x, z in zip(a, c))


def test_cpu_regions_do_not_modify_inputs():
    for name in ("lu_panel", "floyd_warshall", "bitonic_sort", "gups"):
        spec = spec_of(name)
        inputs = spec.make_inputs(spec.sizes["tiny"], 1)
        before = [np.array(x, copy=True) for x in inputs]
        spec.cpu(*inputs)
        for x, y in zip(before, inputs):
            np.testing.assert_array_equal(x, np.asarray(y))


# ---- worked examples with hand-checked values ---------------------------------------------------------


def test_crc32_check_value():
    # The CRC-32 "check" value of the ASCII digits 1..9 is 0xCBF43926 (IEEE 802.3 / zlib).
    buf = np.frombuffer(b"123456789", dtype=np.uint8)
    assert spec_of("crc32").cpu(buf) == 0xCBF43926
    assert spec_of("crc32").gpu.run(buf) == 0xCBF43926


def test_collatz_known_lengths():
    # 1 -> 0 steps, 6 -> 3 -> 10 -> 5 -> 16 -> 8 -> 4 -> 2 -> 1 is 8 steps, 27 takes 111 steps.
    starts = np.array([1, 2, 6, 7, 27], dtype=np.int64)
    np.testing.assert_array_equal(spec_of("collatz_lengths").cpu(starts), [0, 1, 8, 16, 111])


def test_knapsack_worked_example():
    # items (weight, value): (1, 1), (3, 4), (4, 5), (5, 7); best values for capacities 0..7:
    # c=3: {3}=4; c=4: {1,3}=5 or {4}=5; c=5: {5}=7; c=6: {1,5}=8; c=7: {3,4}=9.
    w = np.array([1, 3, 4, 5], dtype=np.int64)
    v = np.array([1, 4, 5, 7], dtype=np.int64)
    expected = [0, 1, 1, 4, 5, 7, 8, 9]
    np.testing.assert_array_equal(spec_of("dp_loop_carried").cpu(w, v, 7), expected)
    np.testing.assert_array_equal(spec_of("dp_loop_carried").gpu.run(w, v, 7), expected)


def test_needleman_wunsch_worked_example():
    # a = ACGT..., b equal except position 2: 15 matches (+30) and one mismatch (-1) = 29.
    a = np.array([0, 1, 2, 3] * 4, dtype=np.int8)
    b = a.copy()
    b[2] = 0
    H = spec_of("needleman_wunsch").cpu(a, b)
    assert H[16, 16] == 29
    assert H[1, 1] == 2 and H[0, 5] == -10 and H[1, 2] == 0  # A/A match; gaps; A vs AC: match then gap
    np.testing.assert_array_equal(spec_of("needleman_wunsch").gpu.run(a, b), H)


def test_bfs_worked_example():
    # 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3, 3 -> 4, 5 -> 0 (5 unreachable from 0)
    indptr = np.array([0, 2, 3, 4, 5, 5, 6], dtype=np.int64)
    indices = np.array([1, 2, 3, 3, 4, 0], dtype=np.int64)
    expected = [0, 1, 1, 2, 3, -1]
    np.testing.assert_array_equal(spec_of("bfs").cpu(indptr, indices, 0), expected)
    np.testing.assert_array_equal(spec_of("bfs").gpu.run(indptr, indices, 0), expected)


def test_bellman_ford_worked_example():
    # edges into each vertex (src, weight): 1 <- (0, 4); 2 <- (0, 1); 1 <- (2, 2); 3 <- (1, 1)
    indptr = np.array([0, 0, 2, 3, 4], dtype=np.int64)
    src = np.array([0, 2, 0, 1], dtype=np.int64)
    weight = np.array([4.0, 2.0, 1.0, 1.0])
    expected = [0.0, 3.0, 1.0, 4.0]  # 0 -> 2 -> 1 -> 3
    np.testing.assert_array_equal(spec_of("bellman_ford").cpu(indptr, src, weight, 0), expected)
    np.testing.assert_array_equal(spec_of("bellman_ford").gpu.run(indptr, src, weight, 0), expected)


def test_particle_resample_worked_example():
    # weights 1, 0, 3 (total 4), n = 3, u0 = 0.5: u = 0.5*4/3, 1.5*4/3, 2.5*4/3 = 0.67, 2, 3.33;
    # cumulative 1, 1, 4 -> first cdf > u: index 0, 2, 2.
    w = np.array([1.0, 0.0, 3.0])
    np.testing.assert_array_equal(spec_of("particle_resample").cpu(w, 0.5), [0, 2, 2])


def test_tree_traversal_worked_example():
    # keys inserted 50, 30, 70, 20, 40: 50 root; 30, 70 children; 20, 40 under 30.
    key = np.array([50, 30, 70, 20, 40], dtype=np.int64)
    left = np.array([1, 3, -1, -1, -1], dtype=np.int64)
    right = np.array([2, 4, -1, -1, -1], dtype=np.int64)
    queries = np.array([40, 50, 45, 10], dtype=np.int64)
    found, depth = spec_of("tree_traversal").cpu(key, left, right, queries)
    np.testing.assert_array_equal(found, [4, 0, -1, -1])
    np.testing.assert_array_equal(depth, [2, 0, 3, 3])  # 45: 50 -> 30 -> 40 -> (right: none)


def test_ray_sphere_worked_example():
    # a unit sphere at z = 5: a ray along +z from the origin hits at t = 4; a ray along +x misses.
    origins = np.zeros((2, 3))
    dirs = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    spheres = np.array([[0.0, 0.0, 5.0, 1.0]])
    t, hit = spec_of("ray_sphere").cpu(origins, dirs, spheres)
    np.testing.assert_array_equal(t, [4.0, np.inf])
    np.testing.assert_array_equal(hit, [0, -1])


def test_lu_panel_pivots_on_largest_entry():
    A = np.array([[1.0, 2.0], [4.0, 1.0], [2.0, 8.0]])
    LU, piv = spec_of("lu_panel").cpu(A)
    # step 0 pivots row 1 (|4|); rows become [4,1],[1,2],[2,8]; multipliers 0.25, 0.5;
    # trailing column 2 - 0.25 = 1.75, 8 - 0.5 = 7.5; step 1 pivots row 2 (7.5), multiplier 1.75/7.5.
    np.testing.assert_array_equal(piv, [1, 2])
    np.testing.assert_allclose(LU, [[4.0, 1.0], [0.5, 7.5], [0.25, 1.75 / 7.5]], rtol=1e-15)


def test_gpu_port_input_validation():
    with pytest.raises(ValueError, match="power-of-two"):
        spec_of("bitonic_sort").gpu.run(np.arange(6.0))
    with pytest.raises(ValueError, match="multiple of 16"):
        spec_of("needleman_wunsch").gpu.run(np.zeros(10, np.int8), np.zeros(10, np.int8))


# ---- property tests: compiled regions against slow, obviously-correct references ----------------------


@settings(max_examples=40, deadline=None)
@given(st.binary(min_size=0, max_size=300))
def test_crc32_matches_zlib(data):
    assert jitted("crc32")(np.frombuffer(data, dtype=np.uint8)) == zlib.crc32(data)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 7), st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=128))
def test_bitonic_sort_sorts(log_n, values):
    n = 1 << log_n
    x = np.resize(np.array(values), n)
    np.testing.assert_array_equal(jitted("bitonic_sort")(x), np.sort(x))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 12), st.integers(0, 50)), min_size=1, max_size=8), st.integers(0, 30))
def test_knapsack_matches_brute_force(items, capacity):
    w = np.array([i[0] for i in items], dtype=np.int64)
    v = np.array([i[1] for i in items], dtype=np.int64)
    got = jitted("dp_loop_carried")(w, v, capacity)
    for c in range(capacity + 1):
        best = 0
        for mask in range(1 << len(items)):
            sel = [k for k in range(len(items)) if mask >> k & 1]
            if sum(w[sel]) <= c:
                best = max(best, int(sum(v[sel])))
        assert got[c] == best


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 20), min_size=1, max_size=60), st.floats(0.0, 0.999))
def test_particle_resample_matches_searchsorted(weights, u0):
    w = np.array(weights, dtype=np.float64)
    w[0] += 1.0
    np.testing.assert_array_equal(jitted("particle_resample")(w, u0), ref_particle_resample(w, u0))


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_string_match_matches_sliding_window(n, seed):
    rng = np.random.default_rng(seed)
    text = rng.integers(0, 2, size=n + 3, dtype=np.uint8)
    pattern = rng.integers(0, 2, size=3, dtype=np.uint8)
    np.testing.assert_array_equal(jitted("string_match")(text, pattern), ref_string_match(text, pattern))


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 30), st.integers(0, 2**32 - 1))
def test_sptrsv_solves_the_system(n, seed):
    spec = spec_of("sptrsv")
    inputs = spec.make_inputs(n, seed)
    np.testing.assert_allclose(jitted("sptrsv")(*inputs), ref_sptrsv(*inputs), rtol=1e-10, atol=1e-12)


def test_particle_resample_block_total_scan_with_chunks():
    # More block totals than scan threads: each of the 32 threads scans a chunk of 4 (the last 1 short).
    from numba import cuda

    from kernels.particle_resample import _scan_block_sums

    sums = np.arange(1.0, 128.0)  # 127 totals
    d = cuda.to_device(sums)
    _scan_block_sums[1, 32](d)
    np.testing.assert_array_equal(d.copy_to_host(), np.concatenate([[0.0], np.cumsum(sums)[:-1]]))
