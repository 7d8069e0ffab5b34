"""The SIMT model on a sample of a region: the first blocks of a region (two waves on a slice of a few SMs,
:func:`slice_config`, :func:`wave_blocks`, :func:`sample_threads`) simulated and scaled to the region's grid
(:func:`simulated_times`), and :class:`SimtSink`, which keeps such a sample while a region is traced and runs the
model on it when the region ends (the SIMT estimate of ``portcast profile``). docs/measured.md gives the error
of the sample against whole simulations.
"""

from __future__ import annotations

from typing import Iterable

from features.work import ThreadRecordsSink

WARP = 32
#: threads per block assumed for a profiled region (the launch a port would most likely use)
BLOCK_SIZE = 256
#: records a profiled region may keep for the SIMT estimate (about 45 bytes each while tracing, 280 in the
#: warp streams: about 1.3 GB at most); past it a 1-SM slice, past that no estimate (and the model without it)
PROFILE_SAMPLE_RECORDS = 4_000_000
#: SMs simulated when a region is sampled (``slice_config``): two waves of blocks on this many SMs
SLICE_SMS = 4
#: records a sampled region may keep for the SIMT model (about 45 bytes each while tracing, 280 in the
#: warp streams); past it the sample falls back to a 1-SM slice, and past that the region is not simulated
#: (``not_simulated``)
SAMPLE_RECORDS = 30_000_000
#: a sampled region whose threads all fit in the sample is simulated whole when it has at most this many
#: thread records, else on the slice (its share of the blocks): a whole simulation costs about 1 s per
#: million records and preset
WHOLE_RECORDS = 4_000_000


