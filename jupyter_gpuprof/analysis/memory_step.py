"""The step's memory explained: the peak, who holds it (kind, module, line), the allocator's slack.

One pass over a replayed history (`memory_history.replay`) with the kinds of
`memory_attribution.classify`; the result is plain data that advice prices and the report carries.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import memory_attribution as attr
from . import memory_whatif as whatif
from .autocast_held import held_autocast_saving
from .expandable_replay import expandable_reserved
from .memory_history import MemoryHistory
from .recompute_time import LayerOps, layer_ops

#: how many source lines / module calls the breakdown keeps
TOP_N = 5
#: the label of bytes whose stack has no user frame (autograd's engine thread, before the recording)
NO_LINE = "(no Python line: autograd engine or before the recording)"


@dataclass
class Holder:
    """A source line or module call and the bytes it holds at the peak."""

    where: str
    bytes: int
    blocks: int


@dataclass
class HeavyModule:
    """The repeated module call (the layer) holding most saved activations: what checkpointing
    would wrap."""

    call: str  # 'file:line' of the call in its parent's forward
    saved_bytes: int  # saved activations it holds at the end of the forward (all its calls)
    calls: int  # how many times that line called it in one forward (the layers, split per call)


@dataclass
class Fragmentation:
    """Reserved but unallocated memory at the end and at the peak, and the largest free block."""

    reserved_bytes: int
    allocated_bytes: int  # at the snapshot
    slack_bytes: int  # reserved - allocated at the snapshot
    largest_free_bytes: int  # largest inactive block of any segment
    peak_reserved_ratio: float | None  # reserved / peak allocated
    expandable: bool


@dataclass
class MemoryStep:
    """The step's memory: the peak, its kinds, the kinds' own highs, lines, modules, slack."""

    peak_bytes: int
    peak_us: int
    peak_phase: str  # forward / backward / optimizer / '' (outside the ranges)
    start_bytes: int
    by_kind: dict[str, int]  # bytes of each kind live at the peak
    kind_high: dict[str, int]  # each kind's own highest bytes over the history
    lines: list[Holder]
    modules: list[Holder]
    heavy: HeavyModule | None
    fragmentation: Fragmentation
    events: int
    known_addresses: bool
    checkpointed_peak_bytes: int | None = None  # the peak replayed with the layers checkpointed
    #: each checkpointed layer's ops: all, and those after its last saved tensor (not re-run)
    layer_ops: LayerOps | None = None
    gradients_kept_bytes: int = 0  # gradients at the peak alive through an optimizer step
    #: what autocast would also free at a backward peak outside the graph's saves
    autocast_held_bytes: int = 0
    #: what the allocator would reserve with expandable segments (None: it already has them)
    expandable_reserved_bytes: int | None = None
    series_us: list[int] = field(default_factory=list)  # a thinned allocated-over-time line
    series_bytes: list[int] = field(default_factory=list)


def _phase_at(history: MemoryHistory, us: int) -> str:
    for p in history.phases:
        if p.name in attr.LASTING and p.start_us <= us <= p.end_us:
            return p.name
    return ""


def fragmentation(history: MemoryHistory) -> Fragmentation:
    """Reserved vs allocated from the snapshot's segments."""
    allocated = largest = 0
    for seg in history.segments:
        for blk in seg.get("blocks") or []:
            size = int(blk.get("size", 0))
            if blk.get("state") == "active_allocated":
                allocated += size
            elif blk.get("state") == "inactive":
                largest = max(largest, size)
    peak = history.peak_bytes
    return Fragmentation(
        reserved_bytes=history.reserved_bytes,
        allocated_bytes=allocated,
        slack_bytes=max(history.reserved_bytes - allocated, 0),
        largest_free_bytes=largest,
        peak_reserved_ratio=history.reserved_bytes / peak if peak else None,
        expandable=history.expandable,
    )


def _holders(keys: pd.Series, bytes_: pd.Series, n: int = TOP_N) -> list[Holder]:
    g = bytes_.groupby(keys).agg(["sum", "count"]).sort_values("sum", ascending=False).head(n)
    return [Holder(str(k), int(r["sum"]), int(r["count"])) for k, r in g.iterrows()]


