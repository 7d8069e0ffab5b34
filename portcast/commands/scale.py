"""``portcast scale``: scaling surfaces and power (Wu et al.), the scaling taxonomy (Greathouse & Loh).

DATA arguments accept a dataset file (.csv/.parquet, format in gpu_models/scaling/dataset.py), ``titanx`` (the
vendored GTX Titan X measurements with PTX fingerprints), ``synthetic`` (the SYNTHETIC analytic
generator of gpu_models/scaling/generator.py, with a CU dimension), a region's trace file (.parquet,
docs/trace-format.md) or a SCRIPT.py with marked regions (run without arguments, each region invocation a
kernel): the trace is then swept over a configuration grid on the SIMT timing model
(``--gpu``, ``--sweep``, ``--block-size``, as ``portcast simulate TRACE --sweep``). Several DATA arguments
are combined into one dataset.
"""

from __future__ import annotations

from pathlib import Path

import typer

from portcast.commands._common import UserError, console, user_errors, warn_if_incomplete
from portcast.safe_text import as_text, escape

scale_app = typer.Typer(help="GPU scaling surfaces and power (Wu et al.), scaling taxonomy (Greathouse & Loh).",
                        no_args_is_help=True)


def _load(data, gpu, sweep, block_size, regions):
    """:func:`portcast.pipeline.stage_run.load_scaling_data` with this command's status line and sweep progress bar."""
    from portcast.commands._streams import sweep_with_progress
    from portcast.pipeline.stage_run import load_scaling_data

    warn_if_incomplete(*([data] if isinstance(data, str) else data))
    return load_scaling_data(data, gpu, sweep, block_size, regions,
                             status=lambda text: console.status(as_text(text)), run_sweep=sweep_with_progress)


def _errors():
    from gpu_models.scaling.dataset import DatasetError
    from gpu_models.scaling.surface import ScalingModelError

    return user_errors(DatasetError, ScalingModelError, ValueError)


_DATA_HELP = ("Dataset file (.csv/.parquet), 'titanx', 'synthetic', a region's trace file (.parquet) or a SCRIPT.py "
              "with marked regions, swept on the "
              "SIMT timing model; several are combined.")
_GPU_OPT = typer.Option("h100", "--gpu", help="For a trace: GPU preset (h100, gtx480) or description .json file.")
_SWEEP_OPT = typer.Option("default", "--sweep",
                          help="For a trace: 'default' (the preset's 8x8x7 grid) or 'SMS;CORES;MEMS' comma lists.")
_BLOCK_OPT = typer.Option(256, "--block-size", help="For a trace: threads per block.")
_REGION_OPT = typer.Option(None, "--region", "-r", help="For a SCRIPT.py DATA: sweep only this marked region "
                                                        "(repeatable).")


