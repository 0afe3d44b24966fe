"""Sync points: where the host stopped to wait for the GPU, who asked, and what it cost."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .hostwork import HostWork
from .idle import SYNC_SLACK_US
from .transfers import BLOCKING_SYNC_WINDOW_US

#: how far back to look for the op around a sync call
MAX_WALK = 256
SYNC_COLUMNS = {
    "ts_us": "call start", "dur_us": "host time blocked in the call", "api": "runtime call",
    "op": "innermost op that issued it (e.g. aten::_local_scalar_dense)",
    "caller": "outermost op around it (e.g. aten::item)",
    "gpu_idle_after_us": "GPU idle gap that opened during the call (what the sync cost)",
    "tid": "host thread",
}


def sync_table(host: HostWork, ops: pd.DataFrame, gaps: pd.DataFrame) -> pd.DataFrame:
    """One row per sync call (columns in `SYNC_COLUMNS`); `ops` from `op_rows`."""
    calls = host.sync_calls
    if calls.empty:
        return pd.DataFrame(columns=list(SYNC_COLUMNS))
    op_name = np.full(len(calls), "", dtype=object)
    caller = np.full(len(calls), "", dtype=object)
    codes = ops["name"].cat.codes.to_numpy()
    categories = ops["name"].cat.categories
    parents = ops["parent"].to_numpy()
    for tid in np.unique(calls["tid"]):
        t_ops = ops[ops["tid"] == tid].sort_values("ts_us")
        if t_ops.empty:
            continue
        rows = t_ops.index.to_numpy()  # positions in `ops` (op_rows resets the index)
        starts, ends = t_ops["ts_us"].to_numpy(), t_ops["end_us"].to_numpy()
        sel = np.flatnonzero((calls["tid"] == tid).to_numpy())
        for j, ts in zip(sel, calls["ts_us"].to_numpy()[sel], strict=True):
            k = int(np.searchsorted(starts, ts, side="right")) - 1
            # walk back to the latest-starting op that still covers the call (innermost)
            for _ in range(MAX_WALK):
                if k < 0 or ends[k] >= ts:
                    break
                k -= 1
            if k < 0 or ends[k] < ts:
                continue
            op_name[j] = categories[codes[rows[k]]]
            top = rows[k]
            while parents[top] >= 0:
                top = parents[top]
            caller[j] = categories[codes[top]]
    idle = np.zeros(len(calls))
    if len(gaps):
        gs, gd = gaps["start_us"].to_numpy(), gaps["dur_us"].to_numpy()
        s, e = calls["ts_us"].to_numpy(), calls["end_us"].to_numpy() + SYNC_SLACK_US
        at = np.searchsorted(gs, s, side="left")
        ok = (at < len(gs)) & (gs[np.clip(at, 0, len(gs) - 1)] <= e)
        idle = np.where(ok, gd[np.clip(at, 0, len(gs) - 1)], 0.0)
    return pd.DataFrame({
        "ts_us": calls["ts_us"].to_numpy(), "dur_us": calls["dur_us"].to_numpy(),
        "api": calls["name"].astype(str).to_numpy(), "op": op_name, "caller": caller,
        "gpu_idle_after_us": idle, "tid": calls["tid"].to_numpy(),
    }, columns=list(SYNC_COLUMNS))


#: the ops inside which a wait is a copy's own (`tensor.to(device)`, `copy_`)
COPY_OPS = ("aten::copy_", "aten::_copy_from", "aten::to", "aten::_to_copy")


def upload_waits(syncs: pd.DataFrame, transfers: pd.DataFrame) -> np.ndarray:
    """Per sync, whether it is a copy to the GPU waiting for itself: issued inside a copy op
    while a blocking host-to-device copy ran (`x.to(device)` from pageable memory, without
    `non_blocking`), which pinned memory and `non_blocking=True` take off the host."""
    out = np.zeros(len(syncs), dtype=bool)
    if not len(syncs) or not len(transfers):
        return out
    up = transfers[(transfers["kind"] == "HtoD") & transfers["blocking"].astype(bool)]
    if up.empty:
        return out
    starts = np.sort(up["ts_us"].to_numpy(dtype=float))
    s = syncs["ts_us"].to_numpy(dtype=float)
    lo = np.searchsorted(starts, s - BLOCKING_SYNC_WINDOW_US, side="left")
    hi = np.searchsorted(starts, s + syncs["dur_us"].to_numpy(dtype=float), side="right")
    found: np.ndarray = (hi > lo) & syncs["op"].isin(COPY_OPS).to_numpy()
    return found
