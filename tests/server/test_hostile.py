"""Hostile and broken run folders through a real Jupyter server with auth on: 4xx, never 500.

Symlinks planted inside runs, wrongly typed meta.json/summary.json, non-finite numbers, deep
nesting, unreadable traces and runs whose writer died.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from runs_fixtures import (
    AFTER,
    BEFORE,
    REAL,
    RUNNING,
    XSS,
    build_runs_root,
    full_summary,
    write_meta,
)
from tornado.httpclient import HTTPClientError

from jupyter_gpuprof.store.owner import current_owner

API = "jupyter-gpuprof"
TOKEN_FILE = b'{"token": "server-secret", "code": "stolen code"}'
ODD = "20261129-210000-odd"


@pytest.fixture
def runs_root(tmp_path: Path) -> Path:
    return build_runs_root(tmp_path / "runs")


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A JSON file outside the runs root, like the server's own jpserver-<pid>.json."""
    path = tmp_path / "jpserver-1.json"
    path.write_bytes(TOKEN_FILE)
    return path


@pytest.fixture
def jp_server_config(runs_root: Path) -> dict[str, object]:
    return {
        "ServerApp": {"jpserver_extensions": {"jupyter_gpuprof": True},
                      "allow_unauthenticated_access": False},
        "GpuProf": {"runs_root": str(runs_root)},
    }


def strict_json(body: bytes) -> Any:
    """Parse as a browser's JSON.parse would: NaN and Infinity are not JSON."""
    def refuse(token: str) -> Any:
        raise ValueError(f"non-standard JSON token {token}")
    return json.loads(body, parse_constant=refuse)


async def answer(jp_fetch: Any, *parts: str, **kwargs: Any) -> tuple[int, Any]:
    """Status and strictly parsed body of a request (errors included)."""
    try:
        response = await jp_fetch(API, *parts, **kwargs)
    except HTTPClientError as e:
        assert e.response is not None
        return e.code, strict_json(e.response.body)
    return response.code, strict_json(response.body)


async def rows(jp_fetch: Any, **params: str) -> dict[str, dict[str, Any]]:
    code, page = await answer(jp_fetch, "runs", params=params)
    assert code == 200
    return {r["id"]: r for r in page["runs"]}


def _plant(folder: Path, name: str, target: Path) -> None:
    path = folder / name
    path.parent.mkdir(exist_ok=True)
    if path.exists():
        path.unlink()
    path.symlink_to(target)


async def test_symlinked_summary_never_serves_the_file_it_points_to(jp_fetch, runs_root, victim):
    _plant(runs_root / BEFORE, "summary.json", victim)
    for route in ("summary", "html"):
        code, body = await answer(jp_fetch, "runs", BEFORE, route)
        assert code == 400 and "server-secret" not in json.dumps(body)
    listed = (await rows(jp_fetch))[BEFORE]
    assert listed["status"] == "broken" and "summary.json is a symlink" in listed["error"]
    assert victim.read_bytes() == TOKEN_FILE


async def test_symlinked_meta_never_serves_another_runs_code(jp_fetch, runs_root, tmp_path):
    other = tmp_path / "other-run"
    write_meta(other, code="stolen code")
    _plant(runs_root / BEFORE, "meta.json", other / "meta.json")
    for route in ([BEFORE], [BEFORE, "code"]):
        code, body = await answer(jp_fetch, "runs", *route)
        assert code == 409 and "stolen code" not in json.dumps(body)
    assert (await rows(jp_fetch))[BEFORE]["status"] == "broken"


@pytest.mark.parametrize("name", ["trace.json.gz", "trace.rank1.json.gz"])
async def test_symlinked_traces_are_neither_analysed_nor_served(jp_fetch, runs_root, tmp_path,
                                                                name):
    outside = tmp_path / "outside.json.gz"
    shutil.copy(REAL / "tinygpt_after" / "trace.json.gz", outside)
    (runs_root / BEFORE / "trace.json.gz").unlink()
    _plant(runs_root / BEFORE, name, outside)
    for route, params in (("summary", {}), ("html", {}), ("trace", {"rank": "1"})):
        code, _ = await answer(jp_fetch, "runs", BEFORE, route, params=params)
        assert code in (400, 404), route  # 404: rank 1 of a single trace
    code, _ = await answer(jp_fetch, "runs", BEFORE, "summary")
    assert code == 400 and not (runs_root / BEFORE / "summary.json").exists()


