"""Evaluation of the DVFS models in the shape of the CRISP paper's Fig. 8/9, on synthetic timelines and on
the GTX Titan X DVFS measurements, plus the controller's savings; renders the tables of ``docs/dvfs.md``.

Synthetic timelines (:mod:`gpu_models.dvfs.synthetic_timelines`): counters are read at 700 MHz by the event-timeline
model, every model predicts 100-600 MHz, the truth is the same timeline simulated at those clocks.

GTX Titan X (``gpu_models/data/gtxtitanx_dvfs``, run time at 16 core clocks 595-1164 MHz and 2 memory
clocks, no stall counters): the base is the top clock (1164 MHz). Each model *form* gets its free components
fitted to the ``top_k`` highest clocks by least squares and predicts the rest. Without counters the four
linear models (STALL, MISS, LEAD, CRIT) have the same form ``T(r) = T0 + C (r - 1)``, ``r = f_base / f``,
with one free component (the compute part ``C``, the memory part being ``T0 - C``); CRISP and CRISP-L share
Eq. 3-5 with three (LCP, overlapped computation, store stalls; ``T_CSP^Comp`` follows from ``T0``). A
proportional form (``T0 r``, nothing free) is the reference. The CRISP form is fitted on a grid over its
valid region, refined by Nelder-Mead, with a vanishing tie-break towards no overlap and no store stalls
(the linear curve) when the top clocks cannot tell the two apart.
"""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from core.atomic import atomic_write_text
from gpu_models.dvfs.controller import PowerModel, TimelineInterval, default_pstates, simulate_control
from gpu_models.dvfs.counter_record import CounterError
from gpu_models.dvfs.models import MODEL_NAMES, crisp_time, predict_all
from gpu_models.dvfs.synthetic_timelines import PROFILES, generate, suite
from gpu_models.dvfs.timeline import derive_counters, simulate

DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "gtxtitanx_dvfs"
SYNTH_BASE_MHZ = 700.0
SYNTH_TARGETS = (100.0, 200.0, 300.0, 400.0, 500.0, 600.0)
#: The MISS model's fixed latency for the synthetic kernels (middle of their 300-600 ns range).
SYNTH_MISS_LATENCY_NS = 450.0
FORMS = ("proportional", "linear", "crisp")
BEGIN = "<!-- BEGIN GENERATED: portcast dvfs evaluate -->"
END = "<!-- END GENERATED -->"


# ----------------------------------------------------------------------------------------------- synthetic
def synthetic_accuracy(
    kernels: Sequence[tuple[str, object]],
    base_mhz: float = SYNTH_BASE_MHZ,
    targets: Sequence[float] = SYNTH_TARGETS,
    miss_latency_ns: float = SYNTH_MISS_LATENCY_NS,
    progress: Callable[[int], None] | None = None,
) -> pd.DataFrame:
    """Every model's prediction error on timelines (counters at ``base_mhz``, truth by simulation).

    Parameters
    ----------
    kernels : sequence of (name, Timeline)
    base_mhz : float
    targets : sequence of float
    miss_latency_ns : float
    progress : callable, optional
        Called with the index of each finished kernel.

    Returns
    -------
    DataFrame
        Columns kernel, model, target_mhz, true, pred, err_pct (signed, 100 * (pred / true - 1)).
    """
    rows = []
    for k, (name, tl) in enumerate(kernels):
        rec = derive_counters(simulate(tl, base_mhz), miss_latency_ns, name)
        truth = np.array([simulate(tl, f).total_ns for f in targets])
        for model, pred in predict_all(rec, targets).items():
            for f, tv, pv in zip(targets, truth, pred):
                rows.append((name, model, float(f), float(tv), float(pv), 100.0 * (pv / tv - 1.0)))
        if progress is not None:
            progress(k)
    return pd.DataFrame(rows, columns=["kernel", "model", "target_mhz", "true", "pred", "err_pct"])


