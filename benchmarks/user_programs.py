"""The three user programs of the physics issue through `portcast profile`, one line per case: a 2-D heat equation
with 50 time steps (100 launches; 64 x 64 and 200 x 200 on p100 and h100), a float64 n-body (256 and 2,560
bodies on p100, rtx4090, gtx1080) and saxpy at 10^3 .. 10^8 elements through --at-size on p100.

Run (from the repository whose Portcast is measured):

    .venv/bin/python benchmarks/user_programs.py out.jsonl [heat,nbody,saxpy] [--baseline-kind njit]

Each line of ``out.jsonl`` gives the case, the predicted kernel time, the lower bound and what sets it, the
CPU time of the region and the speedups. The figures before and after the physics issue are in
docs/history/2026-11-29-gpu-time-physics.md.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _seconds(text: str | None) -> float | None:
    if not text:
        return None
    value, unit = text.split()
    return float(value.replace(",", "")) * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


def run(label: str, args: list[str], out: Path, extra: list[str] = ()) -> dict:
    at_size = "--at-size" in args
    cmd = [sys.executable, "-m", "portcast", "profile", *([] if at_size else ["--json"]), *extra, *args]
    start = time.time()
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    rec: dict = {"case": label, "options": " ".join(extra), "rc": p.returncode,
                 "wall_s": round(time.time() - start, 1)}
    if at_size:  # --at-size prints its figures as text
        text = " ".join(p.stdout.split())
        k = re.search(r"predicted kernel time (\S+ \S+)", text)
        b = re.search(r"runs faster than (\S+ \S+)", text)
        rec.update(kernel_s=_seconds(k and k.group(1)), bound_s=_seconds(b and b.group(1)))
    else:
        try:
            r = json.loads(p.stdout)["regions"][0]
            pr, bd = r.get("prediction") or {}, r.get("bounds") or {}
            rec.update(kernel_s=pr.get("kernel_s"), bound_s=bd.get("lower_bound_s"), bound=bd.get("bound"),
                       cpu_s=pr.get("cpu_s"), speedup=pr.get("speedup"),
                       speedup_with_copies=pr.get("speedup_with_transfers"))
        except (ValueError, KeyError, IndexError):
            rec["error"] = p.stderr[-400:]
    with open(out, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(rec) + "\n")
    print(json.dumps(rec), flush=True)
    return rec


def main(argv: list[str]) -> None:
    out = Path(argv[0])
    which = argv[1].split(",") if len(argv) > 1 else ["heat", "nbody", "saxpy"]
    extra = argv[2:]  # options for every profile, e.g. --baseline-kind njit
    if "heat" in which:
        for n in (64, 200):
            for gpu in ("p100", "h100"):
                run(f"heat n={n} {gpu}", ["examples/heat2d.py", "--gpu", gpu, "--", str(n)], out, extra)
    if "saxpy" in which:
        for n in (10**3, 10**4, 10**5, 10**6, 10**7, 10**8):
            run(f"saxpy {n:.0e} p100", ["--function", "examples/saxpy.py:saxpy", "--at-size", str(n), "--gpu",
                                        "p100"], out, extra)
    if "nbody" in which:
        for n in (256, 2560):
            for gpu in ("p100", "rtx4090", "gtx1080"):
                run(f"nbody float64 n={n} {gpu}", ["examples/nbody.py", "--gpu", gpu, "--", str(n)], out, extra)


if __name__ == "__main__":
    main(sys.argv[1:])
