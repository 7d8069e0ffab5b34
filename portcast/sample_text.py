"""The line a report prints of a sampled region: how it was sampled and the 95% intervals of its prediction
(from :func:`portcast.pipeline.predict_stage.sample_summary`)."""

from __future__ import annotations


def sample_line(sample: dict) -> str:
    """One line saying how a region was sampled and the 95% intervals of its prediction."""
    from portcast.formatting import format_time

    plan = sample["plan"]
    if plan.get("intervals") or not sample["thread_instances"]:
        what = (f"the intervals of its trace ({sample.get('kept_host_intervals', 0):,} of "
                f"{sample.get('host_intervals', 0):,})")
    else:
        what = (f"the thread blocks ({sample['kept_thread_instances']:,} of {sample['thread_instances']:,} thread "
                "runs)")
    head = (f"sampled {100 * plan['block_rate']:.3g}% of {what} and {100 * sample['page_rate']:.3g}% of the pages; "
            f"{sample['kept_records']:,} of {sample['records']:,} records analysed")
    parts = []
    k = sample.get("kernel_s_interval")
    if k:
        parts.append(f"GPU time {format_time(k[0])} to {format_time(k[1])}")
    for key, what in (("speedup_interval", "speedup"), ("speedup_with_transfers_interval", "with copies")):
        v = sample.get(key)
        if v:
            parts.append(f"{what} {v[0]:.3g}x to {v[1]:.3g}x")
    if parts:
        return head + f"; 95% interval ({sample.get('replicates', 0)} replicate groups): " + ", ".join(parts)
    return head + "; too few sampled units for an interval"
