"""GPU busy/idle per stream, and each idle gap with what the host was doing during it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .hostwork import HostWork
from .intervals import Coverage, complement
from .kineto_json import GPU_CATEGORIES
from .steps import Window
from .trace import Trace

#: a gap is blamed on a host class that covers at least this share of it
CAUSE_MIN_SHARE = 0.5
#: a gap that opens this close after a sync call returns is the idle that sync caused
SYNC_SLACK_US = 5.0

STREAM_COLUMNS = {
    "device": "GPU index", "stream": "CUDA stream id",
    "busy_us": "union of activity on the stream inside the window",
    "busy_pct": "busy_us as % of the window",
    "kernel_us": "kernel time", "memcpy_us": "memcpy + memset time", "n_events": "activities",
}
GAP_COLUMNS = {
    "start_us": "GPU goes idle (all streams of the device)", "end_us": "next activity starts",
    "dur_us": "gap length", "cause": "input | transfer | sync | launch | host",
    "after_sync": "the gap opened while a sync call was waiting",
    "input_us": "host time in the data pipeline during the gap",
    "sync_us": "host time in sync calls during the gap",
    "transfer_us": "host time in copy calls of >= 64 KiB",
    "launch_us": "host time in ops/calls that launch GPU work",
    "host_us": "other host time (ops that launch nothing, unrecorded Python)",
    "next_kernel": "activity that ends the gap",
}


def gpu_coverage(trace: Trace, device: int | None = None) -> Coverage:
    """Union of all GPU activity (of one device, or all)."""
    gpu = trace.of(*GPU_CATEGORIES)
    if device is not None:
        gpu = gpu[gpu["device"] == device]
    return Coverage.of(gpu["ts_us"].to_numpy(), gpu["end_us"].to_numpy())


def stream_table(trace: Trace, window: Window) -> pd.DataFrame:
    """Busy time per (device, stream) inside the window."""
    gpu = trace.of(*GPU_CATEGORIES)
    gpu = gpu[(gpu["end_us"] > window.start_us) & (gpu["ts_us"] < window.end_us)]
    rows = []
    for key, g in gpu.groupby(["device", "stream"], sort=True):
        dev, stream = (int(v) for v in np.asarray(key, dtype=np.int64))
        s = np.clip(g["ts_us"].to_numpy(), window.start_us, window.end_us)
        e = np.clip(g["end_us"].to_numpy(), window.start_us, window.end_us)
        busy = Coverage.of(s, e).total
        is_k = (g["cat"] == "kernel").to_numpy()
        rows.append({
            "device": dev, "stream": stream, "busy_us": busy,
            "busy_pct": 100.0 * busy / window.dur_us if window.dur_us else 0.0,
            "kernel_us": float(g["dur_us"].to_numpy()[is_k].sum()),
            "memcpy_us": float(g["dur_us"].to_numpy()[~is_k].sum()), "n_events": len(g),
        })
    return pd.DataFrame(rows, columns=list(STREAM_COLUMNS))


def _cause(row_input: np.ndarray, row_transfer: np.ndarray, after_sync: np.ndarray,
           row_launch: np.ndarray, row_host: np.ndarray, dur: np.ndarray) -> np.ndarray:
    """Each gap's cause: input, transfer, sync, else launch or host, whichever is larger."""
    cause = np.where(row_launch >= row_host, "launch", "host").astype(object)
    cause = np.where(after_sync, "sync", cause)
    cause = np.where(row_transfer >= CAUSE_MIN_SHARE * dur, "transfer", cause)
    return np.where(row_input >= CAUSE_MIN_SHARE * dur, "input", cause)


def gap_table(trace: Trace, window: Window, host: HostWork, gpu: Coverage) -> pd.DataFrame:
    """Every GPU idle gap inside the window with its host-side breakdown and cause."""
    gs, ge = complement(gpu.starts, gpu.ends, window.start_us, window.end_us)
    dur = ge - gs
    inp = host.input.overlap(gs, ge)
    syn = host.sync.overlap(gs, ge)
    trf = host.transfer.overlap(gs, ge)
    lch = host.launch.overlap(gs, ge)
    host_us = np.clip(dur - inp - syn - trf - lch, 0.0, None)
    after_sync = host.sync_raw.contains(gs) | host.sync_raw.contains(gs - SYNC_SLACK_US)
    gpu_ev = trace.of(*GPU_CATEGORIES)
    starts = gpu_ev["ts_us"].to_numpy()
    nxt = np.searchsorted(starts, ge, side="left")
    names = gpu_ev["name"].astype(str).to_numpy()
    next_kernel = (np.where(nxt < len(names), names[np.clip(nxt, 0, len(names) - 1)], "")
                   if len(names) else np.full(len(gs), "", dtype=object))
    return pd.DataFrame({
        "start_us": gs, "end_us": ge, "dur_us": dur,
        "cause": _cause(inp, trf, after_sync, lch, host_us, dur),
        "after_sync": after_sync, "input_us": inp, "sync_us": syn, "transfer_us": trf,
        "launch_us": lch, "host_us": host_us, "next_kernel": next_kernel,
    }, columns=list(GAP_COLUMNS))
