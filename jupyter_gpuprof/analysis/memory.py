"""Peak GPU memory from the allocator events the profiler records with profile_memory."""

from __future__ import annotations

import pandas as pd

from .trace import Trace

MEMORY_COLUMNS = {
    "device": "GPU index", "peak_allocated_bytes": "highest 'Total Allocated' seen",
    "total_bytes": "device memory (from the trace's device properties)",
    "peak_pct": "peak as % of device memory",
}


def _int(value: object) -> int:
    """A device property as an int (the reader typed them: `trace_sanity.valid_devices`;
    0 where the trace left it out)."""
    return value if isinstance(value, int) else 0


def memory_table(trace: Trace) -> pd.DataFrame:
    """Peak allocated bytes per GPU (empty when memory was not profiled)."""
    mem = trace.memory
    mem = mem[(mem["device"] >= 0) & (mem["total_allocated"] >= 0)]
    if mem.empty:
        return pd.DataFrame(columns=list(MEMORY_COLUMNS))
    peak = mem.groupby("device")["total_allocated"].max()
    totals = {_int(d.get("id", i)): _int(d.get("totalGlobalMem", 0))
              for i, d in enumerate(trace.info.devices)}
    out = pd.DataFrame({"device": peak.index.astype(int), "peak_allocated_bytes": peak.values})
    out["total_bytes"] = out["device"].map(totals).fillna(0).astype("int64")
    out["peak_pct"] = 100.0 * out["peak_allocated_bytes"] / out["total_bytes"].where(
        out["total_bytes"] > 0)
    return out[list(MEMORY_COLUMNS)]
