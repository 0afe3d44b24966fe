"""The report's memory over the step and out-of-memory post-mortem, as typed summary blocks."""

from __future__ import annotations

from .model_base import Model


class MemoryKind(Model):
    """One kind of memory (`analysis.memory_attribution.KINDS`): at the peak and its own high."""

    kind: str
    label: str  # what views print for it
    bytes_at_peak: int
    high_bytes: int


class MemoryHolder(Model):
    """A source line or module call and the bytes it holds at the peak."""

    where: str
    bytes: int
    blocks: int


class MemoryFix(Model):
    """A priced memory fix (`advice.memory_fixes.MemoryFix`)."""

    id: str
    title: str
    saves_bytes: int
    time_ms: float | None  # per step; None: not priced (time_note says why)
    time_note: str
    code: str
    try_fix: str | None = None  # the `--try` fix that measures it (checkpoint, amp)


class HeavyModule(Model):
    """The module call holding most saved activations: what checkpointing would wrap."""

    call: str
    saved_bytes: int
    calls: int


class MemoryPhase(Model):
    """A recorded forward / backward / optimizer range in the clock of `series_us` (lane bands)."""

    name: str
    start_us: int
    end_us: int


class MemoryOverStep(Model):
    """The allocator's history over the profiled steps: the peak explained and the fixes priced."""

    peak_bytes: int
    peak_us: int  # when the peak was reached, in the clock of `series_us`
    peak_phase: str  # forward / backward / optimizer / '' (outside the phase ranges)
    kinds: list[MemoryKind]  # in `KINDS` order; they sum to peak_bytes
    lines: list[MemoryHolder]  # the user's lines holding most at the peak
    modules: list[MemoryHolder]  # the innermost module calls holding most at the peak
    heavy: HeavyModule | None
    reserved_bytes: int
    slack_bytes: int  # reserved but unallocated at the end of the recording
    largest_free_bytes: int
    expandable_segments: bool
    fixes: list[MemoryFix]  # largest saving first
    headroom_x: float | None  # the batch could grow this many times before the GPU is full
    known_addresses: bool  # parameters / state named by address (else by lifetime only)
    events: int
    series_us: list[int]  # allocated bytes over time (thinned; the peak kept), for the lane
    series_bytes: list[int]
    phases: list[MemoryPhase]  # the phase ranges within the series, for the lane's bands


class OomAllocation(Model):
    """One of the largest blocks live at the out-of-memory error."""

    bytes: int
    line: str
    module: str


class OomPostMortem(Model):
    """What was allocated when an allocation failed, and what would have let it fit."""

    requested_bytes: int
    allocated_bytes: int
    limit_bytes: int | None
    step_bytes: int  # allocated during the failing step
    state_bytes: int  # held since before the recording (model, optimizer state)
    top: list[OomAllocation]
    reserved_bytes: int
    largest_free_bytes: int
    fits_in_free_block: bool
    error: str
    fixes: list[MemoryFix]
