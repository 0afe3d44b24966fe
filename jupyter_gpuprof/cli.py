"""`jupyter gpuprof analyze|run`: one store and report for traces, run folders and scripts."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from .capture.options import add_step_options
from .capture.ranks import ENV_RANKS, format_ranks, parse_ranks
from .capture.script_tries import add_try_option, check_try, print_report_with_tries
from .oneline import error_line

EXIT_ERROR = 2


class CliError(Exception):
    """A user-facing failure: printed as one line, exit status 2."""


def _expected_errors() -> tuple[type[BaseException], ...]:
    from .store import RunStoreError

    errors: list[type[BaseException]] = [OSError, ValueError, EOFError, CliError, RunStoreError]
    try:
        from .analysis.trace import TraceError

        errors.append(TraceError)
    except ImportError:
        pass
    return tuple(errors)


def _print_report(path: Path, as_json: bool, baseline_ms: list[float] | None = None) -> None:
    from .analysis.tracefile import Prefetch

    # decompressing releases the GIL, so it overlaps the imports of pandas and numpy
    prefetch = Prefetch(path) if path.is_file() else None
    from .report import analyze_path, analyze_trace

    report = (analyze_trace(path, baseline_ms, data=prefetch) if baseline_ms
              else analyze_path(path, data=prefetch))
    if as_json:
        print(json.dumps(report.to_json()))
    else:
        print(report.to_text())


def cmd_analyze(args: argparse.Namespace) -> int:
    path = Path(args.path)
    if not path.exists():
        raise CliError(f"no such file or folder: {path}")
    baseline = _baseline_ms(args.baseline_ms, path)
    _print_report(path, args.json, baseline)
    return 0


def _baseline_ms(text: str | None, path: Path) -> list[float] | None:
    """--baseline-ms: one unprofiled step time, or several comma-separated, in ms."""
    if text is None:
        return None
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise CliError(f"--baseline-ms {text!r}: give step times in ms, e.g. 12.5 or 12.4,12.6")\
            from None
    if not values or min(values) <= 0:
        raise CliError("--baseline-ms: step times must be positive numbers of milliseconds")
    if not path.is_file():
        raise CliError("--baseline-ms applies to a trace file; a run folder has its own baseline")
    return values


def cmd_compare(args: argparse.Namespace) -> int:
    from .report.comparison import compare

    result = compare(args.before, args.after, args.runs_root)
    print(json.dumps(result.to_json()) if args.json else result.to_text())
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from .report import analyze_path
    from .views.export import write_export

    path = Path(args.run)
    if not path.exists():
        from .store import RunStore

        try:
            path = RunStore(args.runs_root).get(args.run).path  # a run id in the runs folder
        except (LookupError, OSError, ValueError):
            raise CliError(f"no such run, file or folder: {args.run}") from None
    # analysed afresh: a cached summary.json is not trusted for a file meant to be shared
    out = write_export(analyze_path(path).to_json(), args.html)
    print(
        f"gpuprof: wrote {out} ({out.stat().st_size / 1e6:.1f} MB, self-contained)", file=sys.stderr
    )
    return 0


def _settings_from(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "steps": args.steps,
        "warmup": args.warmup,
        "wait": args.wait,
        "prof_warmup": args.prof_warmup,
        "active": args.active,
        "with_stack": args.with_stack,
        "phases": not args.no_phases,
        "record_shapes": not args.no_shapes,
        "profile_memory": not args.no_memory,
        "count_flops": not args.no_flops,
        "ranks": args.ranks or None,
    }


def _default_name(cmd: list[str]) -> str:
    for part in cmd:
        if part.endswith(".py"):
            return Path(part).stem
    return Path(cmd[0]).name


def _child_env(run_dir: Path, settings: dict[str, Any], losses: str = "") -> dict[str, str]:
    """The script's environment: bootstrap, run folder, settings, `run --try`'s loss label."""
    from .capture.autorun import ENV_LOSSES, ENV_RUN_DIR, ENV_SETTINGS

    env = dict(os.environ)
    bootstrap = Path(__file__).resolve().parent / "capture" / "bootstrap"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(bootstrap), env.get("PYTHONPATH", "")) if p)
    env[ENV_RUN_DIR] = str(run_dir.resolve())
    env[ENV_SETTINGS] = json.dumps(settings)
    for name in (ENV_LOSSES, ENV_RANKS):  # never inherited from a run this one runs inside
        env.pop(name, None)
    if losses:
        env[ENV_LOSSES] = losses
    if (ranks := parse_ranks(settings.get("ranks"))) is not None:
        env[ENV_RANKS] = format_ranks(ranks)
    return env


def _ncu_command(args: argparse.Namespace, cmd: list[str]) -> list[str]:
    """`--ncu-rank`: check ncu and its options before the job starts, then rewrite torchrun."""
    from .capture.rank_launch import parse_ncu_args
    from .capture.torchrun import launcher_python, rewrite_for_ncu
    from .ncu import NcuError, find_ncu, ncu_version

    if args.ncu_rank < 0:
        raise CliError(f"--ncu-rank must be a rank (>= 0), got {args.ncu_rank}")
    parse_ncu_args(args.ncu_args)
    try:
        exe = find_ncu(args.ncu)
        ncu_version(exe)
    except NcuError as e:
        raise CliError(str(e)) from None
    return rewrite_for_ncu(
        cmd, args.ncu_rank, launcher_python(cmd), args.ncu_args or "", str(Path(exe).resolve())
    )


def _report_ncu_rank(run: Any, rank: int, as_json: bool) -> None:
    """After the job: the ncu rank's results (read back from <run>/ncu/) or its one-line error."""
    from .store.ncu_files import ncu_paths, read_ncu_error

    name = f"rank{rank}"
    error = read_ncu_error(run, name)
    if error or "info" not in ncu_paths(run, name):
        why = error or f"no report: did rank {rank} run? (see its output above)"
        print(f"gpuprof: ncu on rank {rank}: {why}", file=sys.stderr)
        return
    from .ncu import load_ncu

    res = load_ncu(run, name)
    print(
        f"gpuprof: ncu on rank {rank}: {len(res.kernels)} kernels in {run.path / 'ncu'}",
        file=sys.stderr,
    )
    if not as_json:
        print(res.to_text())


