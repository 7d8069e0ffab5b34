"""Thread space, verdicts and predictions of the realistic test programs (tests/realistic), one row each.

    .venv/bin/python benchmarks/realistic_report.py [--mode compiled] [--markdown] [--only NAME ...]

The sizes are fixed here so a run is comparable with another version's. The speedup column is the shipped
speedup model's; the GPU time column the shipped GPU-time model's kernel time on a P100 with its lower bound
(the same prediction ``portcast profile`` prints). A region the guard rails refuse shows why instead
(portcast.report.no_prediction_reason).
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
        # second pass: privatisation, lifetimes, imperfect nests, broadcasts, and each one's negative twin
        "mg_resid (32^3, row buffers)": (P.mg_resid, (rng.random((32,) * 3), rng.random((32,) * 3),
                                                      np.zeros((32,) * 3), np.array([-8 / 3, 0.0, 1 / 6, 1 / 12]))),
        "row_recurrence (64 x 64, negative)": (P.row_recurrence, (rng.random((64, 64)), np.zeros((64, 64)))),
        "fft_lines_blocked (8 x 32 x 32, blocks of 8)": (P.fft_lines_blocked, (
            rng.random((8, 32, 32)) + 1j * rng.random((8, 32, 32)), P.dft_twiddles(32), 8)),
        "knn_search (2000 train, 256 queries, k=8)": (P.knn_search, (rng.random((2000, 3)), rng.random((256, 3)), 8,
                                                                     np.zeros((256, 8)))),
        "knn_shared_queue (negative)": (P.knn_shared_queue, (rng.random((2000, 3)), rng.random((256, 3)), 8,
                                                             np.zeros((256, 8)))),
        "csr_matvec_slices (n=2000)": (P.csr_matvec_slices, (*P.cg_inputs(2000)[:3], rng.random(2000),
                                                              np.zeros(2000))),
        "smooth_rows (200 x 100, negative)": (P.smooth_rows, (rng.random((200, 100)), rng.random((200, 100)))),
        "twiddle_nest (64^3)": (P.twiddle_nest, (np.zeros((64,) * 3), 1e-3)),
        "nest_carried (64 x 64, negative)": (P.nest_carried, (np.zeros((64, 64)), 0.01)),
        "rbf_kernel_map (1000 x 3, 50 centres)": (P.rbf_kernel_map, (rng.random((1000, 3)), rng.random((50, 3)),
                                                                     0.5)),
        "rbf_refine (500 x 2, 8 centres, 3 steps, negative)": (P.rbf_refine, (rng.random((500, 2)),
                                                                              rng.random((8, 2)), 0.5, 3)),
        "region_count (600 points)": (P.region_count, (blobs(rng), 0.3, np.zeros(600, np.int64))),
        "dbscan (600 points)": (P.dbscan, (blobs(rng), 0.3, 5, np.zeros(600, np.int64))),
    }


def blobs(rng):
    """600 points in three Gaussian blobs of 200 (the density-clustering input)."""
    return np.concatenate([rng.normal(c, 0.3, (200, 2)) for c in (0.0, 3.0, 6.0)])


def gpu_time(fn, args, mode: str) -> str:
    """The GPU-time model's kernel time on a P100 and the region's lower bound, as `portcast profile` prints."""
    from portcast.pipeline import predict

    rp = predict(fn, args, gpu="p100", mode=mode, baseline=False)[-1]
    if rp.prediction is None:
        return "none: " + (rp.reason or "").split(":")[0].split(" (")[0]
    if rp.bounds is None:
        return f"{rp.prediction.kernel_s * 1e6:.4g} us"
    return f"{rp.prediction.kernel_s * 1e6:.4g} us ({rp.bounds.bound} {rp.bounds.total_lower * 1e6:.4g})"


def run(mode: str, only=()):
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
        if only and not any(o in name for o in only):
            continue
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
                     f"{f['warp_bdiv']:.3f}", f"{f['warp_coalescing']:.3f}", pred, gpu_time(fn, args, mode)))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", default="auto")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--only", nargs="*", default=(), help="run only the programs whose name contains one of these")
    args = ap.parse_args()
    rows = run(args.mode, args.only)
    head = ("program", "mode", "records", "threads", "thread space (file:line, dims, launches, verdict)", "warp_bdiv",
            "warp_coalescing", "speedup model", "GPU time on P100 (lower bound)")
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
