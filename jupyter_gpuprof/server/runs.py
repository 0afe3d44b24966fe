"""Run rows for the sidebar: one small JSON-ready dict per run folder, filtered and paginated."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import TypedDict

import msgspec

from jupyter_gpuprof.oneline import first_line
from jupyter_gpuprof.stats import describe_steps
from jupyter_gpuprof.store.listing import cached_row
from jupyter_gpuprof.store.run import Run
from jupyter_gpuprof.store.runs import BrokenRun, RunStore

from .abilities import abilities, unavailable_reason

BROKEN = "broken"
DEFAULT_LIMIT = 100
MAX_COMMAND = 200  # characters of the command a row carries (a cell's first line can be long)
MAX_LIMIT = 1000


class BadQuery(ValueError):
    """A query parameter the routes cannot use (mapped to HTTP 400)."""


class RunListing(TypedDict):
    """One row of ``GET /jupyter-gpuprof/runs`` (see docs/rest-api.md)."""

    id: str
    name: str
    created: str | None
    status: str
    verdict: str | None
    verdict_category: str | None
    error: str | None
    tags: list[str]
    gpu: str | None
    world_size: int | None
    median_ms: float | None
    p95_ms: float | None
    #: how many step times median_ms and p95_ms rest on (the summary's `steps.n`: the
    #: baseline's when measured); not the profiled steps, which the summary's ranks count
    n_step_times: int
    has_summary: bool
    #: what the views offer for this run (server/abilities.py: view_report, download_trace…)
    abilities: list[str]
    #: why the run shows no report, its view's first line (None when it shows one)
    unavailable: str | None
    #: the command line it ran (or the profiled cell's first line), which search covers
    command: str | None
    #: what the run's reader dropped as wrongly shaped (meta.json's first problem, and how
    #: many more): the run still shows what was left
    warning: str | None


class Facets(TypedDict):
    """The values the list's filters offer, over every run (not only the page)."""

    verdicts: list[str]
    tags: list[str]
    statuses: list[str]


class RunPage(TypedDict):
    """``GET /jupyter-gpuprof/runs``: one page of rows and the filters' values."""

    runs: list[RunListing]
    total: int
    offset: int
    limit: int
    facets: Facets


def _block(summary: Mapping[str, object] | None, key: str) -> Mapping[str, object]:
    """One object of a cached summary ({} when absent): its figures are then narrowed."""
    value = (summary or {}).get(key)
    return value if isinstance(value, dict) else {}


def _verdict(summary: Mapping[str, object] | None) -> tuple[str | None, str | None]:
    """The verdict line and category of a cached ``summary.json`` (``Report.to_json()``)."""
    verdict = _block(summary, "verdict")
    if not verdict:
        return None, None
    text = verdict.get("summary") or verdict.get("category")
    category = verdict.get("category")
    return (str(text) if text else None, str(category) if category else None)


def _num(x: object) -> float | None:
    """A finite number, else None (the median of [1e308, 1e308] overflows to inf)."""
    if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x):
        return float(x)
    return None


def _text(x: object) -> str | None:
    """A string figure of a cached summary, else None."""
    return x if isinstance(x, str) else None