async def test_symlinked_ncu_report_lists_the_run_broken(jp_fetch, runs_root, victim):
    _plant(runs_root / BEFORE, "ncu/s.ncu-rep.gz", victim)
    listed = (await rows(jp_fetch))[BEFORE]
    assert listed["status"] == "broken" and "ncu/s.ncu-rep.gz" in listed["error"]


BAD_METAS = {
    "nan baseline": '{"schema_version": 1, "status": "complete", "baseline": {"step_ms": [NaN]}}',
    "infinity": '{"schema_version": 1, "status": "complete", "flops_per_step": Infinity}',
    "status 5": '{"schema_version": 1, "status": 5}',
    "created number": '{"schema_version": 1, "status": "complete", "created": 20261129}',
    "nested": "[" * 100_000 + "]" * 100_000,
    "name int": '{"schema_version": 1, "status": "complete", "name": 7}',
    "gpu int": '{"schema_version": 1, "status": "complete", "env": {"gpu_name": 7}}',
    "step_ms 5": '{"schema_version": 1, "status": "complete", "baseline": {"step_ms": 5}}',
    "huge number": '{"schema_version": 1, "status": "complete", "flops_per_step": 1e400}',
}


@pytest.mark.parametrize("case", list(BAD_METAS))
async def test_wrongly_typed_meta_is_one_broken_row(jp_fetch, runs_root, case):
    folder = runs_root / ODD
    folder.mkdir()
    (folder / "meta.json").write_text(BAD_METAS[case])
    (runs_root / "20261129-210000-odd-2").mkdir()  # same second, created unreadable too
    (runs_root / "20261129-210000-odd-2" / "meta.json").write_text(BAD_METAS[case])
    listed = await rows(jp_fetch)
    assert listed[ODD]["status"] == "broken" and "meta.json" in listed[ODD]["error"]
    assert listed[BEFORE]["status"] == "complete"
    assert BEFORE in await rows(jp_fetch, q="tinygpt")
    assert (await answer(jp_fetch, "runs", ODD))[0] == 409


async def test_overflowing_baseline_lists_as_strict_json(jp_fetch, runs_root):
    write_meta(runs_root / ODD, baseline={"step_ms": [1e308, 1e308], "timing": None})
    # the one statistics function (numpy's interpolation) does not overflow: the median of
    # two 1e308 steps is 1e308, a finite number strict JSON carries (the former hand-written
    # median summed them to inf and listed it as unknown)
    row = (await rows(jp_fetch))[ODD]
    assert row["status"] == "complete" and row["median_ms"] == row["p95_ms"] == 1e308
    code, detail = await answer(jp_fetch, "runs", ODD)
    assert code == 200 and detail["baseline_steps"] == 2


async def test_long_run_id_and_unicode_rank_are_400(jp_fetch):
    assert (await answer(jp_fetch, "runs", "r" * 300))[0] == 400
    assert (await answer(jp_fetch, "runs", "r" * 300, "summary"))[0] == 400
    assert (await answer(jp_fetch, "runs", BEFORE, "trace", params={"rank": "²"}))[0] == 400


async def test_deeply_nested_patch_body_is_400(jp_fetch):
    code, body = await answer(jp_fetch, "runs", BEFORE, method="PATCH",
                              body="[" * 100_000 + "]" * 100_000)
    assert code == 400 and "nested" in body["message"]


async def test_incomplete_cached_summary_is_recomputed(jp_fetch, runs_root):
    (runs_root / BEFORE / "summary.json").write_text('{"verdict": {"category": "comm"}}')
    code, summary = await answer(jp_fetch, "runs", BEFORE, "summary")
    # recomputed from the trace (tinygpt_before: precision in the what-if model), not served
    assert code == 200 and summary["verdict"]["category"] == "precision" and summary["ops"]
    assert (await answer(jp_fetch, "runs", BEFORE, "html"))[0] == 200
    cached = json.loads((runs_root / BEFORE / "summary.json").read_text())
    assert cached["verdict"]["category"] == "precision"


@pytest.mark.parametrize("trace", [b"", gzip.compress(b'{"traceEvents": [')[:-9],
                                   os.urandom(4096)])
