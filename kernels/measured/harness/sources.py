"""The measured data of the ported kernels (docs/measured.md): where each source's files are, its GPU names and
their SIMT presets, and readers of its times and counts (AIWC, Amaris, HeCBench, BabelStream, KernelBench), with
:func:`measured_times`, the measured kernel time of every port x point x GPU.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[3]
AIWC_DATA = ROOT / "predictor" / "data" / "aiwc" / "full_dat.csv.gz"
AMARIS_DATA = ROOT / "kernels" / "measured" / "data" / "amaris" / "launches.parquet"
HECBENCH_DATA = ROOT / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"
BABELSTREAM_DATA = ROOT / "kernels" / "measured" / "data" / "babelstream"
KERNELBENCH_DATA = ROOT / "kernels" / "measured" / "data" / "kernelbench"
#: the data's GPU names -> SIMT presets (gpu_models/simt/presets, docs/gpus.md)
AIWC_GPUS = {"titanx": "titanx", "gtx1080": "gtx1080", "gtx1080ti": "gtx1080ti", "k20c": "k20", "k40c": "k40"}
AMARIS_GPUS = {"GTX-680": "gtx680", "GTX-970": "gtx970", "GTX-980": "gtx980", "Quadro": "quadro_k5200",
               "Tesla-K20": "k20", "Tesla-K40": "k40", "Tesla-P100": "p100", "Titan": "gtxtitan", "TitanX": "titanx"}
HECBENCH_GPUS = {"NVIDIA GeForce RTX 3080": "rtx3080"}
#: BabelStream's "Using CUDA device ..." names
BABELSTREAM_GPUS = {"Tesla K20m": "k20", "Tesla K20X": "k20x", "Tesla P100-PCIE-16GB": "p100",
                    "Tesla V100-SXM2-16GB": "v100", "GeForce RTX 2080 Ti": "rtx2080ti",
                    "A100-SXM4-40GB MIG 7g.40gb": "a100"}
#: KernelBench timing files (``<folder>/<file>.json``) -> presets; the folder is the point label of the shapes
KERNELBENCH_GPUS = {"before_2025-07/A100_modal": "a100", "before_2025-07/A100-80GB_modal": "a100_80gb",
                    "before_2025-07/A10G_modal": "a10g", "before_2025-07/L4_modal": "l4",
                    "before_2025-07/L40S_matx3": "l40s", "before_2025-07/L40S_modal": "l40s",
                    "before_2025-07/T4_modal": "t4", "before_2025-07/H100_together": "h100_sxm",
                    "before_2025-07/B200_together": "b200", "2026/H100_Modal": "h100_sxm",
                    "2026/H100_PCIe_LambdaLabs": "h100_pcie"}
#: the data's GPU names of every source -> presets
DATA_GPUS = {"aiwc": AIWC_GPUS, "amaris": AMARIS_GPUS, "hecbench": HECBENCH_GPUS,
             "babelstream": BABELSTREAM_GPUS, "kernelbench": KERNELBENCH_GPUS}
#: bytes BabelStream counts per element of each kernel (float64 arrays read and written)
BABELSTREAM_BYTES = {"copy": 16, "mul": 16, "add": 24, "triad": 24, "dot": 16}

#: readable names of the data's GPUs (tables and plots)
GPU_LABELS = {"gtx1080": "GTX 1080 (AIWC)", "gtx1080ti": "GTX 1080 Ti (AIWC)", "k20c": "K20c (AIWC)",
              "k40c": "K40c (AIWC)", "titanx": "Titan X (AIWC)", "GTX-680": "GTX 680", "GTX-970": "GTX 970",
              "GTX-980": "GTX 980", "Quadro": "Quadro K5200", "Tesla-K20": "Tesla K20", "Tesla-K40": "Tesla K40",
              "Tesla-P100": "Tesla P100", "Titan": "GTX Titan", "TitanX": "GTX Titan X (Amaris)",
              "NVIDIA GeForce RTX 3080": "RTX 3080 (HeCBench)", "Tesla K20m": "K20m (BabelStream)",
              "Tesla K20X": "K20X (BabelStream)", "Tesla P100-PCIE-16GB": "P100 PCIe (BabelStream)",
              "Tesla V100-SXM2-16GB": "V100 SXM2 (BabelStream)", "GeForce RTX 2080 Ti": "RTX 2080 Ti (BabelStream)",
              "A100-SXM4-40GB MIG 7g.40gb": "A100 40 GB (BabelStream)", "a100": "A100 40 GB (KernelBench)",
              "a100_80gb": "A100 80 GB (KernelBench)", "a10g": "A10G (KernelBench)", "l4": "L4 (KernelBench)",
              "l40s": "L40S (KernelBench)", "t4": "T4 (KernelBench)", "h100_sxm": "H100 SXM (KernelBench)",
              "h100_pcie": "H100 PCIe (KernelBench)", "b200": "B200 (KernelBench)"}


def data_gpus(source: str) -> dict:
    """The data's GPU names of ``source`` mapped to their SIMT presets."""
    return DATA_GPUS[source]

