"""The summary's memory-over-the-step and OOM blocks as the views read them (`model_memory`)."""

from __future__ import annotations

from typing import NotRequired, TypedDict


class MemoryKindDoc(TypedDict):
    """One kind of memory at the peak (`model_memory.MemoryKind`)."""

    kind: str
    label: str
    bytes_at_peak: int
    high_bytes: int


class MemoryHolderDoc(TypedDict):
    """A line or module call and its bytes at the peak (`model_memory.MemoryHolder`)."""

    where: str
    bytes: int
    blocks: int


class MemoryFixDoc(TypedDict):
    """A priced memory fix (`model_memory.MemoryFix`)."""

    title: str
    saves_bytes: int
    time_ms: float | None
    time_note: str
    try_fix: NotRequired[str | None]  # summaries before the memory tries lack it


class TryMemoryDoc(TypedDict):
    """A memory fix's try: its peak against the control's (`model_cost.TryMemory`)."""

    peak_bytes: int | None
    control_peak_bytes: int | None
    change_bytes: int | None
    predicted_change_bytes: int | None
    step_time_change_pct: float | None


class MemoryPhaseDoc(TypedDict):
    """A forward / backward / optimizer range in the series' clock (`model_memory.MemoryPhase`)."""

    name: str
    start_us: int
    end_us: int


class MemoryOverStepDoc(TypedDict):
    """The peak explained (`model_memory.MemoryOverStep`)."""

    peak_bytes: int
    peak_us: int
    peak_phase: str
    kinds: list[MemoryKindDoc]
    lines: list[MemoryHolderDoc]
    modules: list[MemoryHolderDoc]
    reserved_bytes: int
    fixes: list[MemoryFixDoc]
    headroom_x: float | None
    known_addresses: bool
    events: int
    series_us: list[int]
    series_bytes: list[int]
    phases: list[MemoryPhaseDoc]


class OomAllocationDoc(TypedDict):
    """A large block live at the out-of-memory error (`model_memory.OomAllocation`)."""

    bytes: int
    line: str
    module: str


class OomDoc(TypedDict):
    """The out-of-memory post-mortem (`model_memory.OomPostMortem`)."""

    requested_bytes: int
    allocated_bytes: int
    limit_bytes: int | None
    top: list[OomAllocationDoc]
    reserved_bytes: int
    largest_free_bytes: int
    fixes: list[MemoryFixDoc]


class MemoryDoc(TypedDict):
    """`memory`: the one peak every view shows (`model.Memory`)."""

    peak_bytes: int | None
    gpu_total_bytes: int | None
    over_step: NotRequired[MemoryOverStepDoc | None]  # summaries before version 7 lack them
    oom: NotRequired[OomDoc | None]
