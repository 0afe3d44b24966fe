"""REST handlers under ``/jupyter-gpuprof/``: read arguments, call the store, write JSON."""

from __future__ import annotations

import asyncio
import json
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import tornado.web
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler

from .runs import list_runs

AUTH_RESOURCE = "jupyter_gpuprof"
SETTINGS_KEY = "jupyter_gpuprof"


def _version() -> str:
    try:
        return version("jupyter_gpuprof")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        return "unknown"


class GpuProfHandler(APIHandler):
    """Base: the shared settings and the permission resource of every route."""

    auth_resource = AUTH_RESOURCE

    @property
    def runs_root(self) -> Path:
        return Path(self.settings[SETTINGS_KEY]["runs_root"])


class StatusHandler(GpuProfHandler):
    """``GET /jupyter-gpuprof/status``: the extension is loaded; where it looks for runs."""

    @tornado.web.authenticated
    @authorized
    def get(self) -> None:
        self.finish(json.dumps({"version": _version(), "runs_root": str(self.runs_root)}))


class RunsHandler(GpuProfHandler):
    """``GET /jupyter-gpuprof/runs``: every saved run, newest first."""

    @tornado.web.authenticated
    @authorized
    async def get(self) -> None:
        runs = await asyncio.to_thread(list_runs, self.runs_root)
        self.finish(json.dumps({"runs": runs}))


ROUTES: list[tuple[str, type[GpuProfHandler]]] = [
    ("status", StatusHandler),
    ("runs", RunsHandler),
]
