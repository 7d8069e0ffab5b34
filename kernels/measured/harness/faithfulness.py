"""How faithful the traced work is: per traced point, the work Portcast counts against the counts of the data
the times come from (AIWC's per-invocation counts, the Amaris launches, HeCBench's Nsight Compute counters,
BabelStream's bytes), as ratios Portcast / data (:func:`faithfulness`), and per application
(:func:`faithfulness_by_application`).
"""

from __future__ import annotations

from typing import Mapping

import pandas as pd

from kernels.measured.harness.correlation import application_of
from kernels.measured.harness.sources import (
    BABELSTREAM_BYTES,
    aiwc_counts,
    amaris_first_launches,
    hecbench_first_launches,
)

WARP = 32


def _fft_rows(aiwc: pd.DataFrame, spec, label: str) -> pd.DataFrame:
    """The FFT region's counterpart of an AIWC row: its passes (``fftRadix<r>Kernel`` rows, one invocation
    each) summed for the instructions, the largest pass for the work items and the footprint."""
    from kernels.measured.fft import pass_work_items

    rows = aiwc[(aiwc.application == "fft") & (aiwc["size"] == label)].set_index("kernel")
    passes = pass_work_items(spec.points[label])
    if any(f"fftRadix{r}Kernel" not in rows.index for r, _ in passes):
        return rows.iloc[:0]
    got = [rows.loc[f"fftRadix{r}Kernel"] for r, _ in passes]
    return pd.DataFrame([{"workitems": max(g.workitems for g in got),
                          "total_instruction_count": sum(g.total_instruction_count for g in got),
                          "total_memory_footprint": max(g.total_memory_footprint for g in got)}])


