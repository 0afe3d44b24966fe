"""Nsight Compute sessions as plain functions (no IPython): run ncu, store what it wrote.

`capture_replay` replays a run's hottest ops under ncu (mode a); `capture_command` and
`capture_source` run a script or a self-contained cell under ncu with an NVTX/kernel filter
(mode b). Each stores the gzipped report, its CSV exports and a description under
`<run>/ncu/` through the store, and returns where; `results` reads them back.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, Unpack

from ..store import Run, RunStore, open_run
from ..store.ncu_files import save_ncu
from ..store.temp_files import temp_prefix  # a killed session's folder is swept at start-up
from .driver import build_command, export_csv, find_ncu, ncu_version, print_progress, run_ncu
from .options import DEFAULT_LAUNCH_COUNT, NcuOptions
from .replay import run_replay
from .targets import ReplayTargetJson, replay_targets

if TYPE_CHECKING:  # the script imports torch: its types only, never the module
    from .replay_script import ReplayParams

CELL_PRELUDE = '''"""A notebook cell run under Nsight Compute by %%ncu (jupyter_gpuprof)."""
'''


class SessionDetails(TypedDict, total=False):
    """What a session's description says beyond its mode and options (`describe`)."""

    top: int  # op replay: the kernels asked for
    targets: list[ReplayTargetJson]
    replay: ReplayParams  # `python <session>.replay.py <session>.json` reruns it
    command: list[str]
    ncu_version: str
    seconds: float
    ncu_seconds: float
    trace: str


class SessionInfo(SessionDetails, total=False):
    """A session's description, stored as `<session>.json` ({} where none could be read)."""

    mode: str  # op replay | script | cell | …
    set: str
    clock_control: str
    filter: dict[str, object]  # the `NcuOptions`, field by field


@dataclass
class StoredSession:
    """One finished session: the run that holds it, its name there, and its description."""

    run: Run
    name: str
    info: SessionInfo


def session_name(mode: str) -> str:
    """`<mode>-<time>` to the millisecond, so two sessions in one run never share files."""
    now = time.time()
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    return f"{mode}-{stamp}-{int(now * 1000) % 1000:03d}"


def ncu_only_run(runs_root: str | None, mode: str, code: str) -> Run:
    """A run folder holding only Nsight Compute results (no trace)."""
    run = RunStore(runs_root).create(f"ncu-{mode.split()[0]}")
    run.meta.status, run.meta.code, run.meta.settings = "complete", code, {"mode": "ncu"}
    run.write_meta()
    return run


def describe(mode: str, opts: NcuOptions, **extra: Unpack[SessionDetails]) -> SessionInfo:
    """The session's description stored as `<session>.json`: what was profiled, and how."""
    return {
        "mode": mode,
        "set": ",".join(opts.sections) or opts.set_name,
        "clock_control": opts.clock_control,
        "filter": asdict(opts),
        **extra,
    }


def capture_replay(
    source: Run | str | Path,
    top: int = 3,
    opts: NcuOptions | None = None,
    ncu: str | None = None,
    python: str | None = None,
    runs_root: str | None = None,
) -> StoredSession:
    """Profile the `top` kernels of a run (or trace file) by replaying their ops under ncu."""
    start = time.monotonic()
    opts = opts or NcuOptions()
    run = source if isinstance(source, Run) else None
    path = None if isinstance(source, Run) else Path(source)
    if path is not None and path.is_dir():
        run = open_run(path)
    trace = run.trace_paths()[0] if run is not None and run.trace_paths() else path
    if trace is None or not Path(trace).is_file():
        raise ValueError(f"{source}: no trace to replay from (run %%gpuprofile first)")
    targets = replay_targets(trace, top)
    with tempfile.TemporaryDirectory(prefix=temp_prefix() + "ncu-") as work:
        out = run_replay(targets, work, opts, ncu, python, top=top)
        info = describe(
            "op replay",
            opts,
            top=top,
            targets=out["targets"],
            replay=out["params"],  # `python <session>.replay.py <session>.json` reruns it
            command=out["command"],
            ncu_version=out["ncu_version"],
            seconds=time.monotonic() - start,
            ncu_seconds=out["seconds"],
            trace=str(trace),
        )
        if run is None:  # a bare trace file: keep the results in a run of their own
            run = ncu_only_run(runs_root, "replay", f"replay of {trace}")
        name = session_name("replay")
        save_ncu(run, name, out["report"], out["raw"], out["details"], dict(info), out["script"])
    info["seconds"] = time.monotonic() - start
    return StoredSession(run, name, info)


def capture_command(
    argv: Sequence[str],
    opts: NcuOptions | None = None,
    ncu: str | None = None,
    run: Run | None = None,
    mode: str = "script",
    cwd: str | Path | None = None,
    runs_root: str | None = None,
    code: str = "",
    session: str | None = None,
    progress: Callable[[str], None] | None = print_progress,
) -> StoredSession:
    """Run a command under ncu with the options' filter and store its report and exports."""
    start = time.monotonic()
    opts = opts or NcuOptions()
    if opts.launch_count is None:
        opts.launch_count = DEFAULT_LAUNCH_COUNT
    exe = find_ncu(ncu)
    version = ncu_version(exe)
    argv = [
        sys.executable if a in ("python", "python3") and i == 0 else a for i, a in enumerate(argv)
    ]
    with tempfile.TemporaryDirectory(prefix=temp_prefix() + "ncu-") as work:
        base = Path(work) / "profile"
        cmd = build_command(exe, opts, base, argv)
        result = run_ncu(cmd, base.with_suffix(".ncu-rep"), opts, cwd=cwd, progress=progress)
        raw = export_csv(exe, result.report, "raw")
        details = export_csv(exe, result.report, "details")
        if run is None:
            run = ncu_only_run(runs_root, mode, code or " ".join(argv))
        info = describe(
            mode,
            opts,
            command=cmd,
            ncu_version=".".join(map(str, version)),
            ncu_seconds=result.seconds,
            seconds=time.monotonic() - start,
        )
        name = session or session_name(mode.split()[0])
        save_ncu(run, name, result.report, raw, details, dict(info))
    info["seconds"] = time.monotonic() - start
    return StoredSession(run, name, info)


def capture_source(
    source: str,
    opts: NcuOptions | None = None,
    ncu: str | None = None,
    run: Run | None = None,
    runs_root: str | None = None,
    python: str | None = None,
) -> StoredSession:
    """Run self-contained cell code as a script in a subprocess under ncu (mode b)."""
    with tempfile.TemporaryDirectory(prefix=temp_prefix() + "cell-") as work:
        script = Path(work) / "cell.py"
        script.write_text(CELL_PRELUDE + source)
        return capture_command(
            [python or sys.executable, str(script)],
            opts,
            ncu,
            run,
            mode="cell",
            cwd=Path.cwd(),
            runs_root=runs_root,
            code=source,
        )
