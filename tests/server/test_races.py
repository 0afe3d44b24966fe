"""Concurrent clients and generated run folders against a real Jupyter server: never a 500.

Threads send blocking HTTP requests while the test's event loop serves them, the way the
sidebar's polling and a user's delete/rename meet in a real deployment. A property-based test
throws generated meta.json/summary.json values at the list, search and detail routes.
"""

from __future__ import annotations

import asyncio
import json
import math
import shutil
import threading
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runs_fixtures import full_summary, write_meta

API = "jupyter-gpuprof"
ROUNDS = 30


@pytest.fixture
def runs_root(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    root.mkdir()
    return root


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


class Client:
    """A blocking HTTP client for threads, with the server's token."""

    def __init__(self, port: int, base_url: str, headers: dict[str, str]) -> None:
        self.base = f"http://127.0.0.1:{port}{base_url}{API}/"
        self.headers = headers

    def send(self, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={**self.headers, "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()


@pytest.fixture
def client(http_server_client, http_server_port, jp_base_url, jp_auth_header) -> Client:
    """A client of the server that ``http_server_client`` starts on ``http_server_port``."""
    return Client(http_server_port[1], jp_base_url, jp_auth_header)


def _make_run(root: Path, i: int) -> str:
    """A complete run, moved into the root in one step (a half-made one is rightly broken)."""
    run_id = f"20261129-2200{i % 60:02d}-r{i}"
    staging = root / f".staging-{run_id}"
    write_meta(staging, id=run_id, baseline={"step_ms": [1.0, 2.0, 3.0], "timing": None})
    (staging / "summary.json").write_text(json.dumps(full_summary()))
    staging.rename(root / run_id)
    return run_id


def _in_threads(*jobs: Any) -> None:
    threads = [threading.Thread(target=job) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


async def test_delete_while_the_list_is_polled(client, runs_root) -> None:
    codes: Counter[int] = Counter()
    broken: list[Any] = []
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            code, body = client.send("GET", "runs")
            codes[code] += 1
            if code == 200:
                broken.extend(r for r in strict_json(body)["runs"] if r["status"] == "broken")

    def delete_all() -> None:
        try:
            for i in range(ROUNDS):
                run_id = _make_run(runs_root, i)
                code, _ = client.send("DELETE", f"runs/{run_id}")
                codes[code] += 1
        finally:
            stop.set()

    await asyncio.to_thread(_in_threads, poll, poll, delete_all)
    assert set(codes) == {200} and codes[200] > ROUNDS, codes
    assert broken == []  # a run being deleted is never listed half-deleted
    assert [p.name for p in runs_root.iterdir()] == []  # no half-deleted folder, no trash


async def test_patch_racing_delete_never_brings_the_run_back(client, runs_root) -> None:
    codes: Counter[int] = Counter()
    for i in range(ROUNDS):
        run_id = _make_run(runs_root, i)

        def patch(run_id: str = run_id, i: int = i) -> None:
            for _ in range(3):
                body = {"name": f"n{i}", "tags": ["t"]}
                codes[client.send("PATCH", f"runs/{run_id}", body)[0]] += 1

        def delete(run_id: str = run_id) -> None:
            codes[client.send("DELETE", f"runs/{run_id}")[0]] += 1

        await asyncio.to_thread(_in_threads, patch, delete)
        assert not (runs_root / run_id).exists(), f"round {i}: the deleted run came back"
    assert codes[500] == 0 and set(codes) <= {200, 404}, codes
    assert list(runs_root.iterdir()) == []


JSON_SCALARS = (st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(max_size=8)
                | st.floats(allow_nan=True, allow_infinity=True))
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=6), inner, max_size=4),
                           max_leaves=12)
META_KEYS = ["id", "name", "created", "status", "error", "settings", "env",
             "code", "tags", "baseline", "profiled_step_ms", "flops_per_step", "rank",
             "world_size", "ranks", "owner"]
FLOATS = st.lists(st.floats(allow_nan=True, allow_infinity=True) | st.integers(), max_size=5)
METAS = st.fixed_dictionaries(
    {"schema_version": st.just(1)},
    optional={**{k: JSON_VALUES for k in META_KEYS},
              "status": st.sampled_from(["complete", "running", "failed", 5, None]),
              "baseline": st.fixed_dictionaries({}, optional={"step_ms": FLOATS | JSON_VALUES,
                                                              "timing": JSON_VALUES}),
              "env": st.fixed_dictionaries({}, optional={"gpu_name": JSON_VALUES})})
SUMMARIES = st.none() | JSON_VALUES | st.builds(
    lambda verdict, steps, source: full_summary(verdict=verdict, steps=steps, source=source),
    JSON_VALUES, st.fixed_dictionaries({}, optional={"median_ms": JSON_VALUES,
                                                     "n": JSON_VALUES}), JSON_VALUES)


def _no_non_finite(x: Any) -> bool:
    if isinstance(x, float):
        return math.isfinite(x)
    if isinstance(x, dict):
        return all(_no_non_finite(v) for v in x.values())
    if isinstance(x, list):
        return all(_no_non_finite(v) for v in x)
    return True


async def test_generated_run_folders_never_break_the_list(client, runs_root) -> None:
    folder = runs_root / "20261129-230000-gen"
    write_meta(runs_root / "20261129-220000-good", name="good")

    @settings(max_examples=60, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(meta=METAS, summary=SUMMARIES)
    def check(meta: dict[str, Any], summary: Any) -> None:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        (folder / "meta.json").write_text(json.dumps(meta))  # NaN/Infinity tokens included
        if summary is not None:
            (folder / "summary.json").write_text(json.dumps(summary))
        for path in ("runs", "runs?q=good", "runs?q=gen+x"):
            code, body = client.send("GET", path)
            assert code == 200, (path, body)
            page = strict_json(body)
            assert _no_non_finite(page)
            assert any(r["id"] == "20261129-220000-good" for r in page["runs"]) or "gen" in path
        code, body = client.send("GET", f"runs/{folder.name}")
        assert code in (200, 409), body
        strict_json(body)

    await asyncio.to_thread(check)


def _fresh_run(root: Path, i: int) -> str:
    run_id = _make_run(root, i)
    meta = json.loads((root / run_id / "meta.json").read_text())
    (root / run_id / "meta.json").write_text(json.dumps({**meta, "status": "complete"}))
    return run_id


async def test_a_rename_and_a_retag_sent_together_both_stay(client, runs_root) -> None:
    """PATCH name and PATCH tags of one run at the same instant, 30 times: both answer 200
    and both edits are in the run's meta.json afterwards (the meta lock): 0 lost edits."""
    run_id = _fresh_run(runs_root, 0)
    codes: Counter[int] = Counter()
    lost = []
    for i in range(ROUNDS):
        start = threading.Barrier(2)

        def send(body: dict[str, Any], start: threading.Barrier = start) -> None:
            start.wait()
            codes[client.send("PATCH", f"runs/{run_id}", body)[0]] += 1

        await asyncio.to_thread(_in_threads, lambda i=i: send({"name": f"name {i}"}),
                                lambda i=i: send({"tags": [f"tag {i}"]}))
        meta = json.loads((runs_root / run_id / "meta.json").read_text())
        if (meta["name"], meta["tags"]) != (f"name {i}", [f"tag {i}"]):
            lost.append((i, meta["name"], meta["tags"]))
    assert codes == Counter({200: 2 * ROUNDS}), codes
    assert lost == []


async def test_after_a_rename_storm_every_row_is_its_runs_meta(client, runs_root) -> None:
    """Renames and re-tags of 6 runs from 3 clients while the list is polled: once they stop,
    each listed row shows its run's meta.json (the rows are cached by the meta's digest)."""
    ids = [_fresh_run(runs_root, i) for i in range(6)]
    stop = threading.Event()
    codes: Counter[int] = Counter()

    def poll() -> None:
        while not stop.is_set():
            codes[client.send("GET", "runs")[0]] += 1

    def storm(k: int) -> None:
        for n in range(ROUNDS):
            run_id = ids[(n + k) % len(ids)]
            body = {"name": f"n{k}{n:02d}"} if n % 2 else {"tags": [f"t{k}{n:02d}"]}
            codes[client.send("PATCH", f"runs/{run_id}", body)[0]] += 1

    def storms() -> None:
        try:
            _in_threads(*(lambda k=k: storm(k) for k in range(3)))
        finally:
            stop.set()

    await asyncio.to_thread(_in_threads, poll, storms)
    assert set(codes) == {200}, codes
    code, body = await asyncio.to_thread(client.send, "GET", "runs")
    rows = {r["id"]: (r["name"], r["tags"]) for r in strict_json(body)["runs"]}
    metas = {}
    for run_id in ids:
        meta = json.loads((runs_root / run_id / "meta.json").read_text())
        metas[run_id] = (meta["name"], meta["tags"])
    assert rows == metas