def synthetic_breakdown(kernels: Sequence[tuple[str, object]], base_mhz: float = SYNTH_BASE_MHZ) -> pd.DataFrame:
    """CRISP's breakdown of each kernel at the base clock, as fractions of the run time (like Fig. 7).

    Parameters
    ----------
    kernels : sequence of (name, Timeline)
    base_mhz : float

    Returns
    -------
    DataFrame
    """
    rows = []
    for name, tl in kernels:
        r = derive_counters(simulate(tl, base_mhz), SYNTH_MISS_LATENCY_NS, name)
        csp_comp = r.total - r.lcp - r.store_stall
        rows.append(
            {
                "kernel": name,
                "time_us": r.total / 1000.0,
                "lcp_stall_and_noncrit": (r.lcp - r.lcp_comp) / r.total,
                "lcp_comp": r.lcp_comp / r.total,
                "csp_comp": csp_comp / r.total,
                "store_stall": r.store_stall / r.total,
                "load_stall": r.load_stall / r.total,
            }
        )
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------- Titan X
def titanx_curves(data_dir: str | Path = DATA_DIR) -> pd.DataFrame:
    """Run time vs core clock for every kernel and memory clock of the GTX Titan X data.

    Duplicate measurements of the same (benchmark, memory clock, core clock) are averaged.

    Parameters
    ----------
    data_dir : path-like
        Folder with ``micro_long.csv`` and ``real_long.csv``.

    Returns
    -------
    DataFrame
        Columns suite, kernel (``benchmark@mem``), benchmark, mem_clock_mhz, core_clock_mhz, time.
    """
    frames = []
    for suite_name in ("micro", "real"):
        path = Path(data_dir) / f"{suite_name}_long.csv"
        if not path.exists():
            raise FileNotFoundError(f"{path}: Titan X DVFS data not found")
        df = pd.read_csv(path)
        need = {"benchmark", "mem_clock_mhz", "core_clock_mhz", "time"}
        missing = need - set(df.columns)
        if missing:
            raise CounterError(f"{path}: missing column(s) {sorted(missing)}")
        bad = df.index[~(df["time"] > 0)]
        if len(bad):
            raise CounterError(f"{path} line {bad[0] + 2}: field 'time' must be positive (got "
                               f"{df['time'].iloc[bad[0]]})")
        df = df.groupby(["benchmark", "mem_clock_mhz", "core_clock_mhz"], as_index=False, sort=True)["time"].mean()
        df.insert(0, "suite", suite_name)
        frames.append(df)
    out = pd.concat(frames, ignore_index=True)
    out.insert(1, "kernel", out["benchmark"] + "@" + out["mem_clock_mhz"].astype(str))
    return out


def fit_linear(r: np.ndarray, t: np.ndarray, t0: float) -> float:
    """Least-squares compute part ``C`` of ``T0 + C (r - 1)`` (clipped to ``[0, T0]``).

    Parameters
    ----------
    r, t : ndarray
        Clock ratios ``f_base / f`` and measured times.
    t0 : float
        Time at the base clock.

    Returns
    -------
    float
    """
    x = np.asarray(r, float) - 1.0
    den = float(np.dot(x, x))
    if den == 0.0:
        return t0
    c = float(np.dot(x, np.asarray(t, float) - t0)) / den
    return min(max(c, 0.0), t0)


_TIE = 1e-7


def _crisp_params(u, v, w, t0):
    lcp = t0 * u
    return lcp, lcp * v, (t0 - lcp) * w


