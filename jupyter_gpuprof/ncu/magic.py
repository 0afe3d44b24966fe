"""%ncu / %%ncu: parse arguments, pick the run, call the ncu workflows, display; nothing else.

%ncu [--top N]                      replay the hottest ops of the last %%gpuprofile run
%ncu [filter] -- python train.py    a script under ncu
%%ncu [filter]                      this (self-contained) cell as a script under ncu
filter: --nvtx RANGE  -k REGEX  -s/--launch-skip N  -c/--launch-count N
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class

from ..oneline import error_line
from ..store import Run, RunStore, open_run
from . import NcuError, NcuOptions


class _Parser(argparse.ArgumentParser):
    """An argparse parser that reports bad arguments as a UsageError line."""

    def error(self, message: str) -> Any:
        """Raise instead of exiting: argparse would exit the kernel."""
        raise UsageError(f"%ncu: {message}")


def parser() -> argparse.ArgumentParser:
    """The %ncu argument parser (also what `%ncu --help` prints)."""
    p = _Parser(prog="%ncu", add_help=False, description=__doc__)
    p.add_argument("--help", "-h", action="store_true", help="show this help")
    p.add_argument("--top", type=int, default=3, help="kernels to profile by op replay (default 3)")
    p.add_argument(
        "--set",
        dest="set_name",
        default="full",
        help="ncu section set: basic | detailed | full (default full: stall reasons)",
    )
    p.add_argument("--section", action="append", default=[], help="ncu section (instead of --set)")
    p.add_argument(
        "--clock-control",
        default="none",
        choices=["none", "base"],
        help="'none' (default) measures the GPU as it runs; 'base' locks clocks (needs privileges)",
    )
    p.add_argument("--timeout", type=float, default=300.0, help="seconds before ncu is stopped")
    p.add_argument("--ncu", default=None, help="path to ncu (else $JUPYTER_GPUPROF_NCU, PATH)")
    p.add_argument(
        "--nvtx",
        action="append",
        default=[],
        help="NVTX range to profile: 'name' for range_start/range_end, 'name/' for push/pop",
    )
    p.add_argument("-k", "--kernel", default=None, help="kernel name regex")
    p.add_argument("-s", "--launch-skip", type=int, default=0, help="matching launches to skip")
    p.add_argument(
        "-c",
        "--launch-count",
        type=int,
        default=None,
        help="matching launches to profile (default 10 for cells/scripts)",
    )
    p.add_argument(
        "--run", default=None, help="run id or folder (default: the last %%gpuprofile run)"
    )
    p.add_argument("--runs-root", default=None, help="runs folder (default as %%gpuprofile)")
    p.add_argument("-o", "--output", default="_ncu", help="variable that receives the NcuResults")
    p.add_argument("-q", "--quiet", action="store_true", help="do not display the panel")
    return p


def split_line(line: str) -> tuple[list[str], list[str]]:
    """Magic options and the command after `--` (empty when there is none)."""
    tokens = shlex.split(line)
    if "--" in tokens:
        i = tokens.index("--")
        return tokens[:i], tokens[i + 1 :]
    return tokens, []


@magics_class
class NcuMagics(Magics):
    """%ncu and %%ncu; the last results live on this object, not in module globals."""

    def __init__(self, shell: Any = None) -> None:
        """Start with no results; `last` keeps the latest for the session."""
        super().__init__(shell)
        self.last: Any = None

    @line_cell_magic
    def ncu(self, line: str, cell: str | None = None) -> Any:
        """Profile hot kernels with Nsight Compute (op replay, a cell, or a script)."""
        opts_tokens, argv = split_line(line)
        args = parser().parse_args(opts_tokens)
        if args.help:
            print(parser().format_help())
            return None
        opts = NcuOptions(
            set_name=args.set_name,
            sections=args.section,
            clock_control=args.clock_control,
            kernel_regex=args.kernel,
            launch_skip=args.launch_skip,
            launch_count=args.launch_count,
            nvtx_include=args.nvtx,
            timeout_s=args.timeout,
        )
        from . import results as s

        try:
            if cell is not None:
                source = self.shell.transform_cell(cell) if self.shell else cell
                res = s.profile_source(
                    source, opts, args.ncu, self._run(args, required=False), args.runs_root
                )
            elif argv:
                res = s.profile_command(
                    argv,
                    opts,
                    args.ncu,
                    self._run(args, required=False),
                    runs_root=args.runs_root,
                    code=" ".join(argv),
                )
            else:
                run = self._run(args, required=True)
                assert run is not None  # required=True raises instead
                res = s.profile_replay(run, args.top, opts, args.ncu, runs_root=args.runs_root)
        except NcuError as e:
            print(f"%ncu: {e}")
            return None
        except ValueError as e:
            print(f"%ncu: {error_line(e)}")
            return None
        self.last = res
        self._attach(res)
        if self.shell is not None:
            self.shell.user_ns[args.output] = res
        n, secs = len(res.kernels), float(res.info.get("seconds", 0.0))
        print(
            f"%ncu: {n} kernels profiled in {secs:.1f} s; results in {args.output} "
            f"(.kernels, .rules) and under {res.files.get('info', Path('?')).parent}"
        )
        if not args.quiet:
            from IPython.display import display

            display(res)
        return None

    def _run(self, args: argparse.Namespace, required: bool) -> Run | None:
        """The run to use: --run, else the last %%gpuprofile run, else the newest with a trace."""
        if args.run:
            p = Path(args.run)
            return open_run(p) if p.is_dir() else RunStore(args.runs_root).get(args.run)
        mgr = getattr(self.shell, "magics_manager", None)
        for m in (getattr(mgr, "registry", {}) or {}).values():
            last = getattr(m, "last_run", None)
            if isinstance(last, Run) and last.trace_paths():
                return last
        report = self.shell.user_ns.get("_gpuprof") if self.shell else None
        if report is not None and getattr(report, "path", None) and Path(report.path).is_dir():
            return open_run(report.path)
        if not required:
            return None
        for r in RunStore(args.runs_root).list():
            if isinstance(r, Run) and r.trace_paths():
                return r
        raise ValueError(
            "no %%gpuprofile run with a trace found: run %%gpuprofile first, or pass "
            "--run RUN_ID, or profile a cell with %%ncu"
        )

    def _attach(self, res: Any) -> None:
        """Give the last Report an `.ncu` table and merge the verdicts into its next steps."""
        report = self.shell.user_ns.get("_gpuprof") if self.shell else None
        if report is None or not hasattr(report, "advice") or "info" not in res.files:
            return
        if Path(str(report.path)).resolve() != res.files["info"].parent.parent.resolve():
            return  # results of another run: leave that report alone
        from . import attach_ncu

        attach_ncu(report, res)
        try:  # keep the merged next steps in the run's cached summary (sidebar, CLI)
            open_run(report.path).write_summary(report.to_json())
        except (OSError, ValueError, TypeError) as e:
            print(f"%ncu: could not update the run's summary.json ({e})")


def load_ipython_extension(ip: Any) -> None:
    """Register %ncu / %%ncu with an IPython shell."""
    ip.register_magics(NcuMagics)
