"""The %ncu workflows as plain functions (no IPython), so scripts and the GPU check use them too.

`profile_replay` replays a run's hottest ops under ncu (mode a); `profile_command` and
`profile_source` run a script or a self-contained cell under ncu with an NVTX/kernel filter
(mode b). Each stores the gzipped report and its CSV exports under `<run>/ncu/` and returns
`NcuResults`.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..analysis.ncu_metrics import frame, raw_records, read_details_rules
from ..ncu_results import NcuResults, build_results
from ..store import Run, RunStore, open_run
from ..store.ncu_files import save_ncu
from .ncu import (
    NcuOptions,
    build_command,
    export_csv,
    find_ncu,
    ncu_version,
    print_progress,
    run_ncu,
)
from .ncu_replay import replay_targets, run_replay

#: kernels profiled when a cell or script run names no --launch-count (each is replayed ~40x)
DEFAULT_LAUNCH_COUNT = 10


def _session_name(mode: str) -> str:
    """`<mode>-<time>` to the millisecond, so two sessions in one run never share files."""
    now = time.time()
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    return f"{mode}-{stamp}-{int(now * 1000) % 1000:03d}"


def _rules_from_text(details: str) -> Any:
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.write(details)
    try:
        return read_details_rules(f.name)
    finally:
        Path(f.name).unlink()


def _ncu_run(runs_root: str | None, mode: str, code: str) -> Run:
    """A run folder holding only Nsight Compute results (no trace)."""
    run = RunStore(runs_root).create(f"ncu-{mode.split()[0]}")
    run.meta.status, run.meta.code, run.meta.settings = "complete", code, {"mode": "ncu"}
    run.write_meta()
    return run


def _info(mode: str, opts: NcuOptions, **extra: Any) -> dict[str, Any]:
    return {
        "mode": mode,
        "set": ",".join(opts.sections) or opts.set_name,
        "clock_control": opts.clock_control,
        "filter": asdict(opts),
        **extra,
    }


def profile_replay(
    source: Run | str | Path,
    top: int = 3,
    opts: NcuOptions | None = None,
    ncu: str | None = None,
    python: str | None = None,
    runs_root: str | None = None,
) -> NcuResults:
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
    with tempfile.TemporaryDirectory(prefix="gpuprof-ncu-") as work:
        out = run_replay(targets, work, opts, ncu, python, top=top)
        info = _info(
            "op replay",
            opts,
            top=top,
            targets=out["targets"],
            command=out["command"],
            ncu_version=out["ncu_version"],
            seconds=time.monotonic() - start,
            ncu_seconds=out["seconds"],
            trace=str(trace),
        )
        if run is None:  # a bare trace file: keep the results in a run of their own
            run = _ncu_run(runs_root, "replay", f"replay of {trace}")
        files = save_ncu(
            run,
            _session_name("replay"),
            out["report"],
            out["raw"],
            out["details"],
            info,
            out["script"],
        )
    info["seconds"] = time.monotonic() - start
    return build_results(out["kernels"], out["rules"], info, files)


def profile_command(
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
) -> NcuResults:
    """Run a command under ncu with the options' filter; store and read back its report."""
    start = time.monotonic()
    opts = opts or NcuOptions()
    if opts.launch_count is None:
        opts.launch_count = DEFAULT_LAUNCH_COUNT
    exe = find_ncu(ncu)
    version = ncu_version(exe)
    argv = [
        sys.executable if a in ("python", "python3") and i == 0 else a for i, a in enumerate(argv)
    ]
    with tempfile.TemporaryDirectory(prefix="gpuprof-ncu-") as work:
        base = Path(work) / "profile"
        cmd = build_command(exe, opts, base, argv)
        result = run_ncu(cmd, base.with_suffix(".ncu-rep"), opts, cwd=cwd, progress=progress)
        raw = export_csv(exe, result.report, "raw")
        details = export_csv(exe, result.report, "details")
        kernels, rules = frame(raw_records(raw, "ncu")), _rules_from_text(details)
        if run is None:
            run = _ncu_run(runs_root, mode, code or " ".join(argv))
        info = _info(
            mode,
            opts,
            command=cmd,
            ncu_version=".".join(map(str, version)),
            ncu_seconds=result.seconds,
            seconds=time.monotonic() - start,
        )
        name = session or _session_name(mode.split()[0])
        files = save_ncu(run, name, result.report, raw, details, info)
    info["seconds"] = time.monotonic() - start
    return build_results(kernels, rules, info, files)


CELL_PRELUDE = '''"""A notebook cell run under Nsight Compute by %%ncu (jupyter_gpuprof)."""
'''


def profile_source(
    source: str,
    opts: NcuOptions | None = None,
    ncu: str | None = None,
    run: Run | None = None,
    runs_root: str | None = None,
    python: str | None = None,
) -> NcuResults:
    """Run self-contained cell code as a script in a subprocess under ncu (mode b)."""
    with tempfile.TemporaryDirectory(prefix="gpuprof-cell-") as work:
        script = Path(work) / "cell.py"
        script.write_text(CELL_PRELUDE + source)
        return profile_command(
            [python or sys.executable, str(script)],
            opts,
            ncu,
            run,
            mode="cell",
            cwd=Path.cwd(),
            runs_root=runs_root,
            code=source,
        )