def fit_crisp(r: np.ndarray, t: np.ndarray, t0: float, grid: int = 25) -> tuple[float, float, float]:
    """Fit CRISP's components (LCP, overlapped computation, store stalls) to measured times.

    Parameters
    ----------
    r, t : ndarray
        Clock ratios (>= 1) and measured times.
    t0 : float
        Time at the base clock.
    grid : int
        Grid points per parameter before refinement.

    Returns
    -------
    (lcp, lcp_comp, store_stall)
    """
    from scipy.optimize import minimize

    r = np.asarray(r, float)
    t = np.asarray(t, float)
    g = np.linspace(0.0, 1.0, grid)
    u, v, w = (a.ravel() for a in np.meshgrid(g, g, g, indexing="ij"))
    lcp, a, s = _crisp_params(u, v, w, t0)
    c = np.maximum(t0 - lcp - s, 0.0)
    pred = np.maximum(lcp[:, None], r[None, :] * a[:, None]) + np.maximum((c + s)[:, None], r[None, :] * c[:, None])
    scale = t0 * t0 * max(len(r), 1)
    obj = ((pred - t[None, :]) ** 2).sum(axis=1) / scale + _TIE * (v + w)
    best = int(np.argmin(obj))

    def f(x):
        uu, vv, ww = np.clip(x, 0.0, 1.0)
        p = crisp_time(t0, *_crisp_params(uu, vv, ww, t0), r, higher_clock_variant=False)
        return float(((p - t) ** 2).sum() / scale + _TIE * (vv + ww))

    res = minimize(f, np.array([u[best], v[best], w[best]]), method="Nelder-Mead",
                   options={"xatol": 1e-6, "fatol": 1e-14, "maxiter": 2000})
    x = np.clip(res.x, 0.0, 1.0) if res.fun <= obj[best] else np.array([u[best], v[best], w[best]])
    return tuple(float(z) for z in _crisp_params(*x, t0))


def _form_predict(form: str, params, t0: float, r: np.ndarray) -> np.ndarray:
    if form == "proportional":
        return t0 * r
    if form == "linear":
        return t0 + params * (r - 1.0)
    return crisp_time(t0, *params, r, higher_clock_variant=False)


def titanx_accuracy(
    curves: pd.DataFrame | None = None,
    top_k: int = 4,
    progress: Callable[[int], None] | None = None,
    skip_top: int = 0,
) -> pd.DataFrame:
    """Fit each model form to the ``top_k`` highest clocks of every curve and predict the others.

    Parameters
    ----------
    curves : DataFrame, optional
        From :func:`titanx_curves` (default: the vendored data).
    top_k : int
        Number of top clocks used for fitting (>= 2), the top one being the base.
    progress : callable, optional
        Called with the index of each finished curve.
    skip_top : int
        Drop this many highest clocks first (the base becomes the next one). The Titan X's 1164 MHz point
        is suspect: from 1164 to 1126 MHz even pure-compute kernels slow by a third of the clock ratio.

    Returns
    -------
    DataFrame
        Columns suite, kernel, form, target_mhz, true, pred, err_pct, plus fit_* columns with the fitted
        components as fractions of T0 (same for all rows of a kernel and form).
    """
    if top_k < 2:
        raise CounterError(f"top_k must be at least 2 (got {top_k})")
    curves = titanx_curves() if curves is None else curves
    rows = []
    for i, ((suite_name, kernel), g) in enumerate(curves.groupby(["suite", "kernel"], sort=True)):
        g = g.sort_values("core_clock_mhz", ascending=False).iloc[skip_top:]
        f = g["core_clock_mhz"].to_numpy(float)
        t = g["time"].to_numpy(float)
        if len(f) <= top_k:
            continue
        t0 = t[0]
        r = f[0] / f
        fit_r, fit_t = r[:top_k], t[:top_k]
        params = {
            "proportional": None,
            "linear": fit_linear(fit_r, fit_t, t0),
            "crisp": fit_crisp(fit_r, fit_t, t0),
        }
        for form in FORMS:
            p = _form_predict(form, params[form], t0, r[top_k:])
            if form == "linear":
                fit = {
                    "fit_memory": 1.0 - params[form] / t0,
                    "fit_lcp": np.nan,
                    "fit_lcp_comp": np.nan,
                    "fit_store": np.nan,
                }
            elif form == "crisp":
                fit = {
                    "fit_memory": np.nan,
                    "fit_lcp": params[form][0] / t0,
                    "fit_lcp_comp": params[form][1] / t0,
                    "fit_store": params[form][2] / t0,
                }
            else:
                fit = {"fit_memory": 0.0, "fit_lcp": np.nan, "fit_lcp_comp": np.nan, "fit_store": np.nan}
            for fm, tv, pv in zip(f[top_k:], t[top_k:], p):
                rows.append({"suite": suite_name, "kernel": kernel, "form": form, "target_mhz": fm, "true": tv,
                             "pred": float(pv), "err_pct": 100.0 * (pv / tv - 1.0), **fit})
        if progress is not None:
            progress(i)
    return pd.DataFrame(rows)


