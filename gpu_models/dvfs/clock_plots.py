"""Time-versus-clock plots per kernel with every model and the truth (the CRISP paper's Fig. 10)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from gpu_models.dvfs.counter_record import CounterError

_STYLES = {
    "truth": dict(color="black", lw=2.2, marker="o", ms=4, zorder=5),
    "stall": dict(color="tab:gray", ls=":"),
    "miss": dict(color="tab:brown", ls=":"),
    "lead": dict(color="tab:blue", ls="--"),
    "crit": dict(color="tab:orange", ls="--"),
    "crisp": dict(color="tab:red", lw=2.0),
    "crisp-l": dict(color="tab:purple", ls="-."),
    "linear": dict(color="tab:blue", ls="--"),
    "proportional": dict(color="tab:gray", ls=":"),
}


def plot_time_vs_clock(
    clocks_mhz: Sequence[float],
    truth: Sequence[float],
    predictions: Mapping[str, Sequence[float]],
    path: str | os.PathLike,
    title: str = "",
    base_mhz: float | None = None,
    fit_mhz: Sequence[float] | None = None,
    normalize: bool = True,
) -> Path:
    """Plot run time against core clock for the truth and each model; write PNG or SVG atomically.

    Parameters
    ----------
    clocks_mhz : sequence of float
        Clocks of the truth and of the predictions.
    truth : sequence of float
        Measured or simulated run time at each clock.
    predictions : mapping of str to sequence of float
        Model name to predicted times at ``clocks_mhz``.
    path : path-like
        Output file, ``*.png`` or ``*.svg``.
    title : str
    base_mhz : float, optional
        Marked with a vertical line (the clock the counters were read at).
    fit_mhz : sequence of float, optional
        Clocks used for fitting, shaded.
    normalize : bool
        Divide times by the truth at the highest clock.

    Returns
    -------
    Path
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p = Path(path)
    fmt = p.suffix.lower().lstrip(".")
    if fmt not in ("png", "svg"):
        raise CounterError(f"{p}: plots are written as .png or .svg")
    x = np.asarray(clocks_mhz, float)
    y = np.asarray(truth, float)
    if x.shape != y.shape or x.size == 0:
        raise CounterError("clocks and truth must be non-empty and of the same length")
    order = np.argsort(x)
    ref = y[np.argmax(x)] if normalize else 1.0
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    if fit_mhz is not None and len(fit_mhz):
        ax.axvspan(min(fit_mhz), max(fit_mhz), color="0.9", label="fitted clocks")
    ax.plot(x[order], y[order] / ref, label="truth", **_STYLES["truth"])
    for name, pred in predictions.items():
        pv = np.asarray(pred, float)
        if pv.shape != x.shape:
            raise CounterError(f"prediction {name!r} has {pv.size} values for {x.size} clocks")
        ax.plot(x[order], pv[order] / ref, label=name.upper(), **_STYLES.get(name, {}))
    if base_mhz is not None:
        ax.axvline(base_mhz, color="0.5", lw=0.8)
    ax.set_xlabel("core clock (MHz)")
    ax.set_ylabel("run time / run time at top clock" if normalize else "run time")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.stem}.", suffix=p.suffix)
    os.close(fd)
    try:
        fig.savefig(tmp, format=fmt, dpi=120)
        os.replace(tmp, p)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.unlink(tmp)
    return p


def plot_synthetic_kernel(name: str, timeline, path, base_mhz: float = 700.0, miss_latency_ns: float = 450.0) -> Path:
    """Fig. 10 for a synthetic kernel: truth by simulation at 100-700 MHz (25 MHz steps), every model from
    the counters at ``base_mhz``.

    Parameters
    ----------
    name : str
    timeline : Timeline
    path : path-like
    base_mhz : float
    miss_latency_ns : float

    Returns
    -------
    Path
    """
    from gpu_models.dvfs.models import predict_all
    from gpu_models.dvfs.timeline import derive_counters, simulate

    clocks = np.arange(100.0, base_mhz + 1, 25.0)
    truth = np.array([simulate(timeline, f).total_ns for f in clocks])
    rec = derive_counters(simulate(timeline, base_mhz), miss_latency_ns, name)
    preds = predict_all(rec, clocks)
    return plot_time_vs_clock(
        clocks, truth, preds, path, title=f"{name} (counters at {base_mhz:.0f} MHz)", base_mhz=base_mhz
    )


def plot_titanx_kernel(kernel: str, path, top_k: int = 4, curves=None) -> Path:
    """Fig. 10 for a GTX Titan X curve (``benchmark@memclock``): truth and each fitted model form.

    Parameters
    ----------
    kernel : str
        ``benchmark@mem_clock_mhz``, e.g. ``backprop@3505``.
    path : path-like
    top_k : int
    curves : DataFrame, optional

    Returns
    -------
    Path
    """
    from gpu_models.dvfs.crisp_evaluation import FORMS, _form_predict, fit_crisp, fit_linear, titanx_curves

    curves = titanx_curves() if curves is None else curves
    g = curves[curves["kernel"] == kernel].sort_values("core_clock_mhz", ascending=False)
    if g.empty:
        known = ", ".join(sorted(curves["kernel"].unique())[:8])
        raise CounterError(f"unknown Titan X kernel {kernel!r} (use benchmark@memclock, e.g. {known}, ...)")
    f = g["core_clock_mhz"].to_numpy(float)
    t = g["time"].to_numpy(float)
    r = f[0] / f
    params = {
        "proportional": None,
        "linear": fit_linear(r[:top_k], t[:top_k], t[0]),
        "crisp": fit_crisp(r[:top_k], t[:top_k], t[0]),
    }
    preds = {form: _form_predict(form, params[form], t[0], r) for form in FORMS}
    return plot_time_vs_clock(f, t, preds, path, title=f"{kernel} (GTX Titan X, fitted on top {top_k} clocks)",
                              base_mhz=f[0], fit_mhz=f[:top_k])
