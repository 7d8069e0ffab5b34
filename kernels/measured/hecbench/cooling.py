"""Primordial hydrogen/helium cooling curve (Katz et al. 1996, from the Cholla code), HeCBench ``cooling``: the
kernel ``cool_kernel``.

Thread ``i`` (one per temperature, guard ``i < num``) evaluates ``primordial_cool(n, T[i], heat_flag)``
(double precision): the recombination, collisional-ionisation and dielectronic rates of Katz et al.'s Table 2
(powers, square roots and exponentials of ``T``); the number densities of H0, H+, He0, He+, He++ and
electrons (with ``heat_flag``: a fixed-point iteration of up to 20 steps including photoionisation, stopping
when the electron density changes by less than 1e-6; without: in closed form); the cooling rates of Table 1
(collisional excitation and ionisation, recombination, dielectronic recombination, free-free with the Gaunt
factor ``1.1 + 0.34 exp(-(5.5 - ln T)^2 / 3)``), their sum, minus the photoheating rate when ``heat_flag``.

Launch: blocks of 256, ``ceil(num / 256)`` blocks. Measured point ``1000000 1000`` (points, repeat): 3907
blocks. The host first runs ``repeat`` warm-up launches with ``heat_flag = 0``, then the timed ones with
``heat_flag = 1``; the data's first launch is the first warm-up launch, so ``heat_flag = 0`` here.

Inputs: deterministic, as the host: ``n = 0.0899``, ``T[i] = -275 + i * 275 * 2.0 / num`` (no random input;
``seed`` unused). Half the temperatures are negative and one (``i = num / 2``) is zero; there the square
roots and fractional powers give NaN. The positive ones are all below 275 K, where ``exp(-285335.4 / T)``
underflows to 0 and the He0 density becomes ``0 / 0``: NaN as well. So every result at the measured point is
NaN, in the original too (IEEE arithmetic on the device); the work, and the control flow (none depends on the
values), are the original's.

Deliberate differences: the divisions and powers of the region are ``np.divide`` and ``np.power``: IEEE
semantics (a quotient by zero is an infinity or NaN, as on the device), where Python's ``/`` and ``**`` raise
on a zero divisor (which the traced region would then do at the measured point). The temperature range is a
parameter (``t_min``: ``T[i] = t_min + i * |t_min| * 2.0 / num``, the original's ``-275`` at the measured and
feature points); the test point uses ``t_min = 20000`` (``T`` in ``[2e4, 6e4)``), because the generic tests
compare results without treating NaN as equal, the CUDA simulator's ``math`` functions raise where the device
returns NaN or infinity, and below about 1e4 K the result is dominated by the cancellation in ``n_hp = n_h -
n_h0`` (the collisional ionisation rate underflows next to the recombination rate), so that last-place
differences of ``pow`` implementations change it completely. The measured range (its NaN included) is tested
against NumPy separately.

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
DENSITY = 0.0899

POINTS = {"1000000 1000": {"num": 1_000_000, "t_min": -275.0, "heat_flag": 0}}
TEST_POINT = {"num": 500, "t_min": 20_000.0, "heat_flag": 0}
#: 2 * 10^4 temperatures over the same range (the measured point has 10^6)
FEATURE_POINT = {"num": 20_000, "t_min": -275.0, "heat_flag": 0}


def cool_kernel(num, n, T, r, heat_flag, n_threads):
    """Every temperature's net cooling rate (erg s^-1 cm^-3) into ``r``."""
    for i in numba.prange(n_threads):
        if i < num:
            t = T[i]
            Y = 0.24
            y = Y / (4 - 4 * Y)
            n_h = n
            alpha_hp = (
                (8.4e-11)
                * np.divide(1.0, np.sqrt(t))
                * np.power(t / 1e3, -0.2)
                * np.divide(1.0, 1.0 + np.power(t / 1e6, 0.7))
            )
            alpha_hep = (1.5e-10) * np.power(t, -0.6353)
            alpha_d = (
                (1.9e-3)
                * np.power(t, -1.5)
                * np.exp(np.divide(-470000.0, t))
                * (1.0 + 0.3 * np.exp(np.divide(-94000.0, t)))
            )
            alpha_hepp = (
                (3.36e-10)
                * np.divide(1.0, np.sqrt(t))
                * np.power(t / 1e3, -0.2)
                * np.divide(1.0, 1.0 + np.power(t / 1e6, 0.7))
            )
            gamma_eh0 = (
                (5.85e-11) * np.sqrt(t) * np.exp(np.divide(-157809.1, t)) * np.divide(1.0, 1.0 + np.sqrt(t / 1e5))
            )
            gamma_ehe0 = (
                (2.38e-11) * np.sqrt(t) * np.exp(np.divide(-285335.4, t)) * np.divide(1.0, 1.0 + np.sqrt(t / 1e5))
            )
            gamma_ehep = (
                (5.68e-12) * np.sqrt(t) * np.exp(np.divide(-631515.0, t)) * np.divide(1.0, 1.0 + np.sqrt(t / 1e5))
            )
            gamma_lh0 = 3.19851e-13
            gamma_lhe0 = 3.13029e-13
            gamma_lhep = 2.00541e-14
            e_h0 = 2.4796e-24
            e_he0 = 6.86167e-24
            e_hep = 6.21868e-25
            n_e = n_h
            n_h0 = 0.0
            n_hp = 0.0
            n_hep = 0.0
            n_he0 = 0.0
            n_hepp = 0.0
            if heat_flag:
                for _ in range(20):
                    n_e_old = n_e
                    n_h0 = np.divide(n_h * alpha_hp, alpha_hp + gamma_eh0 + gamma_lh0 / n_e)
                    n_hp = n_h - n_h0
                    n_hep = np.divide(
                        y * n_h,
                        1.0
                        + np.divide(alpha_hep + alpha_d, gamma_ehe0 + gamma_lhe0 / n_e)
                        + np.divide(gamma_ehep + gamma_lhep / n_e, alpha_hepp),
                    )
                    n_he0 = np.divide(n_hep * (alpha_hep + alpha_d), gamma_ehe0 + gamma_lhe0 / n_e)
                    n_hepp = np.divide(n_hep * (gamma_ehep + gamma_lhep / n_e), alpha_hepp)
                    n_e = n_hp + n_hep + 2 * n_hepp
                    if abs(n_e_old - n_e) < 1.0e-6:
                        break
            else:
                n_h0 = np.divide(n_h * alpha_hp, alpha_hp + gamma_eh0)
                n_hp = n_h - n_h0
                n_hep = np.divide(
                    y * n_h, 1.0 + np.divide(alpha_hep + alpha_d, gamma_ehe0) + np.divide(gamma_ehep, alpha_hepp)
                )
                n_he0 = np.divide(n_hep * (alpha_hep + alpha_d), gamma_ehe0)
                n_hepp = np.divide(n_hep * gamma_ehep, alpha_hepp)
                n_e = n_hp + n_hep + 2 * n_hepp
            le_h0 = (7.50e-19) * np.exp(np.divide(-118348.0, t)) * np.divide(1.0, 1.0 + np.sqrt(t / 1e5)) * n_e * n_h0
            le_hep = (
                (5.54e-17)
                * np.power(t, -0.397)
                * np.exp(np.divide(-473638.0, t))
                * np.divide(1.0, 1.0 + np.sqrt(t / 1e5))
                * n_e
                * n_hep
            )
            li_h0 = (
                (1.27e-21)
                * np.sqrt(t)
                * np.exp(np.divide(-157809.1, t))
                * np.divide(1.0, 1.0 + np.sqrt(t / 1e5))
                * n_e
                * n_h0
            )
            li_he0 = (
                (9.38e-22)
                * np.sqrt(t)
                * np.exp(np.divide(-285335.4, t))
                * np.divide(1.0, 1.0 + np.sqrt(t / 1e5))
                * n_e
                * n_he0
            )
            li_hep = (
                (4.95e-22)
                * np.sqrt(t)
                * np.exp(np.divide(-631515.0, t))
                * np.divide(1.0, 1.0 + np.sqrt(t / 1e5))
                * n_e
                * n_hep
            )
            lr_hp = (
                (8.70e-27)
                * np.sqrt(t)
                * np.power(t / 1e3, -0.2)
                * np.divide(1.0, 1.0 + np.power(t / 1e6, 0.7))
                * n_e
                * n_hp
            )
            lr_hep = (1.55e-26) * np.power(t, 0.3647) * n_e * n_hep
            lr_hepp = (
                (3.48e-26)
                * np.sqrt(t)
                * np.power(t / 1e3, -0.2)
                * np.divide(1.0, 1.0 + np.power(t / 1e6, 0.7))
                * n_e
                * n_hepp
            )
            ld_hep = (
                (1.24e-13)
                * np.power(t, -1.5)
                * np.exp(np.divide(-470000.0, t))
                * (1.0 + 0.3 * np.exp(np.divide(-94000.0, t)))
                * n_e
                * n_hep
            )
            g_ff = 1.1 + 0.34 * np.exp(-(5.5 - np.log(t)) * (5.5 - np.log(t)) / 3.0)
            l_ff = (1.42e-27) * g_ff * np.sqrt(t) * (n_hp + n_hep + 4 * n_hepp) * n_e
            cool = le_h0 + le_hep + li_h0 + li_he0 + li_hep + lr_hp + lr_hep + lr_hepp + ld_hep + l_ff
            heat = 0.0
            if heat_flag:
                heat = n_h0 * e_h0 + n_he0 * e_he0 + n_hep * e_hep
            r[i] = cool - heat
    return r