async def test_unreadable_trace_is_listed_broken_after_analysis_fails(jp_fetch, runs_root,
                                                                      trace):
    (runs_root / BEFORE / "trace.json.gz").write_bytes(trace)
    assert (await rows(jp_fetch))[BEFORE]["status"] == "complete"  # not opened yet
    code, body = await answer(jp_fetch, "runs", BEFORE, "summary")
    assert code == 422 and body["message"]
    row = (await rows(jp_fetch))[BEFORE]
    assert row["status"] == "broken" and row["error"] == body["message"]


def _dead_pid() -> int:
    out = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                         capture_output=True, text=True, check=True)
    return int(out.stdout)


async def test_run_of_a_dead_kernel_is_interrupted(jp_fetch, runs_root):
    write_meta(runs_root / RUNNING, status="running", owner={**current_owner(), "pid": _dead_pid()})
    assert (await rows(jp_fetch))[RUNNING]["status"] == "interrupted"
    assert BEFORE not in await rows(jp_fetch, status="interrupted")
    code, body = await answer(jp_fetch, "runs", RUNNING, "summary")
    assert code == 409 and "interrupted" in body["message"]
    shutil.copy(REAL / "tinygpt_after" / "trace.json.gz", runs_root / RUNNING / "trace.json.gz")
    code, summary = await answer(jp_fetch, "runs", RUNNING, "summary")
    assert code == 200 and summary["verdict"]["summary"]


async def test_running_run_of_a_live_owner_stays_running(jp_fetch, runs_root):
    write_meta(runs_root / RUNNING, status="running", owner=current_owner())
    assert (await rows(jp_fetch))[RUNNING]["status"] == "running"
    assert (await answer(jp_fetch, "runs", RUNNING, "summary"))[0] == 409


async def test_a_cache_write_failure_never_fails_a_read(jp_fetch, runs_root, monkeypatch):
    from jupyter_gpuprof.store import safe_files

    def read_only(*args: Any, **kwargs: Any) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(safe_files, "write_bytes", read_only)
    code, summary = await answer(jp_fetch, "runs", BEFORE, "summary")
    assert code == 200 and summary["verdict"]["category"] == "precision"
    assert not (runs_root / BEFORE / "summary.json").exists()
    (runs_root / BEFORE / "summary.json").write_text(json.dumps(full_summary()))
    assert (await rows(jp_fetch))[BEFORE]["has_summary"] is True
    assert not (runs_root / BEFORE / "listing.json").exists()


async def test_a_folder_named_with_control_characters_is_never_listed_or_served(
        jp_fetch, runs_root):
    for odd in ("\n", "\x1b]0;x\x07", "\r", "\x7f", "\x85"):
        name = f"{ODD}{odd}x"
        write_meta(runs_root / name)
        listed = await rows(jp_fetch)
        assert name not in listed and BEFORE in listed
        for method, route, body in (("GET", [name], None), ("GET", [name, "html"], None),
                                    ("GET", [name, "timeline"], None),
                                    ("PATCH", [name], '{"name": "n"}'),
                                    ("DELETE", [name], None)):
            code, reply = await answer(jp_fetch, "runs", *route, method=method, body=body,
                                       params={"step": "1"} if "timeline" in route else {})
            assert code == 400 and "control characters" in reply["message"], (odd, route)
        assert (runs_root / name / "meta.json").is_file()  # neither renamed nor deleted


async def test_timeline_of_a_run_still_being_written_is_409(jp_fetch, runs_root):
    shutil.copy(REAL / "tinygpt_after" / "trace.json.gz", runs_root / RUNNING / "trace.json.gz")
    write_meta(runs_root / RUNNING, status="running", owner=current_owner())
    code, body = await answer(jp_fetch, "runs", RUNNING, "timeline", params={"step": "1"})
    assert code == 409 and "still being written" in body["message"]


async def test_query_values_with_control_characters_or_many_digits_are_400(jp_fetch):
    assert (await answer(jp_fetch, "runs", XSS, "timeline", params={"step": "1"}))[0] == 200
    for step in ("1\n", "1\x00", "\x001", "1\r", "\t1", "1" * 60_000):
        code, body = await answer(jp_fetch, "runs", XSS, "timeline", params={"step": step})
        assert code == 400 and body["message"], step
    for param in ("a", "b"):
        ids = {"a": BEFORE, "b": AFTER, param: f"{BEFORE}\n"}
        code, body = await answer(jp_fetch, "compare", params=ids)
        assert code == 400 and "control character" in body["message"]
    code, body = await answer(jp_fetch, "runs", BEFORE, "trace", params={"rank": "0\x00"})
    assert code == 400