def build_row(run: Run) -> RunListing:
    """A run's row from its meta.json and (when present) summary.json."""
    from jupyter_gpuprof.report import cached_summary  # validated against the report model

    meta = run.meta
    summary = cached_summary(run)
    verdict, category = _verdict(summary)
    steps = _block(summary, "steps")
    median, p95, n = _num(steps.get("median_ms")), _num(steps.get("p95_ms")), steps.get("n")
    base = [float(v) for v in meta.baseline.get("step_ms") or [] if _num(v) is not None]
    if median is None and base:  # not analysed yet: the baseline alone gives the step time
        st = describe_steps(base)
        median, p95, n = _num(st["median_ms"]), _num(st["p95_ms"]), st["n"]
    source = _block(summary, "source")
    trace_error = run.trace_error()
    offered = abilities(run)
    return RunListing(
        id=run.id,
        name=meta.name or run.id,
        created=meta.created or None,
        status=BROKEN if trace_error else (run.status or "unknown"),
        verdict=verdict,
        verdict_category=category,
        error=first_line(trace_error or meta.error),
        tags=list(meta.tags),
        gpu=_text(source.get("gpu")) or meta.env.get("gpu_name") or None,
        world_size=meta.world_size,
        median_ms=median,
        p95_ms=p95,
        n_step_times=int(n) if isinstance(n, int) else 0,
        has_summary=summary is not None,
        abilities=offered,
        unavailable=unavailable_reason(run, offered),
        command=(first_line(meta.code) or "")[:MAX_COMMAND] or None,
        warning=_warning(meta.problems),
    )


def _warning(problems: list[str]) -> str | None:
    """The row's one line for what the reader dropped: the first problem, and how many more."""
    if not problems:
        return None
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{first_line(problems[0])}{more}"


def describe_run(entry: Run | BrokenRun) -> RunListing:
    """One sidebar row; an unreadable folder is a row with status ``broken``, never an error."""
    if isinstance(entry, BrokenRun):
        return RunListing(
            id=entry.id, name=entry.id, created=None, status=BROKEN, verdict=None,
            verdict_category=None, error=first_line(entry.error) or "unreadable", tags=[],
            gpu=None, world_size=None, median_ms=None, p95_ms=None, n_step_times=0,
            has_summary=False, abilities=[], command=None, warning=None,
            unavailable=f"The run folder cannot be read: {first_line(entry.error) or 'unreadable'}",
        )
    try:
        row = cached_row(entry, build_row)
        try:
            checked = msgspec.convert(row, RunListing)
        except msgspec.ValidationError:  # a tampered listing.json: rebuild from the run
            checked = build_row(entry)
        return checked
    except (OSError, ValueError, TypeError) as e:  # a half-written summary must not break the list
        return {**describe_run(BrokenRun(entry.path, f"unreadable run: {e}")),
                "name": entry.meta.name or entry.id}


def _matches(row: RunListing, q: str, verdict: str, tag: str, status: str) -> bool:
    if verdict and row["verdict_category"] != verdict:
        return False
    if tag and tag not in row["tags"]:
        return False
    if status and row["status"] != status:
        return False
    if q:
        hay = " ".join([row["id"], row["name"], row["verdict"] or "", row["gpu"] or "",
                        row["command"] or "", *row["tags"]]).lower()
        return all(word in hay for word in q.lower().split())
    return True


def _int(value: str | None, default: int, lo: int, hi: int, name: str) -> int:
    if value is None or value == "":
        return default
    try:
        n = int(value)
    except ValueError:
        raise BadQuery(f"{name} must be an integer, not {value!r}") from None
    if not lo <= n <= hi:
        raise BadQuery(f"{name} must be between {lo} and {hi}")
    return n


def list_runs(root: Path, q: str = "", verdict: str = "", tag: str = "", status: str = "",
              offset: str | None = None, limit: str | None = None) -> RunPage:
    """A page of runs under ``root`` (newest first) matching the filters, with facet values."""
    start = _int(offset, 0, 0, 10**9, "offset")
    size = _int(limit, DEFAULT_LIMIT, 1, MAX_LIMIT, "limit")
    rows = [describe_run(entry) for entry in RunStore(root).list()]
    hits = [r for r in rows if _matches(r, q.strip(), verdict, tag, status)]
    return RunPage(
        runs=hits[start:start + size],
        total=len(hits),
        offset=start,
        limit=size,
        facets=Facets(
            verdicts=sorted({r["verdict_category"] for r in rows if r["verdict_category"]}),
            tags=sorted({t for r in rows for t in r["tags"]}),
            statuses=sorted({r["status"] for r in rows}),
        ),
    )
