"""The AIWC hmm ports (kernels/measured/hmm.py) against independent references: each region against the
vectorised NumPy effect of its launch; a whole Baum-Welch iteration assembled from the regions against the
NumPy host program, against a float64 textbook forward-backward (the quantities the original computes from
it, quirks included) and, for the original's uniform model, against values worked out by hand."""

from __future__ import annotations

import copy
import functools

import numba
import numpy as np
import pytest

from kernels.measured import hmm

PORTS = {spec.kernel: spec for spec in hmm.KERNELS}
# a second small point: 18 states and 20 symbols leave partial 16x16 groups on both axes of the 2-D launches
WIDE = {"nstates": 18, "nsymbols": 20, "length": 6, "model": "random"}


@functools.lru_cache(maxsize=None)
def _jitted(kernel):
    return numba.njit(PORTS[kernel].cpu)


def _region_launch(kernel, args):
    """One launch of the host program done by the port's region (compiled). The backward pass multiplies
    ``beta[t]`` in place (the same rows read and written, a race on the device); the region then gets a copy
    of the rows it reads, the reads-before-writes order the NumPy host has."""
    if kernel == "mvm_non_kernel_naive" and args[4] is args[6]:
        args = args[:4] + (args[4].copy(),) + args[5:]
    _jitted(kernel)(*args)


def _iteration(a, b, pi, obs, launch):
    return hmm.run_iteration(a.copy(), b.copy(), pi.copy(), obs.copy(), launch)


def _assert_iterations_close(got, want, rtol):
    for x, y, what in zip(got, want, ("a", "b", "pi", "log_lik")):
        np.testing.assert_allclose(x, y, rtol=rtol, atol=0, err_msg=what)


@pytest.mark.parametrize("point", [hmm.TEST_POINT, WIDE], ids=["test_point", "wide"])
@pytest.mark.parametrize("kernel", sorted(PORTS))
def test_region_does_what_the_numpy_launch_does(kernel, point):
    args = PORTS[kernel].make_inputs(point, 1)
    want = copy.deepcopy(args)
    hmm.numpy_launch(kernel, want)
    got = copy.deepcopy(args)
    _jitted(kernel)(*got)
    changed = False
    for before, x, y in zip(args, got, want):
        if isinstance(x, np.ndarray):
            # whole buffers: the guards keep every work item outside the data from writing
            np.testing.assert_allclose(x, y, rtol=2e-6, atol=0, err_msg=kernel)
            changed |= not np.array_equal(x, before)
    assert changed, f"{kernel} wrote nothing"


def test_assembled_iteration_equals_the_numpy_host_program():
    a, b, pi, obs = hmm.make_model({"nstates": 7, "nsymbols": 5, "length": 9, "model": "random"}, 4)
    got = _iteration(a, b, pi, obs, _region_launch)
    want = _iteration(a, b, pi, obs, hmm.numpy_launch)
    _assert_iterations_close(got, want, rtol=1e-5)
    # the iteration changed the model (a non-trivial update, not a copy of the input)
    assert np.max(np.abs(got[0] - a)) > 1e-3 and np.max(np.abs(got[2] - pi)) > 1e-3


def _symmetric_model(n, s, t, seed):
    """A symmetric doubly stochastic A (the original's forward step multiplies by A, the textbook one by
    A^T: equal for a symmetric A), random B columns, pi and observations."""
    rng = np.random.default_rng(seed)
    mix = np.full((n, n), 0.3 / n)
    for w in rng.dirichlet(np.ones(4)) * 0.7:
        perm = np.eye(n)[rng.permutation(n)]
        mix += w * (perm + perm.T) / 2
    b = rng.uniform(0.1, 1.0, (s, n))
    b /= b.sum(axis=0)
    pi = rng.dirichlet(np.ones(n))
    obs = rng.integers(0, s, t).astype(np.int32)
    return mix, b, pi, obs


def _forward_backward(a, b, pi, obs):
    """Textbook (unscaled, float64) forward-backward: per-step likelihood ratios c_t, P(O), gamma, xi."""
    t_len, n = obs.shape[0], pi.shape[0]
    alpha = np.zeros((t_len, n))
    beta = np.ones((t_len, n))
    alpha[0] = pi * b[obs[0]]
    for t in range(1, t_len):
        alpha[t] = (alpha[t - 1] @ a) * b[obs[t]]
    for t in range(t_len - 2, -1, -1):
        beta[t] = a @ (b[obs[t + 1]] * beta[t + 1])
    prob = alpha[-1].sum()
    totals = alpha.sum(axis=1)
    c = totals / np.concatenate(([1.0], totals[:-1]))
    gamma = alpha * beta / prob
    xi = alpha[:-1, :, None] * a[None] * (b[obs[1:]] * beta[1:])[:, None, :] / prob
    return c, prob, gamma, xi


