"""Run rows for the sidebar: one small JSON-ready dict per run folder of the store."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

from jupyter_gpuprof.store.run import Run
from jupyter_gpuprof.store.runs import BrokenRun, RunStore

BROKEN = "broken"


class RunListing(TypedDict):
    """One row of ``GET /jupyter-gpuprof/runs``."""

    id: str
    name: str
    created: str | None
    status: str
    verdict: str | None
    error: str | None


def _verdict(summary: dict[str, Any] | None) -> str | None:
    """The one-line verdict of a cached ``summary.json`` (``Report.to_json()``), if any."""
    verdict = (summary or {}).get("verdict")
    if isinstance(verdict, dict):
        for key in ("summary", "category"):
            if isinstance(verdict.get(key), str) and verdict[key]:
                return str(verdict[key])
    return None


def describe_run(entry: Run | BrokenRun) -> RunListing:
    """One sidebar row; an unreadable folder is a row with status ``broken``, never an error."""
    if isinstance(entry, BrokenRun):
        first_line = entry.error.splitlines()[0] if entry.error else "unreadable"
        return RunListing(
            id=entry.id, name=entry.id, created=None, status=BROKEN, verdict=None, error=first_line
        )
    meta = entry.meta
    return RunListing(
        id=entry.id,
        name=meta.name or entry.id,
        created=meta.created or None,
        status=meta.status or "unknown",
        verdict=_verdict(entry.read_summary()),
        error=meta.error.splitlines()[0] if isinstance(meta.error, str) and meta.error else None,
    )


def list_runs(root: Path) -> list[RunListing]:
    """All runs under ``root``, newest first (the store's order); a missing root is empty."""
    return [describe_run(entry) for entry in RunStore(root).list()]
