"""`GET /runs/<id>/timeline?step=K` through a real Jupyter server with auth on (jp_fetch)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from runs_fixtures import real_run
from tornado.httpclient import HTTPClientError

API = "jupyter-gpuprof"
RUN = "20261129-191322-compute"


@pytest.fixture
def runs_root(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    real_run(root, RUN, "compute")
    return root


@pytest.fixture
def jp_server_config(runs_root: Path) -> dict[str, object]:
    return {"ServerApp": {"jpserver_extensions": {"jupyter_gpuprof": True},
                          "allow_unauthenticated_access": False},
            "GpuProf": {"runs_root": str(runs_root)}}


async def _status(fetch: Any, *args: Any, **kwargs: Any) -> int:
    try:
        return int((await fetch(*args, **kwargs)).code)
    except HTTPClientError as e:
        return int(e.code)


async def test_any_step_loads_with_the_reports_lanes(jp_fetch) -> None:
    summary = json.loads((await jp_fetch(API, "runs", RUN, "summary")).body)
    tl = summary["timeline"]
    missing = [s["step"] for s, d in zip(tl["steps"], tl["detail"], strict=True) if d is None]
    shipped = [s["step"] for s, d in zip(tl["steps"], tl["detail"], strict=True) if d]
    assert missing and shipped  # the report inlines some steps; the rest load from here
    got = json.loads((await jp_fetch(API, "runs", RUN, "timeline",
                                     params={"step": str(missing[0])})).body)
    assert got["step"] == missing[0] and got["phases"] == tl["phases"]
    assert set(got["detail"]["lane"]) <= set(range(len(tl["lanes"])))
    # an inlined step sliced by the server equals the report's copy, name for name
    same = json.loads((await jp_fetch(API, "runs", RUN, "timeline",
                                      params={"step": str(shipped[0])})).body)
    inline = tl["detail"][[s["step"] for s in tl["steps"]].index(shipped[0])]
    assert same["detail"]["start_us"] == inline["start_us"]
    assert [same["strings"][i] for i in same["detail"]["name"]] == \
        [tl["strings"][i] for i in inline["name"]]


async def test_bad_steps_and_missing_tokens_are_refused(jp_fetch, http_server_client,
                                                        jp_base_url) -> None:
    assert await _status(jp_fetch, API, "runs", RUN, "timeline") == 400
    assert await _status(jp_fetch, API, "runs", RUN, "timeline", params={"step": "x"}) == 400
    assert await _status(jp_fetch, API, "runs", RUN, "timeline", params={"step": "9999"}) == 404
    assert await _status(jp_fetch, API, "runs", "nope", "timeline", params={"step": "1"}) == 404
    url = f"{jp_base_url}{API}/runs/{RUN}/timeline?step=1"
    assert await _status(http_server_client.fetch, url) == 403