@cuda.jit
def _cool_gpu(num, n, T, r, heat_flag):
    i = cuda.grid(1)
    if i < num:
        t = T[i]
        Y = 0.24
        y = Y / (4 - 4 * Y)
        n_h = n
        alpha_hp = (8.4e-11) * (1.0 / (math.sqrt(t))) * math.pow(t / 1e3, -0.2) * (1.0 / (1.0 + math.pow(t / 1e6, 0.7)))
        alpha_hep = (1.5e-10) * math.pow(t, -0.6353)
        alpha_d = (1.9e-3) * math.pow(t, -1.5) * math.exp((-470000.0 / t)) * (1.0 + 0.3 * math.exp((-94000.0 / t)))
        alpha_hepp = (
            (3.36e-10) * (1.0 / (math.sqrt(t))) * math.pow(t / 1e3, -0.2) * (1.0 / (1.0 + math.pow(t / 1e6, 0.7)))
        )
        gamma_eh0 = (5.85e-11) * math.sqrt(t) * math.exp((-157809.1 / t)) * (1.0 / (1.0 + math.sqrt(t / 1e5)))
        gamma_ehe0 = (2.38e-11) * math.sqrt(t) * math.exp((-285335.4 / t)) * (1.0 / (1.0 + math.sqrt(t / 1e5)))
        gamma_ehep = (5.68e-12) * math.sqrt(t) * math.exp((-631515.0 / t)) * (1.0 / (1.0 + math.sqrt(t / 1e5)))
        gamma_lh0 = 3.19851e-13
        gamma_lhe0 = 3.13029e-13
        gamma_lhep = 2.00541e-14
        e_h0 = 2.4796e-24
        e_he0 = 6.86167e-24
        e_hep = 6.21868e-25
        n_e = n_h
        n_h0 = 0.0
        n_hp = 0.0
        n_hep = 0.0
        n_he0 = 0.0
        n_hepp = 0.0
        if heat_flag:
            for _ in range(20):
                n_e_old = n_e
                n_h0 = (n_h * alpha_hp) / (alpha_hp + gamma_eh0 + gamma_lh0 / n_e)
                n_hp = n_h - n_h0
                n_hep = (y * n_h) / (
                    1.0
                    + ((alpha_hep + alpha_d) / (gamma_ehe0 + gamma_lhe0 / n_e))
                    + ((gamma_ehep + gamma_lhep / n_e) / alpha_hepp)
                )
                n_he0 = (n_hep * (alpha_hep + alpha_d)) / (gamma_ehe0 + gamma_lhe0 / n_e)
                n_hepp = (n_hep * (gamma_ehep + gamma_lhep / n_e)) / alpha_hepp
                n_e = n_hp + n_hep + 2 * n_hepp
                if abs(n_e_old - n_e) < 1.0e-6:
                    break
        else:
            n_h0 = (n_h * alpha_hp) / (alpha_hp + gamma_eh0)
            n_hp = n_h - n_h0
            n_hep = (y * n_h) / (1.0 + ((alpha_hep + alpha_d) / gamma_ehe0) + (gamma_ehep / alpha_hepp))
            n_he0 = (n_hep * (alpha_hep + alpha_d)) / gamma_ehe0
            n_hepp = (n_hep * gamma_ehep) / alpha_hepp
            n_e = n_hp + n_hep + 2 * n_hepp
        le_h0 = (7.50e-19) * math.exp((-118348.0 / t)) * (1.0 / (1.0 + math.sqrt(t / 1e5))) * n_e * n_h0
        le_hep = (
            (5.54e-17)
            * math.pow(t, -0.397)
            * math.exp((-473638.0 / t))
            * (1.0 / (1.0 + math.sqrt(t / 1e5)))
            * n_e
            * n_hep
        )
        li_h0 = (1.27e-21) * math.sqrt(t) * math.exp((-157809.1 / t)) * (1.0 / (1.0 + math.sqrt(t / 1e5))) * n_e * n_h0
        li_he0 = (
            (9.38e-22) * math.sqrt(t) * math.exp((-285335.4 / t)) * (1.0 / (1.0 + math.sqrt(t / 1e5))) * n_e * n_he0
        )
        li_hep = (
            (4.95e-22) * math.sqrt(t) * math.exp((-631515.0 / t)) * (1.0 / (1.0 + math.sqrt(t / 1e5))) * n_e * n_hep
        )
        lr_hp = (
            (8.70e-27) * math.sqrt(t) * math.pow(t / 1e3, -0.2) * (1.0 / (1.0 + math.pow(t / 1e6, 0.7))) * n_e * n_hp
        )
        lr_hep = (1.55e-26) * math.pow(t, 0.3647) * n_e * n_hep
        lr_hepp = (
            (3.48e-26) * math.sqrt(t) * math.pow(t / 1e3, -0.2) * (1.0 / (1.0 + math.pow(t / 1e6, 0.7))) * n_e * n_hepp
        )
        ld_hep = (
            (1.24e-13)
            * math.pow(t, -1.5)
            * math.exp((-470000.0 / t))
            * (1.0 + 0.3 * math.exp((-94000.0 / t)))
            * n_e
            * n_hep
        )
        g_ff = 1.1 + 0.34 * math.exp(-(5.5 - math.log(t)) * (5.5 - math.log(t)) / 3.0)
        l_ff = (1.42e-27) * g_ff * math.sqrt(t) * (n_hp + n_hep + 4 * n_hepp) * n_e
        cool = le_h0 + le_hep + li_h0 + li_he0 + li_hep + lr_hp + lr_hep + lr_hepp + ld_hep + l_ff
        heat = 0.0
        if heat_flag:
            heat = n_h0 * e_h0 + n_he0 * e_he0 + n_hep * e_hep
        r[i] = cool - heat


