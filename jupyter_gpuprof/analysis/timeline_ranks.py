"""One timeline for a multi-rank run: each rank's lanes as a group, on one aligned time axis.

A rank's trace is parsed in its own worker (analysis/rank_loading.py) and dropped there, so each
worker reduces its rank to `RankLanes`: its main thread and busiest GPU streams, binned like
the single-trace timeline (analysis/timeline.py) within its share of the rectangle budget.
`merge_rank_lanes` then puts the groups on one clock. Ranks on different hosts have clocks
that disagree, so each rank's clock offset comes from its collectives (every rank leaves a
collective at nearly the same instant: `Distributed.ranks.clock_offset_us`); without matched
collectives the ranks are lined up at the start of the first step they all profiled. Idle gaps
are per GPU, so none are drawn across the ranks' lanes; a zoomed step shows the bounded lanes
(no per-step events inline: the server's step route reads one trace).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .summary import Analysis
from .timeline import (
    MAX_GPU_STREAMS,
    MAX_RECTS,
    MIN_LANE_RECTS,
    Lane,
    NameTable,
    StepMark,
    TimelineData,
    build_timeline,
    lane_specs,
)
from .timeline_detail import PHASES, StepEvents
from .trace import Trace

#: most lanes over all ranks (a rank keeps its main thread and at least one GPU stream)
MAX_RANK_LANES = 24
#: most ranks drawn (the reference rank and the one the others wait for always among them)
MAX_TIMELINE_RANKS = 16


@dataclass
class RankLanes:
    """One rank's lanes, times from its window start, and where that start is on its clock."""

    rank: int
    origin_us: float  # absolute time (this rank's clock) of its window start
    timeline: TimelineData  # build_timeline's, without per-step events


def rank_budget(n_ranks: int) -> tuple[int, int]:
    """(rectangles, GPU stream lanes) one rank of `n_ranks` may ship."""
    shown = max(1, min(n_ranks, MAX_TIMELINE_RANKS))
    streams = max(1, min(MAX_GPU_STREAMS, MAX_RANK_LANES // shown - 1))
    return max(MIN_LANE_RECTS * (1 + streams), MAX_RECTS // shown), streams


def rank_lanes(trace: Trace, a: Analysis, rank: int, n_ranks: int) -> RankLanes:
    """Reduce one rank's trace to its lane group (main thread, busiest GPU streams)."""
    rects, n_streams = rank_budget(n_ranks)
    specs = lane_specs(trace, a.window)
    cpu = sorted((s for s in specs if s.kind == "cpu"), key=lambda s: s.label != "main thread")[:1]
    gpu = sorted((s for s in specs if s.kind == "gpu"),
                 key=lambda s: -float(s.rows["dur_us"].sum()))[:n_streams]
    order = {id(s): i for i, s in enumerate(specs)}
    keep = sorted(cpu + gpu, key=lambda s: order[id(s)])
    scale = a.real.inflation if a.real.source == "baseline" else None
    tl = build_timeline(trace, a.window, a.gaps, a.steps, max_rects=rects, profiled_scale=scale,
                        specs=keep, with_detail=False)
    return RankLanes(rank, a.window.start_us + trace.info.t0_us, tl)


def _first_common_step(groups: Sequence[RankLanes]) -> int | None:
    """The first step number every rank profiled (None: no step in common)."""
    common = set.intersection(*({s["step"] for s in g.timeline["steps"]} for g in groups))
    return min(common) if common else None


def _step_start(g: RankLanes, step: int) -> float:
    """Absolute time (this rank's clock) at which `step` starts."""
    return g.origin_us + float(next(s["start"] for s in g.timeline["steps"] if s["step"] == step))


def rank_shifts(groups: Sequence[RankLanes], offsets: Mapping[int, float] | None
                ) -> tuple[list[float], str]:
    """Each group's window start on the common axis (µs, earliest 0) and how they were aligned.

    `offsets`: rank -> clock offset from the matched collectives (None or empty: none matched).
    """
    if offsets:
        starts = [g.origin_us - float(offsets.get(g.rank, 0.0)) for g in groups]
        how = "collectives"
    elif (step := _first_common_step(groups)) is not None:
        ref = _step_start(groups[0], step)
        starts = [g.origin_us - (_step_start(g, step) - ref) for g in groups]
        how = f"step {step}"
    else:
        starts, how = [g.origin_us for g in groups], "recorded clocks"
    lo = min(starts)
    return [s - lo for s in starts], how


def _shown(groups: Sequence[RankLanes], waited_for: int | None) -> list[RankLanes]:
    """At most `MAX_TIMELINE_RANKS` groups, in rank order, keeping the first and the waited-for."""
    groups = sorted(groups, key=lambda g: g.rank)
    if len(groups) <= MAX_TIMELINE_RANKS:
        return groups
    must = [g for g in groups if g.rank in (groups[0].rank, waited_for)]
    rest = [g for g in groups if g not in must][:MAX_TIMELINE_RANKS - len(must)]
    return sorted(must + rest, key=lambda g: g.rank)


def merge_rank_lanes(groups: Sequence[RankLanes], offsets: Mapping[int, float] | None = None,
                     waited_for: int | None = None) -> TimelineData | None:
    """The multi-rank timeline (same shape as `build_timeline`'s): lanes "rank R · …" grouped
    by rank on one axis; steps are the first shown rank's. None without any lane."""
    groups = _shown([g for g in groups if g.timeline["lanes"]], waited_for)
    if not groups:
        return None
    shifts, how = rank_shifts(groups, offsets)
    names = NameTable()
    lanes: list[Lane] = []
    for g, shift in zip(groups, shifts, strict=True):
        table = g.timeline["names"]
        for lane in g.timeline["lanes"]:
            moved: Lane = {**lane, "id": f"rank{g.rank}:{lane['id']}",
                           "label": f"rank {g.rank} · {lane['label']}",
                           "start": [round(t + shift, 2) for t in lane["start"]]}
            moved["name"] = [names.code(table[i]) for i in lane["name"]]
            if "op" in lane:
                moved["op"] = [names.code(table[i]) for i in lane["op"]]
            if "shape" in lane:
                moved["shape"] = [names.code(table[i]) for i in lane["shape"]]
            lanes.append(moved)
    ref, ref_shift = groups[0].timeline, shifts[0]
    steps: list[StepMark] = [
        {**s, "start": round(s["start"] + ref_shift, 2), "end": round(s["end"] + ref_shift, 2)}
        for s in ref["steps"]]
    detail: list[StepEvents | None] = [None] * len(steps)
    return {
        "dur_us": round(max(g.timeline["dur_us"] + s for g, s in zip(groups, shifts,
                                                                   strict=True)), 2),
        "names": names.items, "lanes": lanes,
        "n_rects": sum(len(lane["start"]) for lane in lanes),
        "n_events": sum(lane["n_events"] for lane in lanes),
        "max_rects": sum(g.timeline["max_rects"] for g in groups), "n_gaps": 0,
        "gaps": {"start": [], "dur": [], "cause": []}, "steps": steps, "input_ranges": False,
        "profiled_scale": ref["profiled_scale"], "phases": list(PHASES), "strings": [],
        "detail": detail, "ranks_aligned_by": how,
        "counters": [],  # each rank's memory track would need its own shift: one rank's only
    }
