"""A sampled profile's estimates of the whole region and their intervals (docs/sampling.md), beside the
per-feature estimates of :mod:`features.sampled`.

:class:`SampleEstimator` is the last sink of a sampled profile run. It owns

* the address sample's sinks (footprint and reuse features, the work and byte unions), which see every
  access to the sampled pages;
* ``groups`` replicates of the prediction's sinks (feature engine, work, bytes, and their address-sample
  twins), replicate ``g`` seeing the host records, the sampled thread blocks of group ``g`` and the sampled pages of
  group ``g``.

When a region ends it replaces what the profile's own sinks gathered from the sampled records by estimates
for the whole region (:func:`features.sampled.whole_region`, :func:`whole_work`): the op-class counts and hot
lines by the filter's exact counts, the features and work counts by their estimates. The replicates' estimates
give each feature's and each prediction's 95% interval by the random group method (:func:`interval`).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from core.trace_schema import Op
from profiler.sampling import (
    HOST_UNITS,
    INSTANCES,
    KEPT_HOST_UNITS,
    KEPT_INSTANCES,
    LAUNCHES,
    LOAD_BYTES,
    MAX_TID,
    RECORDS,
    STORE_BYTES,
    THREAD_RECORDS,
    SampleCounts,
    take,
)

#: work counts estimated from the address sample (divided by the page rate); every other one is exact
ADDRESS_WORK = ("unique_bytes", "sector_bytes", "launch_sector_bytes")
#: the two-sided 97.5% quantile of Student's t by degrees of freedom (random groups: groups - 1)
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
         11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 20: 2.086, 30: 2.042, 63: 1.998}


def t975(df: int) -> float:
    """Student's t quantile for a two-sided 95% interval with ``df`` degrees of freedom."""
    if df in _T975:
        return _T975[df]
    below = max(k for k in _T975 if k <= df) if df >= 1 else 1
    return _T975[below]


def interval(point: float, replicates, log: bool = False) -> tuple[float, float] | None:
    """The 95% interval of an estimate ``point`` from its random-group ``replicates`` (each from one group of
    the sample): ``point ± t * s / sqrt(G)`` with ``s`` the replicates' standard deviation; on the log scale
    for a time (``log``). None with fewer than two finite replicates."""
    r = np.asarray([v for v in replicates if v is not None and math.isfinite(v) and (v > 0 or not log)], float)
    if len(r) < 2 or not math.isfinite(point) or (log and not point > 0):
        return None
    if log:
        r = np.log(r)
    half = t975(len(r) - 1) * float(np.std(r, ddof=1)) / math.sqrt(len(r))
    if log:
        return float(point * math.exp(-half)), float(point * math.exp(half))
    return float(point - half), float(point + half)


def whole_work(work: dict, counts: SampleCounts, address_work: dict | None, page_rate: float) -> dict:
    """The region's work counts (:class:`features.work.WorkSink`'s keys): exact from the filter's
    counts, the distinct byte and sector unions from the address sample over ``page_rate``."""
    from features.work import THREAD_MIX

    out = dict(work)
    out.update({"threads": counts[MAX_TID] + 1, "records": counts[RECORDS], "thread_records": counts[THREAD_RECORDS],
                "loads": int(counts.ops_all[Op.LOAD]), "stores": int(counts.ops_all[Op.STORE]),
                "load_bytes": counts[LOAD_BYTES], "store_bytes": counts[STORE_BYTES],
                "launches": counts[LAUNCHES]})
    for k, ops in THREAD_MIX.items():
        out[k] = int(counts.ops_thread[list(ops)].sum())
    if address_work is not None:
        for k in ADDRESS_WORK:
            out[k] = float(address_work[k]) / page_rate
    return out


def whole_bytes(bytes_rw: dict, address_bytes: dict | None, page_rate: float) -> dict:
    """The distinct bytes read and written, from the address sample."""
    if address_bytes is None:
        return dict(bytes_rw)
    return {k: float(address_bytes[k]) / page_rate for k in ("read_bytes", "written_bytes")}


@dataclasses.dataclass
class RegionSample:
    """One sampled region's plan, counts and the replicates' estimates (series, work, bytes per group)."""

    counts: SampleCounts
    replicates: list  # (series, work, bytes) per group with kept threads or a thread-less region

    def to_json(self) -> dict:
        return self.counts.to_json()


#: the feature families a replicate computes from its blocks: all but the dependence check (its counts get no
#: interval) and the footprint and reuse families (a replicate's address sample gives those)
REPLICATE_FAMILIES = ("mix", "ilp", "stride", "bdiv", "mica_stride", "regs", "branch", "warp", "library")


class _Set:
    """The sinks one estimate needs: features, work, bytes of the kept records and of the address sample."""

    def __init__(self, families=REPLICATE_FAMILIES) -> None:
        from features import FeatureSink
        from features.work import BytesSink, WorkSink

        self.feat, self.work, self.bytes = FeatureSink(families, threads=1), WorkSink(), BytesSink()
        self.afeat, self.awork, self.abytes = FeatureSink(["footprint", "reuse"], threads=1), WorkSink(), BytesSink()

    def main(self):
        return (self.feat, self.work, self.bytes)

    def address(self):
        return (self.afeat, self.awork, self.abytes)