def titanx_shape(curves: pd.DataFrame | None = None, skip_top: int = 0) -> pd.DataFrame:
    """In-sample fit of each form to all clocks of a curve: does a curve have two slopes?

    Parameters
    ----------
    curves : DataFrame, optional
    skip_top : int
        Drop this many highest clocks first.

    Returns
    -------
    DataFrame
        Per kernel: RMS relative error of the linear and CRISP forms fitted to the whole curve, and the
        ratio of the curve's slope (time vs cycle time) in its low-clock half to its high-clock half.
    """
    curves = titanx_curves() if curves is None else curves
    rows = []
    for (suite_name, kernel), g in curves.groupby(["suite", "kernel"], sort=True):
        g = g.sort_values("core_clock_mhz", ascending=False).iloc[skip_top:]
        f = g["core_clock_mhz"].to_numpy(float)
        t = g["time"].to_numpy(float)
        t0, r = t[0], f[0] / f
        lin = _form_predict("linear", fit_linear(r, t, t0), t0, r)
        cr = _form_predict("crisp", fit_crisp(r, t, t0), t0, r)
        h = len(r) // 2
        s_hi = np.polyfit(r[: h + 1], t[: h + 1] / t0, 1)[0]
        s_lo = np.polyfit(r[h:], t[h:] / t0, 1)[0]
        rows.append({
            "suite": suite_name, "kernel": kernel,
            "rms_linear_pct": 100 * float(np.sqrt(np.mean((lin / t - 1) ** 2))),
            "rms_crisp_pct": 100 * float(np.sqrt(np.mean((cr / t - 1) ** 2))),
            "slope_high": float(s_hi), "slope_low": float(s_lo),
        })
    return pd.DataFrame(rows)


def titanx_top_step(curves: pd.DataFrame | None = None) -> pd.DataFrame:
    """Observed slowdown between successive clocks as a fraction of the clock ratio's (1 = compute bound).

    Parameters
    ----------
    curves : DataFrame, optional

    Returns
    -------
    DataFrame
        Per step (``from_mhz`` -> ``to_mhz``, from the top): median over all curves and over the pure-compute
        microbenchmarks (SP, DP, INT, md5hash) of ``(T(to) / T(from) - 1) / (from / to - 1)``.
    """
    curves = titanx_curves() if curves is None else curves
    w = curves.pivot_table(index="kernel", columns="core_clock_mhz", values="time").sort_index(axis=1, ascending=False)
    f = w.columns.to_numpy(float)
    frac = (w.to_numpy()[:, 1:] / w.to_numpy()[:, :-1] - 1.0) / (f[:-1] / f[1:] - 1.0)
    pure = w.index.str.split("@").str[0].isin(["SP", "DP", "INT", "md5hash"])
    return pd.DataFrame({"from_mhz": f[:-1], "to_mhz": f[1:], "median_all": np.median(frac, axis=0),
                         "median_pure_compute": np.median(frac[pure], axis=0) if pure.any() else np.nan})


# ----------------------------------------------------------------------------------------------- control
def synthetic_program(
    per_phase: int = 6, n: int = 4000, seed: int = 7, power: PowerModel | None = None
) -> list[TimelineInterval]:
    """A program of intervals for the controller: a phase of ``per_phase`` intervals of every profile.

    Each interval's SM dynamic power at the nominal state is ``dynamic_w * (0.2 + 0.8 * issue share)``
    (issue share = fraction of cycles issuing at 700 MHz), so busy phases draw more.

    Parameters
    ----------
    per_phase : int
    n : int
        Instructions per interval.
    seed : int
    power : PowerModel, optional

    Returns
    -------
    list of TimelineInterval
    """
    pw = power or PowerModel()
    out = []
    for p, prof in enumerate(PROFILES):
        prof = dataclasses.replace(prof, n=n)
        for j in range(per_phase):
            tl = generate(prof, seed + 1000 * p + j)
            ex = simulate(tl, pw.nominal.mhz)
            share = float(np.mean(ex.state == 0))
            out.append(
                TimelineInterval(f"{prof.name}-{j}", tl, pw.dynamic_w * (0.2 + 0.8 * share), SYNTH_MISS_LATENCY_NS)
            )
    return out


