"""Counter tracks under the timeline's lanes: a value the trace samples over time, drawn as steps.

Perfetto and Nsight Systems draw such tracks beside the events; a Kineto trace holds one kind,
the allocator's "Total Allocated" (recorded with profile_memory), one track per GPU. Each track
is bounded like the lanes: at most `MAX_POINTS` points, a bin keeping its highest value so a
peak never disappears.
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np

from .steps import Window
from .trace import Trace

#: most points of one track (a bin of time keeps its highest value)
MAX_POINTS = 600
#: bytes per unit of a memory track (its values are decimal GB, as `units.gb` writes them)
BYTES_PER_GB = 1e9


class CounterTrack(TypedDict):
    """One counter as a step line: the value from each `t` (µs from the window start) on."""

    id: str
    label: str
    unit: str
    t: list[float]
    v: list[float]


def _bounded(t: np.ndarray, v: np.ndarray, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """At most `MAX_POINTS` points: each time bin's highest value, at the bin's first time."""
    if len(t) <= MAX_POINTS:
        return t, v
    span = hi - lo if hi > lo else 1.0
    bins = np.clip(((t - lo) / (span / MAX_POINTS)).astype(np.int64), 0, MAX_POINTS - 1)
    first = np.flatnonzero(np.concatenate(([True], bins[1:] != bins[:-1])))
    return t[first], np.maximum.reduceat(v, first)


def counter_tracks(trace: Trace, window: Window) -> list[CounterTrack]:
    """One "GPU N memory allocated" track (GB) per GPU the allocator events name."""
    mem = trace.memory
    mem = mem[(mem["device"] >= 0) & (mem["total_allocated"] >= 0)]
    out: list[CounterTrack] = []
    for dev in sorted(int(d) for d in mem["device"].unique()):
        rows = mem[mem["device"].to_numpy() == dev]
        rows = rows.sort_values("ts_us", kind="stable")
        t = rows["ts_us"].to_numpy(dtype=float)
        v = rows["total_allocated"].to_numpy(dtype=float) / BYTES_PER_GB
        inside = (t >= window.start_us) & (t < window.end_us)
        before = np.flatnonzero(t < window.start_us)
        if before.size:  # the value the window opens with
            inside[before[-1]] = True
        if not inside.any():
            continue
        t = np.maximum(t[inside], window.start_us) - window.start_us
        tb, vb = _bounded(t, v[inside], 0.0, window.dur_us)
        out.append({"id": f"memory:{dev}", "label": f"GPU {dev} memory allocated",
                    "unit": "GB", "t": np.round(tb, 2).tolist(), "v": np.round(vb, 4).tolist()})
    return out