def faithfulness(points: pd.DataFrame, specs: dict, *, aiwc: pd.DataFrame | None = None,
                 amaris: pd.DataFrame | None = None, hecbench: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per traced point, Portcast's work against the data's counts.

    AIWC points: ``threads`` / ``workitems``; ``records`` / ``total_instruction_count`` (AIWC counts LLVM IR
    instructions of the OpenCL kernel, Portcast one record per Python-level operation); ``unique_bytes`` /
    ``total_memory_footprint`` (the FFT region against its passes' rows: instructions summed, the largest
    pass's work items and footprint). Amaris points (the first launch of the size, median over the GPUs that have
    it): ``threads`` / grid x block; warp instructions (``thread_records`` / (32 x the lockstep SIMD
    efficiency ``warp_simdEfficiency`` when the features were traced, else / 32, a lower bound)) /
    ``inst_executed``; ``loads`` / ``gld_inst_32bit`` and ``stores`` /
    ``gst_inst_32bit`` (Portcast's loads include the staging tiles a CUDA kernel keeps in shared memory).
    HeCBench points (Nsight Compute on the RTX 3080): ``threads`` / grid x block; ``dram_ratio``: 32 x the
    distinct sectors the threads touch / DRAM bytes moved; ``fp32_ratio``, ``fp64_ratio``: the threads' FP32 and
    FP64 records / the FP32 and FP64 operations (an FMA counts 2 there, one multiply and one add record here);
    ``int_ratio``: integer arithmetic records / integer instructions (which include the address arithmetic a
    Python subscript hides). BabelStream points: ``bytes_ratio``: the distinct bytes the region touches / the
    bytes BabelStream counts (exact: 1). KernelBench points: threads only (the data has no counts).
    Feature points and test points are not in the table."""
    sources = set(points.source)
    aiwc = (aiwc_counts() if aiwc is None else aiwc) if "aiwc" in sources else None
    hb = (hecbench_first_launches() if hecbench is None else hecbench).set_index(["application", "kernel"]) \
        if "hecbench" in sources else None
    rows = []
    amaris_rows = None
    for r in points.itertuples(index=False):
        if spec_point(specs, r) is None:
            continue  # a feature point or the test point: nothing measured there
        spec = specs.get(r.port)
        base = {"port": r.port, "point": r.point, "threads": r.threads, "global_work": r.global_work}
        if r.source == "aiwc":
            m = aiwc[(aiwc.application == r.application) & (aiwc.kernel == r.kernel) & (aiwc["size"] == r.point)]
            if m.empty and spec is not None and r.application == "fft" and r.point in spec.points:
                m = _fft_rows(aiwc, spec, r.point)
            if m.empty:
                continue
            a = m.iloc[0]
            rows.append({**base, "data_threads": float(a.workitems),
                         "work_ratio": r.records / a.total_instruction_count,
                         "footprint_ratio": r.unique_bytes / a.total_memory_footprint,
                         "records": r.records, "data_instructions": float(a.total_instruction_count),
                         "unique_bytes": r.unique_bytes, "data_footprint": float(a.total_memory_footprint)})
        elif r.source == "amaris" and spec is not None and r.point in spec.points:
            if amaris_rows is None:
                amaris_rows = amaris_first_launches() if amaris is None else amaris
            s1, s2 = spec.data_sizes(spec.points[r.point])
            m = amaris_rows[(amaris_rows.kernel == r.kernel) & (amaris_rows["input.size.1"] == s1)
                            & (amaris_rows["input.size.2"] == s2)]
            if m.empty:
                continue
            inst = float(m.inst_executed.median())
            simd = getattr(r, "f_warp_simdEfficiency", float("nan"))
            warps = r.thread_records / (WARP * (simd if simd == simd and simd > 0 else 1.0))
            rows.append({**base, "data_threads": float(m.threads.median()),
                         "work_ratio": warps / inst,
                         "load_ratio": r.loads / float(m.gld_inst_32bit.median()),
                         "store_ratio": r.stores / float(m.gst_inst_32bit.median()),
                         "records": r.records, "data_instructions": inst})
        elif r.source == "hecbench" and (r.application, r.kernel) in hb.index:
            h = hb.loc[(r.application, r.kernel)]
            fp32 = r.thread_fp - r.thread_fp64
            rows.append({**base, "data_threads": float(h.threads),
                         "dram_ratio": _ratio(r.sector_bytes, h.dram_bytes),
                         "fp32_ratio": _ratio(fp32, h.fp32_ops), "fp64_ratio": _ratio(r.thread_fp64, h.fp64_ops),
                         "int_ratio": _ratio(getattr(r, "thread_int", float("nan")), h.int_ops),
                         "records": r.records, "sector_bytes": r.sector_bytes, "data_dram_bytes": h.dram_bytes,
                         "fp32_records": fp32, "data_fp32_ops": h.fp32_ops, "fp64_records": r.thread_fp64,
                         "data_fp64_ops": h.fp64_ops, "int_records": getattr(r, "thread_int", float("nan")),
                         "data_int_ops": h.int_ops})
        elif r.source == "babelstream":
            n = int(spec_point(specs, r)["n"])
            counted = BABELSTREAM_BYTES[r.kernel] * n
            rows.append({**base, "data_threads": float(r.global_work), "bytes_ratio": r.unique_bytes / counted,
                         "unique_bytes": r.unique_bytes, "data_bytes": float(counted), "records": r.records})
        elif r.source == "kernelbench":
            rows.append({**base, "data_threads": float(r.global_work), "records": r.records,
                         "unique_bytes": r.unique_bytes})
    return pd.DataFrame(rows)


def _ratio(ours, theirs) -> float:
    """``ours / theirs``; NaN where the data counts none (whether or not the port has any)."""
    ours, theirs = float(ours), float(theirs)
    return ours / theirs if theirs > 0 else float("nan")


def spec_point(specs: dict, r) -> Mapping | None:
    """The parameters of a points-table row's measured point (None for a port not in ``specs``, a feature point
    or the test point)."""
    spec = specs.get(r.port)
    return None if spec is None else spec.points.get(r.point)


def faithfulness_by_application(f: pd.DataFrame) -> pd.DataFrame:
    """One row per application of :func:`faithfulness`' table: points, how many have the data's threads,
    the range of the work ratio, and the range of the footprint ratio (AIWC) or the median load and store
    ratios (Amaris)."""
    rows = []
    for app, g in f.assign(application=f.port.map(application_of)).groupby("application", sort=True):
        same = int((g.threads == g.data_threads).sum())
        row = {"application": app, "points": len(g), "threads = data": "all" if same == len(g) else f"{same}",
               "work ratio": (f"{g.work_ratio.min():.2f}-{g.work_ratio.max():.2f}"
                              if "work_ratio" in g and g.work_ratio.notna().any() else "-")}
        if app.startswith("aiwc/"):
            row["footprint ratio / loads, stores"] = f"{g.footprint_ratio.min():.1f}-{g.footprint_ratio.max():.1f}"
        elif app.startswith("hecbench/"):
            row["footprint ratio / loads, stores"] = ", ".join(
                f"{name} {_span(g[col])}" for name, col in (("DRAM", "dram_ratio"), ("FP32", "fp32_ratio"),
                                                            ("FP64", "fp64_ratio"), ("int", "int_ratio"))
                if g[col].notna().any())
        elif app.startswith("babelstream/"):
            row["footprint ratio / loads, stores"] = f"bytes {_span(g.bytes_ratio)}"
        elif app.startswith("kernelbench/"):
            row["footprint ratio / loads, stores"] = "-"
        else:
            row["footprint ratio / loads, stores"] = (f"loads {g.load_ratio.median():.1f}, "
                                                      f"stores {g.store_ratio.median():.1f}")
        rows.append(row)
    return pd.DataFrame(rows)


def _span(values: pd.Series) -> str:
    v = values.dropna()
    if v.empty:
        return "-"
    lo, hi = float(v.min()), float(v.max())
    return f"{lo:.2f}" if abs(hi - lo) < 0.005 else f"{lo:.2f}-{hi:.2f}"