def wave_blocks(cfg, block_size: int) -> int:
    """Thread blocks of ``block_size`` threads resident on the whole GPU at once (one wave)."""
    warps = -(-int(block_size) // WARP)
    return max(1, min(cfg.max_blocks_per_sm, cfg.max_warps_per_sm // warps)) * cfg.sm_count


def slice_config(cfg, sms: int):
    """``cfg`` cut down to ``sms`` of its SMs with their share of everything the SMs share: the L2's capacity
    (whole sets) and bandwidth and the DRAM bandwidth scale by ``sms / sm_count``; latencies, clocks and the
    SMs themselves stay. A wave on the slice is a slice of a wave on the whole GPU."""
    k = min(int(sms), cfg.sm_count)
    if k == cfg.sm_count:
        return cfg
    share = k / cfg.sm_count
    set_bytes = 32 * cfg.l2_ways
    return cfg.replace(sm_count=k, l2_bytes=max(1, round(cfg.l2_bytes * share / set_bytes)) * set_bytes,
                       l2_bytes_per_ns=cfg.l2_bytes_per_ns * share,
                       transfers_per_clock=cfg.transfers_per_clock * share)


def sample_threads(presets: Iterable[str], block_size: int, slice_sms: int | None = SLICE_SMS) -> int:
    """Threads :func:`simulated_times` needs of a sampled region: two waves of the largest slice."""
    from gpu_models.simt.config import load_config

    cfgs = [load_config(p) for p in presets]
    if slice_sms is not None:
        cfgs = [slice_config(c, slice_sms) for c in cfgs]
    return 2 * max(wave_blocks(c, block_size) for c in cfgs) * int(block_size)


def simulated_times(chunk, threads: int, block_size: int, presets: Iterable[str], *,
                    complete: bool = True, name: str = "", slice_sms: int | None = SLICE_SMS, static=None) -> dict:
    """SIMT model time (s) of a region on each preset, from the records of its first threads. The tiles a
    block stages and reads back are in shared memory (:func:`gpu_models.simt.threads.block_scratch`), as the
    CUDA and OpenCL kernels keep them.

    ``complete``: ``chunk`` holds every thread's records, simulated whole. Else the region's
    ``B = ceil(threads / block_size)`` blocks run on ``slice_sms`` SMs of the preset with their share of the
    L2 and the DRAM (:func:`slice_config`; ``None``: all SMs), which get their share of the blocks,
    ``b = ceil(B k / sm_count)``, the first ``b`` blocks of the region standing for any. If ``b`` is at most
    two of the slice's waves (``c`` blocks, :func:`wave_blocks`), they are simulated; else the first wave alone
    (``t1``) and the first two waves (``t2``) give ``t1 + (b / c - 1) (t2 - t1)``: the second wave's time stands
    for every later one (the first also pays the start of the pipelines and the caches) and a last partial
    wave counts by its share of blocks. ``chunk`` must hold the records of the blocks simulated
    (:func:`sample_threads`); docs/measured.md gives the error against whole simulations. ``static``: the
    region's static table, whose loops the warps follow (:func:`gpu_models.simt.threads.build_streams`)."""
    from gpu_models.simt.config import load_config
    from gpu_models.simt.model import simulate as run_model
    from gpu_models.simt.threads import block_scratch, build_streams

    scratch = block_scratch(chunk, block_size)
    blocks = -(-int(threads) // int(block_size))
    held = int(chunk.tid.max()) + 1 if len(chunk.tid) else 0
    # per preset: the configuration simulated, the thread counts it runs (None: every thread) and, for two
    # runs, the waves the slice's share of the grid makes (the second run's extra time stands for each later one)
    plan: dict = {}
    for preset in presets:
        cfg = load_config(preset)
        if complete:
            plan[preset] = (cfg, [None], None)
            continue
        part = cfg if slice_sms is None else slice_config(cfg, slice_sms)
        c = wave_blocks(part, block_size)
        # the slice's share of the blocks (every SM gets the same share of a grid)
        share = -(-blocks * part.sm_count // cfg.sm_count)
        need = min(share, 2 * c) * int(block_size)
        if held < need:
            raise ValueError(f"{name}: {preset} needs the records of {need} threads, the sample holds {held}")
        if share <= 2 * c:
            plan[preset] = (part, [share * int(block_size)], None)
        else:
            plan[preset] = (part, [c * int(block_size), 2 * c * int(block_size)], share / c)
    # one set of warp streams at a time, shared by every run of that many threads
    times: dict = {}
    for n_threads in dict.fromkeys(n for _, counts, _ in plan.values() for n in counts):
        keep = None if n_threads is None else chunk.tid < n_threads
        streams = build_streams(chunk if keep is None else chunk.select(keep), block_size,
                                scratch if keep is None else scratch[keep], static=static)
        for preset, (cfg, counts, _) in plan.items():
            if n_threads in counts:
                times[preset, n_threads] = run_model(streams, cfg, crisp=False, name=name).time_ns * 1e-9
        del streams
    out = {}
    for preset, (_, counts, waves) in plan.items():
        t = [times[preset, n] for n in counts]
        out[preset] = t[0] if waves is None else t[0] + (waves - 1) * (t[1] - t[0])
    return out


class SimtSink(ThreadRecordsSink):
    """Keeps a bounded sample of each region's threads and, when the region ends, runs the SIMT model on it
    for one preset: ``results`` gets the estimated time in seconds per region (NaN when the region was
    incomplete, had no threads, or its sample outgrew the memory bound)."""

    def __init__(self, gpu: str) -> None:
        super().__init__(sample_threads([gpu], BLOCK_SIZE, SLICE_SMS), PROFILE_SAMPLE_RECORDS,
                         sample_threads([gpu], BLOCK_SIZE, 1))
        self.gpu = gpu
        self.results: list[float] = []

    def end_region(self, info, static) -> None:
        super().end_region(info, static)
        chunk, self.chunk = self.chunk, None
        t = float("nan")
        if chunk is not None and len(chunk.tid) and self.threads > 0:
            whole = self.kept == self.total and self.kept <= WHOLE_RECORDS
            t = simulated_times(chunk, self.threads, BLOCK_SIZE, [self.gpu], complete=whole,
                                name=info.name, slice_sms=1 if self.fell_back else SLICE_SMS, static=static)[self.gpu]
        self.results.append(t)
