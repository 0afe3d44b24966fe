"""Wires the REST routes into a running Jupyter server."""

from __future__ import annotations

import os
from typing import Any

from jupyter_server.utils import url_path_join

from jupyter_gpuprof.analysis.tracefile import set_max_trace_mb
from jupyter_gpuprof.store.runs import ENV_ROOT, sweep_once

from .config import GpuProf
from .handlers import ROUTES, SETTINGS_KEY

URL_PREFIX = "jupyter-gpuprof"


def load(server_app: Any) -> None:
    """Register every route of ``handlers.ROUTES`` under ``<base_url>/jupyter-gpuprof/``."""
    web_app = server_app.web_app
    config = GpuProf(config=server_app.config)
    runs_root = config.resolved_runs_root(server_app.root_dir)
    set_max_trace_mb(config.max_trace_mb)
    web_app.settings[SETTINGS_KEY] = {"runs_root": str(runs_root)}
    # kernels started by this server inherit its environment: their %%gpuprofile then saves
    # into the folder the sidebar reads, whatever the notebook's own folder is (a folder the
    # user already exported for kernels wins)
    os.environ.setdefault(ENV_ROOT, str(runs_root))
    # what writers killed mid-write left (a SIGKILL while the profiler exported): swept now
    swept = sweep_once(runs_root)
    if swept:
        server_app.log.info("jupyter_gpuprof: removed %d temporary files of dead writers", swept)
    base_url = web_app.settings["base_url"]
    web_app.add_handlers(
        ".*$", [(url_path_join(base_url, URL_PREFIX, name), handler) for name, handler in ROUTES]
    )
    server_app.log.info("jupyter_gpuprof: REST routes loaded; runs root %s", runs_root)