def control_table(
    intervals: Sequence[TimelineInterval] | None = None,
    objectives: Sequence[str] = ("edp", "ed2p", "energy"),
    models: Sequence[str] = MODEL_NAMES,
    slowdown: float = 0.01,
    power: PowerModel | None = None,
    progress: Callable[[int], None] | None = None,
) -> pd.DataFrame:
    """Closed-loop controller savings for every model and objective, and an oracle reference.

    The oracle knows every interval's true time at every P-state (and optimises it directly).

    Parameters
    ----------
    intervals : sequence of TimelineInterval, optional
        Default :func:`synthetic_program`.
    objectives : sequence of str
    models : sequence of str
    slowdown : float
        Bound for the energy objective.
    power : PowerModel, optional
    progress : callable, optional

    Returns
    -------
    DataFrame
        Columns objective, model, energy_saving_pct, time_change_pct, edp_saving_pct, ed2p_saving_pct,
        transitions.
    """
    pw = power or PowerModel()
    ivs = list(intervals) if intervals is not None else synthetic_program(power=pw)
    rows = []
    k = 0
    for obj in objectives:
        for m in models:
            res = simulate_control(ivs, m, obj, power=pw, slowdown=slowdown)
            s = res.savings()
            rows.append({"objective": obj, "model": m, "energy_saving_pct": s["energy"], "time_change_pct": -s["time"],
                         "edp_saving_pct": s["edp"], "ed2p_saving_pct": s["ed2p"], "transitions": res.transitions})
            if progress is not None:
                progress(k)
            k += 1
        rows.append({"objective": obj, "model": "oracle", **_oracle(ivs, obj, pw, slowdown)})
    return pd.DataFrame(rows)


def _oracle(ivs, objective, pw, slowdown):
    ps = default_pstates()
    time = energy = bt = be = 0.0
    for iv in ivs:
        ts = np.array([iv.run(p.mhz)[0] for p in ps])
        es = np.array([pw.power_w(p, iv.dynamic_w) for p in ps]) * ts
        if objective == "edp":
            mt = es * ts
        elif objective == "ed2p":
            mt = es * ts * ts
        else:
            mt = np.where(ts <= (1 + slowdown) * ts[-1], es, np.inf)
        b = int(np.argmin(mt))
        time += ts[b]
        energy += es[b]
        bt += ts[-1]
        be += es[-1]
    return {"energy_saving_pct": 100 * (1 - energy / be), "time_change_pct": 100 * (time / bt - 1),
            "edp_saving_pct": 100 * (1 - energy * time / (be * bt)),
            "ed2p_saving_pct": 100 * (1 - energy * time**2 / (be * bt**2)), "transitions": np.nan}


