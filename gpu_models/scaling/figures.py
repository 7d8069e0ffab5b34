"""Figures of the scaling evaluation (analogues of Wu et al. Fig. 10/11, 13, 14, 15, 16/17). Agg backend."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from core.atomic import make_temp


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path) -> Path:
    """Save a matplotlib figure atomically; the format follows the suffix (.png or .svg)."""
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in ("png", "svg"):
        raise ValueError(f"{path}: figures are written as .png or .svg")
    fd, tmp = make_temp(path)
    os.close(fd)
    try:
        fig.savefig(tmp, format=fmt, dpi=120, bbox_inches="tight")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
        _plt().close(fig)
    return path


def _label(base) -> str:
    return f"{base[0]}/{base[1]:g}/{base[2]:g}"


def heatmap(errors: dict, grid, k: int, path) -> Path:
    """Mean validation error per base configuration (core clock x memory clock; one panel per SM count)."""
    plt = _plt()
    n_cu = len(grid.sm_counts)
    fig, axes = plt.subplots(
        n_cu, 1, figsize=(max(6, 0.55 * len(grid.core_mhz) + 2), 1.2 + 0.6 * len(grid.mem_mhz) * n_cu), squeeze=False
    )
    vals = np.full(grid.shape, np.nan)
    for base, e in errors.items():
        vals[grid.index(*base)] = 100 * e
    vmax = np.nanmax(vals) if np.isfinite(vals).any() else 1
    for s, ax in enumerate(axes[:, 0]):
        im = ax.imshow(vals[s].T, origin="lower", aspect="auto", cmap="RdYlGn_r", vmin=0, vmax=vmax)
        ax.set_xticks(range(len(grid.core_mhz)), [f"{c:g}" for c in grid.core_mhz], rotation=90)
        ax.set_yticks(range(len(grid.mem_mhz)), [f"{m:g}" for m in grid.mem_mhz])
        ax.set_xlabel("base core clock (MHz)")
        ax.set_ylabel("base memory clock (MHz)")
        ax.set_title(f"GTX Titan X, {grid.sm_counts[s]} SMs: mean validation error (%) from each base, k={k}")
        for (j, i), v in np.ndenumerate(vals[s]):
            if np.isfinite(v):
                ax.text(j, i, f"{v:.0f}", ha="center", va="center", fontsize=7)
        fig.colorbar(im, ax=ax, label="error (%)")
    return save_figure(fig, path)


def error_vs_clusters(curves: dict, bases, ks, what: str, path) -> Path:
    """Validation error versus clusters per set, one line per base configuration plus their mean."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    for base in bases:
        ax.plot(ks, [100 * curves[(base, k)][0] for k in ks], marker="o", label=_label(base))
    mean = [100 * np.mean([curves[(b, k)][0] for b in bases]) for k in ks]
    ax.plot(ks, mean, color="k", lw=2.5, label="mean (learned)")
    ax.plot(ks, [100 * np.mean([curves[(b, k)][1] for b in bases]) for k in ks], color="k", ls="--",
            label="mean (oracle)")
    ax.set_xlabel("clusters per cluster set (k)")
    ax.set_ylabel("mean validation error (%)")
    ax.set_title(f"GTX Titan X {what}: held-out real kernels (base SMs/core/mem)")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return save_figure(fig, path)


def histograms(errs_by_k: dict, what: str, path) -> Path:
    """Error histograms in 10 % bins plus a >= 100 % bin, one bar group per k (Fig. 14 / 17)."""
    plt = _plt()
    edges = np.r_[np.arange(0, 101, 10), np.inf]
    fig, ax = plt.subplots(figsize=(8, 4))
    ks = sorted(errs_by_k)
    w = 0.8 / max(len(ks), 1)
    for i, k in enumerate(ks):
        e = 100 * np.concatenate(errs_by_k[k])
        counts, _ = np.histogram(e, bins=edges)
        ax.bar(np.arange(len(counts)) + i * w, counts, width=w, label=f"k={k}")
    names = [f"{int(a)}-{int(b)}" for a, b in zip(edges[:-2], edges[1:-1])] + [">=100"]
    ax.set_xticks(np.arange(len(names)) + 0.4 - w / 2, names, rotation=45)
    ax.set_xlabel("absolute error (%)")
    ax.set_ylabel("predictions")
    ax.set_title(f"GTX Titan X {what}: validation error distribution")
    ax.legend()
    return save_figure(fig, path)


def oracle_vs_learned(train_curves: dict, val_curves: dict, bases, ks, path) -> Path:
    """Fig. 15: training-set error, learned vs oracle classifier, with the validation curves for context."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    avg = lambda c, i: [100 * np.mean([c[(b, k)][i] for b in bases]) for k in ks]  # noqa: E731
    ax.plot(ks, avg(train_curves, 0), marker="o", label="training set, learned classifier")
    ax.plot(ks, avg(train_curves, 1), marker="s", label="training set, oracle classifier")
    ax.plot(ks, avg(val_curves, 0), marker="o", ls=":", label="validation, learned classifier")
    ax.plot(ks, avg(val_curves, 1), marker="s", ls=":", label="validation, oracle (nearest centroid)")
    ax.set_xlabel("clusters per cluster set (k)")
    ax.set_ylabel("mean error (%)")
    ax.set_title("GTX Titan X performance: oracle versus learned classifier")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return save_figure(fig, path)
