"""Every wrongly shaped meta.json (tests/malformed_meta.py, generated from the schema) through
every route: reported for that run (a broken row and a 409, or a row `warning` and the same line
in its report), never a 500, and the other runs untouched.

The routes' functions are called as the handlers call them, their errors mapped by the
handlers' own table (`ERROR_STATUS`): an exception outside it is what a 500 is. A smaller sample
goes through a real server with auth on.
"""

from __future__ import annotations

import dataclasses
import functools
import html
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from malformed_meta import base_meta, malformed, required_keys, shapes
from runs_fixtures import xss_run
from tornado.httpclient import HTTPClientError
from tracebuilder import TraceBuilder

from jupyter_gpuprof.report.model_cost import Conditions, StackResult, StepChange, TryResult
from jupyter_gpuprof.server import actions
from jupyter_gpuprof.server.handlers import ERROR_STATUS
from jupyter_gpuprof.server.runs import list_runs
from jupyter_gpuprof.store import meta_blocks
from jupyter_gpuprof.store.meta_schema import SALVAGED
from jupyter_gpuprof.store.run import parse_meta

API = "jupyter-gpuprof"
BAD = "20261129-210000-bad"
GOOD = "20261129-200000-good"
SHAPES = shapes()


@functools.cache
def _trace_bytes(tmp: Path) -> bytes:
    b = TraceBuilder()
    for i in range(3):
        t = i * 2000.0
        b.step(i, t, 1900.0)
        ext = b.op("aten::mm", t + 100, 500.0)
        b.kernel("gemm", t + 150, t + 300, 1200.0, ext=ext)
    b.write(tmp / "trace.json.gz")
    return (tmp / "trace.json.gz").read_bytes()


def _trace(folder: Path) -> None:
    (folder / "trace.json.gz").write_bytes(_trace_bytes(folder.parent))


def _run(root: Path, run_id: str, meta: dict[str, Any]) -> Path:
    folder = root / run_id
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps(meta))
    _trace(folder)
    return folder


@pytest.fixture
def runs_root(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    _run(root, GOOD, base_meta())
    return root


def status_of(call: Callable[..., Any], *args: Any) -> tuple[int, Any]:
    """What the route answers: 200 and the reply, or the mapped status and the message."""
    try:
        return 200, call(*args)
    except tuple(cls for cls, _ in ERROR_STATUS) as e:
        return next(code for cls, code in ERROR_STATUS if isinstance(e, cls)), str(e)


def _where(name: str) -> str:
    return name.split(":")[0]


def test_the_generated_shapes_cover_every_block_and_required_key() -> None:
    tops = {_where(n).split(".")[0] for n in SHAPES}
    assert set(SALVAGED) <= tops and {"status", "baseline", "settings", "env"} <= tops
    assert "tries.0.change.ci_low_pct: wrong type" in SHAPES  # nested blocks, not only the top
    assert "conditions.baseline.sm_clock_mhz.median: missing" in SHAPES
    assert "tries.0.fix: missing" in SHAPES and "stack.steps.0.change.verdict: missing" in SHAPES
    assert len(SHAPES) > 250


def test_the_filled_meta_itself_is_clean(runs_root: Path) -> None:
    meta = parse_meta(json.dumps(base_meta()).encode())
    assert meta.problems == [] and meta.tries and meta.conditions and meta.stack
    assert status_of(actions.get_html, runs_root, GOOD)[0] == 200


def test_every_shape_is_reported_by_the_reader() -> None:
    """The one reader: each shape is a broken meta.json or a problem naming where it is."""
    said = {"dropped": 0, "broken": 0}
    for name, (where, value) in SHAPES.items():
        data = json.dumps(malformed(where, value)).encode()
        try:
            meta = parse_meta(data)
        except ValueError as e:
            assert str(e) and "\n" not in str(e), name
            assert where[0] not in SALVAGED, f"{name}: a droppable block broke the run"
            said["broken"] += 1
            continue
        assert where[0] in SALVAGED, f"{name}: accepted a wrong shape outside the blocks"
        said_where = meta.problems[0] if meta.problems else ""
        assert where[0] in said_where and f"{where[-1]}`" in said_where, (name, meta.problems)
        said["dropped"] += 1
    assert said["dropped"] > 200 and said["broken"] > 30, said


def test_every_shape_through_every_route(runs_root: Path) -> None:
    """Each shape through the list, the detail, code, trace, summary, html, timeline, compare
    (both ways), a rename and a delete. The summary-backed routes are run once per distinct
    meta the reader keeps (shapes dropping the same entry give the same report)."""
    analysed: dict[str, str] = {}
    counts = {"attempts": 0}
    for name, (where, value) in SHAPES.items():
        folder = _run(runs_root, BAD, malformed(where, value))
        page = list_runs(runs_root)
        rows = {r["id"]: r for r in page["runs"]}
        row, good = rows[BAD], rows[GOOD]
        assert good["status"] == "complete" and good["warning"] is None, name
        reported = row["warning"] if row["status"] != "broken" else row["error"]
        assert reported and "meta.json" in reported, (name, row)
        calls: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
            (actions.get_run, (BAD,)), (actions.get_code, (BAD,)),
            (actions.trace_file, (BAD, None))]
        try:
            read = dataclasses.asdict(parse_meta((folder / "meta.json").read_bytes()))
            kept = json.dumps({k: v for k, v in read.items() if k not in ("problems", "_as_read")},
                              sort_keys=True)
        except ValueError:
            kept = "broken"
        if kept not in analysed:
            analysed[kept] = name
            calls += [(actions.get_summary, (BAD,)), (actions.get_html, (BAD,)),
                      (actions.get_step_timeline, (BAD, "1")),
                      (actions.compare_runs, (BAD, GOOD)), (actions.compare_runs, (GOOD, BAD))]
        calls += [(actions.update_run, (BAD, {"name": "renamed", "tags": ["t"]})),
                  (actions.delete_run, (BAD,))]
        for call, args in calls:
            code, reply = status_of(call, runs_root, *args)
            counts["attempts"] += 1
            if call is actions.trace_file and code == 200:
                reply[1].close()
            assert code in (200, 409), (name, call.__name__, reply)
            if code == 409:
                assert row["status"] == "broken" and "\n" not in reply, (name, reply)
            if call is actions.get_html and code == 200:
                assert html.escape(row["warning"].split(" (and")[0]) in reply["html"], name
            if call is actions.update_run and code == 200:  # the dropped block is kept on disk
                on_disk = json.loads((folder / "meta.json").read_text())
                assert on_disk[where[0]] == malformed(where, value)[where[0]], name
    assert counts["attempts"] > 1500 and len(analysed) > 5, (counts, len(analysed))


