"""One profiled step's timeline events, sliced from a run's trace for a view that zooms in.

A report inlines the events of a few steps only (analysis/timeline_detail.py); the server's
``GET /runs/<id>/timeline?step=K`` answers for any other step with this function. The lanes are
built exactly as the report's, so the `lane` indices match its `timeline.lanes`.

`cached_step_timeline` (the server's) builds every step's reply once per trace, under one lock
per run so parallel requests wait for one build, and keeps them in the run folder
(`store.step_index`): a request then reads one step, not the whole trace.
"""

from __future__ import annotations

import json
import threading
import zlib
from collections.abc import Iterator
from typing import Any

from ..analysis.steps import step_table
from ..analysis.timeline import NameTable, lane_specs
from ..analysis.timeline_detail import PHASES, step_detail
from ..analysis.trace import TraceError, load_trace
from ..store import step_index
from ..store.run import Run


class NoSuchStep(ValueError):
    """The run has no profiled step of that number."""


def parse_step(value: str | None) -> int:
    """The `step` query value as a step number; ValueError with what to send otherwise."""
    if value is None or not (value.isascii() and value.isdigit() and len(value) < 10):
        raise ValueError("give the profiled step as ?step=N (a number from timeline.steps)")
    return int(value)


def run_step_timeline(run: Run, step: int) -> dict[str, Any]:
    """`{step, phases, strings, detail}` for profiled step `step` of the run's trace."""
    traces = run.trace_paths()
    if not traces:
        raise TraceError(f"{run.path}: the run has no trace file (status {run.status})")
    if len(traces) > 1:  # its timeline groups lanes by rank (analysis/timeline_ranks.py)
        raise NoSuchStep(f"run {run.id!r} has {len(traces)} ranks: its timeline carries no "
                         "per-step events; analyse one rank's trace to zoom into its events")
    trace = load_trace(traces[0])
    steps, window = step_table(trace)
    steps = steps[steps["step"] >= 0]

    strings = NameTable()
    detail = step_detail(trace, window, lane_specs(trace, window), steps, step, strings)
    if detail is None:
        known = ", ".join(str(int(s)) for s in steps["step"].tolist()[:20])
        raise NoSuchStep(f"run {run.id!r} has no profiled step {step} (steps: {known})")
    return {"step": step, "phases": list(PHASES), "strings": strings.items, "detail": detail}


_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def _lock(run: Run) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(str(run.path), threading.Lock())


def _every_step(run: Run) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each profiled step's reply, from one parse of the run's single trace."""
    trace = load_trace(run.trace_paths()[0])
    steps, window = step_table(trace)
    steps = steps[steps["step"] >= 0]
    lanes = lane_specs(trace, window)
    for step in (int(s) for s in steps["step"].tolist()):
        strings = NameTable()
        detail = step_detail(trace, window, lanes, steps, step, strings)
        if detail is not None:
            yield step, {"step": step, "phases": list(PHASES), "strings": strings.items,
                         "detail": detail}


def _no_such_step(run: Run, step: int, known: list[int]) -> NoSuchStep:
    listed = ", ".join(str(s) for s in known[:20])
    return NoSuchStep(f"run {run.id!r} has no profiled step {step} (steps: {listed})")


def cached_step_timeline(run: Run, step: int) -> dict[str, Any]:
    """`run_step_timeline`, answered from the run's step index (built on first use)."""
    traces = run.trace_paths()
    if len(traces) != 1:
        return run_step_timeline(run, step)  # its errors: no trace, several ranks
    with _lock(run):
        index = step_index.read_index(run)
        if index is None:
            signature = step_index.trace_signature(run)
            blobs = step_index.write_index(run, signature or [], _every_step(run))
            if step not in blobs:
                raise _no_such_step(run, step, sorted(blobs))
            reply: dict[str, Any] = json.loads(zlib.decompress(blobs[step]))
            return reply
    found = step_index.read_step(run, index, step)
    if found is None:
        raise _no_such_step(run, step, sorted(int(k) for k in index["steps"]))
    return found
