"""Error of the sampled SIMT times of the measured ports against whole simulations of the same traces.

    .venv/bin/python benchmarks/measured_sampling.py [PORT@LABEL ...] [--slice-sms 4]

For each point: trace the port's region once keeping every record, simulate it whole on the preset of every GPU of its
data, and estimate it from a sample (``gpu_models.simt.slice_sample.simulated_times`` with ``complete=False``: the
slice's share of the blocks, or its first two waves extrapolated). Prints one row per (point, preset) and the mean /
extreme signed errors. Results and dates: docs/measured.md, "Large regions".
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from features.work import ThreadRecordsSink
from gpu_models.simt.slice_sample import SLICE_SMS, simulated_times
from kernels.measured.harness.sources import data_gpus
from kernels.measured.registry import all_measured
from profiler.session import trace_function

DEFAULT = ["amaris/hotspot/calculate_temp@grid128_it256", "amaris/backprop/bpnn_layerforward_CUDA@in8192",
           "amaris/backprop/bpnn_adjust_weights_cuda@in8192", "aiwc/srad/srad_cuda_1@small",
           "aiwc/srad/srad_cuda_2@small", "aiwc/kmeans/kmeansPoint@small", "aiwc/bfs/kernel1@small",
           "aiwc/dwt/c_CopySrcToComponents@small", "aiwc/lud/lud_internal@small"]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("points", nargs="*", default=DEFAULT)
    ap.add_argument("--slice-sms", type=int, default=SLICE_SMS, help="SMs of the slice (0: all)")
    a = ap.parse_args(argv)
    specs = all_measured()
    errs = []
    print("| point | preset | blocks | whole us | sampled us | error % | whole s | sampled s |")
    print("|---|---|---|---|---|---|---|---|")
    for item in a.points:
        port, label = item.split("@")
        spec = specs[port]
        _, loc = spec.work(spec.points[label])
        sink = ThreadRecordsSink()
        trace_function(spec.cpu, spec.make_inputs(spec.points[label], 0), region=port, sinks=[sink])
        for preset in sorted(set(data_gpus(spec.source).values())):
            t0 = time.process_time()
            whole = simulated_times(sink.chunk, sink.threads, int(loc), [preset], complete=True)[preset]
            t1 = time.process_time()
            est = simulated_times(sink.chunk, sink.threads, int(loc), [preset], complete=False,
                                  slice_sms=a.slice_sms or None)[preset]
            t2 = time.process_time()
            e = (est - whole) / whole * 100
            errs.append(e)
            print(f"| {item} | {preset} | {-(-sink.threads // int(loc))} | {whole * 1e6:.2f} | {est * 1e6:.2f} | "
                  f"{e:+.1f} | {t1 - t0:.1f} | {t2 - t1:.1f} |", flush=True)
    e = np.array(errs)
    print(f"\n{len(e)} estimates: mean absolute {np.abs(e).mean():.1f}%, from {e.min():+.1f}% to {e.max():+.1f}%")


if __name__ == "__main__":
    main()
