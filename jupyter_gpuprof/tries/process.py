"""One try of `jupyter gpuprof run --try`, inside the process that runs the command again.

The fix is switched on right after torch imports (tries/startup.py); the steps are then
bounded and timed by the same ProfileSession machinery as the run's own baseline (optimizer
step hook or `jupyter_gpuprof.step()`, warm-up excluded, same clock, GPU conditions), but no
profiler ever starts: once the baseline steps are timed the result goes to the run's
`tries/<fix>.json` and the process ends, without running the rest of the training. Nothing
here writes a trace, a meta.json or a run of its own.
"""

from __future__ import annotations

import contextlib
from typing import Any

from ..capture.driver import BASELINE_START, CAPTURE_START, LAST_WARMUP
from ..capture.environment import max_memory_allocated, reset_peak_memory
from ..capture.outcome import settling
from ..capture.session import ProfileSession
from ..capture.settings import CaptureSettings
from ..capture.training import compiled_graphs
from ..oneline import error_line
from ..store import Run
from ..store.meta_blocks import TryMeta
from ..store.try_files import write_try_result
from .appliers.base import StartupFix
from .startup import apply_fix

#: exit status of a try process whose fix could not be switched on (nothing of the script ran)
EXIT_NOT_APPLIED = 3


class _NoProfiler:
    """Stands in for torch.profiler: a try's baseline ends where the profiler would start."""

    def start(self) -> None:
        """Nothing to start."""

    def step(self) -> None:
        """Nothing to step."""

    def stop(self) -> None:
        """Nothing to stop."""


class TrySession(ProfileSession):
    """A capture that measures its baseline with one fix on, reports it, and ends the process."""

    def __init__(self, settings: CaptureSettings, run: Run, fix: StartupFix) -> None:
        """`run`: the run this is a try of (only its tries/ folder is written)."""
        super().__init__(settings, name=run.meta.name, code=run.meta.code, run=run)
        self.fix = fix

    def _make_profiler(self) -> Any:
        return _NoProfiler()

    def _on_event(self, event: str) -> None:
        if event == LAST_WARMUP:
            return  # a try measures; FLOPs and call sites are the run's (and would probe eagerly)
        if event == BASELINE_START:
            reset_peak_memory()  # the peak of the timed steps alone, as the notebook's tries'
        if event != CAPTURE_START:
            super()._on_event(event)
            return
        # hooks stay: torch is iterating the optimizer hooks that called us (closed: inert)
        self._finalize(status="complete", cleanup=False)
        self.closed = True
        # The measurement is all a try wants: the rest of the training would only cost time.
        raise SystemExit(0)

    def _finalize(self, *, status: str, error: str | None = None, cleanup: bool = True) -> None:
        """Write tries/<fix>.json: the baseline with the fix, or why there is none."""
        if self.finalized:
            return
        self.finalized = True
        self.flops.end()
        self.callsites.end()
        with contextlib.suppress(Exception):
            self.driver.abort()
        conditions = self.conditions.finish().get("baseline")
        if status == "complete":
            error = self.fix.problem()
        out: TryMeta = {"fix": self.fix.name, "applied": self.fix.applied}
        if error:
            out["error"] = error
        else:
            out.update({"step_ms": self.driver.baseline_ms, "timing": self.driver.timing,
                        "warmup_ms": self.driver.warmup_ms, "conditions": conditions,
                        "peak_memory_bytes": max_memory_allocated(),
                        "compiled_graphs": compiled_graphs()})
        write_try_result(self.run.path, self.fix.name, out)  # type: ignore[union-attr]
        if cleanup:
            self._remove_hooks()

    def incomplete_reason(self) -> str:
        d, s = self.driver, self.settings
        if not d.started:
            return super().incomplete_reason()
        return (f"the script ended after {d.n + 1} steps; the try needs "
                f"{1 + d.schedule.baseline_first + s.steps} (1 to start + warm-up {s.warmup}"
                f"{settling(d)} + baseline {s.steps})")


def begin_try(fix_name: str, settings: CaptureSettings, run: Run) -> TrySession:
    """Switch the fix on and start measuring; a fix that cannot be applied ends the process."""
    import torch

    try:
        fix = apply_fix(fix_name, torch, run.meta.training)
    except Exception as e:  # noqa: BLE001 - any reason is the try's result, in one line
        write_try_result(run.path, fix_name, {"fix": fix_name, "applied": [],
                                              "error": error_line(e, with_type=True)})
        raise SystemExit(EXIT_NOT_APPLIED) from None
    session = TrySession(settings, run, fix)
    session.begin()
    return session