def _wait(proc: subprocess.Popen[bytes]) -> int:
    # Ctrl-C reaches the child too (same process group); wait for it to write its partial trace.
    while True:
        try:
            code = proc.wait()
            break
        except KeyboardInterrupt:
            continue
    return 128 - code if code < 0 else code  # killed by signal N -> 128 + N, like a shell


def _close_run(run_dir: Path, code: int) -> Any:
    from .store import open_run

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


def cmd_run(args: argparse.Namespace) -> int:
    from .capture.settings import CaptureSettings
    from .store import RunStore

    cmd = list(args.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise CliError(
            "nothing to run: give a command after --, e.g. jupyter gpuprof run -- python train.py"
        )
    settings = _settings_from(args)
    CaptureSettings(**settings, mode="script")  # validate before creating a folder
    if args.ncu_args is not None and args.ncu_rank is None:
        raise CliError("--ncu-args needs --ncu-rank R (the rank to run under Nsight Compute)")
    check_try(args.try_fixes, cmd, args.steps)
    launched = _ncu_command(args, cmd) if args.ncu_rank is not None else cmd
    run = RunStore(args.runs_root).create(args.name or _default_name(cmd))
    run.meta.code = shlex.join(cmd)
    run.meta.settings = CaptureSettings(**settings, mode="script").to_meta()
    if launched is not cmd:
        run.meta.settings["ncu"] = {
            "rank": args.ncu_rank,
            "args": args.ncu_args or "",
            "command": shlex.join(launched),
        }
    run.write_meta()
    print(f"gpuprof: capturing into {run.path}", file=sys.stderr)
    try:
        env = _child_env(run.path, settings, losses="" if args.try_fixes is None else "original")
        proc = subprocess.Popen(launched, env=env)
    except OSError as e:
        run.meta.status, run.meta.error = "failed", f"could not start {cmd[0]}: {e.strerror or e}"
        run.write_meta()
        raise CliError(run.meta.error) from None
    code = _wait(proc)
    run = _close_run(run.path, code)
    ranks = run.meta.ranks
    some = (f"; traced ranks {format_ranks(ranks)} of {run.meta.world_size}"
            if ranks and len(ranks) < (run.meta.world_size or 0) else "")
    print(f"gpuprof: run {run.meta.status}" + (f": {run.meta.error}" if run.meta.error else "")
          + f"{some} ({run.path})", file=sys.stderr)
    if run.trace_paths():
        try:
            if args.try_fixes is None:
                _print_report(run.path, args.json)
            else:  # each fix: the same command once more (capture/script_tries.py)
                print_report_with_tries(run, launched, _child_env(run.path, settings),
                                        args.try_fixes, args.json)
        except Exception as e:  # noqa: BLE001 - the command's own status matters more; the run is kept
            if args.traceback:
                raise
            print(f"gpuprof: analysis failed: {_describe(e)}", file=sys.stderr)
    if args.ncu_rank is not None:
        try:
            _report_ncu_rank(run, args.ncu_rank, args.json)
        except Exception as e:  # noqa: BLE001 - as above: the run and the command's status stand
            if args.traceback:
                raise
            print(f"gpuprof: reading the ncu report failed: {_describe(e)}", file=sys.stderr)
    return code


def _describe(e: BaseException) -> str:
    """The one line shown for an error: expected ones by message, bugs by type and a hint."""
    if isinstance(e, _expected_errors()):
        return error_line(e)
    return f"{type(e).__name__}: {e} (rerun with --traceback for details)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jupyter gpuprof", description="Profile PyTorch training steps and explain the trace."
    )
    parser.add_argument(
        "--traceback", action="store_true", help="show tracebacks instead of one-line errors"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser(
        "analyze", help="analyze a trace (.json/.json.gz), a run folder or a folder of rank traces"
    )
    p.add_argument("path")
    p.add_argument(
        "--json", action="store_true", help="print the report as JSON (same as summary.json)"
    )
    p.add_argument("--baseline-ms", default=None, metavar="MS",
                   help="the unprofiled step time (ms; or several, comma-separated) from your "
                   "logs: the trace is reconciled with it like a captured baseline")
    p.set_defaults(func=cmd_analyze)

    p = sub.add_parser(
        "compare", help="compare two runs (ids, run folders or traces): is the change real?"
    )
    p.add_argument("before", help="run id, run folder or trace of the baseline")
    p.add_argument("after", help="run id, run folder or trace after the change")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument("--runs-root", default=None, help="runs folder for run ids")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("export", help="write one self-contained offline HTML report of a run")
    p.add_argument("run", help="run folder, trace file, or run id in the runs folder")
    p.add_argument("--html", required=True, metavar="OUT.html", help="the HTML file to write")
    p.add_argument("--runs-root", default=None, help="runs folder for run ids")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser(
        "run", help="run a script unmodified, profiling its training steps (optimizer.step())"
    )
    p.add_argument("--name", default=None, help="run name (default: the script's name)")
    add_step_options(p.add_argument)
    p.add_argument("--with-stack", action="store_true", help="record Python stacks")
    p.add_argument(
        "--no-phases", action="store_true", help="no forward/backward/optimizer/data ranges"
    )
    p.add_argument("--no-shapes", action="store_true", help="do not record input shapes")
    p.add_argument("--no-memory", action="store_true", help="do not record memory events")
    p.add_argument("--no-flops", action="store_true", help="skip FLOP counting")
    p.add_argument(
        "--ranks",
        default=os.environ.get(ENV_RANKS) or None,
        metavar="LIST",
        help="distributed jobs: only these ranks capture, e.g. 0,3 or 0-3 or none "
        f"(default ${ENV_RANKS}, else all); the others run untouched",
    )
    p.add_argument(
        "--ncu-rank",
        type=int,
        default=None,
        metavar="R",
        help="torchrun jobs: run rank R under Nsight Compute (a short window, -c 10 by default); "
        "that rank writes no trace",
    )
    p.add_argument(
        "--ncu-args",
        default=None,
        metavar="ARGS",
        help='ncu options for --ncu-rank, e.g. --ncu-args="-k regex:gemm -c 5 --set full"',
    )
    p.add_argument("--ncu", default=None, help="path to ncu (else $JUPYTER_GPUPROF_NCU, PATH)")
    add_try_option(p.add_argument)
    p.add_argument(
        "--runs-root",
        default=None,
        help="runs folder (default $JUPYTER_GPUPROF_RUNS or ./.gpuprof/runs)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    p.set_defaults(func=cmd_run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status (2 on errors, the command's status for `run`)."""
    args = build_parser().parse_args(argv)
    try:
        status = int(args.func(args))
        if argv is None and args.func is cmd_analyze:
            # a process that only analysed: skip freeing a few hundred MB of tables one object
            # at a time on the way out (the output is written; nothing else is pending)
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
        return status
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    except BrokenPipeError:
        # the reader went away (`… | head`): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as e:  # noqa: BLE001 - one line for users; --traceback for the rest
        if args.traceback:
            raise
        print(f"gpuprof: {_describe(e)}", file=sys.stderr)
        return EXIT_ERROR
