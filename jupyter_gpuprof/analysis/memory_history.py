"""The CUDA allocator's history (`torch.cuda.memory._snapshot()`) replayed: blocks, bytes over time.

The snapshot holds the segments live when it was taken (their blocks) and the recorded events
(`alloc`, `free_completed`, `segment_alloc`, `oom`…) with their Python frames. Blocks allocated
before the recording started (the model's parameters, the optimizer's state) have no `alloc`
event: they are the live blocks that no recorded `alloc` explains, alive from the start. The
allocated bytes over time are then one cumulative sum over the events' signed sizes.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import numpy as np
import pandas as pd

from ..store.memory_snapshot import AllocatorEvent, Frame, Segment, Snapshot

#: columns of `MemoryHistory.blocks`, documented once
BLOCK_COLUMNS = {
    "addr": "block start address",
    "bytes": "block size (the allocator's rounded size)",
    "alloc_i": "index of its alloc event (-1: allocated before the recording)",
    "free_i": "index of its free_completed event (n_events: still allocated at the end)",
    "alloc_us": "time of its alloc (the first event's time when before the recording)",
    "free_us": "time of its free (the last event's time when still allocated)",
    "frame_i": "index into MemoryHistory.frames of its Python stack (-1: none recorded)",
}


class MemoryHistoryError(ValueError):
    """The file is not an allocator snapshot with a recorded history (said in one line)."""


@dataclass
class PhaseRange:
    """One recorded phase range (`forward`, `backward`, `optimizer`) in the history's clock."""

    name: str
    start_us: int
    end_us: int


@dataclass
class MemoryHistory:
    """One device's replayed history: its blocks, the allocated bytes after each event, phases."""

    blocks: pd.DataFrame
    frames: list[list[Frame]]
    event_us: np.ndarray
    allocated: np.ndarray
    reserved_bytes: int
    phases: list[PhaseRange]
    segments: list[Segment] = field(default_factory=list)
    events: list[AllocatorEvent] = field(default_factory=list)
    expandable: bool = False

    @property
    def n_events(self) -> int:
        return len(self.event_us)

    @property
    def peak_i(self) -> int:
        """Index of the event after which the allocated bytes were highest (-1: before any)."""
        if not self.n_events:
            return -1
        i = int(np.argmax(self.allocated))
        return i if self.allocated[i] > self.start_bytes else -1

    @property
    def start_bytes(self) -> int:
        """Bytes allocated when the recording started."""
        return int(self.blocks.loc[self.blocks["alloc_i"] < 0, "bytes"].sum())

    @property
    def peak_bytes(self) -> int:
        i = self.peak_i
        return int(self.allocated[i]) if i >= 0 else self.start_bytes

    @property
    def peak_us(self) -> int:
        i = self.peak_i
        return int(self.event_us[max(i, 0)]) if self.n_events else 0

    def live_at(self, i: int) -> pd.DataFrame:
        """Blocks allocated just after event i (-1: at the start)."""
        b = self.blocks
        return b[(b["alloc_i"] <= i) & (b["free_i"] > i)]


def read_snapshot(path: Path) -> Snapshot:
    """A snapshot from JSON or gzipped JSON; MemoryHistoryError with the reason otherwise."""
    try:
        raw = path.read_bytes()
        text = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
        data = json.loads(text)
    except (OSError, ValueError, EOFError) as e:
        raise MemoryHistoryError(f"{path.name}: not a readable allocator history ({e})") from e
    if not isinstance(data, dict) or not isinstance(data.get("segments"), list):
        raise MemoryHistoryError(f"{path.name}: no 'segments' list: not an allocator snapshot")
    return cast("Snapshot", data)


def _device_trace(snapshot: Snapshot, device: int) -> list[AllocatorEvent]:
    traces = snapshot.get("device_traces") or []
    if (
        not isinstance(traces, list)
        or device >= len(traces)
        or not isinstance(traces[device], list)
    ):
        return []
    return [e for e in traces[device] if isinstance(e, dict)]


def _phases(snapshot: Snapshot, device: int) -> list[PhaseRange]:
    """START/END pairs of the external annotations (record_function ranges), in order."""
    open_: dict[str, list[int]] = {}
    out: list[PhaseRange] = []
    for a in snapshot.get("external_annotations") or []:
        if not isinstance(a, dict) or a.get("device", device) != device:
            continue
        name, t = str(a.get("name", "")), int(a.get("time_us", 0))
        if a.get("stage") == "START":
            open_.setdefault(name, []).append(t)
        elif a.get("stage") == "END" and open_.get(name):
            out.append(PhaseRange(name, open_[name].pop(), t))
    return sorted(out, key=lambda p: p.start_us)


