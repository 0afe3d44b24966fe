"""Per-step event tables behind the timeline: the real events a zoomed-in view draws.

The aggregated lanes (analysis/timeline.py) bound the full view; once a window holds one step,
a view needs every event of that step. Each profiled step becomes a compact column table
(`lane`, `start_us` from the step start, `dur_us`, `name` into a string table, `phase` into
`PHASES`). A report inlines only a few steps (`MAX_INLINE_STEPS`, `MAX_INLINE_EVENTS`) to keep a
saved notebook small; a server slices any other step from the run's trace (`step_detail`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any, NotRequired, Protocol, TypedDict

import numpy as np
import pandas as pd

from .hostwork import INPUT_MARKERS, INPUT_PHASES, is_input_range
from .intervals import union
from .name_masks import containing, hits_in_order, per_name
from .steps import Window
from .trace import Trace

#: phase of an event, by index (the detail tables' `phase` column)
PHASES = ("forward", "backward", "optimizer", "data", "other")
#: most steps whose events a report carries inline (the rest load from the run on demand)
MAX_INLINE_STEPS = 2
#: most events over all inline steps (about 40 bytes each once encoded)
MAX_INLINE_EVENTS = 30_000


class StepEvents(TypedDict):
    """One step's events as columns: lane index, start (µs from the step), duration, name
    (into the string table) and phase (into `PHASES`)."""

    lane: list[int]
    start_us: list[float]
    dur_us: list[float]
    name: list[int]
    phase: list[int]
    # GPU work's links, one entry per event (-1 / "" where none): what Perfetto and Nsight
    # Systems show on a click and draw as a flow arrow
    corr: NotRequired[list[int]]  # correlation id (launch <-> GPU activity)
    launch_us: NotRequired[list[float]]  # the host launch call's start, µs from the step start
    launch_lane: NotRequired[list[int]]  # the lane of the thread that launched it
    op: NotRequired[list[int]]  # the launching op, into the string table
    shape: NotRequired[list[int]]  # its input shapes
    config: NotRequired[list[int]]  # "grid [80, 1, 1] · block [128, 1, 1]"


class StringTable(Protocol):
    """Interns names: index of each name in one shared list."""

    def codes(self, names: np.ndarray) -> list[int]: ...


class LaneRows(Protocol):
    """What the detail needs of a timeline lane: its id ("cpu:<tid>" for a thread), kind and
    events."""

    id: str
    kind: str
    rows: pd.DataFrame


def _phase_of_range(name: str) -> int:
    """Phase index a host range stands for (-1: none): the capture's own ranges, PyTorch's."""
    low = name.lower()
    if low in PHASES[:4]:
        return PHASES.index(low)
    if is_input_range(name):
        return PHASES.index("data")
    if name.startswith(("Optimizer.step#", "Optimizer.zero_grad#")):
        return PHASES.index("optimizer")
    if name.startswith("autograd::engine::evaluate_function"):
        return PHASES.index("backward")
    return -1


#: what every name with a phase contains, short phase words aside (`_phases_of_ranges`)
_PHASE_NEEDLES = (INPUT_MARKERS[-1], "Optimizer.", "autograd::engine::evaluate_function")
_PHASE_WORD_LEN = max(len(w) for w in (*PHASES[:4], *INPUT_PHASES))


def _phases_of_ranges(names: np.ndarray) -> np.ndarray:
    """`_phase_of_range` of each name, the rule run only where it can find a phase: a name
    longer than every phase word (lower-casing never shortens one) that holds none of the
    needles has none (666 k distinct op names paid the rule each, twice per report)."""
    out = np.full(len(names), -1, dtype=np.int64)
    short = np.fromiter(map(len, names), dtype=np.int64, count=len(names)) <= _PHASE_WORD_LEN
    todo = hits_in_order(len(names), np.flatnonzero(short), containing(names, _PHASE_NEEDLES))
    out[todo] = [_phase_of_range(str(n)) for n in names[todo]]
    return out


def _inside(t: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Mask of times inside the union of [starts, ends)."""
    if len(starts) == 0:
        return np.zeros(len(t), dtype=bool)
    s, e = union(starts, ends)
    i = np.searchsorted(s, t, side="right") - 1
    return (i >= 0) & (t < e[np.clip(i, 0, None)])


