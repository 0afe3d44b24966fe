"""The timeline block of the report summary (`Summary.timeline`), split from model.py.

Same conventions as report/model.py: msgspec Structs that the JSON Schema and the front end's
TypeScript types are generated from.
"""

from __future__ import annotations

import msgspec

from .model_base import Model


class Lane(Model, omit_defaults=True):
    """One timeline lane: rectangles as parallel arrays (names are string-table indices)."""

    id: str
    label: str
    kind: str
    n_events: int
    start: list[float]
    dur: list[float]
    count: list[int]
    name: list[int]
    op: list[int] | msgspec.UnsetType = msgspec.UNSET  # GPU lanes: the launching op
    shape: list[int] | msgspec.UnsetType = msgspec.UNSET  # GPU lanes: its input shapes


class TimelineGaps(Model):
    """The longest GPU-idle gaps, as parallel arrays (µs from the window start)."""

    start: list[float]
    dur: list[float]
    cause: list[str]


class TimelineStep(Model):
    """One profiled step's span on the timeline (µs from the window start)."""

    step: int  # the profiler's own id (ProfilerStep#N)
    start: float
    end: float
    number: int = 0  # 1..n, as every view numbers the profiled steps (0: an older summary)
    dur_ms: float | None = None  # the step's time in `steps.profiled_ms` (None: older summary)


class StepDetail(Model, omit_defaults=True):
    """Every event of one profiled step as columns (`analysis.timeline_detail`).

    `lane` indexes `Timeline.lanes`, `name` the table's string list (`Timeline.strings`, or the
    `strings` of the run's timeline route), `phase` indexes `Timeline.phases`; times are µs
    from the step's start, in profiled time. A step with linked GPU work adds, per event (-1
    where none): `corr` (correlation id), `launch_us` and `launch_lane` (the host launch call,
    for a flow arrow), `op`, `shape` and `config` (launching op, its input shapes, the kernel's
    "grid [..] · block [..]", into the string list).
    """

    lane: list[int]
    start_us: list[float]
    dur_us: list[float]
    name: list[int]
    phase: list[int]
    corr: list[int] | msgspec.UnsetType = msgspec.UNSET
    launch_us: list[float] | msgspec.UnsetType = msgspec.UNSET
    launch_lane: list[int] | msgspec.UnsetType = msgspec.UNSET
    op: list[int] | msgspec.UnsetType = msgspec.UNSET
    shape: list[int] | msgspec.UnsetType = msgspec.UNSET
    config: list[int] | msgspec.UnsetType = msgspec.UNSET


class CounterTrack(Model):
    """A value sampled over time, drawn as a step line under the lanes
    (`analysis.timeline_counters`): from each `t` (µs from the window start) it reads `v`, in
    `unit` ("GB": GPU memory allocated)."""

    id: str
    label: str
    unit: str
    t: list[float]
    v: list[float]


class Timeline(Model):
    """The bounded level-of-detail timeline the views draw (`analysis.timeline`).

    Times are profiled time; `profiled_scale` is the profiled step over the real one (None
    when no unprofiled baseline was measured). `detail` has one entry per step of `steps`: its
    events when the report carries them, else null (a server loads them from the run).
    A multi-rank run's timeline (`analysis.timeline_ranks`) groups its lanes by rank ("rank
    R · …") on one axis; `ranks_aligned_by` says how the ranks' clocks were lined up:
    "collectives" (their end times), "step N" (that step's start), "recorded clocks".
    """

    dur_us: float
    names: list[str]
    lanes: list[Lane]
    n_rects: int
    n_events: int
    max_rects: int
    n_gaps: int
    gaps: TimelineGaps
    steps: list[TimelineStep]
    input_ranges: bool
    profiled_scale: float | None
    phases: list[str]
    strings: list[str]
    detail: list[StepDetail | None]
    ranks_aligned_by: str | None = None  # None: one rank's timeline
    counters: list[CounterTrack] = []  # empty: the trace samples no counter