# ----------------------------------------------------------------------------------------------- report
def _md(df: pd.DataFrame, floatfmt: str = "{:.1f}") -> str:
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        cells = []
        for v in row:
            if isinstance(v, (float, np.floating)):
                cells.append("" if math.isnan(v) else floatfmt.format(v))
            else:
                cells.append(str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _pivot_mape(df: pd.DataFrame, index: str, column: str) -> pd.DataFrame:
    t = df.assign(abs_err=df["err_pct"].abs()).pivot_table(
        index=index, columns=column, values="abs_err", aggfunc="mean"
    )
    return t


@dataclasses.dataclass
class Report:
    """All evaluation results; :meth:`markdown` renders the tables of ``docs/dvfs.md``."""

    synth: pd.DataFrame
    breakdown: pd.DataFrame
    titan: dict  # (top_k, skip_top) -> DataFrame from titanx_accuracy
    shape: dict  # skip_top -> DataFrame from titanx_shape
    control: pd.DataFrame
    top_k: int
    top_step: pd.DataFrame | None = None

    def summary(self) -> dict:
        """Headline numbers (synthetic MAPE per model; Titan X MAPE per form for the main ``top_k``).

        Returns
        -------
        dict
        """
        s = self.synth.assign(a=self.synth["err_pct"].abs()).groupby("model")["a"].mean().to_dict()
        out = {"synthetic_mape": s}
        for (k, skip), tt in sorted(self.titan.items()):
            if k == self.top_k:
                key = "titanx_mape" if skip == 0 else f"titanx_mape_skip{skip}"
                out[key] = tt.assign(a=tt["err_pct"].abs()).groupby("form")["a"].mean().to_dict()
        return out

    def markdown(self) -> str:
        """The generated section of ``docs/dvfs.md``.

        Returns
        -------
        str
        """
        out = []
        order = [m for m in MODEL_NAMES if m in set(self.synth["model"])]
        out.append("### Synthetic timelines: error per target clock (Fig. 8 shape)\n")
        out.append(f"Counters read at {SYNTH_BASE_MHZ:.0f} MHz; mean absolute percentage error over "
                   f"{self.synth['kernel'].nunique()} kernels.\n")
        p = _pivot_mape(self.synth, "target_mhz", "model")[order].reset_index()
        mean_row = pd.DataFrame([{"target_mhz": "all", **{m: p[m].mean() for m in order}}])
        p["target_mhz"] = p["target_mhz"].map(lambda x: f"{x:.0f}")
        out.append(_md(pd.concat([p, mean_row], ignore_index=True)) + "\n")
        out.append("### Synthetic timelines: error per kernel, all targets (Fig. 9 shape)\n")
        q = _pivot_mape(self.synth, "kernel", "model")[order].reset_index()
        sg = self.synth[self.synth["target_mhz"] == min(self.synth["target_mhz"])]
        worst = sg.assign(a=sg["err_pct"]).pivot_table(index="kernel", columns="model", values="a")
        q["max_abs_err_any_model"] = (
            self.synth.assign(a=self.synth["err_pct"].abs()).groupby("kernel")["a"].max().values
        )
        out.append(_md(q) + "\n")
        out.append("Signed error at the lowest target (negative = underprediction):\n")
        out.append(_md(worst[order].reset_index()) + "\n")
        out.append("CRISP's breakdown at the base clock (fractions of run time, like Fig. 7):\n")
        out.append(_md(self.breakdown, "{:.3f}") + "\n")
        out.append("### Controller on a synthetic program (Sec. 5.2 shape)\n")
        out.append("Savings vs always at 700 MHz (positive = better; time change positive = slower). "
                   "`energy` = minimum energy with at most 1% predicted slowdown. `oracle` knows the true times.\n")
        out.append(_md(self.control) + "\n")
        out.append("### GTX Titan X: fitted on the top clocks, predicting the rest\n")
        if self.top_step is not None:
            ts = self.top_step
            out.append("First, a property of the data. Slowdown between successive clocks as a fraction of what the "
                       "clock ratio predicts (1 = compute bound), median over all curves and over the pure-compute "
                       "microbenchmarks (SP, DP, INT, md5hash):\n")
            ts2 = ts.copy()
            ts2["step"] = ts2["from_mhz"].map(lambda x: f"{x:.0f}") + " -> " + ts2["to_mhz"].map(lambda x: f"{x:.0f}")
            out.append(_md(ts2[["step", "median_all", "median_pure_compute"]], "{:.2f}") + "\n")
            out.append("Pure-compute kernels slow by about a third of the clock ratio between the top two clocks and "
                       "by about the full ratio below, so the 1164 MHz point most likely did not run at 1164 MHz "
                       "(boost or power limit). Each table is therefore given twice: with the 1164 MHz point as the "
                       "base, and with it dropped (base 1126 MHz).\n")
        for (k, skip), df in sorted(self.titan.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            base = "1164" if skip == 0 else "1126 (1164 dropped)"
            n_clk = 16 - skip
            a = df.assign(a=df["err_pct"].abs())
            o = a.pivot_table(index="suite", columns="form", values="a", aggfunc="mean")[list(FORMS)]
            o.loc["all"] = a.groupby("form")["a"].mean()[list(FORMS)]
            o.loc["max"] = a.groupby("form")["a"].max()[list(FORMS)]
            out.append(f"Fitted on the top {k} of {n_clk} clocks (base {base} MHz), MAPE over the other {n_clk - k}:\n")
            out.append(_md(o.reset_index()) + "\n")
            per_k = _pivot_mape(df, "kernel", "form")[list(FORMS)]
            wins = int((per_k["crisp"] < per_k["linear"] - 0.05).sum())
            ties = int((abs(per_k["crisp"] - per_k["linear"]) <= 0.05).sum())
            out.append(f"Per curve: CRISP form better than linear by more than 0.05 points on {wins}, within 0.05 on "
                       f"{ties}, worse on {len(per_k) - wins - ties} of {len(per_k)}.\n")
            if k == self.top_k:
                pt = _pivot_mape(df, "target_mhz", "form")[list(FORMS)].reset_index().sort_values("target_mhz")
                pt["target_mhz"] = pt["target_mhz"].map(lambda x: f"{x:.0f}")
                out.append("Error per target clock (all curves):\n")
                out.append(_md(pt) + "\n")
                real = df[df["suite"] == "real"]
                pr = _pivot_mape(real, "kernel", "form")[list(FORMS)].reset_index()
                out.append("Per real kernel (`benchmark@memory clock`), MAPE over the predicted clocks:\n")
                out.append(_md(pr) + "\n")
        out.append("### GTX Titan X: do the curves have two slopes?\n")
        out.append("Each form fitted to all clocks of a curve (in-sample RMS relative error):\n")
        for skip, sh in sorted(self.shape.items()):
            agg = sh.groupby("suite")[["rms_linear_pct", "rms_crisp_pct"]].mean()
            agg.loc["all"] = sh[["rms_linear_pct", "rms_crisp_pct"]].mean()
            label = "all 16 clocks" if skip == 0 else f"1164 MHz dropped ({16 - skip} clocks)"
            out.append(f"{label}:\n")
            out.append(_md(agg.reset_index(), "{:.2f}") + "\n")
            conv = sh[(sh["slope_low"] > sh["slope_high"] + 0.15)]
            extra = (f"; among them the in-sample RMS error is {conv['rms_linear_pct'].mean():.2f}% linear vs "
                     f"{conv['rms_crisp_pct'].mean():.2f}% CRISP form" if len(conv) else "")
            out.append(f"Curves whose slope (time/T0 vs f_base/f) in the low-clock half exceeds the high-clock half's "
                       f"by more than 0.15, the paper's two-slope shape: {len(conv)} of {len(sh)}{extra}.\n")
        return "\n".join(out)


def run_all(top_k: int = 4, extra_k: Sequence[int] = (3, 6), per_profile: int = 2,
            progress: Callable[[str], None] | None = None) -> Report:
    """Run every evaluation.

    Parameters
    ----------
    top_k : int
        Main number of top clocks for the Titan X fits.
    extra_k : sequence of int
        Further ``top_k`` values reported for sensitivity.
    per_profile : int
        Synthetic kernels per family.
    progress : callable, optional
        Called with a stage name as each stage starts.

    Returns
    -------
    Report
    """
    say = progress or (lambda s: None)
    say("synthetic timelines")
    ks = suite(per_profile)
    synth = synthetic_accuracy(ks)
    br = synthetic_breakdown(ks)
    say("controller")
    ctl = control_table()
    curves = titanx_curves()
    titan = {}
    for k in sorted({top_k, *extra_k}):
        say(f"Titan X fits (top {k})")
        for skip in (0, 1):
            titan[(k, skip)] = titanx_accuracy(curves, k, skip_top=skip)
    say("Titan X shapes")
    shape = {skip: titanx_shape(curves, skip) for skip in (0, 1)}
    return Report(synth, br, titan, shape, ctl, top_k, titanx_top_step(curves))


def write_report(report: Report, path: str | Path) -> Path:
    """Write the generated tables into ``path`` between the markers (whole file if it has none).

    Parameters
    ----------
    report : Report
    path : path-like
        Usually ``docs/dvfs.md``.

    Returns
    -------
    Path
    """
    p = Path(path)
    block = f"{BEGIN}\n\n{report.markdown()}\n{END}"
    if p.exists():
        text = p.read_text()
        if BEGIN in text and END in text:
            new = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda m: block, text, flags=re.S)
            atomic_write_text(p, new)
            return p
    atomic_write_text(p, f"# DVFS model evaluation\n\n{block}\n")
    return p
