"""A region's work at an input size larger than the one traced: trace it at a few small sizes, fit each count
against the size, and evaluate the fits at the size asked about.

Tracing is 100-1000x slower than running, so the size a user cares about is often out of reach. The counts
the GPU-time model takes (:class:`features.work.WorkSink`: threads, records, thread records, loads,
stores, their bytes, distinct bytes) and the feature engine's counts grow with the input size in a way a
few small sizes pin down; its rates (instruction mix, coalescing, SIMD efficiency, ILP, ...) change little.

:func:`fit_counts` fits each quantity of rows traced at sizes ``n_1 < ... < n_k`` (:class:`Fit`, by kind):

``zero``      zero at every size: stays zero.
``constant``  the same value at every size: stays that value.
``power``     ``a n^b`` by least squares in log-log (``b`` free), when every value is > 0 and the law goes
              through every traced point to :data:`EXACT_RTOL` (always, with two sizes), or when no ``poly``
              form does (then ``max_residual``, the worst relative residual at the traced sizes, says how
              far off it is there). With some values <= 0 it is fitted on the trailing run of positive values
              when that has two or more, else the quantity is ``last``.
``poly``      an exact polynomial of two to four terms among ``1, n, n^2, n^3`` (:data:`POLY_FORMS`: ``c_0 +
              c_1 n``, ``c_1 n + c_2 n^2``, ``c_0 + c_2 n^2 + c_3 n^3``, ...), the first (fewest terms, lowest
              degree) through every traced point to :data:`EXACT_RTOL` with a point to spare: a 2-term form
              needs 3 sizes, a 3-term one 4, and consecutive values must differ by :data:`MIN_STEP` or more.
              Loops with bounds affine in ``n`` count so, and a constant or lower-order part (setup, a
              fixed-size table, boundary cells) is where a pure power law goes wrong: ``6n + 768`` records of
              the corpus histogram traced at 1000, 2000, 4000 come out 6% low at 32000 as a power law, its
              ``n + 1024`` distinct bytes 42% low; as ``poly`` both are exact.
``last``      the value at the largest traced size (a count that is not positive at enough sizes).
``rate``      a size-independent feature (:func:`is_rate`): the value at the largest traced size.
              ``max_residual`` is its spread, the largest difference between that value and the value at a
              smaller traced size, relative to the value (absolute when it is 0): a rate that moves with the
              size shows there. No trend is
              extrapolated: on the corpus, a ``r + k/n`` trend through the two largest sizes was no closer
              at 4-8x than carrying the value (median error 0-4% for both, worst cases alike).
``derived``   a feature defined from other quantities (:data:`DERIVED`: ``mem`` = (loads + stores) /
              records, ``warp_parallelFraction``, ``warp_log2Threads``, ...): computed from their fits at
              the size asked about, so that it follows their trend.

Rates and counts are told apart by the feature catalogue (:mod:`features.catalogue`): the feature engine's
counts are :data:`COUNT_FEATURES`, its definitional ratios :data:`DERIVED`, every other catalogue feature is
a rate (fractions in [0, 1], per-instruction ratios, ILP, sectors per request, ...). A name the catalogue
does not know (the WorkSink counts, a sink's bytes) is a count.

:func:`extrapolate` traces ``fn(*make_args(n))`` at each size (:func:`profiler.session.trace_function`, a
WorkSink and a FeatureSink, one region per call) and gives the counts and features at the target size
(:class:`AtSize`); :func:`default_sizes` picks the sizes to trace.

Accuracy, on the corpus kernels (``kernels/``, ``lu_panel`` aside) traced at sizes doubling from their
``tiny`` size, the eight WorkSink counts extrapolated 4x past the largest traced size and compared with a
trace there: with three sizes, mean relative error 2.4%, 90th percentile 8%, worst 60% (``bellman_ford``,
whose relaxation rounds depend on the random graph); with four, 2.0%, 7.5%, 30%. Regular kernels come out
exact (``poly`` or an exact ``power``); the errors are those of data-dependent ones (graphs, sorts, trees,
escape-time loops), where the power law's residual at the traced sizes is the warning sign. Rates carried
4x (three sizes): median error 0-3%, 90th percentile 0.4-19% (``warp_sectorsPerGroup`` the largest).

What it cannot know: a count that changes regime between the traced sizes and the target (a blocking factor
that kicks in, a cache-sized tile, inputs built differently past some size: ``lu_panel``'s ``make_inputs``
widens the panel from 8 to 32 columns at 256 rows, and counts traced below extrapolate 4-14x too low). The
fits' residuals and the rates' spreads are the warning signs; the larger the step from the traced sizes,
the larger the risk.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from typing import Any, Callable, Collection, Mapping, Sequence

import numpy as np
import pandas as pd

#: relative tolerance (of the largest traced value) within which a polynomial form counts as exact
EXACT_RTOL = 1e-9
#: a polynomial form is only tried when consecutive traced values differ by at least this much: small or
#: quantised counts fit a 2-term form exactly by chance about once in their step size (the widest level of a
#: level-scheduled solve, 12, 13 and 15 threads at sizes 96, 192, 384, fit ``c + a n``: 35% off at 4x; pages
#: touched, 1, 2, 3). On the corpus kernels 32 leaves two such chance fits in about 1000 polynomial fits
MIN_STEP = 32
#: polynomial forms tried, in order (fewest terms, then lowest degree): the exponents of ``n`` of their terms
POLY_FORMS: tuple[tuple[int, ...], ...] = tuple(sorted(
    (f for k in (2, 3, 4) for f in itertools.combinations(range(4), k)), key=lambda f: (len(f), max(f), f)))

#: feature-engine features that are counts (they grow with the input size): fitted like the WorkSink counts
COUNT_FEATURES = frozenset({
    "mica_instructions", "mica_branches", "mica_staticBranches", "mica_loadBlockRefs", "mica_dataBlocks",
    "mica_dataPages", "mica_instrFootprint", "warp_threads", "warp_launches", "ts_kernels", "ts_carriedDeps",
    "ts_reductionDeps", "ts_atomicDeps", "ts_sameValueRaces", "lib_opaqueFlops",
})


def _share(part: float, whole: float) -> float:
    return part / whole if whole else 0.0


#: features defined from other quantities: name -> (the quantities, the formula). At the target size they are
#: computed from those quantities' fits (when every one of them was traced; else the feature is a rate).
DERIVED: dict[str, tuple[tuple[str, ...], Callable[..., float]]] = {
    "mem": (("loads", "stores", "records"), lambda ld, st, n: _share(ld + st, n)),
    "mica_mix_LOAD": (("loads", "records"), _share),
    "mica_mix_STORE": (("stores", "records"), _share),
    "warp_parallelFraction": (("thread_records", "records"), _share),
    "warp_log2Threads": (("warp_threads",), lambda t: math.log2(1.0 + max(t, 0.0))),
    "lib_opaqueFraction": (("lib_opaqueFlops", "records"), lambda f, n: _share(f, f + n)),
}

#: the kinds of :class:`Fit`
KINDS = ("zero", "constant", "poly", "power", "last", "rate", "derived")


def is_rate(name: str) -> bool:
    """Whether ``name`` is a size-independent feature: a feature of the catalogue that is not a count
    (:data:`COUNT_FEATURES`). Names outside the catalogue are counts. (A :data:`DERIVED` feature is a rate
    that :func:`fit_counts` computes from its inputs' fits when they were traced.)"""
    return name in _catalogue() and name not in COUNT_FEATURES


@functools.lru_cache(maxsize=1)
def _catalogue() -> frozenset:
    from features.catalogue import FEATURE_NAMES

    return frozenset(FEATURE_NAMES)


@dataclasses.dataclass(frozen=True)
class Fit:
    """One quantity's fit against the input size ``n``; :meth:`at` evaluates it.

    ``kind`` is one of :data:`KINDS` (the module docstring defines them). ``poly``: ``value = sum(c_i (n /
    scale)^e_i)`` over ``exponents`` and ``coefs``; ``power``: ``value = coefs[0] (n / scale)^exponents[0]``;
    ``zero``, ``constant``, ``last``, ``rate``: ``coefs[0]`` at every size; ``derived``: ``formula`` of the
    ``inputs`` fits. ``max_residual``: ``power``, the worst relative residual at the traced sizes; ``rate``,
    the spread of the traced values (largest difference from the value carried, relative to it; absolute
    when it is 0); 0 for the exact kinds, NaN for ``last`` and ``derived``. ``sizes`` and ``values``: what was fitted.
    """

    name: str
    kind: str
    sizes: tuple[float, ...]
    values: tuple[float, ...]
    exponents: tuple[float, ...] = ()
    coefs: tuple[float, ...] = ()
    scale: float = 1.0
    max_residual: float = 0.0
    inputs: tuple["Fit", ...] = ()
    formula: Callable[..., float] | None = dataclasses.field(default=None, compare=False, repr=False)

    def at(self, n: float) -> float:
        """The quantity at size ``n`` (a count is never negative)."""
        if self.kind == "derived":
            return float(self.formula(*(f.at(n) for f in self.inputs)))
        if self.kind in ("zero", "constant", "last", "rate"):
            return float(self.coefs[0])
        x = float(n) / self.scale
        if self.kind == "power":
            return float(self.coefs[0] * x ** self.exponents[0])
        return max(0.0, float(sum(c * x ** e for c, e in zip(self.coefs, self.exponents))))

    @property
    def exponent(self) -> float:
        """How the quantity grows: ``b`` of a power law, the degree of a polynomial, 0 for what stays as it
        is (``zero``, ``constant``, ``rate``), NaN for ``last`` and ``derived``."""
        if self.kind == "power":
            return float(self.exponents[0])
        if self.kind == "poly":
            return float(max(self.exponents))
        return 0.0 if self.kind in ("zero", "constant", "rate") else float("nan")

    def describe(self) -> str:
        """The fitted form in ``n``, e.g. ``1024 + 1 n`` or ``2.1e+03 n^0.98`` (``derived``: its inputs)."""
        if self.kind == "derived":
            return "from " + ", ".join(f.name for f in self.inputs)
        if self.kind in ("zero", "constant", "last", "rate"):
            return f"{self.coefs[0]:.4g}"
        parts = []
        for c, e in zip(self.coefs, self.exponents):
            power = f"{e:.4g}"
            value = f"{c / self.scale ** e:.4g}"
            parts.append(value if power == "0" else f"{value} n" if power == "1" else f"{value} n^{power}")
        return " + ".join(parts).replace("+ -", "- ")


def _exact_poly(name: str, n: np.ndarray, q: np.ndarray) -> Fit | None:
    """The first :data:`POLY_FORMS` form through every point to :data:`EXACT_RTOL`, with a point to spare."""
    if float(np.min(np.abs(np.diff(q)))) < MIN_STEP:
        return None
    scale = float(n[-1])
    x = n / scale
    tol = EXACT_RTOL * float(np.max(np.abs(q)))
    for exps in POLY_FORMS:
        if len(exps) >= len(n):
            continue
        a = np.stack([x ** e for e in exps], axis=1)
        coefs, *_ = np.linalg.lstsq(a, q, rcond=None)
        if float(np.max(np.abs(a @ coefs - q))) <= tol:
            return Fit(name, "poly", tuple(n), tuple(q), tuple(float(e) for e in exps),
                       tuple(float(c) for c in coefs), scale, 0.0)
    return None


def _power(name: str, n: np.ndarray, q: np.ndarray, sizes: tuple, values: tuple) -> Fit:
    """``a n^b`` by least squares on ``log q`` against ``log n`` (all ``q`` > 0, two or more points)."""
    scale = float(n[-1])
    b, log_a = np.polyfit(np.log(n / scale), np.log(q), 1)
    fit = np.exp(log_a) * (n / scale) ** b
    return Fit(name, "power", sizes, values, (float(b),), (float(np.exp(log_a)),), scale,
               float(np.max(np.abs(fit / q - 1.0))))


def _fit_count(name: str, n: np.ndarray, q: np.ndarray) -> Fit:
    sizes, values = tuple(float(v) for v in n), tuple(float(v) for v in q)
    if not np.all(np.isfinite(q)):
        return Fit(name, "last", sizes, values, coefs=(values[-1],), max_residual=float("nan"))
    if np.all(q == 0):
        return Fit(name, "zero", sizes, values, coefs=(0.0,))
    if np.all(q == q[-1]):
        return Fit(name, "constant", sizes, values, coefs=(values[-1],))
    positive = q > 0
    if positive.all():
        power = _power(name, n, q, sizes, values)
        if power.max_residual <= EXACT_RTOL:  # an exact power law (always, with two sizes)
            return power
    poly = _exact_poly(name, n, q)
    if poly is not None:
        return poly
    if positive.all():
        return power
    # the trailing run of positive values
    start = len(q) - next((i for i, p in enumerate(positive[::-1]) if not p), len(q))
    if len(q) - start >= 2:
        return _power(name, n[start:], q[start:], sizes, values)
    return Fit(name, "last", sizes, values, coefs=(values[-1],), max_residual=float("nan"))


def _fit_rate(name: str, n: np.ndarray, q: np.ndarray) -> Fit:
    sizes, values = tuple(float(v) for v in n), tuple(float(v) for v in q)
    last = values[-1]
    diffs = np.abs(q - last)
    spread = float(np.max(diffs) / abs(last)) if last else float(np.max(diffs))  # absolute when carrying 0
    return Fit(name, "rate", sizes, values, coefs=(last,), max_residual=spread)


def _check_sizes(sizes: Sequence[float], what: str = "sizes") -> np.ndarray:
    n = np.asarray([float(s) for s in sizes])
    if len(n) < 2:
        raise ValueError(f"{what}: need at least 2 sizes to fit against the size, got {len(n)}")
    if not np.all(np.isfinite(n)) or np.any(n <= 0):
        raise ValueError(f"{what} must be positive numbers, got {list(sizes)}")
    if np.any(np.diff(n) <= 0):
        raise ValueError(f"{what} must be strictly increasing, got {list(sizes)}")
    return n


def fit_counts(sizes: Sequence[float], rows: Sequence[Mapping[str, float]], *,
               rates: Collection[str] | None = None) -> dict[str, Fit]:
    """Fit every quantity of ``rows`` (one mapping per traced size, the same names in each) against ``sizes``.

    Parameters
    ----------
    sizes : sequence of float
        The traced sizes, strictly increasing, at least two.
    rows : sequence of mappings
        ``rows[i]``: the quantities traced at ``sizes[i]`` (WorkSink counts, features, ...). A quantity
        missing from some row is left out (and so is a non-numeric one).
    rates : collection of str, optional
        The names to treat as rates (carried from the largest size); default :func:`is_rate`. Every other
        name is a count, or derived (:data:`DERIVED`) when all its inputs are among the rows' names.

    Returns
    -------
    dict
        Name -> :class:`Fit`, in the order of the names of ``rows[-1]``.
    """
    n = _check_sizes(sizes)
    if len(rows) != len(n):
        raise ValueError(f"fit_counts: {len(n)} sizes but {len(rows)} rows")
    names = [k for k in rows[-1] if all(k in r for r in rows)]
    rate = (lambda k: k in rates) if rates is not None else is_rate
    fits: dict[str, Fit] = {}
    derived = []
    for k in names:
        try:
            q = np.asarray([float(r[k]) for r in rows])
        except (TypeError, ValueError):
            continue
        if k in DERIVED and all(i in names for i in DERIVED[k][0]) and (rates is None or k not in rates):
            derived.append((k, q))
        elif rate(k):
            fits[k] = _fit_rate(k, n, q)
        else:
            fits[k] = _fit_count(k, n, q)
    for k, q in derived:
        inputs, formula = DERIVED[k]
        if all(i in fits for i in inputs):
            fits[k] = Fit(k, "derived", tuple(n), tuple(q), inputs=tuple(fits[i] for i in inputs),
                          formula=formula, max_residual=float("nan"))
        else:  # an input was not numeric
            fits[k] = _fit_rate(k, n, q)
    return {k: fits[k] for k in names if k in fits}


@dataclasses.dataclass
class AtSize:
    """What :func:`extrapolate` gives.

    ``counts``: the WorkSink counts (and those of the extra sinks) at ``target``; ``features``: the feature
    engine's features at ``target`` (a Series in its names and order); ``fits``: every quantity's
    :class:`Fit`; ``sizes``: the traced sizes; ``traced``: one dict per traced size, the counts and features
    as traced; ``infos``: the RegionInfo of each traced call (mode, wall time, ...).
    """

    target: int
    sizes: tuple[int, ...]
    counts: dict[str, float]
    features: pd.Series
    fits: dict[str, Fit]
    traced: list[dict]
    infos: list

    def table(self) -> pd.DataFrame:
        """One row per quantity: ``name``, ``kind``, ``exponent``, ``max_residual``, ``form`` (the fitted
        form in ``n``), the value at the largest traced size (``traced``) and at the target (``at_target``)."""
        rows = [{"name": k, "kind": f.kind, "exponent": f.exponent, "max_residual": f.max_residual,
                 "form": f.describe(), "traced": f.values[-1], "at_target": f.at(self.target)}
                for k, f in self.fits.items()]
        return pd.DataFrame(rows, columns=["name", "kind", "exponent", "max_residual", "form", "traced",
                                           "at_target"])


def default_sizes(target: int, traced: int | None = None) -> tuple[int, ...]:
    """The sizes :func:`extrapolate` traces by default for ``target``: ``(top // 8, top // 4, top // 2, top)``
    with ``top = target // 16``, capped at ``traced`` when given (a size known to trace in reasonable time,
    such as the default size of a module's ``portcast_inputs``).

    The largest traced size is then 1/16 of the target or less: a region linear in the size traces about
    1/8 of the target's work over the four sizes, an ``n^3`` one 1/3600. Four sizes rather than three let
    :func:`fit_counts` recognise 3-term polynomials exactly (``c_0 + c_2 n^2 + c_3 n^3`` records of a naive
    matmul, ``(n - 2)^2`` interior cells of a stencil, 8% and 15% off at 4x as power laws through three
    sizes) for one more trace of 1/8 of the largest size's work. Duplicates and sizes below 1 are dropped;
    at least two distinct sizes must remain (``target`` >= 32, or a ``traced`` cap >= 2).
    """
    target = int(target)
    if target < 2:
        raise ValueError(f"target size {target}: too small to extrapolate to (trace it directly)")
    top = target // 16
    if traced is not None:
        if int(traced) < 1:
            raise ValueError(f"traced size {traced}: must be at least 1")
        top = min(top, int(traced))
    sizes = tuple(sorted({s for s in (top // 8, top // 4, top // 2, top) if s >= 1}))
    if len(sizes) < 2:
        raise ValueError(f"target size {target}: too small for the default sizes (target >= 32 and a traced "
                         f"size >= 2 give two or more); give the sizes to trace")
    return sizes


def _as_args(value: Any) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def extrapolate(fn: Callable, make_args: Callable[[int], Any], sizes: Sequence[int], target: int, *,
                mode: str = "auto", extra_sinks: Callable[[], Sequence] | None = None) -> AtSize:
    """Trace ``fn(*make_args(s))`` at each of ``sizes`` and extrapolate its counts and features to ``target``.

    Parameters
    ----------
    fn : callable
        The region (as for :func:`profiler.session.trace_function`: a function, an njit dispatcher, a
        ``portcast.region``). One call is one region.
    make_args : callable
        ``make_args(n)``: the arguments at size ``n`` (a tuple; another value is one argument).
    sizes : sequence of int
        The sizes to trace: at least two, strictly increasing, all smaller than ``target``
        (:func:`default_sizes` gives a ladder).
    target : int
        The size asked about.
    mode : {"auto", "interpreted", "compiled"}
        The tracing mode; with ``auto`` the mode the first size gets is kept for the others.
    extra_sinks : callable, optional
        Called once per size for further sinks whose ``results[-1]`` (a dict of numbers, one region) is
        fitted as counts too, e.g. ``lambda: [BytesSink()]`` for the bytes a port copies in and out.

    Returns
    -------
    AtSize
    """
    from features import FeatureSink
    from features.work import WorkSink
    from profiler.session import trace_function

    n = _check_sizes(sizes)
    target = int(target)
    if any(s != int(s) for s in n):
        raise ValueError(f"sizes must be integers, got {list(sizes)}")
    if n[-1] >= target:
        raise ValueError(f"sizes must be smaller than the target size {target}, got {list(sizes)}")
    sizes = tuple(int(s) for s in n)
    traced: list[dict] = []
    infos: list = []
    counts_names: list[str] = []
    for s in sizes:
        work, feats = WorkSink(), FeatureSink()
        extra = list(extra_sinks()) if extra_sinks is not None else []
        result = trace_function(fn, _as_args(make_args(s)), sinks=[work, feats, *extra], mode=mode)
        mode = result.info.mode  # the mode auto chose, for the other sizes (one notice of a fallback)
        if len(work.results) != 1 or len(feats.results) != 1:
            raise RuntimeError(f"size {s}: expected one traced region, got {len(work.results)}")
        counts = dict(work.results[0])
        for sink in extra:
            for k, v in sink.results[-1].items():
                if k in counts:
                    raise ValueError(f"extra sink {type(sink).__name__}: its result {k!r} clashes with another count")
                counts[k] = v
        series = feats.results[0][1]
        clash = set(counts) & set(series.index)
        if clash:
            raise ValueError(f"counts and features share the names {sorted(clash)}")
        counts_names = list(counts)
        traced.append({**counts, **series.to_dict()})
        infos.append(result.info)
    fits = fit_counts(sizes, traced)
    at = {k: f.at(target) for k, f in fits.items()}
    features = pd.Series({k: at.get(k, float("nan")) for k in series.index}, dtype=float, name=series.name)
    return AtSize(target=target, sizes=sizes, counts={k: at[k] for k in counts_names if k in at},
                  features=features, fits=fits, traced=traced, infos=infos)
