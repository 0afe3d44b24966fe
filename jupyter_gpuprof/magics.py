"""%%gpuprofile: parse arguments, run the cell under a ProfileSession, display the report."""

from __future__ import annotations

import ast
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from .advice.fix_table import fixes_help
from .capture.options import STEP_OPTIONS
from .capture.session import ProfileSession
from .capture.settings import CaptureSettings
from .progress import CaptureProgress
from .store import Run, RunStore
from .terminal import say

NO_GPU_BANNER = (
    "GPU metrics unavailable: CUDA is not available in this kernel; "
    "the trace holds CPU activities only."
)
_LOOPS = (ast.For, ast.While, ast.AsyncFor)
_BLOCKS = (ast.With, ast.AsyncWith, ast.Try, ast.If)


def has_top_level_loop(source: str) -> bool:
    """True when the cell is a whole training loop: a top-level for/while (also in with/try/if)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False

    def scan(body: list[ast.stmt]) -> bool:
        for node in body:
            if isinstance(node, _LOOPS):
                return True
            if isinstance(node, _BLOCKS):
                inner = list(getattr(node, "body", [])) + list(getattr(node, "orelse", []))
                inner += list(getattr(node, "finalbody", []))
                if scan(inner):
                    return True
        return False

    return scan(tree.body)


F = TypeVar("F", bound=Callable[..., Any])


def _arg(*args: Any, **kwargs: Any) -> Callable[[F], F]:
    """IPython's `argument` decorator, typed (it keeps the function it decorates)."""
    return cast("Callable[[F], F]", argument(*args, **kwargs))


def _parsed() -> Callable[[F], F]:
    """IPython's `magic_arguments` decorator, typed (it adds a parser to the function)."""
    return cast("Callable[[F], F]", magic_arguments())


def _step_arguments(fn: F) -> F:
    """The step-count options of `capture.options`, as IPython magic arguments."""
    for option in reversed(STEP_OPTIONS):
        fn = _arg(option.flag, type=int, default=option.default, help=option.help)(fn)
    return fn