def aiwc_counts(path: str | os.PathLike | None = None) -> pd.DataFrame:
    """AIWC's per-invocation counts: one row per (application, kernel, size)."""
    cols = ["application", "kernel", "size", "workitems", "total_instruction_count", "total_memory_footprint"]
    d = pd.read_csv(path or AIWC_DATA, usecols=cols)
    return d.groupby(["application", "kernel", "size"], as_index=False).first()


def amaris_first_launches(path: str | os.PathLike | None = None) -> pd.DataFrame:
    """The first launch of every (GPU, kernel, problem size) of the Amaris data, with its thread count."""
    d = pd.read_parquet(path or AMARIS_DATA)
    d = d.sort_values("row_in_file").groupby(["gpu", "kernel", "input.size.1", "input.size.2"], as_index=False).head(1)
    d = d.assign(threads=d["grid.x"] * d["grid.y"] * d["block.x"] * d["block.y"])
    return d.reset_index(drop=True)


def hecbench_first_launches(path: str | os.PathLike | None = None) -> pd.DataFrame:
    """The first launch (first row in file order) of every kernel of the HeCBench CUDA programs measured on the
    RTX 3080: ``application`` (the program without ``-cuda``), ``kernel``, ``point`` (the program's arguments,
    ``"default"`` when it ran without), ``gpu``, ``measured_s`` (Nsight Compute's device time), ``threads`` and
    ``block`` (grid x block, block), and the measured counts ``dram_bytes``, ``fp32_ops``, ``fp64_ops``,
    ``int_ops`` (rates x time)."""
    d = pd.read_csv(path or HECBENCH_DATA)
    d = d[d.targetName.str.endswith("-cuda")]
    d = d.groupby(["targetName", "kernelName"], as_index=False, sort=False).head(1)

    def product(text: str) -> int:
        return int(np.prod([int(v) for v in str(text).strip("()").split(",")]))

    t = d.xtime.to_numpy(np.float64) * 1e-9
    block = d["Block Size"].map(product).to_numpy(np.int64)
    return pd.DataFrame({
        "application": d.targetName.str[:-len("-cuda")].to_numpy(), "kernel": d.kernelName.to_numpy(),
        "point": d.exeArgs.fillna("default").astype(str).to_numpy(), "gpu": d.device.to_numpy(),
        "measured_s": t, "threads": d["Grid Size"].map(product).to_numpy(np.int64) * block, "block": block,
        "dram_bytes": d.traffic.to_numpy(np.float64) * t, "fp32_ops": d.spPerf.to_numpy(np.float64) * t,
        "fp64_ops": d.dpPerf.to_numpy(np.float64) * t, "int_ops": d.intops.to_numpy(np.float64)})


