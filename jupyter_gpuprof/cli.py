"""`jupyter gpuprof analyze|run`: one store and report for traces, run folders and scripts."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from .capture.options import add_step_options
from .oneline import error_line
from .protocol import ENV_RANKS
from .terminal import say
from .tries.script import add_try_option, check_try, print_report_with_tries

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
    from .analysis import piece_share
    from .analysis.tracefile import Prefetch
    from .store.layout import single_trace

    # forked before any thread and before pandas: small decoders that decode while this
    # process imports; decompressing releases the GIL, so it overlaps the imports too
    trace = single_trace(path)
    ahead = (piece_share.start(trace) or Prefetch(trace)) if trace is not None else None
    try:
        from .report import analyze_path, analyze_trace

        report = (analyze_trace(path, baseline_ms, data=ahead) if baseline_ms
                  else analyze_path(path, data=ahead))
    finally:
        if ahead is not None:  # read already (closed there), or not read at all
            ahead.close()
    if as_json:
        say(json.dumps(report.to_json()))
    else:
        say(report.to_text())


def cmd_analyze(args: argparse.Namespace) -> int:
    path = Path(args.path)
    if not path.exists():
        raise CliError(f"no such file or folder: {path}")
    baseline = _baseline_ms(args.baseline_ms, path)
    if path.is_dir() and (text := _memory_only(path)):  # out of memory before the profiler ran
        say(text)
        return 0
    from .analysis.baseline_check import BaselineError

    try:
        _print_report(path, args.json, baseline)
    except BaselineError as e:  # implausible for the trace's own steps
        raise CliError(f"--baseline-ms {args.baseline_ms}: {e}") from None
    return 0


def _memory_only(folder: Path) -> str | None:
    """The memory post-mortem of a run folder that has an allocator history but no trace."""
    from .store.layout import run_traces

    if run_traces(folder):
        return None
    from .report.memory_summary import history_file, memory_only_text

    return memory_only_text(folder) if history_file(folder) else None


def _baseline_ms(text: str | None, path: Path) -> list[float] | None:
    """--baseline-ms: one unprofiled step time, or several comma-separated, in ms (finite and
    positive here, before the trace is read; plausible for its steps once it is)."""
    if text is None:
        return None
    from .analysis.baseline_check import BaselineError, check_baseline

    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise CliError(f"--baseline-ms {text!r}: give step times in ms, e.g. 12.5 or 12.4,12.6")\
            from None
    try:
        check_baseline(values)
    except BaselineError as e:
        raise CliError(f"--baseline-ms {text}: {e}") from None
    if not path.is_file():
        raise CliError("--baseline-ms applies to a trace file; a run folder has its own baseline")
    return values


def cmd_compare(args: argparse.Namespace) -> int:
    from .report.comparison import compare

    result = compare(args.before, args.after, args.runs_root)
    say(json.dumps(result.to_json()) if args.json else result.to_text())
    return 0


def cmd_calibration(args: argparse.Namespace) -> int:
    import msgspec

    from .report.calibration import record_table
    from .store import RunStore
    from .views.summary_doc import CalibrationDoc
    from .views.whatif_text import record_table as table_text

    root = RunStore(args.runs_root).root
    rows: list[CalibrationDoc] = msgspec.to_builtins(record_table(root))
    if args.json:
        say(json.dumps(rows))
    elif rows:
        say(table_text(rows))
    else:
        say(f"no tries recorded in {root} yet: `%%gpuprofile --try` and "
              "`jupyter gpuprof run --try` add theirs")
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
    out = write_export(analyze_path(path).summary_doc(), args.html)
    say(
        f"gpuprof: wrote {out} ({out.stat().st_size / 1e3:,.0f} kB, self-contained)",
        err=True,
    )
    return 0


def _report_ncu_rank(run: Any, rank: int, as_json: bool) -> None:
    """After the job: the ncu rank's results (read back from <run>/ncu/) or its one-line error."""
    from .store.ncu_files import ncu_paths, read_ncu_error

    name = f"rank{rank}"
    error = read_ncu_error(run, name)
    if error or "info" not in ncu_paths(run, name):
        why = error or f"no report: did rank {rank} run? (see its output above)"
        say(f"gpuprof: ncu on rank {rank}: {why}", err=True)
        return
    from .ncu import load_ncu

    res = load_ncu(run, name)
    say(
        f"gpuprof: ncu on rank {rank}: {len(res.kernels)} kernels in {run.path / 'ncu'}",
        err=True,
    )
    if not as_json:
        say(res.to_text())


def cmd_run(args: argparse.Namespace) -> int:
    from .launcher.run import launch

    job = launch(args, check_try)
    run = job.run
    if job.interrupted:  # the user asked to stop: no analysis, no tries (its line is printed)
        return job.code
    if run.trace_paths():
        try:
            if args.try_fixes is None:
                _print_report(run.path, args.json)
            else:  # each fix: the same command once more (tries/script.py)
                print_report_with_tries(run, job.command, job.env, args.try_fixes, args.json)
        except Exception as e:  # noqa: BLE001 - the command's own status matters more; the run is kept
            if args.traceback:
                raise
            say(f"gpuprof: analysis failed: {_describe(e)}", err=True)
    elif run.memory_history_path() is not None:  # out of memory before the profiler ran
        from .report.memory_summary import memory_only_text

        if text := memory_only_text(run.path, run.meta.error):
            say(text)
    if args.ncu_rank is not None:
        try:
            _report_ncu_rank(run, args.ncu_rank, args.json)
        except Exception as e:  # noqa: BLE001 - as above: the run and the command's status stand
            if args.traceback:
                raise
            say(f"gpuprof: reading the ncu report failed: {_describe(e)}", err=True)
    return job.code


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

    p = sub.add_parser("calibration", help="how far the predictions of each fix were from "
                       "what its tries measured, per GPU (the runs folder's record)")
    p.add_argument("--runs-root", default=None,
                   help="runs folder (default $JUPYTER_GPUPROF_RUNS or ./.gpuprof/runs)")
    p.add_argument("--json", action="store_true", help="print the table as JSON rows")
    p.set_defaults(func=cmd_calibration)

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
    p.add_argument("--no-memory-history", action="store_true",
                   help="do not record the CUDA allocator's history (memory over the step)")
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
    p.add_argument("--stop-after-capture", action="store_true",
                   help="end the command as soon as its capture is written (a long training "
                   "need not run to its end for the report; --try re-runs stop after their "
                   "baseline anyway)")
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
        say(f"gpuprof: {_describe(e)}", err=True)
        return EXIT_ERROR
