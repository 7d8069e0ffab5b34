"""CRISP versus the baseline DVFS models with the SIMT timing model as the truth (papers/003 Sec. 5.1 shape).

For each region: simulate at the base clock (700 MHz on the GTX 480 preset) and read every model's counters
on the SM that finishes last; simulate again at each target clock (100..600 MHz, memory clock fixed) for the
true time; compare each model's prediction with it.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from gpu_models.dvfs.models import MODEL_NAMES, predict_all
from gpu_models.simt.config import GPUConfig
from gpu_models.simt.model import simulate
from gpu_models.simt.threads import WarpStreams

TARGETS_MHZ = (100.0, 200.0, 300.0, 400.0, 500.0, 600.0)


def crisp_errors(regions: Mapping[str, WarpStreams], cfg: GPUConfig, base_mhz: float = 700.0,
                 targets_mhz: Sequence[float] = TARGETS_MHZ, models: Sequence[str] = MODEL_NAMES) -> pd.DataFrame:
    """Prediction errors of the DVFS models on simulated regions.

    Parameters
    ----------
    regions : mapping name -> WarpStreams
    cfg : GPUConfig
        The GPU (its SM count and memory clock are used).
    base_mhz : float
        Clock the counters are read at.
    targets_mhz : sequence of float
        Clocks to predict.
    models : sequence of str
        Model names of :mod:`gpu_models.dvfs.models`.

    Returns
    -------
    pandas.DataFrame
        One row per (kernel, target_mhz, model): ``true_ns``, ``predicted_ns``, ``error_pct`` (signed,
        (predicted - true) / true * 100).
    """
    rows = []
    for name, streams in regions.items():
        base = simulate(streams, cfg, core_mhz=base_mhz, crisp=True, name=name)
        targets = np.asarray(list(targets_mhz), dtype=float)
        preds = predict_all(base.crisp, targets, models)
        for j, f in enumerate(targets):
            true = simulate(streams, cfg, core_mhz=float(f), crisp=False).time_ns
            for m in models:
                p = float(preds[m][j])
                rows.append({"kernel": name, "target_mhz": float(f), "model": m, "true_ns": true,
                             "predicted_ns": p, "error_pct": (p - true) / true * 100.0})
    return pd.DataFrame(rows)


def summary(errors: pd.DataFrame) -> pd.DataFrame:
    """Mean absolute percentage error per target clock and model, plus an ``all`` row.

    Parameters
    ----------
    errors : DataFrame
        From :func:`crisp_errors`.

    Returns
    -------
    pandas.DataFrame
        Index ``target_mhz`` (and ``all``), one column per model.
    """
    e = errors.assign(abs_err=errors["error_pct"].abs())
    t = e.pivot_table(index="target_mhz", columns="model", values="abs_err", aggfunc="mean")
    t.loc["all"] = e.groupby("model")["abs_err"].mean()
    cols = [m for m in MODEL_NAMES if m in t.columns]
    t = t[cols]
    t.index = [str(int(i)) if isinstance(i, float) else str(i) for i in t.index]
    return t


def per_kernel(errors: pd.DataFrame) -> pd.DataFrame:
    """Mean absolute percentage error per kernel and model over all targets.

    Parameters
    ----------
    errors : DataFrame
        From :func:`crisp_errors`.

    Returns
    -------
    pandas.DataFrame
    """
    e = errors.assign(abs_err=errors["error_pct"].abs())
    t = e.pivot_table(index="kernel", columns="model", values="abs_err", aggfunc="mean")
    return t[[m for m in MODEL_NAMES if m in t.columns]]


def _markdown(df: pd.DataFrame, index_name: str) -> str:
    cols = [index_name, *map(str, df.columns)]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for idx, row in df.iterrows():
        lines.append("| " + " | ".join([str(idx), *(f"{v:.1f}" for v in row.to_numpy())]) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    """Print the CRISP-versus-baselines tables (markdown) for the synthetic suite or for trace files.

    Usage: ``python -m gpu_models.simt.dvfs_truth [--gpu gtx480] [TRACE.parquet ...]``.

    Parameters
    ----------
    argv : sequence of str, optional
    """
    import argparse

    from gpu_models.simt.config import load_config
    from gpu_models.simt.synthetic_kernels import validation_suite
    from gpu_models.simt.threads import build_streams
    from gpu_models.simt.trace_input import load_region

    ap = argparse.ArgumentParser(prog="python -m gpu_models.simt.dvfs_truth")
    ap.add_argument("traces", nargs="*", help="trace files (default: the synthetic suite)")
    ap.add_argument("--gpu", default="gtx480")
    ap.add_argument("--block-size", type=int, default=256)
    ns = ap.parse_args(argv)
    cfg = load_config(ns.gpu)
    if ns.traces:
        regions = dict(load_region(p, ns.block_size) for p in ns.traces)
    else:
        regions = {k: build_streams(v, ns.block_size) for k, v in validation_suite().items()}
    err = crisp_errors(regions, cfg)
    print(f"Counters read at 700 MHz on {cfg.name}; mean absolute percentage error over {len(regions)} regions.\n")
    print(_markdown(summary(err), "target_mhz"))
    print()
    print(_markdown(per_kernel(err), "kernel"))


if __name__ == "__main__":
    main()
