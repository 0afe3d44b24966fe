"""`jupyter gpuprof run -- COMMAND`: the parent side of the protocol (launcher/protocol.py).

Creates the run folder, starts the user's command with the bootstrap on its PYTHONPATH and the
capture's settings in its environment, passes Ctrl-C on, waits, and closes the run: `failed`
with the reason when the child left no trace. Reporting what was captured is the CLI's.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from ..capture.ranks import format_ranks, parse_ranks
from ..protocol import (
    BOOTSTRAP,
    ENV_LOSSES,
    ENV_RANKS,
    ENV_RUN_DIR,
    ENV_SETTINGS,
    ENV_STOP,
    PER_RUN,
)
from ..terminal import say
from .naming import run_name
from .torchrun import split_launcher

if TYPE_CHECKING:
    from ..capture.settings import CaptureSettings

#: after Ctrl-C the command has this long to write what it captured and end, then it is
#: terminated, and killed INTERRUPT_KILL_S later (the user asked to stop: return within 5 s)
INTERRUPT_GRACE_S, INTERRUPT_KILL_S = 3.0, 1.0


class LaunchError(ValueError):
    """The command cannot be run as asked (printed as one line by the CLI)."""


@dataclass
class Launched:
    """A finished command: its run (closed), exit status, what ran and its child environment."""

    run: Any  # store.Run
    code: int
    command: list[str]  # as launched (rewritten for --ncu-rank)
    env: dict[str, str]  # the environment a try of this run starts from
    interrupted: bool = False  # Ctrl-C ended it: no report, no tries, one line


class LaunchSettings(TypedDict):
    """`CaptureSettings` keyword arguments, as the command's process reads them ($ENV_SETTINGS)."""

    steps: int
    warmup: int
    wait: int
    prof_warmup: int
    active: int
    with_stack: bool
    phases: bool
    record_shapes: bool
    profile_memory: bool
    count_flops: bool
    memory_history: bool
    ranks: str | None  # as typed: "0,3", "0-2", "none" (CaptureSettings parses it)


def settings_from(args: argparse.Namespace) -> LaunchSettings:
    """The capture settings `run`'s options ask for (`CaptureSettings` keyword arguments)."""
    return LaunchSettings(
        steps=args.steps,
        warmup=args.warmup,
        wait=args.wait,
        prof_warmup=args.prof_warmup,
        active=args.active,
        with_stack=args.with_stack,
        phases=not args.no_phases,
        record_shapes=not args.no_shapes,
        profile_memory=not args.no_memory,
        count_flops=not args.no_flops,
        memory_history=not getattr(args, "no_memory_history", False),
        ranks=args.ranks or None,
    )


def script_settings(settings: LaunchSettings) -> CaptureSettings:
    """The script mode's `CaptureSettings` of these options (checked: ValueError if invalid)."""
    from ..capture.settings import CaptureSettings

    s = settings
    return CaptureSettings(steps=s["steps"], warmup=s["warmup"], wait=s["wait"],
                           prof_warmup=s["prof_warmup"], active=s["active"],
                           record_shapes=s["record_shapes"], profile_memory=s["profile_memory"],
                           with_stack=s["with_stack"], phases=s["phases"],
                           count_flops=s["count_flops"], mode="script",
                           memory_history=s.get("memory_history", True),
                           ranks=parse_ranks(s["ranks"]))


