"""Host<->device copies: direction, bytes, bandwidth, pageable vs pinned, blocking, overlap."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .hostwork import SYNC_APIS
from .intervals import Coverage
from .trace import Trace

MEMCPY_NAME = re.compile(r"Memcpy (\w+) \((\w+) -> (\w+)\)")
#: a sync call this soon after an async copy call makes the copy blocking for the host
BLOCKING_SYNC_WINDOW_US = 50.0
TRANSFER_COLUMNS = {
    "ts_us": "copy start on the GPU", "dur_us": "copy duration", "kind": "HtoD | DtoH | DtoD | …",
    "src": "source memory (Pageable, Pinned, Device)", "dst": "destination memory",
    "bytes": "bytes copied", "gbps": "achieved bandwidth (GB/s)",
    "pageable": "host side is pageable memory (cannot overlap; pin it)",
    "blocking": "the host waited for the copy (synchronous API, or a sync right after)",
    "overlap_pct": "% of the copy that ran while kernels ran on other streams",
    "api": "host call that issued it", "stream": "CUDA stream",
}


def transfer_table(trace: Trace) -> pd.DataFrame:
    """One row per memcpy in the trace (columns in `TRANSFER_COLUMNS`)."""
    cp = trace.of("gpu_memcpy")
    if cp.empty:
        return pd.DataFrame(columns=list(TRANSFER_COLUMNS))
    parts = cp["name"].astype(str).str.extract(MEMCPY_NAME)
    rt = trace.of("cuda_runtime", "cuda_driver")
    rt = rt[rt["correlation"] >= 0].drop_duplicates("correlation").set_index("correlation")
    api = cp["correlation"].map(rt["name"].astype(str)).fillna("")
    call_end = cp["correlation"].map(rt["end_us"]).to_numpy(dtype=np.float64, na_value=np.nan)
    call_tid = cp["correlation"].map(rt["tid"]).fillna(-1).to_numpy()
    syncs = rt[rt["name"].astype(str).isin(SYNC_APIS)]
    blocking = api.isin(SYNC_APIS).to_numpy().copy()
    for tid in np.unique(call_tid[~np.isnan(call_end)]):
        st = np.sort(syncs.loc[syncs["tid"] == tid, "ts_us"].to_numpy())
        if len(st) == 0:
            continue
        sel = (call_tid == tid) & ~np.isnan(call_end)
        k = np.searchsorted(st, call_end[sel], side="left")
        nxt = np.where(k < len(st), st[np.clip(k, 0, len(st) - 1)], np.inf)
        blocking[sel] |= (nxt - call_end[sel]) <= BLOCKING_SYNC_WINDOW_US
    kernels = trace.of("kernel")
    out = pd.DataFrame({
        "ts_us": cp["ts_us"].to_numpy(), "dur_us": cp["dur_us"].to_numpy(),
        "kind": parts[0].fillna("other").to_numpy(), "src": parts[1].fillna("").to_numpy(),
        "dst": parts[2].fillna("").to_numpy(), "bytes": cp["bytes"].clip(lower=0).to_numpy(),
        "stream": cp["stream"].to_numpy(), "api": api.to_numpy(), "blocking": blocking,
    })
    dur = np.maximum(out["dur_us"].to_numpy(), 1e-9)
    out["gbps"] = out["bytes"] / (dur * 1e3)
    out["pageable"] = (out["src"] == "Pageable") | (out["dst"] == "Pageable")
    overlap = np.zeros(len(out))
    for stream in np.unique(out["stream"]):
        other = kernels[kernels["stream"] != stream]
        cov = Coverage.of(other["ts_us"].to_numpy(), other["end_us"].to_numpy())
        sel = (out["stream"] == stream).to_numpy()
        s = out["ts_us"].to_numpy()[sel]
        overlap[sel] = cov.overlap(s, s + out["dur_us"].to_numpy()[sel])
    out["overlap_pct"] = 100.0 * overlap / dur
    return out[list(TRANSFER_COLUMNS)]


def transfer_summary(transfers: pd.DataFrame) -> pd.DataFrame:
    """Bytes, time and bandwidth by direction and host memory kind."""
    if transfers.empty:
        return pd.DataFrame(columns=["kind", "pageable", "count", "bytes", "dur_us", "gbps",
                                     "blocking"])
    g = transfers.groupby(["kind", "pageable"], observed=True)
    out = g.agg(count=("bytes", "size"), bytes=("bytes", "sum"), dur_us=("dur_us", "sum"),
                blocking=("blocking", "sum")).reset_index()
    out["gbps"] = out["bytes"] / (out["dur_us"].clip(lower=1e-9) * 1e3)
    return out.sort_values("dur_us", ascending=False, ignore_index=True)