def _pair(
    action: np.ndarray, addr: np.ndarray, size: np.ndarray, n: int
) -> tuple[pd.DataFrame, set[int]]:
    """Each alloc with the free_completed that ends it (vectorised), and the addresses still
    allocated at the end. At one address allocs and frees alternate: a free with c allocs
    before it (at its address) ends the c-th; one with none ended a block from before the
    recording."""
    is_alloc, is_free = action == "alloc", action == "free_completed"
    ev = pd.DataFrame({"i": np.flatnonzero(is_alloc | is_free)})
    ev["addr"], ev["bytes"] = addr[ev["i"]], size[ev["i"]]
    ev["alloc"] = is_alloc[ev["i"]]
    ev = ev.sort_values(["addr", "i"], kind="stable")
    ev["c"] = ev.groupby("addr")["alloc"].cumsum()
    allocs, frees = ev[ev["alloc"]], ev[~ev["alloc"]]
    paired = allocs.merge(
        frees[frees["c"] > 0][["addr", "c", "i"]],
        on=["addr", "c"],
        how="left",
        suffixes=("", "_free"),
    )
    paired = paired.drop_duplicates(["addr", "c"]).sort_values("i", kind="stable")
    free_i = paired["i_free"].fillna(n).astype("int64")
    out = pd.DataFrame(
        {
            "addr": paired["addr"].to_numpy(),
            "bytes": paired["bytes"].to_numpy(),
            "alloc_i": paired["i"].to_numpy(),
            "free_i": free_i.to_numpy(),
        }
    )
    early = frees[frees["c"] == 0]
    out = pd.concat(
        [
            out,
            pd.DataFrame(
                {
                    "addr": early["addr"].to_numpy(),
                    "bytes": early["bytes"].to_numpy(),
                    "alloc_i": -1,
                    "free_i": early["i"].to_numpy(),
                }
            ),
        ],
        ignore_index=True,
    )
    open_addrs = set(out.loc[out["free_i"] >= n, "addr"].tolist())
    return out.astype("int64"), open_addrs


def replay(snapshot: Snapshot, device: int = 0) -> MemoryHistory:
    """The history of `device` as blocks and allocated bytes after each event."""
    events = _device_trace(snapshot, device)
    segments = [
        s for s in snapshot["segments"] if isinstance(s, dict) and s.get("device", 0) == device
    ]
    n = len(events)
    t_first = int(events[0].get("time_us", 0)) if n else 0
    t_last = int(events[-1].get("time_us", 0)) if n else 0
    action = np.array([str(e.get("action", "")) for e in events], dtype=object)
    addr = np.array([int(e.get("addr", 0)) for e in events], dtype="int64")
    size = np.array([int(e.get("size", 0)) for e in events], dtype="int64")
    blocks, open_addrs = _pair(action, addr, size, n)
    frames: list[list[Frame]] = [
        list(events[i].get("frames") or []) for i in blocks["alloc_i"][blocks["alloc_i"] >= 0]
    ]
    blocks["frame_i"] = -1
    blocks.loc[blocks["alloc_i"] >= 0, "frame_i"] = np.arange(len(frames))
    before: list[tuple[int, int, int, int, int]] = []  # live at the end, no recorded alloc
    for seg in segments:
        for blk in seg.get("blocks") or []:
            if blk.get("state") == "active_allocated" and int(blk["address"]) not in open_addrs:
                fr = list(blk.get("frames") or [])
                frames.append(fr)
                before.append(
                    (int(blk["address"]), int(blk["size"]), -1, n, len(frames) - 1 if fr else -1)
                )
    blocks = pd.concat(
        [
            blocks,
            pd.DataFrame(
                before, columns=["addr", "bytes", "alloc_i", "free_i", "frame_i"], dtype="int64"
            ),
        ],
        ignore_index=True,
    )
    times = np.array([int(e.get("time_us", 0)) for e in events], dtype="int64")
    idx_time = np.concatenate([times, [t_last]]) if n else np.array([0], dtype="int64")
    blocks["alloc_us"] = np.where(
        blocks["alloc_i"] >= 0, idx_time[blocks["alloc_i"].clip(0)], t_first
    )
    blocks["free_us"] = idx_time[blocks["free_i"].clip(0, n)]
    blocks = blocks[list(BLOCK_COLUMNS)]
    delta = np.zeros(n, dtype="int64")
    allocd = blocks[blocks["alloc_i"] >= 0]
    np.add.at(delta, allocd["alloc_i"].to_numpy(), allocd["bytes"].to_numpy())
    freed = blocks[blocks["free_i"] < n]
    np.add.at(delta, freed["free_i"].to_numpy(), -freed["bytes"].to_numpy())
    start = int(blocks.loc[blocks["alloc_i"] < 0, "bytes"].sum())
    return MemoryHistory(
        blocks=blocks,
        frames=frames,
        event_us=times,
        allocated=start + np.cumsum(delta),
        reserved_bytes=sum(int(s.get("total_size", 0)) for s in segments),
        phases=_phases(snapshot, device),
        segments=segments,
        events=events,
        expandable=any(bool(s.get("is_expandable")) for s in segments),
    )


def load_history(path: Path, device: int = 0) -> MemoryHistory:
    """Read and replay a saved history; MemoryHistoryError (one line) when it is not one."""
    return replay(read_snapshot(path), device)