def child_env(run_dir: Path, settings: LaunchSettings, losses: str = "",
              stop: bool = False) -> dict[str, str]:
    """The command's environment: bootstrap, run folder, settings, `run --try`'s loss label,
    `--stop-after-capture`."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(BOOTSTRAP), env.get("PYTHONPATH", ""))
                                        if p)
    env[ENV_RUN_DIR] = str(run_dir.resolve())
    env[ENV_SETTINGS] = json.dumps(settings)
    for name in PER_RUN:  # never inherited from a run this one runs inside
        env.pop(name, None)
    if losses:
        env[ENV_LOSSES] = losses
    if stop:
        env[ENV_STOP] = "1"
    if (ranks := parse_ranks(settings.get("ranks"))) is not None:
        env[ENV_RANKS] = format_ranks(ranks)
    return env


def ncu_command(args: argparse.Namespace, cmd: list[str]) -> list[str]:
    """`--ncu-rank`: check ncu and its options before the job starts, then rewrite torchrun."""
    from ..ncu import NcuError, find_ncu, ncu_version
    from .rank_launch import parse_ncu_args
    from .torchrun import launcher_python, rewrite_for_ncu

    if args.ncu_rank < 0:
        raise LaunchError(f"--ncu-rank must be a rank (>= 0), got {args.ncu_rank}")
    parse_ncu_args(args.ncu_args)
    try:
        exe = find_ncu(args.ncu)
        ncu_version(exe)
    except NcuError as e:
        raise LaunchError(str(e)) from None
    return rewrite_for_ncu(
        cmd, args.ncu_rank, launcher_python(cmd), args.ncu_args or "", str(Path(exe).resolve())
    )


def wait(proc: subprocess.Popen[bytes]) -> tuple[int, bool]:
    """The command's exit status, shell style, and whether Ctrl-C ended it. Ctrl-C in a
    terminal reaches the command too (same process group); a SIGINT sent to this process
    alone is passed on. The command gets INTERRUPT_GRACE_S to write what it captured, then
    is terminated, then killed."""
    try:
        code = proc.wait()
        return (128 - code if code < 0 else code), False
    except KeyboardInterrupt:
        pass
    ignore = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not stop us
    try:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        deadline = time.monotonic() + INTERRUPT_GRACE_S
        for stop in (None, proc.terminate, proc.kill):
            if stop is not None:
                stop()
                deadline = time.monotonic() + INTERRUPT_KILL_S
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
                break
            except subprocess.TimeoutExpired:
                continue
        proc.wait()
    finally:
        signal.signal(signal.SIGINT, ignore)
    code = proc.returncode
    return (128 - code if code < 0 else code), True


def close_run(run_dir: Path, code: int) -> Any:
    """Merge the ranks' metas; a run the child did not finish is `failed`, with the reason."""
    from ..store import open_run

    run = open_run(run_dir)
    run.merge_rank_metas()
    if run.meta.status == "running":
        ranks = parse_ranks(run.meta.settings.get("ranks"))
        run.meta.status = "failed"
        if code == 0 and not run.trace_paths() and (ranks == [] or "ncu" in run.meta.settings):
            run.meta.status = "complete"  # an ncu-only run: no rank was left to trace
        elif not run.trace_paths() and code == 0 and ranks:
            run.meta.error = (
                f"no traces: no rank in --ranks {format_ranks(ranks)} ran a training step "
                "(are the ranks below the world size?)"
            )
        elif not run.trace_paths() and code == 0:
            run.meta.error = (
                "no training steps seen: the script never called optimizer.step() "
                "(or jupyter_gpuprof.step())"
            )
        else:
            run.meta.error = f"the command exited with status {code} before the capture finished"
        run.write_meta()
    return run


def launch(args: argparse.Namespace, check_try: Any = None) -> Launched:
    """Run `args.cmd` under the capture into a new run folder; `check_try(text, steps)`
    refuses a `--try` that cannot work before anything starts."""
    from ..store import RunStore

    cmd = list(args.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise LaunchError(
            "nothing to run: give a command after --, e.g. jupyter gpuprof run -- python train.py"
        )
    settings = settings_from(args)
    script_settings(settings)  # validate before creating a folder
    if args.ncu_args is not None and args.ncu_rank is None:
        raise LaunchError("--ncu-args needs --ncu-rank R (the rank to run under Nsight Compute)")
    if args.try_fixes is not None and split_launcher(cmd) is not None:
        raise LaunchError("--try measures a single-process script; a torchrun job's ranks "
                          "cannot be re-run one fix at a time: try the fixes on a one-GPU run "
                          "of the script (jupyter gpuprof run --try … -- python train.py)")
    if check_try is not None:
        check_try(args.try_fixes, args.steps)
    launched = ncu_command(args, cmd) if args.ncu_rank is not None else cmd
    run = RunStore(args.runs_root).create(args.name or run_name(cmd))
    run.meta.code = shlex.join(cmd)
    run.meta.settings = script_settings(settings).to_meta()
    if launched is not cmd:
        run.meta.settings["ncu"] = {
            "rank": args.ncu_rank,
            "args": args.ncu_args or "",
            "command": shlex.join(launched),
        }
    run.write_meta()
    say(f"gpuprof: capturing into {run.path}", err=True)
    try:
        env = child_env(run.path, settings, losses="" if args.try_fixes is None else "original",
                        stop=bool(getattr(args, "stop_after_capture", False)))
        proc = subprocess.Popen(launched, env=env)
    except OSError as e:
        run.meta.status, run.meta.error = "failed", f"could not start {cmd[0]}: {e.strerror or e}"
        run.write_meta()
        raise LaunchError(run.meta.error) from None
    code, interrupted = wait(proc)
    run = close_run(run.path, code)
    ranks = run.meta.ranks
    some = (f"; traced ranks {format_ranks(ranks)} of {run.meta.world_size}"
            if ranks and len(ranks) < (run.meta.world_size or 0) else "")
    if interrupted:
        kept = ("the capture is complete: jupyter gpuprof analyze "
                if run.meta.status == "complete" else "what was measured is kept: ")
        say(f"gpuprof: interrupted; {kept}{shlex.quote(str(run.path))}", err=True)
    else:
        say(f"gpuprof: run {run.meta.status}" + (f": {run.meta.error}" if run.meta.error
                                                    else "") + f"{some} ({run.path})",
              err=True)
    return Launched(run, code, launched, child_env(run.path, settings), interrupted)