def _heavy(history: MemoryHistory, kinds: pd.Series) -> HeavyModule | None:
    """Checkpointing's unit: at the end of the forward whose saved activations were highest, the
    deepest call holding half of them, widened to the layer it is part of (`whatif.layer_call`)."""
    b = history.blocks
    saved = b[kinds == "saved_activations"]
    forwards = [p for p in history.phases if p.name == attr.FORWARD]
    if saved.empty or not forwards:
        return None
    best = max(
        forwards,
        key=lambda p: int(
            saved.loc[
                (saved["alloc_us"] >= p.start_us) & (saved["alloc_us"] <= p.end_us), "bytes"
            ].sum()
        ),
    )
    mine = saved[(saved["alloc_us"] >= best.start_us) & (saved["alloc_us"] <= best.end_us)]
    paths = pd.Series(
        [attr.module_path(history.frames[i]) if i >= 0 else () for i in mine["frame_i"]],
        index=mine.index,
    )
    call, _ = attr.heaviest_module(paths, mine["bytes"])
    if not call:
        return None
    call, calls = whatif.layer_call(history, mine, call)
    held = int(mine.loc[paths.map(lambda p: call in p), "bytes"].sum())
    return HeavyModule(call=call, saved_bytes=held, calls=max(calls, 1))


def _thin(history: MemoryHistory, points: int = 400) -> tuple[list[int], list[int]]:
    """At most `points` (time, bytes) pairs keeping each bucket's highest, so the peak survives."""
    n = history.n_events
    if not n:
        return [], []
    edges = np.linspace(0, n, min(points, n) + 1).astype(int)
    idx = [
        int(lo + np.argmax(history.allocated[lo:hi]))
        for lo, hi in zip(edges[:-1], edges[1:], strict=True)
        if hi > lo
    ]
    return [int(history.event_us[i]) for i in idx], [int(history.allocated[i]) for i in idx]


def memory_step(history: MemoryHistory, known: attr.KnownAddresses | None = None) -> MemoryStep:
    """The peak of a replayed history explained by kind, source line and module."""
    kinds = attr.classify(history, known)
    series = attr.kind_series(history, kinds)
    i = history.peak_i
    live = history.live_at(i)
    frames = [history.frames[k] if k >= 0 else [] for k in live["frame_i"]]
    lines = pd.Series([attr.user_line(f) or NO_LINE for f in frames], index=live.index)
    modules = pd.Series([(attr.module_path(f) or ("",))[-1] for f in frames], index=live.index)
    has_module = modules != ""
    us, held = _thin(history)
    heavy = _heavy(history, kinds)
    return MemoryStep(
        peak_bytes=history.peak_bytes,
        peak_us=history.peak_us,
        peak_phase=_phase_at(history, history.peak_us),
        start_bytes=history.start_bytes,
        by_kind={k: int(live.loc[kinds[live.index] == k, "bytes"].sum()) for k in attr.KINDS},
        kind_high={k: int(v.max()) if len(v) else 0 for k, v in series.items()},
        lines=_holders(lines, live["bytes"]),
        modules=_holders(modules[has_module], live.loc[has_module, "bytes"]),
        heavy=heavy,
        fragmentation=fragmentation(history),
        events=history.n_events,
        known_addresses=bool(known),
        checkpointed_peak_bytes=whatif.checkpointed_peak(history, kinds, heavy.call)
        if heavy
        else None,
        layer_ops=layer_ops(history, kinds, heavy.call) if heavy else None,
        gradients_kept_bytes=whatif.gradients_kept_across_steps(history, kinds),
        expandable_reserved_bytes=None if history.expandable else expandable_reserved(history),
        autocast_held_bytes=held_autocast_saving(
            history, (kinds == "saved_activations").to_numpy(),
            (kinds == "temporaries").to_numpy()),
        series_us=us,
        series_bytes=held,
    )
