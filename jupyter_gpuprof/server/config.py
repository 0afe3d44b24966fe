"""Server-side settings of jupyter_gpuprof, configurable as ``c.GpuProf.*``."""

from __future__ import annotations

import os
from pathlib import Path

from traitlets import Int, Unicode
from traitlets.config import Configurable

from jupyter_gpuprof.analysis.tracefile import DEFAULT_MAX_TRACE_MB
from jupyter_gpuprof.store.runs import DEFAULT_ROOT, ENV_ROOT


class GpuProf(Configurable):
    """Where the sidebar looks for saved runs, and how much of a trace it reads."""

    max_trace_mb = Int(
        DEFAULT_MAX_TRACE_MB,
        min=1,
        config=True,
        help=(
            "The largest decompressed trace (MB) the server analyses: a larger one, or a "
            "small gzip that inflates past it, is refused with a one-line message after "
            "inflating at most this much."
        ),
    )

    runs_root = Unicode(
        "",
        config=True,
        help=(
            "Folder holding one sub-folder per profiled run. Empty: $JUPYTER_GPUPROF_RUNS, "
            "else .gpuprof/runs under the server's root_dir. Relative paths are taken from "
            "the server's root_dir."
        ),
    )

    def resolved_runs_root(self, root_dir: str | os.PathLike[str]) -> Path:
        """The absolute runs root for a server started in ``root_dir``."""
        chosen = self.runs_root or os.environ.get(ENV_ROOT, "") or str(DEFAULT_ROOT)
        path = Path(chosen).expanduser()
        if not path.is_absolute():
            path = Path(root_dir).expanduser() / path
        return path.resolve()