class SampleEstimator:
    """The last sink of a sampled profile run (see the module docstring). ``feature_sink``, ``work_sink``,
    ``bytes_sink``, ``summary``, ``hot``: the run's own sinks whose results it replaces by the whole region's
    estimates (None for those the run does not have). ``samples`` gets one :class:`RegionSample` per region
    invocation (None for a region traced exactly)."""

    def __init__(self, feature_sink=None, work_sink=None, bytes_sink=None, summary=None, hot=None,
                 replicate: bool = True) -> None:
        self.feature_sink, self.work_sink, self.bytes_sink = feature_sink, work_sink, bytes_sink
        self.summary, self.hot = summary, hot
        self.replicate = replicate
        self.samples: list[RegionSample | None] = []
        self._filter = None
        self._address = None
        self._groups: list[_Set] = []
        self._started = False

    # the tracer binds its filter when the region is sampled
    def bind_sample_filter(self, filt) -> None:
        self._filter = filt

    def _all(self):
        if self._address is not None:
            yield from self._address.address()
        for s in self._groups:
            yield from s.main()
            yield from s.address()

    def start_region(self, info, static) -> None:
        self._address = _Set(())
        self._groups = []
        self._started = False
        self._static_info = (info, static)

    def _ensure_started(self) -> None:
        if self._started or self._filter is None:
            return
        self._started = True
        info, static = self._static_info
        if self.replicate:
            self._groups = [_Set() for _ in range(self._filter.plan.groups)]
        for s in self._all():
            s.start_region(info, static)

    def consume(self, chunk) -> None:
        if self._filter is None:
            return
        self._ensure_started()
        self._to_replicates(chunk, self._filter.chunk_groups, _Set.main)

    def consume_address_sample(self, chunk) -> None:
        self._ensure_started()
        for s in self._address.address():
            s.consume(chunk)
        self._to_replicates(chunk, self._filter.address_groups, _Set.address)

    def _to_replicates(self, chunk, groups, sinks_of) -> None:
        """Each replicate's share of ``chunk``: its group's rows and the rows of every group (group -1)."""
        for g, rep in enumerate(self._groups):
            rows = np.flatnonzero((groups == g) | (groups < 0))
            if len(rows):
                part = take(chunk, rows)
                for s in sinks_of(rep):
                    s.consume(part)

    def end_region(self, info, static) -> None:
        extra = info.extra.get("sample")
        if self._filter is None or extra is None or self._filter.result is None:
            self.samples.append(None)
            self._filter = None
            return
        self._ensure_started()
        for s in self._all():
            s.end_region(info, static)
        counts = self._filter.result
        plan = counts.plan
        if self.summary is not None and self.summary.rows:
            self.summary.rows[-1] = (self.summary.rows[-1][0], counts.ops_all.copy())
        if self.hot is not None and self.hot.results:
            self.hot.results[-1] = self.hot.lines(counts.pcs, static)
        # the whole sample's own features (before they are replaced by the estimate): its reuse histogram shares
        # out the replicates' short reuse distances too
        main_series = self.feature_sink.results[-1][1] if self.feature_sink is not None and \
            self.feature_sink.results else None
        point = self._estimate(self.feature_sink, self.work_sink, self.bytes_sink, self._address, counts,
                               counts.page_rate, counts.weight)
        if point is not None:
            series, work, bytes_rw = point
            if self.feature_sink is not None and self.feature_sink.results:
                self.feature_sink.results[-1] = (self.feature_sink.results[-1][0], series)
            if self.work_sink is not None and self.work_sink.results:
                self.work_sink.results[-1] = work
            if self.bytes_sink is not None and self.bytes_sink.results:
                self.bytes_sink.results[-1] = bytes_rw
        reps = []
        for g, rep in enumerate(self._groups):
            w = counts.group_weight(g) if counts[INSTANCES] else 1.0
            if not math.isfinite(w):
                continue
            est = self._estimate(rep.feat, rep.work, rep.bytes, rep, counts, counts.page_rate / plan.groups, w,
                                 short_reuse=main_series)
            if est is not None:
                reps.append(est)
        self.samples.append(RegionSample(counts, reps))
        self._groups = []
        self._address = None
        self._filter = None

    @staticmethod
    def _estimate(feat, work, bytes_sink, address: _Set, counts, page_rate, weight, short_reuse=None):
        from features.sampled import whole_region

        if feat is None or not feat.results:
            return None
        series = feat.results[-1][1]
        aseries = address.afeat.results[-1][1] if address.afeat.results else None
        awork = address.awork.results[-1] if address.awork.results else None
        abytes = address.abytes.results[-1] if address.abytes.results else None
        est_series = whole_region(series, counts, aseries, page_rate, weight, short_reuse)
        est_work = whole_work(work.results[-1], counts, awork, page_rate) if work is not None and work.results \
            else None
        est_bytes = whole_bytes(bytes_sink.results[-1], abytes, page_rate) \
            if bytes_sink is not None and bytes_sink.results else None
        return est_series, est_work, est_bytes


def kept_nothing(sample: RegionSample) -> str | None:
    """Why a sampled region has no estimate: its sample kept none of its units (a region of a few long thread
    blocks, sampled at a low rate), so what the sinks saw is its host code alone; None when it kept some."""
    c = sample.counts
    if c[INSTANCES] and not c[KEPT_INSTANCES]:
        return (f"the sample kept none of the region's {c[INSTANCES]:,} thread runs (its thread blocks of 256 are "
                f"few, at a block rate of {c.plan.block_rate:.3g}): profile it with --exact or a larger --sample")
    if not c[INSTANCES] and c[HOST_UNITS] and not c[KEPT_HOST_UNITS]:
        return (f"the sample kept none of the region's {c[HOST_UNITS]:,} intervals of 16,384 records, at a rate "
                f"of {c.plan.block_rate:.3g}: profile it with --exact or a larger --sample")
    return None
