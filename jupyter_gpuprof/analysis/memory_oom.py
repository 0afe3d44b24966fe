"""An out-of-memory post-mortem: what was allocated when an allocation failed, and by which lines.

The capture takes the allocator snapshot from an out-of-memory observer, at the failing
allocation and before the exception unwinds the step's tensors; its history ends with the
`oom` event (the request's size). The limit is the one the error names (a per-process cap says
"… GiB allowed"), else the device's capacity.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import memory_attribution as attr
from .memory_history import MemoryHistory
from .memory_step import NO_LINE, Fragmentation, fragmentation
from .memory_whatif import LayerProgress, layers_run

#: how many of the largest allocations the post-mortem names
TOP_ALLOCATIONS = 3
_GIB = 1024**3
_UNITS = {"GiB": _GIB, "MiB": 1024**2, "KiB": 1024, "B": 1}
_ALLOWED = re.compile(r"([\d.]+) (GiB|MiB|KiB) allowed")
_CAPACITY = re.compile(r"total capacity of ([\d.]+) (GiB|MiB|KiB)")
_TRIED = re.compile(r"Tried to allocate ([\d.]+) (GiB|MiB|KiB|B)")


@dataclass
class Allocation:
    """One live block at the failure: its bytes, the user's line and the module that made it."""

    bytes: int
    line: str
    module: str


@dataclass
class OomPostMortem:
    """The failed request, what held the memory then, and the allocator's slack."""

    requested_bytes: int
    allocated_bytes: int  # live at the failure
    limit_bytes: int | None  # what the error names as allowed / the capacity
    step_bytes: int  # live at the failure and allocated during the recording (the step's own)
    state_bytes: int  # live since before the recording (model, optimizer state)
    top: list[Allocation]
    fragmentation: Fragmentation
    fits_in_free_block: bool  # the largest free block could have held the request
    error: str
    layers: LayerProgress | None = None  # how far the failed forward got through its layers


def _size(match: re.Match[str] | None) -> int | None:
    return int(float(match.group(1)) * _UNITS[match.group(2)]) if match else None


def limit_from_error(error: str) -> int | None:
    """The memory the process may use, as the error text names it (a cap, else the capacity)."""
    return _size(_ALLOWED.search(error)) or _size(_CAPACITY.search(error))


def oom_post_mortem(history: MemoryHistory, error: str = "") -> OomPostMortem | None:
    """The post-mortem of a history that ends in an `oom` event (None when it has none)."""
    ooms = [e for e in history.events if e.get("action") == "oom"]
    if not ooms and not _TRIED.search(error):
        return None
    requested = int(ooms[-1].get("size", 0)) if ooms else (_size(_TRIED.search(error)) or 0)
    live = history.live_at(history.n_events - 1)
    top = live.sort_values("bytes", ascending=False).head(TOP_ALLOCATIONS)
    allocations = []
    for _, row in top.iterrows():
        frames = history.frames[int(row["frame_i"])] if row["frame_i"] >= 0 else []
        allocations.append(
            Allocation(
                bytes=int(row["bytes"]),
                line=attr.user_line(frames) or NO_LINE,
                module=" › ".join(attr.module_path(frames)[-2:]),
            )
        )
    frag = fragmentation(history)
    return OomPostMortem(
        requested_bytes=requested,
        allocated_bytes=int(live["bytes"].sum()),
        limit_bytes=limit_from_error(error),
        step_bytes=int(live.loc[live["alloc_i"] >= 0, "bytes"].sum()),
        state_bytes=int(live.loc[live["alloc_i"] < 0, "bytes"].sum()),
        top=allocations,
        fragmentation=frag,
        fits_in_free_block=frag.largest_free_bytes >= requested,
        error=error.splitlines()[0] if error else "",
        layers=layers_run(history),
    )
