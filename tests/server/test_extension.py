"""The REST routes of the server extension, through a real Jupyter server with auth on."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from runs_fixtures import full_summary
from tornado.httpclient import HTTPClientError

GOOD_RUN = "20261129-191322-mlp"
FAILED_RUN = "20261129-191500-oom"
CORRUPT_RUN = "20261129-191600-corrupt"


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


@pytest.fixture
def runs_root(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    meta = {
        "schema_version": 1,
        "id": GOOD_RUN,
        "name": "mlp",
        "status": "complete",
        "created": "2026-11-29T19:13:22+00:00",
        "error": None,
    }
    _write(root / GOOD_RUN / "meta.json", meta)
    _write(
        root / GOOD_RUN / "summary.json",
        full_summary(verdict={"category": "input", "summary": "input-bound"}),
    )
    _write(
        root / FAILED_RUN / "meta.json",
        {**meta, "id": FAILED_RUN, "name": "oom", "status": "failed", "error": "CUDA OOM"},
    )
    (root / CORRUPT_RUN).mkdir()
    (root / CORRUPT_RUN / "meta.json").write_text("{not json", encoding="utf-8")
    (root / "stray-file.txt").write_text("not a run", encoding="utf-8")
    return root


@pytest.fixture
def jp_server_config(runs_root: Path) -> dict[str, object]:
    return {
        "ServerApp": {
            "jpserver_extensions": {"jupyter_gpuprof": True},
            "allow_unauthenticated_access": False,
        },
        "GpuProf": {"runs_root": str(runs_root)},
    }


async def test_status_with_token(jp_fetch, runs_root: Path) -> None:
    response = await jp_fetch("jupyter-gpuprof", "status")
    assert response.code == 200
    payload = json.loads(response.body)
    assert payload["runs_root"] == str(runs_root.resolve())
    assert isinstance(payload["version"], str) and payload["version"]


async def test_kernels_inherit_the_runs_root(jp_fetch, runs_root: Path) -> None:
    import os

    await jp_fetch("jupyter-gpuprof", "status")
    # a kernel started by this server saves its runs where the sidebar looks
    assert os.environ["JUPYTER_GPUPROF_RUNS"] == str(runs_root.resolve())


@pytest.mark.parametrize("route", ["status", "runs"])
async def test_routes_refuse_requests_without_token(
    http_server_client, jp_base_url: str, route: str
) -> None:
    with pytest.raises(HTTPClientError) as excinfo:
        await http_server_client.fetch(f"{jp_base_url}jupyter-gpuprof/{route}")
    assert excinfo.value.code == 403


async def test_runs_lists_good_failed_and_corrupt(jp_fetch) -> None:
    response = await jp_fetch("jupyter-gpuprof", "runs")
    runs = json.loads(response.body)["runs"]
    assert [run["id"] for run in runs] == [CORRUPT_RUN, FAILED_RUN, GOOD_RUN]
    corrupt, failed, good = runs
    assert {k: good[k] for k in ("id", "name", "created", "status", "verdict", "error")} == {
        "id": GOOD_RUN,
        "name": "mlp",
        "created": "2026-11-29T19:13:22+00:00",
        "status": "complete",
        "verdict": "input-bound",
        "error": None,
    }
    assert (failed["status"], failed["error"], failed["verdict"]) == ("failed", "CUDA OOM", None)
    assert corrupt["status"] == "broken"
    assert corrupt["name"] == CORRUPT_RUN
    assert "meta.json" in corrupt["error"]


async def test_runs_of_missing_root_is_empty(jp_fetch, runs_root: Path) -> None:
    shutil.rmtree(runs_root)
    response = await jp_fetch("jupyter-gpuprof", "runs")
    assert json.loads(response.body)["runs"] == []


def test_default_runs_root_follows_env_then_root_dir(tmp_path: Path, monkeypatch) -> None:
    from jupyter_gpuprof.server.config import GpuProf
    from jupyter_gpuprof.store.runs import ENV_ROOT

    monkeypatch.delenv(ENV_ROOT, raising=False)
    assert GpuProf().resolved_runs_root(tmp_path) == tmp_path.resolve() / ".gpuprof" / "runs"
    monkeypatch.setenv(ENV_ROOT, "elsewhere")
    assert GpuProf().resolved_runs_root(tmp_path) == tmp_path.resolve() / "elsewhere"
    assert GpuProf(runs_root=str(tmp_path / "cfg")).resolved_runs_root("/") == tmp_path / "cfg"


def test_server_package_never_imports_torch() -> None:
    code = (
        "import sys, jupyter_gpuprof.server.extension, jupyter_gpuprof.server.handlers; "
        "sys.exit('torch' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_a_runs_folder_exported_for_kernels_is_kept(tmp_path: Path, monkeypatch) -> None:
    from types import SimpleNamespace

    from traitlets.config import Config

    from jupyter_gpuprof.server.extension import load

    monkeypatch.setenv("JUPYTER_GPUPROF_RUNS", str(tmp_path / "mine"))
    app = SimpleNamespace(
        web_app=SimpleNamespace(settings={"base_url": "/"}, add_handlers=lambda *a: None),
        config=Config(), root_dir=str(tmp_path), log=SimpleNamespace(info=lambda *a: None))
    load(app)
    import os

    assert os.environ["JUPYTER_GPUPROF_RUNS"] == str(tmp_path / "mine")


def test_the_server_sweeps_dead_writers_temporary_files_when_it_loads(tmp_path, monkeypatch):
    """A SIGKILL while the profiler exported left a temporary file in a run folder: the
    server's start-up removes it (its writer is dead), and keeps a live writer's."""
    import logging
    import os
    from types import SimpleNamespace

    from traitlets.config import Config

    from jupyter_gpuprof.server import extension
    from jupyter_gpuprof.store import runs as runs_mod
    from jupyter_gpuprof.store.temp_files import temp_name

    run = tmp_path / "runs" / "20260101-000000-r"
    run.mkdir(parents=True)
    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True).stdout)
    live = temp_name("trace.json.gz")
    killed = live.replace(f".{os.getpid()}-", f".{dead}-", 1)
    for name in (live, killed):
        (run / name).write_bytes(b"half a trace")
    monkeypatch.setattr(runs_mod, "_SWEPT", set())
    monkeypatch.setenv("JUPYTER_GPUPROF_RUNS", str(tmp_path / "runs"))
    app = SimpleNamespace(config=Config({"GpuProf": {"runs_root": str(tmp_path / "runs")}}),
                          root_dir=str(tmp_path), log=logging.getLogger("test"),
                          web_app=SimpleNamespace(settings={"base_url": "/"},
                                                  add_handlers=lambda *args: None))
    extension.load(app)
    assert sorted(p.name for p in run.iterdir()) == [live]
