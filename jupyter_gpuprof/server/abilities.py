"""What a run can offer, decided once: which actions its views show, and why it shows no report.

The sidebar, the run view and the report's toolbar read these from the run's row and offer
only what works: no Download trace for a run that saved none (it answered 404), no failed run
in the "Compare with…" list, and the reason a run has no report as the view's first line
instead of "no trace file (status failed)".
"""

from __future__ import annotations

from typing import Literal

from jupyter_gpuprof.oneline import first_line
from jupyter_gpuprof.store.run import Run

Action = Literal["view_report", "download_trace", "open_perfetto", "compare"]
#: every action a run's row says it can or cannot do, in the order the views offer them
ACTIONS: tuple[Action, ...] = ("view_report", "download_trace", "open_perfetto", "compare")


def _has_trace(run: Run) -> bool:
    """Whether the run saved a trace; a folder deleted meanwhile has none (never an error:
    the list is polled while runs are deleted)."""
    try:
        return bool(run.trace_paths())
    except OSError:
        return False


def _offered(has_trace: bool, readable: bool, status: str) -> list[Action]:
    """The actions a run with these facts offers (the one rule, read once per row)."""
    out: list[Action] = []
    for action in ACTIONS:
        if action in ("download_trace", "open_perfetto"):
            ok = has_trace  # an unreadable trace is still worth opening elsewhere
        elif action == "view_report":  # a run still being written has no report yet (409)
            ok = readable and status != "running"
        else:  # compare: a finished run with steps
            ok = readable and status == "complete"
        if ok:
            out.append(action)
    return out


def abilities(run: Run) -> list[str]:
    """The actions `run` offers, in `ACTIONS` order (what its listing row carries)."""
    has_trace = _has_trace(run)
    return list(_offered(has_trace, has_trace and run.trace_error() is None, run.status))


def can(run: Run, action: Action) -> bool:
    """Whether `run` offers `action`: a trace to fetch, a report to draw, a side to compare."""
    return action in abilities(run)


def unavailable_reason(run: Run, offered: list[str] | None = None) -> str | None:
    """Why the run shows no report, as its view's first line (None when it shows one);
    `offered`: its `abilities`, when already known."""
    if "view_report" in (abilities(run) if offered is None else offered):
        return None
    error = first_line(run.meta.error)
    if run.status == "running":
        return "The run is still being written: its report appears when it finishes."
    if run.trace_error():
        return f"The trace cannot be read: {first_line(run.trace_error())}"
    if run.status == "failed":
        return f"The run failed: {error}" if error else "The run failed before saving a trace."
    if run.status == "interrupted":
        return "The run was interrupted before it saved a trace."
    return f"The run saved no trace: {error}" if error else "The run saved no trace."
