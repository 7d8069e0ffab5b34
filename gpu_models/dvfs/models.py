"""The DVFS performance models: STALL, MISS, LEAD, CRIT (linear, Eq. 1-2), CRISP (Eq. 3-5 and the
higher-clock variant of Sec. 5.2) and CRISP-L (Sec. 5.3) of the CRISP paper (Nath & Tullsen, MICRO 2015).

Each model reads a :class:`~gpu_models.dvfs.counter_record.CounterRecord` taken at a base clock ``f1`` and predicts
the run time at any target clock ``f2``; with ``r = f1 / f2``:

* linear models: ``T(f2) = (T - M) * r + M`` with ``M`` = load stalls (STALL), contributor misses x fixed
  latency (MISS), leading-load time (LEAD) or the critical path (CRIT); ``M`` is capped at ``T``.
* CRISP, ``f2 <= f1``: ``max(LCP, r * LCP_comp) + max(CSP_comp + CSP_stall, r * CSP_comp)`` with
  ``CSP_comp = T - LCP - CSP_stall`` (Eq. 3-5).
* CRISP, ``f2 > f1`` (Sec. 5.2): ``LCP + CSP_stall + CSP_comp * r``.
* CRISP from the paper's hardware counters only (adjusted LCP, load stalls, store stalls; Sec. 3.5-3.6),
  used when ``lcp``/``lcp_comp`` are absent: LCP = adjusted LCP, overlapped computation = adjusted LCP -
  load stalls.
* CRISP-L: CRISP with the load critical path replaced by all load-outstanding time and the overlapped
  computation by the load-outstanding time minus the load stalls.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Sequence

import numpy as np

from gpu_models.dvfs.counter_record import CounterError, CounterRecord

#: Model names in the order tables and plots use.
MODEL_NAMES = ("stall", "miss", "lead", "crit", "crisp", "crisp-l")


def _ratio(rec: CounterRecord, target_mhz) -> np.ndarray:
    t = np.atleast_1d(np.asarray(target_mhz, dtype=np.float64))
    if np.any(~np.isfinite(t)) or np.any(t <= 0):
        raise CounterError(f"target clocks must be positive (got {t.tolist()})")
    return rec.base_mhz / t


def linear_time(total: float, memory: float, r) -> np.ndarray:
    """Eq. 2: the memory part stays, the rest scales with the clock ratio.

    Parameters
    ----------
    total : float
        Run time at the base clock.
    memory : float
        The non-scaling part (capped to ``[0, total]``).
    r : array-like
        ``f_base / f_target``.

    Returns
    -------
    ndarray
    """
    m = min(max(memory, 0.0), total)
    return (total - m) * np.asarray(r, dtype=np.float64) + m


def crisp_time(
    total: float, lcp: float, lcp_comp: float, store_stall: float, r, higher_clock_variant: bool = True
) -> np.ndarray:
    """Eq. 3-5 (and Sec. 5.2 for ``r < 1`` when ``higher_clock_variant``).

    Parameters
    ----------
    total : float
        Run time at the base clock.
    lcp : float
        Load critical path (T_Memory).
    lcp_comp : float
        Computation overlapped by it (T_LCP^Comp).
    store_stall : float
        Store stalls (T_CSP^Stall).
    r : array-like
        ``f_base / f_target``.
    higher_clock_variant : bool
        Use ``LCP + CSP_stall + CSP_comp * r`` for targets above the base clock.

    Returns
    -------
    ndarray
    """
    r = np.asarray(r, dtype=np.float64)
    csp_comp = max(total - lcp - store_stall, 0.0)
    down = np.maximum(lcp, r * lcp_comp) + np.maximum(csp_comp + store_stall, r * csp_comp)
    if not higher_clock_variant:
        return down
    up = lcp + store_stall + csp_comp * r
    return np.where(r >= 1.0, down, up)


@dataclasses.dataclass(frozen=True)
class DvfsModel:
    """One model: its name, the counters it reads, and its prediction rule."""

    name: str
    needs: tuple[str, ...]
    rule: Callable[[CounterRecord, np.ndarray], np.ndarray]
    description: str
    alt_needs: tuple[str, ...] = ()
    alt_rule: Callable[[CounterRecord, np.ndarray], np.ndarray] | None = None

    def usable(self, record: CounterRecord) -> bool:
        """Whether ``record`` has the counters this model needs (primary or alternative set).

        Parameters
        ----------
        record : CounterRecord

        Returns
        -------
        bool
        """
        if all(record.has(f) for f in self.needs):
            return True
        return bool(self.alt_needs) and all(record.has(f) for f in self.alt_needs)

    def predict(self, record: CounterRecord, target_mhz) -> np.ndarray:
        """Predicted run time at each target clock (same unit as ``record.total``).

        Parameters
        ----------
        record : CounterRecord
            Counters at the base clock.
        target_mhz : float or array-like
            Target core clocks in MHz.

        Returns
        -------
        ndarray of float64
        """
        if self.alt_rule is not None and not all(record.has(f) for f in self.needs) and self.usable(record):
            return self.alt_rule(record, _ratio(record, target_mhz))
        record.require(*self.needs, model=self.name.upper())
        return self.rule(record, _ratio(record, target_mhz))

    def memory_time(self, record: CounterRecord) -> float:
        """The part the model treats as not scaling at the base clock (T_Memory / LCP).

        Parameters
        ----------
        record : CounterRecord

        Returns
        -------
        float
        """
        if self.name == "crisp" and not record.has("lcp") and self.usable(record):
            return record.adjusted_lcp
        record.require(*self.needs, model=self.name.upper())
        return {
            "stall": lambda: record.load_stall,
            "miss": lambda: min(record.miss_count * record.miss_latency, record.total),
            "lead": lambda: record.lead,
            "crit": lambda: record.crit,
            "crisp": lambda: record.lcp,
            "crisp-l": lambda: record.load_outstanding,
        }[self.name]()


MODELS: dict[str, DvfsModel] = {
    "stall": DvfsModel(
        "stall",
        ("load_stall",),
        lambda c, r: linear_time(c.total, c.load_stall, r),
        "Stall time: T_Memory = cycles stalled with a load miss outstanding.",
    ),
    "miss": DvfsModel(
        "miss",
        ("miss_count", "miss_latency"),
        lambda c, r: linear_time(c.total, c.miss_count * c.miss_latency, r),
        "Miss model: contributor misses x a fixed memory latency.",
    ),
    "lead": DvfsModel(
        "lead",
        ("lead",),
        lambda c, r: linear_time(c.total, c.lead, r),
        "Leading load: summed latency of loads issued with no leading load outstanding.",
    ),
    "crit": DvfsModel(
        "crit",
        ("crit",),
        lambda c, r: linear_time(c.total, c.crit, r),
        "Critical path: longest chain of memory requests (timestamp counters).",
    ),
    "crisp": DvfsModel(
        "crisp",
        ("lcp", "lcp_comp", "store_stall"),
        lambda c, r: crisp_time(c.total, c.lcp, c.lcp_comp, c.store_stall, r),
        "CRISP: load critical path with overlapped computation, compute/store path with store stalls.",
        # the paper's three hardware counters (Sec. 3.6): LCP = adjusted LCP, overlapped = adjusted - stalls
        ("adjusted_lcp", "load_stall", "store_stall"),
        lambda c, r: crisp_time(c.total, c.adjusted_lcp, max(c.adjusted_lcp - c.load_stall, 0.0), c.store_stall, r),
    ),
    "crisp-l": DvfsModel(
        "crisp-l",
        ("load_outstanding", "load_stall", "store_stall"),
        lambda c, r: crisp_time(
            c.total, c.load_outstanding, max(c.load_outstanding - c.load_stall, 0.0), c.store_stall, r
        ),
        "CRISP-L: CRISP with all load-outstanding time as the load critical path.",
    ),
}


def get_model(name: str) -> DvfsModel:
    """Look a model up by name (case-insensitive; ``crispl`` and ``crisp_l`` accepted).

    Parameters
    ----------
    name : str

    Returns
    -------
    DvfsModel
    """
    key = name.strip().lower().replace("_", "-")
    if key == "crispl":
        key = "crisp-l"
    if key not in MODELS:
        raise CounterError(f"unknown model {name!r} (known: {', '.join(MODEL_NAMES)})")
    return MODELS[key]


def predict(record: CounterRecord, target_mhz, model: str = "crisp") -> np.ndarray:
    """Predicted run time of ``record`` at each target clock with one model.

    Parameters
    ----------
    record : CounterRecord
    target_mhz : float or array-like
    model : str
        One of :data:`MODEL_NAMES`.

    Returns
    -------
    ndarray
    """
    return get_model(model).predict(record, target_mhz)


def predict_all(record: CounterRecord, target_mhz, models: Sequence[str] = MODEL_NAMES) -> dict[str, np.ndarray]:
    """Predictions of several models (models whose counters are missing are left out).

    Parameters
    ----------
    record : CounterRecord
    target_mhz : float or array-like
    models : sequence of str

    Returns
    -------
    dict of str to ndarray
    """
    out = {}
    for m in models:
        mod = get_model(m)
        if mod.usable(record):
            out[mod.name] = mod.predict(record, target_mhz)
    return out