def test_assembled_iteration_against_a_textbook_forward_backward():
    n, s, t_len = 6, 4, 12
    a, b, pi, obs = _symmetric_model(n, s, t_len, 7)
    f32 = [x.astype(np.float32).ravel() for x in (a, b, pi)]
    a_new, b_new, pi_new, log_lik = _iteration(*f32, obs, _region_launch)

    c, prob, gamma, xi = _forward_backward(a, b, pi, obs)
    # textbook quantities the original gets right: the likelihood, the new pi, B's numerator (gamma per symbol)
    np.testing.assert_allclose(log_lik, np.log10(prob), rtol=1e-5)
    np.testing.assert_allclose(pi_new, gamma[0], rtol=1e-5)
    # the rest, as the original combines them: its scaled alpha * beta is gamma_t / c_t, its xi terms c_t xi_t
    gamma_sum = (gamma / c[:, None]).sum(axis=0)
    xi_sum = (xi * c[:-1, None, None]).sum(axis=0)
    a1 = xi_sum / (gamma_sum - gamma[-1])[:, None]
    col = a1.sum(axis=0)  # the transposed product with ones: column sums, used for A's rows and for B
    np.testing.assert_allclose(a_new.reshape(n, n), a1 / col[:, None], rtol=2e-5)
    numerator = np.array([gamma[obs == k].sum(axis=0) for k in range(s)])
    b2 = numerator / gamma_sum
    np.testing.assert_allclose(b_new.reshape(s, n), np.where(b2 == 0, 1e-10, b2 / col), rtol=2e-5)
    # and with the quirks written out, this is not the textbook update of A (rows of a_new need not sum to 1)
    textbook_a = xi.sum(axis=0) / gamma[:-1].sum(axis=0)[:, None]
    assert not np.allclose(a_new.reshape(n, n), textbook_a, rtol=1e-3)


def test_uniform_model_worked_example():
    # the data's model (A = 1/N, B = 1/S, pi = 1/N, all observations 0) at N = 4, S = 3, T = 5. By hand:
    # every scaled alpha row is 1/N with scale factor 1/S, every beta entry S, every alpha[t] . beta[t] = S;
    # xi_sum = (T-1)/(N^2 S), gamma_sum = TS/N, est_a's denominator (TS-1)/N, so A's column sums are
    # (T-1)/(S(TS-1)) and the new A is 1/N; B's row 0 accumulates T/N, is divided by TS/N (1/S) and then by
    # A's column sums: (TS-1)/(T-1) = 3.5; rows never observed are floored at 1e-10; pi = 1/N.
    n, s, t_len = 4, 3, 5
    a, b, pi, obs = hmm.make_model({"nstates": n, "nsymbols": s, "length": t_len}, 0)
    a_new, b_new, pi_new, log_lik = _iteration(a, b, pi, obs, _region_launch)
    np.testing.assert_allclose(a_new, 0.25, rtol=1e-6)
    np.testing.assert_allclose(b_new[:n], 3.5, rtol=1e-5)
    np.testing.assert_allclose(b_new[n:], 1e-10, rtol=1e-6)
    np.testing.assert_allclose(pi_new, 0.25, rtol=1e-6)
    np.testing.assert_allclose(log_lik, t_len * np.log10(1 / 3), rtol=1e-6)


def test_first_invocations_at_the_tiny_point_hold_the_worked_values():
    # the timed invocations at AIWC's tiny size (N = 60, S = 8, T = 1000): what they read and write
    tiny = hmm.POINTS["tiny"]
    n, s = tiny["nstates"], tiny["nsymbols"]
    xi_sum, a, b, alpha, beta, sum_ab, _, obs_t, t = PORTS["calc_xi_dev"].make_inputs(tiny, 0)
    assert (t, obs_t) == (0, 0) and not xi_sum.any()
    np.testing.assert_allclose(sum_ab, s, rtol=1e-5)
    np.testing.assert_allclose(_jitted("calc_xi_dev")(xi_sum, a, b, alpha, beta, sum_ab, n, obs_t, t), 1 / (n * n * s),
                               rtol=1e-5)

    b, alpha, beta, sum_ab, _, _, obs_t, t = PORTS["acc_b_dev"].make_inputs(tiny, 0)
    assert (t, obs_t) == (0, 0) and not b.any()
    got = _jitted("acc_b_dev")(b, alpha, beta, sum_ab, n, s, obs_t, t).reshape(s, n)
    np.testing.assert_allclose(got[0], 1 / n, rtol=1e-5)
    assert not got[1:].any()

    m, _, mat, _, x, offset_x, y, offset_y = PORTS["mvm_non_kernel_naive"].make_inputs(tiny, 0)
    assert x is y and (offset_x, offset_y) == (0, n)  # alpha[1] = A @ alpha[0], in one buffer
    out = _jitted("mvm_non_kernel_naive")(m, m, mat, m, x, offset_x, y, offset_y)
    np.testing.assert_allclose(out[n : 2 * n], 1 / n, rtol=1e-5)

    count, vec_a, offset_a, ones, offset_b, partial = PORTS["s_dot_kernel_naive"].make_inputs(tiny, 0)
    assert count == n and (offset_a, offset_b) == (0, 0) and np.all(ones == 1)  # the first scale factor
    np.testing.assert_allclose(_jitted("s_dot_kernel_naive")(count, vec_a, 0, ones, 0, partial), 1 / (n * s),
                               rtol=1e-5)

    ones_s, nsym, nst = PORTS["init_ones_dev"].make_inputs(hmm.POINTS["small"], 0)
    out = _jitted("init_ones_dev")(ones_s, nsym, nst)
    assert out[:256].sum() == 256 and not out[256:].any()  # the states' launch size covers 256 of 900 symbols