@magics_class
class GpuProfMagics(Magics):
    """The %%gpuprofile cell magic; state lives on this object, not in module globals."""

    def __init__(self, shell: Any = None) -> None:
        super().__init__(shell)
        self.last_run: Run | None = None
        self._shown: ProfileSession | None = None
        self._progress: CaptureProgress | None = None  # the running cell's progress line
        self._code: Any = None  # the compiled step of the last body-mode cell

    @_parsed()
    @_step_arguments
    @_arg("--name", default=None, help="run name (folder suffix); default: gpuprofile")
    @_arg(
        "-o",
        "--output",
        dest="output",
        default="_gpuprof",
        help="variable that receives the Report",
    )
    @_arg(
        "--with-stack",
        action="store_true",
        help="record Python stacks (bigger trace, more overhead)",
    )
    @_arg("--no-shapes", action="store_true", help="do not record input shapes")
    @_arg("--no-memory", action="store_true", help="do not record memory events")
    @_arg("--no-memory-history", action="store_true",
          help="do not record the CUDA allocator's history (memory over the step)")
    @_arg("--no-phases", action="store_true", help="no forward/backward/optimizer/data ranges")
    @_arg("--no-flops", action="store_true", help="skip FLOP counting on the last warm-up step")
    @_arg(
        "--runs-root",
        default=None,
        help="runs folder (default $JUPYTER_GPUPROF_RUNS or ./.gpuprof/runs)",
    )
    @_arg(
        "--loop",
        action="store_true",
        help="the cell is a whole training loop; steps = optimizer.step()",
    )
    @_arg("--body", action="store_true", help="the cell is one step even if it contains a loop")
    @_arg(
        "--try",
        dest="try_fixes",
        nargs="?",
        const="auto",
        default=None,
        help="after the report, apply fixes in this kernel and measure them: "
        f"{fixes_help()} (default: the recommended ones)",
    )
    @_arg(
        "-q",
        "--quiet",
        action="store_true",
        help="store the report in the variable without displaying it",
    )
    @cell_magic
    def gpuprofile(self, line: str, cell: str) -> None:
        """Profile a training step (the cell, run repeatedly) or a whole loop (run once)."""
        args = parse_argstring(cast(Any, self).gpuprofile, line)
        shell: Any = self.shell
        source = shell.transform_cell(cell)
        if args.loop and args.body:
            raise ValueError("--loop and --body are exclusive")
        # A top-level loop is a loop; a cell without one may still train many steps (Trainer.fit):
        # "auto" lets its first run decide, from the optimizer steps it takes.
        mode = (
            "loop" if args.loop or (not args.body and has_top_level_loop(source))
            else "body" if args.body else "auto"
        )
        settings = CaptureSettings(
            steps=args.steps,
            warmup=args.warmup,
            wait=args.wait,
            prof_warmup=args.prof_warmup,
            active=args.active,
            record_shapes=not args.no_shapes,
            profile_memory=not args.no_memory,
            with_stack=args.with_stack,
            phases=not args.no_phases,
            count_flops=not args.no_flops,
            memory_history=not args.no_memory_history,
            mode=mode,
        )
        filename = shell.compile.cache(source, shell.execution_count, raw_code=cell)
        code = compile(source, filename, "exec")
        self._code = None if mode == "loop" else code  # what --try runs again, fixed
        ns = shell.user_ns
        # A loop shows its report as soon as the capture is done, while the loop goes on.
        # ("auto" that fell back to re-running the cell is a step: shown after the last run)
        on_complete = ((lambda s: None if s.settings.mode == "body" else self._show_now(s, args))
                       if mode != "body" else None)
        session = ProfileSession(
            settings,
            name=args.name or "gpuprofile",
            code=cell,
            store=RunStore(args.runs_root),
            on_complete=on_complete,
        ).begin()
        self._progress = None if args.quiet else CaptureProgress(session.driver).start()
        error: BaseException | None = None
        try:
            if mode == "body":
                session.run_steps(lambda: exec(code, ns))
            elif mode == "loop":
                exec(code, ns)
            else:
                self._run_auto(session, lambda: exec(code, ns))
        except BaseException as e:
            error = e
            raise
        finally:
            try:
                self._close(session, args, error)
            finally:
                if self._progress is not None:
                    self._progress.close("failed" if error is not None else "done")
                    self._progress = None

    def _run_auto(self, session: ProfileSession, run_cell: Callable[[], object]) -> None:
        """Run the cell once; a loop is done then, a single step is re-run as body mode."""
        started = time.perf_counter()
        run_cell()
        steps, framework = session.steps_seen, (session.framework or {}).get("name")
        if steps > 1:
            where = f" ({framework} Trainer)" if framework else ""
            say(f"gpuprofile: the cell ran {steps} training steps in one run{where}: "
                  "profiled as a training loop, run once")
            if session.fitted:
                say(f"gpuprofile: {session.fitted}")
            return
        say(f"gpuprofile: the cell ran {steps} training step(s): profiled as one step, "
              f"re-run {session.settings.schedule().total} times")
        session.use_body(started)
        if self._progress is not None:
            self._progress.driver = session.driver
        session.run_steps(run_cell)

    def _close(self, session: ProfileSession, args: Any, error: BaseException | None) -> None:
        try:
            run = session.finish(error)
        except Exception as e:  # noqa: BLE001
            if error is None:
                raise
            # Saving failed too (disk full…): say so, but let the cell's own exception through.
            say(f"gpuprofile: could not save the run: {type(e).__name__}: {e}")
            return
        self.last_run = run
        if self._shown is session:
            return  # already shown when the capture completed mid-loop
        report = self._show(session, run, args.output, display=not args.quiet,
                            cell_error=error)
        # a cell that turned out to be a whole training loop is never re-run
        step = self._code if session.settings.mode == "body" else None
        if args.try_fixes and error is None:
            from .tries.cell import try_after_report

            try_after_report(self.shell, run, step, args)
        elif error is None and report is not None and step is not None:
            from .tries.widget_tries import offer_tries

            offer_tries(report, self.shell.user_ns, run, step,  # type: ignore[union-attr]
                        args.warmup, args.steps)

    def _show_now(self, session: ProfileSession, args: Any) -> None:
        self._shown = session
        say("gpuprofile: capture complete; the loop goes on without the profiler")
        self._show(session, session.run, args.output, display=not args.quiet, cell_error=None)  # type: ignore[arg-type]

    def _show(
        self,
        session: ProfileSession,
        run: Run,
        var: str,
        display: bool,
        cell_error: BaseException | None,
    ) -> Any:
        """Print the capture's summary and show its report; the report (None without one)."""
        say(session.describe())
        if run.meta.error:
            say(f"gpuprofile: run {run.meta.status}: {run.meta.error}")
        report = None
        if self._progress is not None:
            self._progress.stage("analysing the trace…")
        if run.trace_paths():
            # a cell that raised still gets the report of what was captured (marked partial)
            report = self._analyze(run)
        elif run.memory_history_path() is not None:  # out of memory before the profiler ran
            from .report.memory_summary import memory_only_text

            if text := memory_only_text(run.path, run.meta.error):
                say(text)
        if report is not None:
            self.shell.user_ns[var] = report  # type: ignore[union-attr]
        if report is not None and display:
            from IPython.display import display as show

            show(report)  # the report carries its own "GPU metrics unavailable" banner
        elif not run.meta.env.get("cuda_available", False):
            say(NO_GPU_BANNER)
        return report

    @staticmethod
    def _analyze(run: Run) -> Any:
        try:
            from .report import analyze_run

            return analyze_run(run)
        except Exception as e:  # noqa: BLE001 - the run is kept; analysis can be redone later
            say(f"gpuprofile: analysis failed ({type(e).__name__}: {e}); run kept at {run.path}")
            return None


def load_ipython_extension(ip: Any) -> None:
    """Register the magics with an IPython shell."""
    ip.register_magics(GpuProfMagics)
    from .ncu import load_ipython_extension as load_ncu

    load_ncu(ip)  # %ncu / %%ncu live in the ncu part
