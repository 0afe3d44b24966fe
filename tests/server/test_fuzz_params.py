"""Property-based fuzzing of the REST parameters (hypothesis, derandomized, a few seconds):
any run id, step, rank, compare ids, page and filters answers 200 or a mapped 4xx with a
one-line message, never a 500 or a dropped connection."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runs_fixtures import BEFORE, XSS, build_runs_root

from jupyter_gpuprof.server import actions
from jupyter_gpuprof.server.handlers import ERROR_STATUS
from jupyter_gpuprof.server.runs import list_runs

API = "jupyter-gpuprof"
FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))
#: the texts a hostile client sends: control characters, separators, digits, long runs
TEXTS = (st.text(max_size=12) | st.from_regex(r"[0-9]{1,40}", fullmatch=True)
         | st.sampled_from(["..", "/", "\x00", "\n", "-1", "1e9", "²", " 1", BEFORE, XSS,
                            f"{BEFORE}\n", "9" * 5000]))


@pytest.fixture
def runs_root(tmp_path: Path) -> Path:
    return build_runs_root(tmp_path / "runs")


def _mapped(call: Any, *args: Any) -> int:
    try:
        result = call(*args)
    except tuple(cls for cls, _ in ERROR_STATUS) as e:
        assert str(e) and "\n" not in str(e).strip(), str(e)
        return next(code for cls, code in ERROR_STATUS if isinstance(e, cls))
    if isinstance(result, tuple):  # trace_file's open file
        result[1].close()
    return 200


def test_any_parameter_of_the_routes_functions_is_mapped(runs_root: Path) -> None:
    seen: set[int] = set()

    @FUZZ
    @given(run_id=TEXTS, value=TEXTS | st.none(), other=TEXTS | st.none())
    def check(run_id: str, value: str | None, other: str | None) -> None:
        for call, args in ((actions.get_run, (run_id,)), (actions.get_code, (run_id,)),
                           (actions.get_step_timeline, (XSS, value)),
                           (actions.get_step_timeline, (run_id, value)),
                           (actions.trace_file, (BEFORE, value)),
                           (actions.compare_runs, (value, other)),
                           (list_runs, (value or "", other or "", value or "", other or "",
                                        value, other))):
            seen.add(_mapped(call, runs_root, *args))

    check()
    assert {200, 400, 404} <= seen, seen


@pytest.fixture
def jp_server_config(runs_root: Path) -> dict[str, object]:
    return {"ServerApp": {"jpserver_extensions": {"jupyter_gpuprof": True},
                          "allow_unauthenticated_access": False},
            "GpuProf": {"runs_root": str(runs_root)}}


async def test_any_query_through_the_server_is_answered(http_server_client, http_server_port,
                                                        jp_base_url, jp_auth_header) -> None:
    base = f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}{API}/"
    codes: set[int] = set()

    def get(path: str, params: dict[str, str]) -> int:
        url = base + path + "?" + urllib.parse.urlencode(params)
        req = urllib.request.Request(url, headers=jp_auth_header)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                if r.headers.get("Content-Type", "").startswith("application/json"):
                    json.loads(r.read())
                return int(r.status)
        except urllib.error.HTTPError as e:
            body = json.loads(e.read())
            assert body.get("message") and "\n" not in body["message"], body
            return int(e.code)

    @settings(FUZZ, max_examples=15)
    @given(step=TEXTS, rank=TEXTS, a=TEXTS, q=TEXTS)
    def check(step: str, rank: str, a: str, q: str) -> None:
        for path, params in ((f"runs/{XSS}/timeline", {"step": step}),
                             (f"runs/{BEFORE}/trace", {"rank": rank}),
                             ("compare", {"a": a, "b": BEFORE}),
                             ("runs", {"q": q, "offset": step, "limit": rank})):
            code = get(path, params)
            assert code in (200, 400, 404, 409, 422), (path, params, code)
            codes.add(code)

    await asyncio.to_thread(check)
    assert 400 in codes and 200 in codes