def _parse_base(text: str | None, ds) -> tuple[int, float, float]:
    grid = ds.grid()
    if text is None:  # the middle of the grid: the paper found balanced bases best
        return (grid.sm_counts[len(grid.sm_counts) // 2], grid.core_mhz[len(grid.core_mhz) // 2],
                grid.mem_mhz[len(grid.mem_mhz) // 2])
    parts = text.split(",")
    try:
        if len(parts) != 3:
            raise ValueError
        base = (int(parts[0]), float(parts[1]), float(parts[2]))
    except ValueError:
        raise UserError(f"--base must be SM_COUNT,CORE_MHZ,MEM_MHZ (e.g. 24,975,3505), got {text!r}") from None
    grid.index(*base)  # raises a DatasetError naming the off-grid value
    return base


def _default_counters(ds) -> str:
    return "classes" if any(c.startswith("ptx_") for c in ds.counter_columns) else "columns"


@scale_app.command("train")
def train(
    data: list[str] = typer.Argument(..., help=_DATA_HELP),
    out: Path = typer.Option(..., "--out", "-o", help="Model file to write (JSON)."),
    base: str = typer.Option(None, help="Base configuration SM_COUNT,CORE_MHZ,MEM_MHZ (default: grid middle)."),
    clusters: int = typer.Option(12, help="Clusters per cluster set."),
    target: str = typer.Option("time", help="'time' (performance) or 'power'."),
    counters: str = typer.Option(None, help="'classes' or 'ptx' (PTX fingerprint) or 'columns' (counter columns)."),
    columns: str = typer.Option(None, help="Comma-separated counter columns for --counters columns."),
    seed: int = typer.Option(0, help="Random seed (k-means, network)."),
    gpu: str = _GPU_OPT,
    sweep: str = _SWEEP_OPT,
    block_size: int = _BLOCK_OPT,
    region: list[str] = _REGION_OPT,
) -> None:
    """Train a scaling model (one base configuration) and save it as JSON."""
    with _errors():
        from gpu_models.scaling import ScalingModel
        from gpu_models.scaling.wu_evaluation import dataset_counters

        ds = _load(data, gpu, sweep, block_size, region)
        b = _parse_base(base, ds)
        kind = counters or _default_counters(ds)
        X, names = dataset_counters(ds, kind, b, columns=columns.split(",") if columns else None)
        Y = ds.cube(target if target in ("time", "power") else "time")
        model = ScalingModel(base=b, n_clusters=clusters, target=target, random_state=seed)
        model.fit(X, Y, ds.grid(), counter_names=names, meta={"counters": kind, "data": ds.source})
        model.save(out)
        sizes = [len(cs.centroids) for cs in model.freq_sets_]
        cu = "" if model.cu_set_ is None else f", CU set {len(model.cu_set_.centroids)} clusters"
        console.print(f"trained {target} model on {len(ds.kernels)} kernels x {ds.grid().n_configs} configurations, "
                      f"base {b[0]}/{b[1]:g}/{b[2]:g}: {len(sizes)} frequency set(s) of {max(sizes)} clusters{cu} "
                      f"-> {escape(out)}")


@scale_app.command("predict")
def predict(
    model_path: Path = typer.Argument(..., help="Model file from 'portcast scale train'."),
    data: list[str] = typer.Argument(..., help="Dataset with each kernel's row at the model's base configuration, "
                                               "or a region's trace file or SCRIPT.py (swept on the SIMT timing "
                                               "model); several "
                                               "are combined."),
    kernel: list[str] = typer.Option(None, "--kernel", "-k", help="Kernel(s) to predict (default: all)."),
    out: Path = typer.Option(None, "--out", "-o", help="Write all predictions to this CSV."),
    gpu: str = _GPU_OPT,
    sweep: str = _SWEEP_OPT,
    block_size: int = _BLOCK_OPT,
    region: list[str] = _REGION_OPT,
) -> None:
    """Predict each kernel's time or power at every configuration from its base measurement."""
    with _errors():
        import numpy as np
        import pandas as pd
        from rich.table import Table

        from gpu_models.scaling import ScalingModel
        from gpu_models.scaling.wu_evaluation import dataset_counters

        model = ScalingModel.load(model_path)
        ds = _load(data, gpu, sweep, block_size, region)
        kernels = list(kernel) if kernel else ds.kernels
        ds = ds.subset(kernels)
        b = model.base
        kind = model.meta_.get("counters", "columns")
        X, _ = dataset_counters(ds, kind, b, kernels,
                                columns=model.counter_names_ if kind == "columns" else None)
        f = ds.frame
        at = f[(f.sm_count == b[0]) & np.isclose(f.core_mhz, b[1]) & np.isclose(f.mem_mhz, b[2])].set_index("kernel")
        base_vals = at.loc[kernels, model.target].to_numpy()
        surf = model.predict_surface(X, base_vals)
        grid = model.grid_
        rows = []
        meas = f.set_index(["kernel", "sm_count", "core_mhz", "mem_mhz"])[model.target]
        for i, k in enumerate(kernels):
            for (s, c, m), v in zip(grid.configs(), surf[i].ravel()):
                true = meas.get((k, s, c, m), np.nan)
                rows.append({"kernel": k, "sm_count": s, "core_mhz": c, "mem_mhz": m,
                             f"predicted_{model.target}": v, f"measured_{model.target}": true})
        table = pd.DataFrame(rows)
        if out is not None:
            from gpu_models.scaling.wu_evaluation import write_csv

            write_csv(table, Path(out))
        t = Table(title=f"{model.target} predicted from base {b[0]}/{b[1]:g}/{b[2]:g} "
                        f"at {grid.n_configs} configurations")
        for col in ("kernel", "base", "min predicted", "max predicted", "mean abs error vs measured"):
            t.add_column(col)
        for k in kernels:
            sub = table[table.kernel == k]
            p, mm = sub[f"predicted_{model.target}"].to_numpy(), sub[f"measured_{model.target}"].to_numpy()
            ok = np.isfinite(mm)
            err = f"{100 * np.mean(np.abs(p[ok] - mm[ok]) / mm[ok]):.1f} %" if ok.any() else "-"
            t.add_row(as_text(k), f"{at.loc[k, model.target]:.4g}", f"{p.min():.4g}", f"{p.max():.4g}", err)
        console.print(t)
        if out is not None:
            console.print(f"wrote {len(table)} predictions -> {escape(out)}")


@scale_app.command("place")
def place(
    model_path: Path = typer.Argument(..., help="Model trained with --counters classes."),
    trace: Path = typer.Argument(..., help="Portcast trace file (.parquet) of a profiled region."),
    base_value: float = typer.Option(..., "--base-value", help="Measured time (or power) at the model's base."),
    out: Path = typer.Option(None, "--out", "-o", help="Write the predicted surface to this CSV."),
) -> None:
    """Place a profiled Python region on a scaling surface (counters from its trace's operation mix)."""
    with _errors():
        import pandas as pd

        from features.counters import COUNTER_NAMES, counters_from_trace_chunks
        from gpu_models.scaling import ScalingModel
        from profiler.tracefile import TraceFile

        model = ScalingModel.load(model_path)
        if model.meta_.get("counters") != "classes" or tuple(model.counter_names_) != COUNTER_NAMES:
            raise UserError(f"{model_path}: the model was trained on counters {model.meta_.get('counters')!r}; "
                            "placing a trace needs a model trained with --counters classes")
        if not base_value > 0:
            raise UserError(f"--base-value must be positive, got {base_value:g}")
        tf = TraceFile(trace)
        warn_if_incomplete(trace, info=tf.info)
        x = counters_from_trace_chunks(tf.chunks())
        cl = model.choose_clusters(x[None])
        surf = model.predict_surface(x, base_value)
        grid = model.grid_
        table = pd.DataFrame([{"sm_count": s_, "core_mhz": c, "mem_mhz": m, f"predicted_{model.target}": v}
                              for (s_, c, m), v in zip(grid.configs(), surf.ravel())])
        if out is not None:
            from gpu_models.scaling.wu_evaluation import write_csv

            write_csv(table, Path(out))
        mix = ", ".join(f"{n} {v:.2f}" for n, v in zip(COUNTER_NAMES, x))
        chosen = ", ".join(str(int(c[0])) for c in cl[0])
        col = table[f"predicted_{model.target}"]
        console.print(f"region {escape(repr(tf.info.name))}: mix {mix}; cluster(s) {chosen}; predicted "
                      f"{model.target} {col.min():.4g} .. {col.max():.4g} over {grid.n_configs} configurations"
                      + (f" -> {escape(out)}" if out is not None else ""))


@scale_app.command("evaluate")
def evaluate(
    out: Path = typer.Option(..., "--out", "-o", help="Folder for figures and tables (the committed ones: "
                                                      "docs/figures/scaling)."),
    fmt: str = typer.Option("png", "--format", help="png, svg or png,svg."),
    quick: bool = typer.Option(False, help="Fewer bases, folds and cluster counts (seconds instead of minutes)."),
    counters: str = typer.Option("classes", help="'classes' (7 fractions) or 'ptx' (101 fractions)."),
    seed: int = typer.Option(0, help="Random seed (folds, k-means, network)."),
) -> None:
    """Reproduce the Sec. V evaluation on the GTX Titan X data: figures, errors.csv, errors.md."""
    with _errors():
        from rich.progress import Progress

        from gpu_models.scaling.wu_evaluation import EvalSettings, run_evaluation

        fmts = tuple(x.strip() for x in fmt.split(",") if x.strip())
        bad = [x for x in fmts if x not in ("png", "svg")]
        if bad or not fmts:
            raise UserError(f"--format must be png, svg or png,svg; got {fmt!r}")
        s = EvalSettings.quick() if quick else EvalSettings()
        s.fmt, s.counters, s.seed = fmts, counters, seed
        s.extra_counters = tuple(k for k in s.extra_counters if k != counters)
        with Progress(console=console, transient=True) as prog:
            task = prog.add_task("evaluating", total=None)

            def cb(done, total, label):
                prog.update(task, completed=done, total=total, description=label)

            summary = run_evaluation(out, s, progress=cb)
        console.print(as_text((out / "errors.md").read_text(), lines=True))
        console.print(f"figures and tables -> {escape(out)}")
        _ = summary


@scale_app.command("taxonomy")
def taxonomy(
    data: list[str] = typer.Argument(None, help=_DATA_HELP + " Default: titanx."),
    clusters: int = typer.Option(6, help="Number of clusters to cut the tree into."),
    out: Path = typer.Option(..., "--out", "-o", help="Output folder (the committed one: docs/figures/scaling)."),
    fmt: str = typer.Option("png", "--format", help="png or svg."),
    gpu: str = _GPU_OPT,
    sweep: str = _SWEEP_OPT,
    block_size: int = _BLOCK_OPT,
    region: list[str] = _REGION_OPT,
) -> None:
    """PCA + Spearman/Ward clustering of scaling behaviour; dendrogram and a CSV of clusters."""
    with _errors():
        from gpu_models.scaling.taxonomy import build_taxonomy, plot_dendrogram
        from gpu_models.scaling.wu_evaluation import write_csv

        if fmt not in ("png", "svg"):
            raise UserError(f"--format must be png or svg; got {fmt!r}")
        target = "time"  # the performance taxonomy; behaviour names are defined for performance
        data = list(data) if data else ["titanx"]
        ds = _load(data, gpu, sweep, block_size, region)
        cube = ds.cube(target)
        tax = build_taxonomy(cube, ds.grid(), ds.kernels, n_clusters=clusters)
        one = data[0] if len(data) == 1 else None
        stem = {"titanx": "titanx", "synthetic": "synthetic"}.get(one, Path(one).stem if one else "combined")
        label = "SYNTHETIC data" if one == "synthetic" else ("GTX Titan X" if one == "titanx" else stem)
        Path(out).mkdir(parents=True, exist_ok=True)
        fig = Path(out) / f"taxonomy_{stem}_{target}.{fmt}"
        plot_dendrogram(tax, fig, title=f"Scaling taxonomy ({target}), {label}: {len(ds.kernels)} kernels")
        table = tax.table()
        groups = ds.groups()
        table.insert(1, "group", [groups[k] for k in table.kernel])
        write_csv(table, Path(out) / f"taxonomy_{stem}_{target}.csv")
        summary = table.groupby("behaviour").size().sort_values(ascending=False)
        console.print(f"PCA kept {tax.n_components} components; clusters: "
                      + escape(", ".join(f"{n} ({c})" for n, c in summary.items())))
        console.print(f"dendrogram -> {escape(fig)}")


@scale_app.command("synthetic")
def synthetic(
    out: Path = typer.Option(..., "--out", "-o", help="Dataset file to write (.csv or .parquet)."),
    per_archetype: int = typer.Option(10, help="Kernels per archetype."),
    seed: int = typer.Option(0, help="Random seed."),
) -> None:
    """Write a SYNTHETIC dataset from the analytic generator (roofline, thrashing L2, limited parallelism)."""
    with _errors():
        from gpu_models.scaling.generator import generate

        if per_archetype < 1:
            raise UserError("--per-archetype must be at least 1")
        ds = generate(n_per_archetype=per_archetype, random_state=seed)
        ds.write(out)
        console.print(f"wrote SYNTHETIC dataset: {len(ds.kernels)} kernels x {ds.grid().n_configs} "
                      f"configurations -> {escape(out)}")


def register(app: typer.Typer) -> None:
    """Add the ``scale`` command group to the ``portcast`` app."""
    app.add_typer(scale_app, name="scale")