def babelstream_results(folder: str | os.PathLike | None = None) -> pd.DataFrame:
    """Every (file, run) of the BabelStream result files: ``file``, ``gpu`` (the header's device name),
    ``elements`` (float64 elements per array, a power of two), ``point`` (``"2^<k>"``), ``kernel`` (copy, mul,
    add, triad, dot), ``mbytes_per_s`` and ``measured_s``: the fastest of the 100 runs, from the bandwidth column
    (``bytes / (MBytes/sec x 10^6)``: the min-seconds column has only five decimals)."""
    rows = []
    for f in sorted(Path(folder or BABELSTREAM_DATA).glob("*.out")):
        elements = gpu = None
        for line in f.read_text(errors="replace").splitlines():
            parts = line.split()
            if line.startswith("Array size:"):
                mb = float(parts[2])
                elements = 1 << int(round(np.log2(mb * 1e6 / 8)))
            elif line.startswith("Using CUDA device"):
                gpu = line[len("Using CUDA device"):].strip()
            elif parts and parts[0].lower() in BABELSTREAM_BYTES and len(parts) >= 5 and elements and gpu:
                k = parts[0].lower()
                mbps = float(parts[1])
                rows.append({"file": f.name, "gpu": gpu, "elements": elements,
                             "point": f"2^{int(np.log2(elements))}", "kernel": k, "mbytes_per_s": mbps,
                             "measured_s": BABELSTREAM_BYTES[k] * elements / (mbps * 1e6)})
    return pd.DataFrame(rows)


def kernelbench_times(folder: str | os.PathLike | None = None) -> pd.DataFrame:
    """Every level-1 problem time of the KernelBench timing files: ``point`` (the shapes' folder:
    ``before_2025-07`` or ``2026``), ``file`` (the timing file's stem), ``gpu`` (``<point>/<file>``, the key
    of :data:`KERNELBENCH_GPUS`), ``application`` (the problem's file stem), ``measured_s`` (the mean of the
    100 calls; PyTorch eager, so with its launch overhead) and ``min_s``. The H100 PCIe file's
    ``92_cumsum_exclusive`` is left out (its shapes differ from the problem file of its folder)."""
    rows = []
    root = Path(folder or KERNELBENCH_DATA)
    for sub, point in (("sizes_before_2025-07", "before_2025-07"), ("sizes_2026", "2026")):
        for f in sorted((root / sub).glob("*.json")):
            level = json.loads(f.read_text()).get("level1", {})
            for problem, t in sorted(level.items()):
                app = problem[:-3] if problem.endswith(".py") else problem
                if f.stem == "H100_PCIe_LambdaLabs" and app == "92_cumsum_exclusive":
                    continue
                rows.append({"point": point, "file": f.stem, "gpu": f"{point}/{f.stem}", "application": app,
                             "measured_s": float(t["mean"]) * 1e-3, "min_s": float(t["min"]) * 1e-3})
    return pd.DataFrame(rows)


def _aiwc_times(spec, med) -> list[dict]:
    """AIWC rows of a port: the median ``kernel_time`` (microseconds) per GPU; the FFT port against every radix
    row (each times the whole FFT)."""
    kernels = [spec.kernel]
    if spec.application == "fft" and spec.kernel == "fft":
        kernels = sorted({k for (a, k, _, _) in med.index if a == "fft"})
    rows = []
    for label in spec.points:
        for dev, preset in AIWC_GPUS.items():
            vals = [med[(spec.application, k, label, dev)] for k in kernels
                    if (spec.application, k, label, dev) in med.index]
            if vals:
                rows.append({"port": spec.name, "point": label, "gpu": dev, "preset": preset,
                             "measured_s": float(np.median(vals)) * 1e-6})
    return rows


def _amaris_times(spec, first) -> list[dict]:
    """Amaris rows of a port: the first launch of each of its sizes on every GPU."""
    rows = []
    for label, params in spec.points.items():
        s1, s2 = spec.data_sizes(params)
        m = first[(first.kernel == spec.kernel) & (first["input.size.1"] == s1) & (first["input.size.2"] == s2)]
        for r in m.itertuples(index=False):
            rows.append({"port": spec.name, "point": label, "gpu": r.gpu, "preset": AMARIS_GPUS[r.gpu],
                         "measured_s": float(r.duration)})
    return rows