def phase_at(trace: Trace, window: Window, steps: pd.DataFrame | None,
             t: np.ndarray) -> np.ndarray:
    """Phase index of each host time `t`: later phases in PHASES win where ranges nest.

    Without the capture's "forward" ranges (a third-party trace), the stretch of each step
    before its first backward range counts as forward.
    """
    rng = trace.of("user_annotation", "cpu_op", columns=["name", "pid", "ts_us", "end_us"])
    if window.pid >= 0:
        rng = rng[rng["pid"].to_numpy() == window.pid]
    phase_of = per_name(rng, _phases_of_ranges, -1, np.int64)
    ts, end = rng["ts_us"].to_numpy(dtype=float), rng["end_us"].to_numpy(dtype=float)
    out = np.full(len(t), PHASES.index("other"), dtype=np.int64)
    fwd = PHASES.index("forward")
    if not (phase_of == fwd).any() and steps is not None and len(steps):
        bwd = np.sort(ts[phase_of == PHASES.index("backward")])
        s0 = steps["cpu_start_us"].to_numpy(dtype=float)
        first_bwd = bwd[np.clip(np.searchsorted(bwd, s0), 0, max(len(bwd) - 1, 0))] \
            if len(bwd) else s0
        has = first_bwd > s0
        out[_inside(t, s0[has], first_bwd[has])] = fwd
    for p in range(len(PHASES) - 1):  # forward, backward, optimizer, data: later ones win
        sel = phase_of == p
        out[_inside(t, ts[sel], end[sel])] = p
    return out


class _Lookups:
    """What the step tables look up, built once per trace however many steps and lanes ask:
    each launch call by correlation id, each op by External id."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace

    @cached_property
    def calls(self) -> pd.DataFrame:
        """The launch calls, one per correlation id, indexed by it."""
        calls = self.trace.of("cuda_runtime", "cuda_driver",
                              columns=["correlation", "ts_us", "tid"])
        calls = calls[calls["correlation"] >= 0].drop_duplicates("correlation")
        return pd.DataFrame({"ts_us": calls["ts_us"].to_numpy(dtype=float),
                             "tid": calls["tid"].to_numpy()}, index=calls["correlation"])

    @cached_property
    def ops(self) -> pd.DataFrame:
        """Each op's name and input shapes as text, indexed by its External id."""
        ops = self.trace.of("cpu_op", columns=["name", "external_id", "input_dims"])
        ops = ops[ops["external_id"] >= 0].drop_duplicates("external_id")
        return pd.DataFrame({"name": ops["name"].astype(str).to_numpy(),
                             "dims": ops["input_dims"].astype(str).to_numpy()},
                            index=ops["external_id"])

    def launch_times(self, gpu: pd.DataFrame) -> np.ndarray:
        """Host launch time of each GPU row (its own start where the launch is not recorded)."""
        launch = gpu["correlation"].map(self.calls["ts_us"]).to_numpy(dtype=float)
        return np.where(np.isnan(launch), gpu["ts_us"].to_numpy(dtype=float), launch)

    def owner_times(self, spec: LaneRows) -> np.ndarray:
        """Time that decides an event's step: the host launch for GPU work, else its start."""
        if spec.kind == "gpu":
            return self.launch_times(spec.rows)
        return spec.rows["ts_us"].to_numpy(dtype=float)


def _texts(mapped: pd.Series) -> np.ndarray:
    """A looked-up text column with "" where the lookup found nothing."""
    out = mapped.astype(object)
    return out.where(out.notna(), "").to_numpy(dtype=object)


def _links(look: _Lookups, lanes: Sequence[LaneRows], part: pd.DataFrame, lo: float,
           strings: StringTable) -> dict[str, list[Any]]:
    """The link columns of GPU rows `part`: correlation, host launch (time from `lo`, lane),
    launching op and its shapes, launch grid and block."""
    corr = pd.Series(part["correlation"].to_numpy())
    at = corr.map(look.calls["ts_us"])
    tid = corr.map(look.calls["tid"])
    lane_of = {spec.id: i for i, spec in enumerate(lanes)}
    lane = [lane_of.get(f"cpu:{int(t)}", -1) if t == t else -1 for t in tid.tolist()]
    ext = pd.Series(part["external_id"].to_numpy())
    op = ext.map(look.ops["name"])
    dims = ext.map(look.ops["dims"])
    grid = part["grid"].astype(str).to_numpy()
    block = part["block"].astype(str).to_numpy()
    config = np.where(grid != "", "grid " + grid.astype(object) + " · block " + block.astype(
        object), "")
    return {"corr": corr.tolist(),
            "launch_us": np.round(np.where(at.isna(), -1.0, at.to_numpy(dtype=float) - lo),
                                  2).tolist(),
            "launch_lane": lane,
            "op": strings.codes(_texts(op)),
            "shape": strings.codes(_texts(dims)),
            "config": strings.codes(config.astype(object))}


