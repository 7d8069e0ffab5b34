"""Scaling values (Fig. 7, 8) and chaining (Eq. 1): a worked example and properties against a slow reference."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from gpu_models.scaling.surfaces import (
    chain_reference,
    chain_surface,
    cu_scaling,
    engine_scaling,
    frequency_features,
    memory_scaling,
    split_frequency_features,
)

# one kernel, 2 CU counts x 2 core clocks x 2 memory clocks: t[cu][core][mem]
T = np.array([[[10.0, 8.0], [5.0, 4.0]],
              [[6.0, 5.0], [3.0, 2.5]]])


def test_worked_example_scaling_values():
    E = engine_scaling(T)
    M = memory_scaling(T)
    np.testing.assert_allclose(E, [[[0.5, 0.5]], [[0.5, 0.5]]])
    np.testing.assert_allclose(M, [[[0.8], [0.8]], [[5 / 6], [2.5 / 3]]])
    np.testing.assert_allclose(cu_scaling(T, 0, 0), [0.6])
    np.testing.assert_allclose(cu_scaling(T, 1, 1), [2.5 / 4])
    # Eq. 1 path from (cu0, core0, mem0) = 10 to (cu1, core1, mem1): 10 * 0.6 * 0.5 * (2.5/3) = 2.5
    assert chain_reference(10.0, (0, 0, 0), (1, 1, 1), E, M, cu_scaling(T, 0, 0)) == 2.5
    out = chain_surface(10.0, (0, 0, 0), E, M, cu_scaling(T, 0, 0))
    np.testing.assert_allclose(out, T)
    # downward: from the fastest configuration back to the slowest uses reciprocals
    out = chain_surface(2.5, (1, 1, 1), E, M, cu_scaling(T, 1, 1))
    np.testing.assert_allclose(out, T)


def test_frequency_features_round_trip():
    F = frequency_features(T[None], 1)
    assert F.shape == (1, 1 * 2 + 2 * 1)
    e, m = split_frequency_features(F[0], 2, 2)
    np.testing.assert_allclose(e, engine_scaling(T)[1])
    np.testing.assert_allclose(m, memory_scaling(T)[1])


dims = st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(1, 3))


@st.composite
def cube_and_base(draw):
    shape = draw(dims)
    cube = draw(arrays(np.float64, shape, elements=st.floats(0.1, 100.0)))
    base = tuple(draw(st.integers(0, n - 1)) for n in shape)
    return cube, base


@settings(max_examples=60, deadline=None)
@given(cube_and_base())
def test_own_scaling_values_reproduce_the_measurements_from_any_base(cb):
    cube, base = cb
    E, M, C = engine_scaling(cube), memory_scaling(cube), cu_scaling(cube, base[1], base[2])
    out = chain_surface(cube[base], base, E, M, C)
    np.testing.assert_allclose(out, cube, rtol=1e-9)


@settings(max_examples=60, deadline=None)
@given(cube_and_base(), st.data())
def test_vectorised_chain_matches_step_by_step_reference(cb, data):
    cube, base = cb
    n_cu, n_core, n_mem = cube.shape
    # arbitrary (inconsistent) scaling values, as cluster centroids are
    E = data.draw(arrays(np.float64, (n_cu, n_core - 1, n_mem), elements=st.floats(0.2, 5.0)))
    M = data.draw(arrays(np.float64, (n_cu, n_core, n_mem - 1), elements=st.floats(0.2, 5.0)))
    C = data.draw(arrays(np.float64, (n_cu - 1,), elements=st.floats(0.2, 5.0)))
    out = chain_surface(3.0, base, E, M, C)
    for idx in np.ndindex(cube.shape):
        assert np.isclose(out[idx], chain_reference(3.0, base, idx, E, M, C), rtol=1e-9)
