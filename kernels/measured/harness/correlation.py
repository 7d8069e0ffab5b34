"""The SIMT model's times beside the measured ones: :func:`pair_times` pairs every traced point's simulated time
with the measured time on each GPU of its data; :func:`fit_floors` and :func:`fit_calibration` fit a launch floor
(and a scale) per GPU on the training half of the applications (:func:`split_applications`); :func:`summarize`
and :func:`correlation` give the errors and correlations; :func:`correlation_plot` draws them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from core.atomic import atomic_path
from kernels.measured.harness.sources import GPU_LABELS


def application_of(port: str) -> str:
    """``source/application`` of a port name."""
    return "/".join(port.split("/")[:2])


def split_applications(ports: Iterable[str]) -> tuple[list[str], list[str]]:
    """(training, held-out) halves of the applications: in name order, alternately (the first to training),
    so that no constant fitted on the training half has seen a held-out application in any form."""
    apps = sorted({application_of(p) for p in ports})
    return apps[0::2], apps[1::2]


#: ports whose measured time holds more than the kernel, left out of the correlation, with the reason
NOT_KERNEL_TIME = {
    "aiwc/kmeans/invert_mapping": "its AIWC time includes the host-to-device copy of the points (the data's notes)",
}


def pair_times(points: pd.DataFrame, times: pd.DataFrame, *, kernel_only: bool = True,
               simulated_only: bool = True) -> pd.DataFrame:
    """Every traced point's simulated time on every GPU of its data beside the measured one (without the
    ports of :data:`NOT_KERNEL_TIME` when ``kernel_only``); with ``simulated_only=False`` also the traced points
    the SIMT model did not simulate (``simulated_s`` NaN; e.g. a few threads with more records than the
    sample may keep)."""
    if kernel_only:
        points = points[~points.port.isin(list(NOT_KERNEL_TIME))]
    cols = [c for c in points.columns if c.startswith("sim_") and pd.api.types.is_numeric_dtype(points[c])]
    sims = points.melt(id_vars=["port", "point"], value_vars=cols,
                       var_name="preset", value_name="simulated_s").dropna()
    sims["preset"] = sims["preset"].str[4:]
    if simulated_only:
        pairs = times.merge(sims, on=["port", "point", "preset"])
    else:
        traced = times.merge(points[["port", "point"]].drop_duplicates(), on=["port", "point"])
        pairs = traced.merge(sims, on=["port", "point", "preset"], how="left")
    pairs["application"] = pairs.port.map(application_of)
    return pairs


#: candidate launch floors (seconds) for :func:`fit_floors`: 0 and 0.25 us to 200 us, 2% apart
FLOOR_GRID = np.concatenate([[0.0], 0.25e-6 * 1.02 ** np.arange(0, 340)])


#: candidate scale factors for :func:`fit_calibration`: 1/4 to 4, 2% apart (and 1 exactly)
SCALE_GRID = np.unique(np.concatenate([[1.0], 0.25 * 1.02 ** np.arange(0, 141)]))


def fit_calibration(pairs: pd.DataFrame, scales: np.ndarray = SCALE_GRID) -> dict:
    """Per GPU, the scale ``k`` (from ``scales``) and the constant ``f`` (from :data:`FLOOR_GRID`) that
    minimise the median of ``|log(k simulated + f) - log(measured)|`` over ``pairs`` (the training
    applications' pairs only): ``{gpu: (k, f)}``. The scale takes what the model gets wrong on every kernel
    of a GPU alike (its clocks under load, a DRAM efficiency), the constant the launch and the timer."""
    scales = np.asarray(scales, dtype=float)
    out = {}
    for gpu, g in pairs.groupby("gpu"):
        sim, meas = g.simulated_s.to_numpy(), np.log(g.measured_s.to_numpy())
        pred = scales[:, None, None] * sim[None, None, :] + FLOOR_GRID[None, :, None]
        err = np.median(np.abs(np.log(pred) - meas[None, None, :]), axis=2)
        i, j = np.unravel_index(int(np.argmin(err)), err.shape)
        out[gpu] = (float(scales[i]), float(FLOOR_GRID[j]))
    return out


def fit_floors(pairs: pd.DataFrame) -> dict:
    """Per GPU, the constant time ``f`` (a launch overhead and the timer's floor, which the SIMT model does
    not have) that minimises the median of ``|log(simulated + f) - log(measured)|`` over ``pairs`` (give
    it the training applications' pairs only), from :data:`FLOOR_GRID`: :func:`fit_calibration` at scale 1."""
    return {gpu: f for gpu, (_, f) in fit_calibration(pairs, scales=[1.0]).items()}


def correlation(points: pd.DataFrame, times: pd.DataFrame,
                floors: dict | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`summarize` of :func:`pair_times`."""
    return summarize(pair_times(points, times), floors)


def summarize(pairs: pd.DataFrame, floors: dict | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(pairs, summary): the pairs with the simulated time plus ``floors[gpu]`` seconds when given (see
    :func:`fit_floors`; or a ``(scale, floor)`` pair per GPU, :func:`fit_calibration`: ``scale x simulated +
    floor``) and its absolute percentage error ``ape``, and per GPU (and ``all``) the number of pairs, the
    mean absolute percentage error, the Pearson correlation of the log times and the Spearman rank
    correlation."""
    from scipy import stats

    pairs = pairs.copy()
    if floors:
        cal = {g: v if isinstance(v, tuple) else (1.0, v) for g, v in floors.items()}
        scale = pairs.gpu.map({g: v[0] for g, v in cal.items()}).fillna(1.0)
        pairs["simulated_s"] = scale * pairs.simulated_s + pairs.gpu.map({g: v[1] for g, v in cal.items()}).fillna(0.0)
    pairs["ape"] = (pairs.simulated_s - pairs.measured_s).abs() / pairs.measured_s
    out = []
    for gpu, g in [*pairs.groupby("gpu"), ("all", pairs)]:
        # a correlation needs three pairs and times that vary on both sides
        ok = len(g) >= 3 and g.simulated_s.nunique() > 1 and g.measured_s.nunique() > 1
        out.append({"gpu": gpu, "pairs": len(g), "mape": float(g.ape.mean()) if len(g) else float("nan"),
                    "pearson_log": float(stats.pearsonr(np.log(g.simulated_s), np.log(g.measured_s))[0]) if ok
                    else float("nan"),
                    "spearman": float(stats.spearmanr(g.simulated_s, g.measured_s)[0]) if ok else float("nan")})
    return pairs, pd.DataFrame(out)


def correlation_parts(raw: pd.DataFrame, floor: bool,
                      scale: bool = False) -> tuple[list[tuple[str, pd.DataFrame, pd.DataFrame]], dict]:
    """(title, pairs, summary) per part of :func:`pair_times`' ``raw`` pairs, and the fitted constants: all
    pairs as the model gives them, or (``floor``) the training half of the applications with a per-GPU floor
    fitted there (:func:`fit_floors`; with ``scale``, a scale and a floor, :func:`fit_calibration`) and the
    held-out half with the same constants."""
    if not floor:
        return [("all applications, the model as it is", *summarize(raw))], {}
    train, held = split_applications(raw.port)
    fit = fit_calibration if scale else fit_floors
    floors = fit(raw[raw.application.isin(train)])
    what = "scale and floor" if scale else "floor"
    parts = [(f"training half ({', '.join(train)}), {what} fitted there", raw[raw.application.isin(train)]),
             (f"held-out half ({', '.join(held)}), never fitted on", raw[raw.application.isin(held)])]
    return [(title, *summarize(p, floors)) for title, p in parts], floors


def calibration_text(fitted: dict) -> str:
    """``GPU floor us`` or ``GPU xscale + floor us`` per GPU of :func:`fit_floors` / :func:`fit_calibration`."""
    def one(v):
        return f"{1e6 * v:.1f} us" if not isinstance(v, tuple) else f"x{v[0]:.2f} + {1e6 * v[1]:.1f} us"

    return ", ".join(f"{GPU_LABELS.get(g, g)} {one(v)}" for g, v in fitted.items())


def markdown_table(frame: pd.DataFrame) -> str:
    """A DataFrame as a Markdown table (floats with 3 significant digits)."""
    def cell(v):
        return f"{v:.3g}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(cell(v) for v in r) + " |" for r in frame.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def correlation_plot(pairs: pd.DataFrame, out: str | os.PathLike) -> Path:
    """Log-log scatter of simulated against measured time, one colour per GPU (PNG, written atomically)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out)
    fig, ax = plt.subplots(figsize=(7, 6))
    colours = plt.get_cmap("tab20").colors  # one of 20 distinct colours per GPU
    for k, (gpu, g) in enumerate(pairs.groupby("gpu")):
        ax.scatter(g.measured_s * 1e6, g.simulated_s * 1e6, s=14, label=GPU_LABELS.get(gpu, gpu), alpha=0.8,
                   color=colours[k % len(colours)])
    if len(pairs):
        lo = min(pairs.measured_s.min(), pairs.simulated_s.min()) * 1e6
        hi = max(pairs.measured_s.max(), pairs.simulated_s.max()) * 1e6
        ax.plot([lo, hi], [lo, hi], color="grey", lw=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured kernel time (us)")
    ax.set_ylabel("SIMT model time (us)")
    ax.set_title("Measured kernels: SIMT model against the hardware")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    with atomic_path(out) as tmp:
        fig.savefig(tmp, format="png", dpi=120)
    plt.close(fig)
    return out