def _to_device(num, n, T, r, heat_flag, n_threads):
    return {
        "T": cuda.to_device(T),
        "r": cuda.to_device(r),
        "num": int(num),
        "n": float(n),
        "heat": int(heat_flag),
        "nt": int(n_threads),
    }


def _launch(s):
    _cool_gpu[s["nt"] // BLOCK, BLOCK](s["num"], s["n"], s["T"], s["r"], s["heat"])


def _from_device(s):
    return s["r"].copy_to_host()


def temperatures(num, t_min):
    """The host's temperatures ``t_min + i * |t_min| * 2.0 / num`` (the original's ``-275 + i * 275 * 2.0 /
    num``, whose integer product ``i * 275`` is exact)."""
    i = np.arange(num, dtype=np.int64)
    return t_min + (i * abs(t_min)) * 2.0 / num


def make_inputs(params, seed):
    """The host's temperatures and density (no random input; ``seed`` unused)."""
    num = int(params["num"])
    T = temperatures(num, float(params["t_min"]))
    return num, DENSITY, T, np.zeros(num), int(params["heat_flag"]), work(params)[0]


def work(params):
    num = int(params["num"])
    return (num + BLOCK - 1) // BLOCK * BLOCK, BLOCK


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="cooling",
        kernel="cool_kernel",
        description="HeCBench cooling: primordial H/He cooling rate (Katz et al. 1996) at every temperature",
        cpu=cool_kernel,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=1e-9,
        atol=0.0,
    ),
]
