"""One-time costs in a trace: start-up, lazy module loading, graph capture, allocator growth.

A capture that starts with the process holds CUDA context creation (one 30 s runtime call),
the first launch of each kernel (the driver loads its module: 100-300 ms on ROCm), a CUDA-graph
capture, or the caching allocator growing (long cudaMalloc/cudaFree). None of it recurs in
the steady state, so it is named and kept out of the step analysis instead of being advised
on as "launch overhead".
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .intervals import Coverage, union
from .kineto_json import GPU_CATEGORIES
from .launch import LAUNCH_APIS
from .name_masks import names_where
from .trace import Trace

#: a single runtime call this long is not steady-state work ...
ONE_TIME_MIN_US = 50_000.0
#: ... when the GPU idles through most of it (a launch that blocks on a full queue, or a sync,
#: keeps the GPU busy: that is the steady state's own cost)
ONE_TIME_MAX_GPU_BUSY = 0.5
ONE_TIME_COLUMNS = {
    "kind": "start-up | module loading | graph capture | allocator growth | other",
    "name": "runtime call (or the capture range)", "ts_us": "start", "end_us": "end",
    "dur_us": "duration",
}
_START_UP = ("DeviceGetStreamPriorityRange", "GetDeviceCount", "SetDevice", "Init",
             "PrimaryCtxRetain", "StreamCreate", "DeviceGetAttribute", "GetDeviceProperties",
             "CtxCreate", "DriverGetVersion", "RuntimeGetVersion")
_ALLOCATOR = ("Malloc", "Free", "HostAlloc", "HostRegister")


def kind_of_call(name: str) -> str:
    """Which one-time cost a long runtime call is."""
    if name in LAUNCH_APIS:
        return "module loading"
    if "Capture" in name or "GraphInstantiate" in name:
        return "graph capture"
    if any(k in name for k in _ALLOCATOR):
        return "allocator growth"
    if any(k in name for k in _START_UP):
        return "start-up"
    return "other"


def one_time_table(trace: Trace) -> pd.DataFrame:
    """Every one-time cost of the trace (columns `ONE_TIME_COLUMNS`), in time order."""
    rt = trace.of("cuda_runtime", "cuda_driver")
    long = rt[rt["dur_us"].to_numpy() >= ONE_TIME_MIN_US]
    gpu = trace.of(*GPU_CATEGORIES)
    busy = Coverage.of(gpu["ts_us"].to_numpy(), gpu["end_us"].to_numpy()).overlap(
        long["ts_us"].to_numpy(), long["end_us"].to_numpy())
    rows = [{"kind": kind, "name": str(n), "ts_us": float(s), "end_us": float(e),
             "dur_us": float(e - s)}
            for n, s, e, b in zip(long["name"], long["ts_us"], long["end_us"], busy, strict=True)
            if (kind := kind_of_call(str(n))) != "other"
            and b <= ONE_TIME_MAX_GPU_BUSY * (e - s)]
    begins = rt[names_where(rt, lambda n: n.endswith("StreamBeginCapture"), "StreamBeginCapture")]
    ends = rt[names_where(rt, lambda n: n.endswith("StreamEndCapture"), "StreamEndCapture")]
    for s in begins["ts_us"].to_numpy():  # the whole capture range: its kernels never ran
        after = ends["end_us"].to_numpy()
        after = after[after >= s]
        if len(after):
            rows.append({"kind": "graph capture", "name": "stream capture", "ts_us": float(s),
                         "end_us": float(after.min()), "dur_us": float(after.min() - s)})
    return pd.DataFrame(rows, columns=list(ONE_TIME_COLUMNS)).sort_values(
        "ts_us", ignore_index=True)


def steady_start(table: pd.DataFrame, lo: float, gpu_starts: np.ndarray) -> float:
    """Where the steady state of a trace without steps begins: after its last one-time cost,
    when GPU work follows it; else the trace start (nothing steady to keep, e.g. a trace of a
    CUDA-graph capture, which the one-time finding then names)."""
    if table.empty or (table["kind"] == "graph capture").any():
        return lo  # a capture's trace is the capture: what follows it is its own flush
    after = float(table["end_us"].max())
    return after if bool((gpu_starts >= after).any()) else lo


def inside(table: pd.DataFrame, start_us: float, end_us: float) -> float:
    """Time of one-time costs inside [start_us, end_us] (overlaps counted once)."""
    if table.empty:
        return 0.0
    us, ue = union(np.clip(table["ts_us"].to_numpy(), start_us, end_us),
                   np.clip(table["end_us"].to_numpy(), start_us, end_us))
    return float((ue - us).sum())
