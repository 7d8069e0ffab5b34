"""``portcast sample-check``: how close sampled profiles come to exact ones over the kernel corpus."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from portcast.safe_text import escape

from ._common import UserError, check_output, console, err_console, user_errors
from ._common import progress_bar as _progress
from ._common import split_list as _split

#: the CSV's first line names its format and version (as the other CSVs commands write)
CSV_FORMAT = "portcast.sampling-validation"
CSV_SCHEMA_VERSION = 1
OUTPUTS = ("validation.csv", "validation.md")


def _rates(text: str) -> list[float]:
    out = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        try:
            if "/" in item:
                a, b = item.split("/")
                v = float(a) / float(b)
            else:
                v = float(item)
        except (ValueError, ZeroDivisionError):
            raise UserError(f"--rates: {item!r} is not a number (give block rates in (0, 1], e.g. 0.125,0.03125)") \
                from None
        if not 0.0 < v <= 1.0:
            raise UserError(f"--rates: {item} is not in (0, 1]")
        out.append(v)
    if not out:
        raise UserError("--rates: give at least one block rate in (0, 1]")
    return list(dict.fromkeys(out))


def _command_line(size: str, kernels, rates: str, seeds: int, out_dir: Path) -> str:
    parts = ["portcast sample-check", f"--size {size}"]
    parts += [f"--kernel {k}" for k in kernels or []]
    parts += [f"--rates {rates}", f"--seeds {seeds}", f"--out-dir {out_dir}"]
    return " ".join(parts)


def sample_check_cmd(
    size: str = typer.Option("small", "--size", help="Corpus size to run each kernel at (tiny, small, medium, "
                                                     "large)."),
    kernel: Optional[List[str]] = typer.Option(None, "--kernel", help="Corpus kernel to check (repeat or "
                                                                      "comma-separate); default all."),
    rates: str = typer.Option("0.125,0.03125", "--rates", help="Block rates to sample at, comma-separated."),
    seeds: int = typer.Option(3, "--seeds", min=1, help="Sampling seeds per rate (0 .. N-1)."),
    out_dir: Path = typer.Option(Path("docs/sampling"), "--out-dir", help="Folder for validation.csv and "
                                                                          "validation.md."),
    force: bool = typer.Option(False, "--force", help="Replace validation.csv and validation.md if they exist."),
) -> None:
    """Profile each corpus kernel exactly and sampled at every rate and seed, and compare features, predicted
    times and 95% intervals (writes validation.csv, long form, and validation.md, tables)."""
    import datetime

    from core.atomic import atomic_write_text
    from core.version import portcast_version
    from kernels.registry import all_kernels
    from portcast import sampling_check as S

    with user_errors(ValueError):
        rate_list = _rates(rates)
        specs = all_kernels()
        names = _split(kernel) or list(specs)
        unknown = [n for n in names if n not in specs]
        if unknown:
            raise UserError(f"--kernel: unknown kernel {', '.join(unknown)} (known: {', '.join(sorted(specs))})")
        bad = [n for n in names if size not in specs[n].sizes]
        if bad:
            raise UserError(f"--size {size}: not a size of {', '.join(bad)} (sizes: "
                            f"{', '.join(specs[bad[0]].sizes)})")
        if out_dir.exists() and not out_dir.is_dir():
            raise UserError(f"--out-dir {out_dir} is not a folder")
        for name in OUTPUTS:
            check_output(out_dir / name, force=force, what="--out-dir")
        with _progress("sample-check") as bar:
            task = bar.add_task(f"{size}: {names[0]}", total=len(names))
            order = iter(names[1:])

            def step(done: str) -> None:
                nxt = next(order, None)
                bar.update(task, advance=1, description=f"{size}: {nxt}" if nxt else f"{size}: done")

            df = S.run_corpus(size, names, rates=rate_list, seeds=range(seeds), progress=step)
        t = S.tables(df)
        lines = S.goal_lines(df)
        cmd = _command_line(size, _split(kernel), rates, seeds, out_dir)
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        md = [
            "# Sampled against exact profiles",
            "",
            f"Made by `{cmd}` on {now} (Portcast {portcast_version()}). Each kernel's region is profiled once "
            f"exactly and once per block rate and seed sampled, on fresh inputs of size {size} each run. A "
            f"fraction (catalogue range 0..1) is within tolerance when its absolute error is at most "
            f"{S.FRACTION_TOLERANCE}; any other feature when its relative error is at most "
            f"{100 * S.RELATIVE_TOLERANCE:g}%. The speedup change is exact / sampled kernel time - 1 (as an "
            f"absolute value). Coverage: the share of the sampled run's 95% intervals that hold the exact value. "
            "Figures as they came out; validation.csv holds every (region, rate, seed, feature).",
            "",
            "## Goal lines",
            "",
            *[f"- {x}" for x in lines],
            "",
            t["goal"],
            "",
            "## Per estimate kind",
            "",
            t["kinds"],
            "",
            "## The 10 worst features (lowest rate)",
            "",
            t["worst"],
            "",
            "## Per region",
            "",
            t["regions"],
            "",
        ]
        if t["skipped"]:
            md += ["## Regions left out", "", t["skipped"], ""]
        md += ["## Per feature", "", t["features"], ""]
        out_dir.mkdir(parents=True, exist_ok=True)
        head = f"# {CSV_FORMAT} schema_version={CSV_SCHEMA_VERSION}\n"
        atomic_write_text(out_dir / "validation.csv", head + df.to_csv(index=False, float_format="%.9g"))
        atomic_write_text(out_dir / "validation.md", "\n".join(md))
    for line in lines:
        console.print(escape(line), highlight=False)
    for row in S.skipped(df).itertuples(index=False):
        err_console.print(f"[yellow]skipped:[/] {escape(row.region)}: {escape(row.skipped)}", highlight=False)
    console.print(f"wrote validation.csv and validation.md to {escape(out_dir)}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``sample-check`` to the ``portcast`` command."""
    app.command("sample-check")(sample_check_cmd)