def _hecbench_times(spec, hb) -> list[dict]:
    """The HeCBench row of a port: its kernel's first launch, if measured at one of the port's points."""
    if (spec.application, spec.kernel) not in hb.index:
        return []
    r = hb.loc[(spec.application, spec.kernel)]
    if r.point not in spec.points:
        return []
    return [{"port": spec.name, "point": r.point, "gpu": r.gpu, "preset": HECBENCH_GPUS[r.gpu],
             "measured_s": float(r.measured_s)}]


def _babelstream_times(spec, bs) -> list[dict]:
    """BabelStream rows of a port: the median over the files of a GPU of the fastest run of each size."""
    return [{"port": spec.name, "point": label, "gpu": dev, "preset": preset,
             "measured_s": float(bs[(spec.kernel, label, dev)])}
            for label in spec.points for dev, preset in BABELSTREAM_GPUS.items()
            if (spec.kernel, label, dev) in bs.index]


def _kernelbench_times(spec, kb) -> list[dict]:
    """KernelBench rows of a port: the median over the files of a GPU of the mean time per call."""
    return [{"port": spec.name, "point": label, "gpu": preset, "preset": preset,
             "measured_s": float(kb[(spec.application, label, preset)])}
            for label in spec.points for preset in sorted(set(KERNELBENCH_GPUS.values()))
            if (spec.application, label, preset) in kb.index]


def _source_tables(sources: set, *, aiwc_path=None, amaris=None, hecbench=None, babelstream=None,
                   kernelbench=None) -> dict:
    """Each source's table of times, read once (only the sources in ``sources``), as the row functions take it."""
    tables = {}
    if "aiwc" in sources:
        aiwc = pd.read_csv(aiwc_path or AIWC_DATA, usecols=["application", "kernel", "size", "device", "kernel_time"])
        aiwc = aiwc[aiwc.device.isin(list(AIWC_GPUS))]
        tables["aiwc"] = aiwc.groupby(["application", "kernel", "size", "device"]).kernel_time.median()
    if "amaris" in sources:
        tables["amaris"] = amaris_first_launches() if amaris is None else amaris
    if "hecbench" in sources:
        tables["hecbench"] = (hecbench_first_launches() if hecbench is None else hecbench).set_index(
            ["application", "kernel"])
    if "babelstream" in sources:
        bs = babelstream_results() if babelstream is None else babelstream
        tables["babelstream"] = bs.groupby(["kernel", "point", "gpu"]).measured_s.median()
    if "kernelbench" in sources:
        kb = kernelbench_times() if kernelbench is None else kernelbench
        kb = kb.assign(preset=kb.gpu.map(KERNELBENCH_GPUS))
        tables["kernelbench"] = kb.groupby(["application", "point", "preset"]).measured_s.median()
    return tables


#: each source's rows of one port, from its table of times
_SOURCE_TIMES = {"aiwc": _aiwc_times, "amaris": _amaris_times, "hecbench": _hecbench_times,
                 "babelstream": _babelstream_times, "kernelbench": _kernelbench_times}


def measured_times(specs: dict, *, aiwc_path=None, amaris=None, hecbench=None, babelstream=None,
                   kernelbench=None) -> pd.DataFrame:
    """Measured kernel time (seconds) of every port x point x GPU of the data: AIWC's median ``kernel_time``
    over its runs (microseconds in the file; a host timer around one enqueue and ``clFinish``, so it
    includes the launch); Amaris's first launch of the size (nvprof's ``duration``, on the GPU); HeCBench's
    first launch (Nsight Compute's device time on the RTX 3080 at its base clock); BabelStream's fastest run
    of the size (median over the files of the same GPU); KernelBench's mean time per call (PyTorch eager, so
    with its per-call overhead; the median over the files of the same GPU, e.g. two L40S files)."""
    tables = _source_tables({s.source for s in specs.values()}, aiwc_path=aiwc_path, amaris=amaris,
                            hecbench=hecbench, babelstream=babelstream, kernelbench=kernelbench)
    rows = []
    for spec in specs.values():
        if spec.source in _SOURCE_TIMES:
            rows += _SOURCE_TIMES[spec.source](spec, tables[spec.source])
    return pd.DataFrame(rows)
