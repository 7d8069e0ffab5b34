"""Thread space, verdicts and predicted speedup of the realistic test programs (tests/realistic), one row each.

    .venv/bin/python benchmarks/realistic_report.py [--mode compiled] [--markdown]

The sizes are fixed here so a run is comparable with another version's. Predictions use the shipped default
model; a region the guard rails refuse shows why instead (portcast.report.no_prediction_reason).
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "realistic"))

import realistic_programs as P  # noqa: E402


def cases():
    rng = np.random.default_rng(0)
    S = rng.random(4096) * 50 + 25
    lv = [rng.random((s, s, s)) for s in (18, 10, 6)]
    keys = rng.integers(0, 1 << 16, 20000)
    return {
        "cg_solve (CSR, n=2000, 5 iterations)": (P.cg_solve, (*P.cg_inputs(2000), 5)),
        "mg_vcycle (18^3, 3 levels, 2 sweeps)": (P.mg_vcycle, ([x.copy() for x in lv], [np.zeros_like(x) for x in lv],
                                                                [np.zeros_like(x) for x in lv], 2)),
        "smooth3d (32^3)": (P.smooth3d, (rng.random((32,) * 3), rng.random((32,) * 3), np.zeros((32,) * 3), 0.1)),
        "fft_radix2 (2^12 complex)": (P.fft_radix2, (rng.random(4096) + 1j * rng.random(4096), P.bit_reversal(4096))),
        "bucket_sort (20000 keys, 256 buckets)": (P.bucket_sort, (keys, 256, 8, np.zeros(20000, np.int64))),
        "lcg_fill (10^5)": (P.lcg_fill, (np.zeros(100000), 7)),
        "kmeans_fit (4000 x 8, k=16, 3 it.)": (P.kmeans_fit, (rng.random((4000, 8)), rng.random((16, 8)),
                                                              np.zeros(4000, np.int64), np.zeros(16, np.int64), 3)),
        "l2_norm_numpy (10^5)": (P.l2_norm_numpy, (rng.random(100000),)),
        "l2_norm_loop (10^5)": (P.l2_norm_loop, (rng.random(100000),)),
        "black_scholes (4096 options)": (P.black_scholes, (S, S * 1.1, rng.random(4096) + 0.1, 0.02, 0.3,
                                                           np.zeros(4096), np.zeros(4096))),
        "pairwise_distances (300 x 3)": (P.pairwise_distances, (rng.random((300, 3)), np.zeros((300, 300)))),
        "crc32 (10^5 bytes)": (P.crc32, (rng.integers(0, 256, 100000).astype(np.uint8), P.crc_table())),
        "mandelbrot (128 x 128, 100 it.)": (P.mandelbrot, (np.zeros((128, 128), np.int64), -2.0, -1.0, 3 / 128,
                                                           2 / 128, 100)),
    }


def run(mode: str):
    import features
    from predictor import explain_prediction, load_model
    from predictor.model_io import default_model_path
    from profiler.session import trace_function

    try:
        from portcast.report import no_prediction_reason
    except ImportError:  # an older version without guard rails
        def no_prediction_reason(series):
            return None
    model = load_model(default_model_path())
    rows = []
    for name, (fn, args) in cases().items():
        sink = features.FeatureSink()
        trace_function(fn, args, sinks=[sink], mode=mode)
        info, f = sink.results[0]
        ts = getattr(sink, "thread_spaces", [None])[0]
        if ts is not None and ts["loops"]:
            space = "; ".join(f"{os.path.basename(lp['location'])} {lp['dims']}-D x{lp['launches']}: {lp['verdict']}"
                              for lp in ts["loops"])
        elif ts is not None:
            space = "none"
        else:
            loops = (info.parallel_loop or "").split(", ")
            space = ", ".join(os.path.basename(x) for x in loops if x) or "none"
        why = no_prediction_reason(f)
        if why is not None:
            pred = "refused: " + why.split(":")[0].split(" (")[0]
        else:
            e = explain_prediction(model, f[list(model.subset_)].astype(float).to_dict())
            a = e.attrs
            pred = f"{a['prediction']:.3g}x"
            if a.get("outside_targets"):
                pred += " (outside the training speedups)"
            if a.get("novelty", 0) == a.get("novelty", 0) and a.get("novelty", 0) > 1:
                pred += f" (novelty {a['novelty']:.2g})"
        rows.append((name, info.mode, f"{info.n_records:,}", f"{int(f['warp_threads']):,}", space,
                     f"{f['warp_bdiv']:.3f}", f"{f['warp_coalescing']:.3f}", pred))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", default="auto")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    rows = run(args.mode)
    head = ("program", "mode", "records", "threads", "thread space (file:line, dims, launches, verdict)", "warp_bdiv",
            "warp_coalescing", "prediction")
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        for r in rows:
            print("  ".join(r))


if __name__ == "__main__":
    main()