SAMPLE = [n for n in SHAPES if n.count(".") <= 1 and "missing" not in n][:40]


@pytest.fixture
def jp_server_config(runs_root: Path) -> dict[str, object]:
    return {"ServerApp": {"jpserver_extensions": {"jupyter_gpuprof": True},
                          "allow_unauthenticated_access": False},
            "GpuProf": {"runs_root": str(runs_root)}}


async def _code(jp_fetch: Any, *parts: str, **kw: Any) -> int:
    try:
        return int((await jp_fetch(API, *parts, **kw)).code)
    except HTTPClientError as e:
        return int(e.code)


async def test_a_sample_of_shapes_through_the_server(jp_fetch, runs_root: Path) -> None:
    xss_run(runs_root)
    for name in SAMPLE:
        where, value = SHAPES[name]
        _run(runs_root, BAD, malformed(where, value))
        for route, params in ((("runs",), {}), (("runs", BAD), {}), (("runs", BAD, "html"), {}),
                              (("runs", BAD, "summary"), {}),
                              (("compare",), {"a": BAD, "b": GOOD})):
            assert await _code(jp_fetch, *route, params=params) in (200, 409), (name, route)


def test_an_unreadable_rank_meta_fails_that_rank_only(tmp_path: Path) -> None:
    from jupyter_gpuprof.store.run import open_run

    folder = _run(tmp_path, GOOD, base_meta())
    (folder / "meta.rank0.json").write_text(json.dumps(base_meta()))
    (folder / "meta.rank1.json").write_text(json.dumps({**base_meta(), "status": 5}))
    run = open_run(folder)
    run.merge_rank_metas()
    assert run.meta.status == "failed" and run.meta.ranks == [0, 1]
    assert run.meta.error is not None and run.meta.error.startswith("rank 1: unreadable "
                                                                    "meta.rank1.json")


def test_a_meta_damaged_after_analysis_is_said_by_the_cached_report(runs_root: Path) -> None:
    assert status_of(actions.get_summary, runs_root, GOOD)[0] == 200  # cached now
    meta = base_meta()
    meta["tries"][0]["fix"] = {"a": 1}
    (runs_root / GOOD / "meta.json").write_text(json.dumps(meta))
    code, summary = status_of(actions.get_summary, runs_root, GOOD)
    assert code == 200 and any("tries[0] ignored" in w for w in summary["warnings"])
    assert "tries[0] ignored" in status_of(actions.get_html, runs_root, GOOD)[1]["html"]


def test_a_try_of_an_older_run_without_its_optional_keys_renders(runs_root: Path) -> None:
    meta = base_meta()
    change = meta["tries"][0]["change"]
    meta["tries"][0] = {"fix": "bf16", "median_ms": 1.5, "change": {
        k: change[k] for k in ("n_before", "n_after", "median_before_ms", "median_after_ms",
                               "confidence", "verdict", "significant", "direction")}}
    meta["stack"] = None
    _run(runs_root, BAD, meta)
    code, page = status_of(actions.get_html, runs_root, BAD)
    assert code == 200 and "bf16" in page["html"]
    assert status_of(actions.get_summary, runs_root, BAD)[1]["tries"][0]["change"][
        "ci_low_pct"] is None  # the model's default, filled before any renderer


def test_meta_blocks_require_what_the_report_model_requires() -> None:
    """A block that passes the reader always converts into the report's model (so no
    renderer meets a partial one): each model field without a default is a required key."""
    for block, model in ((meta_blocks.StepChangeMeta, StepChange),
                         (meta_blocks.PhaseConditionsMeta, Conditions),
                         (meta_blocks.TryMeta, TryResult), (meta_blocks.StackMeta, StackResult)):
        needed = {f.name for f in msgspec.structs.fields(model) if f.required}
        assert needed <= required_keys(block), (block.__name__, needed - required_keys(block))
