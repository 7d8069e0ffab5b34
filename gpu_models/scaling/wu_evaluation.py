"""The evaluation of Wu et al. Sec. V on the vendored GTX Titan X data, and its figures.

Protocol (decided here; the paper used a random 80/20 split of 108 kernels):

- training set: all 140 microbenchmarks plus the real kernels not in the current fold;
- validation: the 25 real kernels in ``n_folds`` folds (seeded permutation), so each real kernel is
  predicted once by a model that never saw it;
- counters: the PTX fingerprint turned into the hand-off vector of :mod:`features.counters`
  (``"classes"``, 7 fractions) or the 101 PTX instruction fractions (``"ptx"``);
- error: |predicted - measured| / measured at every configuration except the base one (31 targets),
  averaged over kernels and targets; oracle = the nearest centroid to the kernel's true scaling values.

These data have one SM count (24), so only the frequency cluster set is exercised here; the CU path is
tested on the synthetic generator (:mod:`gpu_models.scaling.generator`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from core.atomic import atomic_write_text
from features.counters import COUNTER_NAMES, counters_from_ptx
from gpu_models.scaling.dataset import ScalingDataset, load_titanx
from gpu_models.scaling.surface import ScalingModel, prediction_errors, write_json_atomic

RESULTS_SCHEMA = "portcast.scaling_evaluation"
RESULTS_VERSION = 1

#: Base configurations of the cluster-count studies (SMs, core MHz, memory MHz): the corners and middle.
DEFAULT_BASES: tuple[tuple[int, float, float], ...] = (
    (24, 595.0, 810.0), (24, 595.0, 3505.0), (24, 975.0, 3505.0), (24, 1164.0, 810.0), (24, 1164.0, 3505.0))


def titanx_counters(ds: ScalingDataset, kind: str = "classes", kernels=None) -> tuple[np.ndarray, list[str]]:
    """Counter matrix of the Titan X kernels from their PTX fingerprints.

    Parameters
    ----------
    ds:
        Dataset from :func:`gpu_models.scaling.dataset.load_titanx` (``ptx_*`` columns).
    kind:
        ``"classes"``: the 7 class fractions of :mod:`features.counters`; ``"ptx"``: the fraction of
        each of the 101 PTX instructions.
    kernels:
        Kernel order (default: the dataset's).

    Returns
    -------
    (numpy.ndarray, list of str)
        (n_kernels, n_counters) and the counter names.
    """
    kernels = list(kernels) if kernels is not None else ds.kernels
    cols = [c for c in ds.counter_columns if c.startswith("ptx_")]
    if not cols:
        raise ValueError(f"{ds.source}: no ptx_* counter columns")
    raw = ds.frame.drop_duplicates("kernel").set_index("kernel").loc[kernels, cols].to_numpy(dtype=float)
    if kind == "classes":
        return np.vstack([counters_from_ptx(dict(zip(cols, r))) for r in raw]), list(COUNTER_NAMES)
    if kind == "ptx":
        tot = raw.sum(axis=1, keepdims=True)
        return raw / np.where(tot > 0, tot, 1.0), cols
    raise ValueError(f"unknown counter kind {kind!r}; use 'classes' or 'ptx'")


def dataset_counters(ds: ScalingDataset, kind: str, base, kernels=None, columns=None) -> tuple[np.ndarray, list[str]]:
    """Counters of every kernel for a scaling model measured at the base configuration.

    Parameters
    ----------
    ds:
        The dataset.
    kind:
        ``"classes"`` or ``"ptx"`` (from ``ptx_*`` columns, see :func:`titanx_counters`), or
        ``"columns"``: the dataset's counter columns read at the base configuration.
    base:
        (sm_count, core_mhz, mem_mhz).
    kernels:
        Kernel order (default: the dataset's).
    columns:
        For ``"columns"``: which columns (default: all counter columns).

    Returns
    -------
    (numpy.ndarray, list of str)
    """
    if kind in ("classes", "ptx"):
        return titanx_counters(ds, kind, kernels)
    if kind == "columns":
        cols = list(columns) if columns else ds.counter_columns
        if not cols:
            raise ValueError(f"{ds.source}: the dataset has no counter columns")
        return ds.counters_at(*base, columns=cols, kernels=kernels), cols
    raise ValueError(f"unknown counter kind {kind!r}; use 'classes', 'ptx' or 'columns'")


@dataclass
class EvalSettings:
    """What :func:`run_evaluation` computes. ``quick`` settings keep the test suite fast."""

    n_folds: int = 5
    seed: int = 0
    counters: str = "classes"
    ks: tuple[int, ...] = (1, 2, 4, 6, 8, 12, 16, 20)
    heat_k: int = 12
    hist_ks: tuple[int, ...] = (2, 6, 12)
    bases: tuple[tuple[int, float, float], ...] = DEFAULT_BASES
    heat_bases: tuple[tuple[int, float, float], ...] | None = None  # None = every grid configuration
    alpha: float = 1e-3
    extra_counters: tuple[str, ...] = ("ptx",)
    fmt: tuple[str, ...] = ("png",)

    @classmethod
    def quick(cls) -> "EvalSettings":
        return cls(n_folds=3, ks=(1, 2, 6), heat_k=6, hist_ks=(2, 6), bases=DEFAULT_BASES[1:3],
                   heat_bases=DEFAULT_BASES[:2], extra_counters=())


@dataclass
class _Data:
    ds: ScalingDataset
    kernels: list[str]
    real: np.ndarray
    micro: np.ndarray
    folds: list[np.ndarray]
    X: dict = field(default_factory=dict)
    Y: dict = field(default_factory=dict)


def _prepare(ds: ScalingDataset, s: EvalSettings) -> _Data:
    kernels = ds.kernels
    groups = ds.groups()
    real = np.array([i for i, k in enumerate(kernels) if groups[k] == "real"])
    micro = np.array([i for i, k in enumerate(kernels) if groups[k] != "real"])
    rng = np.random.default_rng(s.seed)
    folds = [np.sort(f) for f in np.array_split(rng.permutation(real), s.n_folds)]
    d = _Data(ds, kernels, real, micro, folds)
    for kind in dict.fromkeys((s.counters, *s.extra_counters)):
        d.X[kind] = titanx_counters(ds, kind, kernels)[0]
    d.Y = {"time": ds.cube("time", kernels), "power": ds.cube("power", kernels)}
    return d


def cross_validate(d: _Data, base, k: int, target: str, counters: str, alpha: float, seed: int):
    """Errors of the learned and the oracle classifier on every held-out real kernel.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        Learned and oracle errors, each (n_real, n_configs - 1).
    """
    X, Y = d.X[counters], d.Y[target]
    nn, orc = [], []
    n = len(d.kernels)
    for f in d.folds:
        tr = np.setdiff1d(np.arange(n), f)
        m = ScalingModel(base=base, n_clusters=k, target=target, alpha=alpha, random_state=seed)
        m.fit(X[tr], Y[tr], d.ds.grid())
        bi = m.base_index_
        b = Y[f][:, bi[0], bi[1], bi[2]]
        nn.append(prediction_errors(m.predict_surface(X[f], b), Y[f], bi))
        orc.append(prediction_errors(m.predict_surface(X[f], b, clusters=m.oracle_clusters(Y[f])), Y[f], bi))
    return np.concatenate(nn), np.concatenate(orc)


def training_errors(d: _Data, base, k: int, target: str, counters: str, alpha: float, seed: int):
    """Fig. 15: learned vs oracle classifier applied to the model's own training set (all kernels)."""
    X, Y = d.X[counters], d.Y[target]
    m = ScalingModel(base=base, n_clusters=k, target=target, alpha=alpha, random_state=seed)
    m.fit(X, Y, d.ds.grid())
    bi = m.base_index_
    b = Y[:, bi[0], bi[1], bi[2]]
    nn = prediction_errors(m.predict_surface(X, b), Y, bi)
    orc = prediction_errors(m.predict_surface(X, b, clusters=m.oracle_clusters(Y)), Y, bi)
    return nn, orc


def _no_change_errors(Y: np.ndarray, rows: np.ndarray, bi) -> np.ndarray:
    b = Y[rows][:, bi[0], bi[1], bi[2]]
    return prediction_errors(np.broadcast_to(b[:, None, None, None], Y[rows].shape), Y[rows], bi)


def run_evaluation(out_dir, settings: EvalSettings | None = None, ds: ScalingDataset | None = None,
                   progress=None) -> dict:
    """Run the whole evaluation, write figures, ``errors.csv``, ``errors.md`` and ``summary.json``.

    Parameters
    ----------
    out_dir:
        Folder for the outputs (created).
    settings:
        What to compute (default :class:`EvalSettings`).
    ds:
        Dataset (default: the vendored Titan X data).
    progress:
        Optional callable ``progress(done, total, label)``.

    Returns
    -------
    dict
        The summary written to ``summary.json``.
    """
    s = settings or EvalSettings()
    ds = ds if ds is not None else load_titanx()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    d = _prepare(ds, s)
    grid = ds.grid()
    heat_bases = list(s.heat_bases) if s.heat_bases is not None else list(grid.configs())
    jobs_total = (len(heat_bases) + 2 * len(s.bases) * len(s.ks) + len(s.bases) * len(s.ks)
                  + len(s.extra_counters) * len(s.bases))
    done = [0]

    def tick(label):
        done[0] += 1
        if progress:
            progress(done[0], jobs_total, label)

    rows = []  # the error table: one row per (study, target, counters, base, k, classifier)

    def add(study, target, counters, base, k, clf, errs):
        rows.append({"study": study, "target": target, "counters": counters, "sm_count": base[0],
                     "core_mhz": base[1], "mem_mhz": base[2], "k": k, "classifier": clf,
                     "mean_error_pct": 100 * float(errs.mean()), "median_error_pct": 100 * float(np.median(errs)),
                     "n_errors": int(errs.size)})

    # Fig. 10/11: heat map over base configurations (learned classifier, k = heat_k)
    heat = {}
    for base in heat_bases:
        nn, orc = cross_validate(d, base, s.heat_k, "time", s.counters, s.alpha, s.seed)
        heat[base] = float(nn.mean())
        add("heatmap", "time", s.counters, base, s.heat_k, "nn", nn)
        tick(f"heat map {base}")
    # Fig. 13/14 and 16/17: error versus clusters, performance and power
    hist = {"time": {}, "power": {}}
    curves = {"time": {}, "power": {}}
    for target in ("time", "power"):
        for base in s.bases:
            for k in s.ks:
                nn, orc = cross_validate(d, base, k, target, s.counters, s.alpha, s.seed)
                curves[target][(base, k)] = (float(nn.mean()), float(orc.mean()))
                add("clusters", target, s.counters, base, k, "nn", nn)
                add("clusters", target, s.counters, base, k, "oracle", orc)
                if k in s.hist_ks:
                    hist[target].setdefault(k, []).append(nn.ravel())
                tick(f"{target} k={k} {base}")
            bi = grid.index(*base)
            add("baseline", target, "-", base, 0, "no-change", _no_change_errors(d.Y[target], d.real, bi))
    # Fig. 15: training-set errors, learned vs oracle
    train_curves = {}
    for base in s.bases:
        for k in s.ks:
            nn, orc = training_errors(d, base, k, "time", s.counters, s.alpha, s.seed)
            train_curves[(base, k)] = (float(nn.mean()), float(orc.mean()))
            add("training", "time", s.counters, base, k, "nn", nn)
            add("training", "time", s.counters, base, k, "oracle", orc)
            tick(f"training k={k} {base}")
    # the alternative counter vector, at the heat-map k
    for kind in s.extra_counters:
        for base in s.bases:
            nn, _ = cross_validate(d, base, s.heat_k, "time", kind, s.alpha, s.seed)
            add("counters", "time", kind, base, s.heat_k, "nn", nn)
            tick(f"counters {kind} {base}")

    import pandas as pd

    table = pd.DataFrame(rows)
    write_csv(table, out / "errors.csv")
    summary = _summarise(table, s, grid)
    write_json_atomic(out / "summary.json", summary)
    _write_text(out / "errors.md", _markdown(summary))
    from gpu_models.scaling import figures as plots

    for fmt in s.fmt:
        plots.heatmap(heat, grid, s.heat_k, out / f"heatmap_time.{fmt}")
        plots.error_vs_clusters(curves["time"], s.bases, s.ks, "performance (time)", out / f"clusters_time.{fmt}")
        plots.histograms(hist["time"], "performance (time)", out / f"histogram_time.{fmt}")
        plots.oracle_vs_learned(train_curves, curves["time"], s.bases, s.ks, out / f"oracle_time.{fmt}")
        plots.error_vs_clusters(curves["power"], s.bases, s.ks, "power", out / f"clusters_power.{fmt}")
        plots.histograms(hist["power"], "power", out / f"histogram_power.{fmt}")
    return summary


def _summarise(table, s: EvalSettings, grid) -> dict:
    def mean_of(**kw):
        t = table
        for k, v in kw.items():
            t = t[t[k] == v]
        if len(t) == 0:
            return None
        return float((t["mean_error_pct"] * t["n_errors"]).sum() / t["n_errors"].sum())

    rows = []
    for target in ("time", "power"):
        for k in s.ks:
            rows.append({"target": target, "k": k,
                         "learned_pct": mean_of(study="clusters", target=target, k=k, classifier="nn"),
                         "oracle_pct": mean_of(study="clusters", target=target, k=k, classifier="oracle")})
        rows.append({"target": target, "k": 0, "learned_pct": None, "oracle_pct": None,
                     "no_change_pct": mean_of(study="baseline", target=target)})
    heat = table[table.study == "heatmap"]
    return {
        "schema": RESULTS_SCHEMA, "version": RESULTS_VERSION, "settings": _jsonable(asdict(s)),
        "data": "GTX Titan X DVFS (gpuPTXModel, BSD-3): 140 microbenchmarks + 25 real kernels, 16 core x 2 memory "
                "clocks",
        "by_k": rows,
        "heatmap_k": s.heat_k,
        "heatmap_mean_pct": float(heat["mean_error_pct"].mean()) if len(heat) else None,
        "heatmap_best": _pick(heat, min), "heatmap_worst": _pick(heat, max),
        "training": [{"k": k, "learned_pct": mean_of(study="training", k=k, classifier="nn"),
                      "oracle_pct": mean_of(study="training", k=k, classifier="oracle")} for k in s.ks],
        "alt_counters": {kind: mean_of(study="counters", counters=kind) for kind in s.extra_counters},
        "alt_counters_main": mean_of(study="clusters", target="time", k=s.heat_k, classifier="nn"),
    }


def _pick(heat, fn):
    if len(heat) == 0:
        return None
    i = fn(range(len(heat)), key=lambda j: heat["mean_error_pct"].iloc[j])
    r = heat.iloc[i]
    return {"core_mhz": float(r.core_mhz), "mem_mhz": float(r.mem_mhz), "mean_error_pct": float(r.mean_error_pct)}


def _jsonable(obj):
    return json.loads(json.dumps(obj, default=lambda o: list(o)))


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.1f}"


def _markdown(summary: dict) -> str:
    """The error table as Markdown (mean absolute relative error over held-out real kernels x targets)."""
    lines = ["| target | clusters k | learned classifier (%) | oracle classifier (%) |", "|---|---|---|---|"]
    for r in summary["by_k"]:
        if r["k"] == 0:
            lines.append(f"| {r['target']} | no-change baseline | {_fmt(r.get('no_change_pct'))} | |")
        else:
            lines.append(f"| {r['target']} | {r['k']} | {_fmt(r['learned_pct'])} | {_fmt(r['oracle_pct'])} |")
    lines.append("")
    lines.append(f"Heat map (k={summary['heatmap_k']}, all base configurations): mean "
                 f"{_fmt(summary['heatmap_mean_pct'])} %, best {summary['heatmap_best']}, worst "
                 f"{summary['heatmap_worst']}.")
    for kind, v in summary["alt_counters"].items():
        lines.append(f"Counters '{kind}' instead of '{summary['settings']['counters']}' (k={summary['heatmap_k']}, "
                     f"same bases): {_fmt(v)} % vs {_fmt(summary['alt_counters_main'])} %.")
    lines.append("")
    lines.append("| training set, time | k | learned (%) | oracle (%) |")
    lines.append("|---|---|---|---|")
    for r in summary["training"]:
        lines.append(f"| | {r['k']} | {_fmt(r['learned_pct'])} | {_fmt(r['oracle_pct'])} |")
    return "\n".join(lines) + "\n"


def _write_text(path: Path, text: str) -> None:
    atomic_write_text(path, text)


def write_csv(table, path: Path) -> None:
    _write_text(path, table.to_csv(index=False, float_format="%.6g"))