def _table(trace: Trace, window: Window, steps: pd.DataFrame | None, lanes: Sequence[LaneRows],
           lo: float, hi: float, strings: StringTable, look: _Lookups,
           owners: Sequence[np.ndarray]) -> StepEvents:
    """The events of all lanes the host started in [lo, hi), as columns (µs from `lo`).

    GPU work belongs to the step that launched it, even when it runs after the next step's
    host side began (a GPU-bound step queues ahead), and takes its phase from the launch.
    """
    lane_ix, start, dur, names, host_t = [], [], [], [], []
    links: dict[str, list[Any]] = {k: [] for k in ("corr", "launch_us", "launch_lane", "op",
                                                   "shape", "config")}
    none = {"corr": -1, "launch_us": -1.0, "launch_lane": -1, "op": -1, "shape": -1,
            "config": -1}
    for i, spec in enumerate(lanes):
        owner = owners[i]
        sel = (owner >= lo) & (owner < hi)
        if not sel.any():
            continue
        part = spec.rows[sel]
        lane_ix.append(np.full(int(sel.sum()), i))
        start.append(part["ts_us"].to_numpy(dtype=float) - lo)
        dur.append(part["dur_us"].to_numpy(dtype=float))
        names.append(part["name"].astype(str).to_numpy())
        host_t.append(owner[sel])
        if spec.kind == "gpu":
            for k, v in _links(look, lanes, part, lo, strings).items():
                links[k] += v
        else:
            for k in links:
                links[k] += [none[k]] * len(part)
    if not lane_ix:
        return {"lane": [], "start_us": [], "dur_us": [], "name": [], "phase": []}
    t = np.concatenate(host_t)
    out: StepEvents = {"lane": np.concatenate(lane_ix).tolist(),
                       "start_us": np.round(np.concatenate(start), 2).tolist(),
                       "dur_us": np.round(np.concatenate(dur), 2).tolist(),
                       "name": strings.codes(np.concatenate(names)),
                       "phase": phase_at(trace, window, steps, t).tolist()}
    if any(c >= 0 for c in links["corr"]):  # a GPU lane with linked work: the link columns
        out.update(links)  # type: ignore[typeddict-item]
    return out


def step_bounds(steps: pd.DataFrame, window: Window) -> list[tuple[int, float, float]]:
    """(step, start, end) per profiled step: a step owns what starts before the next one."""
    s = steps["cpu_start_us"].to_numpy(dtype=float)
    ends = np.concatenate((s[1:], [window.end_us]))
    return [(int(k), float(a), float(b))
            for k, a, b in zip(steps["step"].to_numpy(), s, ends, strict=True)]


def _count(owners: Sequence[np.ndarray], lo: float, hi: float) -> int:
    """Events of all lanes the host started in [lo, hi) (`owners`: their owner times)."""
    return sum(int(np.count_nonzero((t >= lo) & (t < hi))) for t in owners)


def inline_detail(trace: Trace, window: Window, lanes: Sequence[LaneRows],
                  steps: pd.DataFrame | None,
                  strings: StringTable) -> list[StepEvents | None]:
    """One entry per profiled step: its table for the most typical steps that fit, else None.

    The steps closest to the median step time go first (a typical step is what one studies).
    """
    if steps is None or not len(steps):
        return []
    bounds = step_bounds(steps, window)
    out: list[StepEvents | None] = [None] * len(bounds)
    dur = np.array([b - a for _, a, b in bounds])
    order = np.argsort(np.abs(dur - np.median(dur)), kind="stable")
    budget = MAX_INLINE_EVENTS
    look = _Lookups(trace)
    owners = [look.owner_times(spec) for spec in lanes]
    for i in order[:MAX_INLINE_STEPS]:
        _, lo, hi = bounds[int(i)]
        n = _count(owners, lo, hi)
        if n > budget:
            continue
        budget -= n
        out[int(i)] = _table(trace, window, steps, lanes, lo, hi, strings, look, owners)
    return out


def step_detail(trace: Trace, window: Window, lanes: Sequence[LaneRows], steps: pd.DataFrame,
                step: int, strings: StringTable) -> StepEvents | None:
    """The event table of profiled step number `step` (None: no such step)."""
    for k, lo, hi in step_bounds(steps, window):
        if k == step:
            look = _Lookups(trace)
            return _table(trace, window, steps, lanes, lo, hi, strings, look,
                          [look.owner_times(spec) for spec in lanes])
    return None
