"""One profiled step's timeline events, sliced from a run's trace for a view that zooms in.

A report inlines the events of a few steps only (analysis/timeline_detail.py); the server's
``GET /runs/<id>/timeline?step=K`` answers for any other step with this function. The lanes are
built exactly as the report's, so the `lane` indices match its `timeline.lanes`.
"""

from __future__ import annotations

from typing import Any

from ..analysis.steps import step_table
from ..analysis.timeline import NameTable, lane_specs
from ..analysis.timeline_detail import PHASES, step_detail
from ..analysis.trace import TraceError, load_trace
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
