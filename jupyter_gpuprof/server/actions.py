"""What each single-run route does, as plain functions over the store (run in a worker thread).

Run ids always go through `RunStore`, which refuses ids that could leave the runs root; nothing
here turns a request value into a path by itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO, TypedDict

from jupyter_gpuprof.store.layout import TRACE_FILE, rank_trace_name
from jupyter_gpuprof.store.meta_blocks import EnvMeta, SettingsMeta
from jupyter_gpuprof.store.runs import InvalidRunId, RunInProgress, RunNotFound, RunStore
from jupyter_gpuprof.store.safe_files import SymlinkRefused, open_read

from .runs import BadQuery, RunListing, build_row

MAX_NAME = 200
MAX_TAG = 64
MAX_TAGS = 32


class RunDetail(TypedDict):
    """``GET /jupyter-gpuprof/runs/<id>`` (see docs/rest-api.md)."""

    run: RunListing
    settings: SettingsMeta
    env: EnvMeta
    baseline_steps: int
    timing: str | None
    traces: list[str]
    has_code: bool


def get_run(root: Path, run_id: str) -> RunDetail:
    """The run's row plus the metadata the detail view shows (settings, env, trace files)."""
    run = RunStore(root).get(run_id)
    meta = run.meta
    return RunDetail(
        run=build_row(run),
        settings=meta.settings,
        env=meta.env,
        baseline_steps=len(meta.baseline.get("step_ms") or []),
        timing=meta.baseline.get("timing"),
        traces=[p.name for p in run.trace_paths()],
        has_code=bool(meta.code),
    )


# The three routes below hand the report's JSON on untouched: its shape is the report model's
# (report/model.py), which the server never reads, so it only needs a JSON object.


def get_summary(root: Path, run_id: str) -> Mapping[str, object]:
    """The run's summary.json, analysed and cached on first request."""
    from jupyter_gpuprof.report import run_summary

    return run_summary(RunStore(root).get(run_id))


def get_step_timeline(root: Path, run_id: str, step: str | None) -> Mapping[str, object]:
    """Every event of one profiled step (`report.timeline_step`), for a zoomed-in timeline."""
    from jupyter_gpuprof.report.timeline_step import NoSuchStep, cached_step_timeline, parse_step

    try:
        number = parse_step(step)
    except ValueError as e:
        raise BadQuery(str(e)) from None
    run = RunStore(root).get(run_id)
    if run.status == "running":  # its trace may be half-written: never read as a whole one
        raise RunInProgress(f"run {run.id!r} is still being written; its timeline comes with "
                            "its report")
    try:
        return cached_step_timeline(run, number)
    except NoSuchStep as e:
        raise RunNotFound(str(e)) from None


def get_html(root: Path, run_id: str) -> dict[str, str]:
    """The static HTML report (every trace-derived name escaped by views.html)."""
    from jupyter_gpuprof.report.build import run_summary_doc
    from jupyter_gpuprof.views.html import render_html

    return {"html": render_html(run_summary_doc(RunStore(root).get(run_id)))}


def get_code(root: Path, run_id: str) -> dict[str, str]:
    """The notebook cell (or command line) the run profiled."""
    run = RunStore(root).get(run_id)
    return {"id": run.id, "name": run.meta.name or run.id, "code": run.meta.code or ""}


def _clean_name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BadQuery("name must be a non-empty string")
    name = " ".join(value.split())
    if len(name) > MAX_NAME:
        raise BadQuery(f"name is longer than {MAX_NAME} characters")
    return name


def _clean_tags(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise BadQuery("tags must be a list of strings")
    tags = [" ".join(t.split()) for t in value if t.strip()]
    if len(tags) > MAX_TAGS or any(len(t) > MAX_TAG for t in tags):
        raise BadQuery(f"at most {MAX_TAGS} tags of at most {MAX_TAG} characters")
    return tags


def update_run(root: Path, run_id: str, body: Any) -> RunListing:
    """Rename and/or re-tag a run (``{"name": ..., "tags": [...]}``); returns its new row."""
    if not isinstance(body, dict) or not ({"name", "tags"} & body.keys()):
        raise BadQuery('send a JSON object with "name" and/or "tags"')
    name = _clean_name(body["name"]) if "name" in body else None
    tags = _clean_tags(body["tags"]) if "tags" in body else None
    return build_row(RunStore(root).update(run_id, name=name, tags=tags))


def delete_run(root: Path, run_id: str) -> dict[str, str]:
    """Remove the run folder (the store refuses anything that is not a run under the root)."""
    RunStore(root).delete(run_id)
    return {"deleted": run_id}


def trace_file(root: Path, run_id: str, rank: str | None) -> tuple[str, BinaryIO]:
    """The trace file to download, opened (no symlink followed), and its download name:
    trace.json.gz, or one rank's trace of a distributed run."""
    store = RunStore(root)
    if rank is None or rank == "":
        run = store.get(run_id)
        traces = run.trace_paths()
        name = traces[0].name if traces else TRACE_FILE
    elif rank.isascii() and rank.isdigit() and len(rank) < 6:  # not '²', which isdigit() takes
        name = rank_trace_name(int(rank))
    else:
        raise BadQuery("rank must be a small non-negative integer")
    path = store.file(run_id, name)
    try:
        return f"{path.parent.name}.{path.name}", open_read(path.parent, path.name)
    except SymlinkRefused as e:  # swapped for a link since the check
        raise InvalidRunId(str(e)) from None
    except FileNotFoundError:
        raise RunNotFound(f"run {run_id!r} has no {name}") from None


def compare_runs(root: Path, before: str | None, after: str | None) -> Mapping[str, object]:
    """Comparison of two runs of the store (ids only: never paths)."""
    from jupyter_gpuprof.report.comparison import compare

    if not before or not after:
        raise BadQuery("give two run ids: ?a=BEFORE&b=AFTER")
    store = RunStore(root)
    return compare(store.get(before), store.get(after), root).to_json()
