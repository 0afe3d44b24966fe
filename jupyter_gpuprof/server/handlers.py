"""REST handlers under ``/jupyter-gpuprof/``: read arguments, call one function, write JSON.

Every verb is ``@tornado.web.authenticated`` and ``@authorized`` (resource ``jupyter_gpuprof``:
GET is ``read``, PATCH/POST/DELETE are ``write``), so a read-only authorizer forbids edits.
Domain errors become HTTP errors in one place, `ERROR_STATUS`.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, TypeVar

import tornado.web
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler

from jupyter_gpuprof.analysis.tracefile import TraceError
from jupyter_gpuprof.oneline import error_line
from jupyter_gpuprof.store.json_checks import BadJson, check_depth, finite_or_none
from jupyter_gpuprof.store.runs import CorruptRun, InvalidRunId, RunInProgress, RunNotFound
from jupyter_gpuprof.store.safe_files import SymlinkRefused

from . import actions
from .runs import BadQuery, list_runs

AUTH_RESOURCE = "jupyter_gpuprof"
SETTINGS_KEY = "jupyter_gpuprof"
RUN_ID = r"(?P<run_id>[^/]+)"
CHUNK = 1 << 20
T = TypeVar("T")

# Most specific first: the first matching class decides the status.
ERROR_STATUS: list[tuple[type[BaseException], int]] = [
    (InvalidRunId, 400),
    (BadQuery, 400),
    (SymlinkRefused, 400),
    (RunNotFound, 404),
    (CorruptRun, 409),
    (RunInProgress, 409),
    (TraceError, 422),
]


def _version() -> str:
    try:
        return version("jupyter_gpuprof")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        return "unknown"


class GpuProfHandler(APIHandler):
    """Base: the shared settings, the permission resource and the error mapping of every route."""

    auth_resource = AUTH_RESOURCE

    @property
    def runs_root(self) -> Path:
        return Path(self.settings[SETTINGS_KEY]["runs_root"])

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a store/report function off the event loop; domain errors -> HTTP errors."""
        try:
            return await asyncio.to_thread(fn, self.runs_root, *args)
        except tuple(cls for cls, _ in ERROR_STATUS) as e:
            status = next(code for cls, code in ERROR_STATUS if isinstance(e, cls))
            message = error_line(e)
            raise tornado.web.HTTPError(status, message, reason=type(e).__name__) from None

    def raw_query(self, name: str) -> str | None:
        """A query value as sent: tornado's own getter turns control characters into spaces
        and strips them, so ``step=5%0A`` would read as step 5; here it is a 400."""
        values = self.request.query_arguments.get(name)
        if not values:
            return None
        try:
            value = values[-1].decode("utf-8")
        except UnicodeDecodeError:
            raise tornado.web.HTTPError(400, f"{name} is not UTF-8 text") from None
        if any(ord(c) < 32 or ord(c) == 127 for c in value):
            raise tornado.web.HTTPError(400, f"{name} holds a control character")
        return value

    def json_body(self) -> Any:
        body = self.request.body or b"null"
        try:
            check_depth(body)  # json.loads overflows the stack on 100,000 nested '['
            return json.loads(body)
        except BadJson as e:
            raise tornado.web.HTTPError(400, f"the request body is {e}") from None
        except ValueError:
            raise tornado.web.HTTPError(400, "the request body is not JSON") from None

    def reply(self, data: Any) -> None:
        """Strict JSON (no NaN/Infinity, which the browser's JSON.parse rejects)."""
        self.set_header("Content-Type", "application/json")
        try:
            text = json.dumps(data, default=str, allow_nan=False)
        except ValueError:
            text = json.dumps(finite_or_none(data), default=str, allow_nan=False)
        self.finish(text)


class StatusHandler(GpuProfHandler):
    """``GET /status``: the extension is loaded; where it looks for runs."""

    @tornado.web.authenticated
    @authorized
    def get(self) -> None:
        self.reply({"version": _version(), "runs_root": str(self.runs_root)})


class RunsHandler(GpuProfHandler):
    """``GET /runs``: a page of runs, newest first, filtered by q/verdict/tag/status."""

    @tornado.web.authenticated
    @authorized
    async def get(self) -> None:
        arg = self.get_query_argument
        self.reply(await self.call(list_runs, arg("q", ""), arg("verdict", ""), arg("tag", ""),
                                   arg("status", ""), arg("offset", None), arg("limit", None)))


class RunHandler(GpuProfHandler):
    """``GET|PATCH|DELETE /runs/<id>``: describe, rename/tag, delete one run."""

    @tornado.web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        self.reply(await self.call(actions.get_run, run_id))

    @tornado.web.authenticated
    @authorized
    async def patch(self, run_id: str) -> None:
        self.reply(await self.call(actions.update_run, run_id, self.json_body()))

    @tornado.web.authenticated
    @authorized
    async def delete(self, run_id: str) -> None:
        self.reply(await self.call(actions.delete_run, run_id))


class SummaryHandler(GpuProfHandler):
    """``GET /runs/<id>/summary``: summary.json, analysed and cached on first request."""

    @tornado.web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        self.reply(await self.call(actions.get_summary, run_id))


class HtmlHandler(GpuProfHandler):
    """``GET /runs/<id>/html``: the static report as ``{"html": ...}`` (names escaped)."""

    @tornado.web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        self.reply(await self.call(actions.get_html, run_id))


class StepTimelineHandler(GpuProfHandler):
    """``GET /runs/<id>/timeline?step=K``: every event of profiled step K, for zooming in."""

    @tornado.web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        self.reply(await self.call(actions.get_step_timeline, run_id, self.raw_query("step")))


class CodeHandler(GpuProfHandler):
    """``GET /runs/<id>/code``: the profiled cell or command."""

    @tornado.web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        self.reply(await self.call(actions.get_code, run_id))


class TraceHandler(GpuProfHandler):
    """``GET /runs/<id>/trace[?rank=R]``: the gzipped Kineto trace (Perfetto, chrome://tracing)."""

    @tornado.web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        name, file = await self.call(actions.trace_file, run_id, self.raw_query("rank"))
        self.set_header("Content-Type", "application/gzip")
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", name)
        self.set_header("Content-Disposition", f'attachment; filename="{safe}"')
        with file as f:
            while chunk := f.read(CHUNK):
                self.write(chunk)
                await self.flush()
        self.finish()


class CompareHandler(GpuProfHandler):
    """``GET /compare?a=<before id>&b=<after id>``: step-time change, op/kernel deltas, verdicts."""

    @tornado.web.authenticated
    @authorized
    async def get(self) -> None:
        arg = self.raw_query
        self.reply(await self.call(actions.compare_runs, arg("a"), arg("b")))


ROUTES: list[tuple[str, type[GpuProfHandler]]] = [
    ("status", StatusHandler),
    ("runs", RunsHandler),
    (f"runs/{RUN_ID}", RunHandler),
    (f"runs/{RUN_ID}/summary", SummaryHandler),
    (f"runs/{RUN_ID}/html", HtmlHandler),
    (f"runs/{RUN_ID}/code", CodeHandler),
    (f"runs/{RUN_ID}/timeline", StepTimelineHandler),
    (f"runs/{RUN_ID}/trace", TraceHandler),
    ("compare", CompareHandler),
]
