"""ProfileSession: a StepDriver run into a store folder (trace + meta); step() for the user."""

from __future__ import annotations

import contextlib
import inspect
import sys
from collections.abc import Callable
from typing import Any

from ..oneline import error_line
from ..store import Run, RunStore
from ..store.meta_blocks import FrameworkMeta
from . import outcome
from .after_capture import AfterCapture
from .callsites import CallSites
from .capture_cost import COST
from .conditions import PhaseConditions
from .cupti_release import release_cupti_on_stop
from .driver import BASELINE_CLOCK, BASELINE_START, CAPTURE_START, DONE, LAST_WARMUP, StepDriver
from .eager_probe import EagerProbeStep
from .flops import StepFlops
from .memory_record import MemoryRecorder
from .optimizer_hooks import AFTER_STEP
from .ranks import job_rank
from .settings import CaptureSettings
from .stalls import StallWatch, settle_steps
from .step_budget import StepBudget
from .step_marks import StepMarks
from .training import TrainingCounters

__all__ = ["CaptureSettings", "ProfileSession", "current_session", "step"]


class _Active:
    """The session that step() and the global hooks report to (one per process)."""

    session: ProfileSession | None = None


class ProfileSession(StepMarks, StepBudget):
    """One capture: run folder, phase ranges, step driver, FLOPs; finish() leaves a readable run.

    Modes: `body` (the caller runs one step per boundary via run_steps), `loop` and `script`
    (boundaries come from a global optimizer step hook, or from step() once the user calls it),
    `auto` (a loop until the caller learns the code took at most one step: then use_body()).
    How steps are marked is `StepMarks` (step_marks.py); fitting the schedule to a framework's
    step budget is `StepBudget` (step_budget.py).
    """

    def __init__(
        self,
        settings: CaptureSettings,
        *,
        name: str = "profile",
        code: str = "",
        store: RunStore | None = None,
        run: Run | None = None,
        on_complete: Callable[[ProfileSession], None] | None = None,
    ) -> None:
        self.settings = settings
        self.on_complete = on_complete
        self.name = name
        self.code = code
        self.store = store if store is not None else RunStore()
        self.run: Run | None = run
        self.flops = StepFlops()
        self.conditions = PhaseConditions()  # GPU clocks, throttling… during each phase
        self.callsites = CallSites()  # the user's lines behind the findings (one warm-up step)
        self.eager = EagerProbeStep()  # that step runs eagerly: compiled code stays compiled
        self.memory = MemoryRecorder(settings.memory_history)  # allocator history, OOM snapshot
        self.driver = StepDriver(settings.schedule(), self._make_profiler, listener=self._on_event,
                                 settle=self._settle_steps)
        self.ranges: Any = None
        self.finalized = False
        #: why CUPTI stays attached after the trace (None: torn down, or no trace yet)
        self.cupti_kept: str | None = None
        self.closed = False
        self._remove_step_hook: Callable[[], None] | None = None
        self._step_fn: Callable[[Any, Any, Any], None] | None = None  # the callback it removes
        self._general_step: Callable[[Any, Any, Any], None] = self._on_optimizer_step
        self._optimizer_id: int | None = None
        self._manual = False
        self._probed = False  # the probed warm-up step is running (its memory is not the program's)
        self.boundaries = 0  # steps marked by the hook or step(): > 1 in one run means a loop
        self.training = TrainingCounters(on_backward_step=self._loop_boundary)
        self.after = AfterCapture()  # the steps after the capture, to the script's end
        # epochs, saves, full GC passes and evals, by the step they ran in (counted from the
        # baseline's first timed step, and on through the steps after the capture)
        self.stalls = StallWatch(
            lambda: self.driver.n + self.after.n - self.driver.schedule.baseline_first)
        self.framework: FrameworkMeta | None = None
        self.fitted: str | None = None  # how the schedule was shrunk to a short training, if it was
        self._shared_folder = run is not None  # several ranks may write into it

    # setup ------------------------------------------------------------------
    def begin(self) -> ProfileSession:
        """Create the run (status running) and install hooks; body mode also starts the driver."""
        if _Active.session is not None and not _Active.session.closed:
            raise RuntimeError("another jupyter_gpuprof capture is already running in this process")
        if self.run is None:
            self.run = self.store.create(self.name)
        meta = self.run.meta
        meta.name = meta.name or self.name
        meta.status, meta.error = "running", None
        meta.settings = self.settings.to_meta()
        meta.code = self.code
        if not self._shared_folder:
            self.run.write_meta()
        _Active.session = self
        try:
            self._install()
        except BaseException:
            self.closed = True
            _Active.session = None
            raise
        return self

    def _install(self) -> None:
        from .environment import reset_peak_memory

        reset_peak_memory()
        self.memory.start()  # warm-up steps: an out-of-memory error there has its history
        COST.reset()
        if self.settings.phases:
            from .phases import PhaseRanges

            self.ranges = PhaseRanges()
            self.ranges.on_backward = self.memory.note_loss
        self.training.install()
        self.stalls.install()
        # Body mode too: the hook counts optimizer steps and micro-batches for the meta.
        self._step_fn = self._general_step
        self._remove_step_hook = AFTER_STEP.add(self._step_fn)
        if self.settings.mode == "body":
            self.driver.start()

    def _time_steps(self, timed: bool) -> None:
        """The baseline's steps run with the least the capture needs to time them: the
        counters paused (training.py) and the optimizer hook's short way to the boundary
        (step_marks.py `_timed_step_hook`); after the baseline, the general way again."""
        self.stalls.time_fetches(timed)
        if timed:
            self.training.pause()
        else:
            self.training.resume()
        old = self._step_fn
        if old is None or self.settings.mode == "body" or self._optimizer_id is None:
            return  # no optimizer hook marks these steps: nothing to shorten
        new = self._timed_step_hook() if timed else self._general_step
        if new is not old:
            self._remove_step_hook = AFTER_STEP.swap(old, new)
            self._step_fn = new

    def _make_profiler(self) -> Any:
        import torch
        from torch.profiler import ProfilerActivity, profile, schedule

        activities = [ProfilerActivity.CPU]
        if torch.cuda.is_available():
            activities.append(ProfilerActivity.CUDA)
        s = self.settings
        # the steps after the capture must not pay CUPTI's callbacks (capture/cupti_release.py)
        self.cupti_kept = release_cupti_on_stop(self.training.graph_replays)
        # one cycle only: keeping its events (where torch has the option) changes nothing but
        # silences torch's warning that a new cycle would clear them
        accepts = inspect.signature(profile).parameters
        extra: dict[str, Any] = {"acc_events": True} if "acc_events" in accepts else {}
        return profile(
            activities=activities,
            schedule=schedule(wait=self.driver.schedule.profiler_wait, warmup=s.prof_warmup,
                              active=s.active, repeat=1),
            record_shapes=s.record_shapes,
            profile_memory=s.profile_memory,
            with_stack=s.with_stack,
            **extra,
        )

    def _settle_steps(self) -> int:
        """The steps after a pause of ours that are not timed (Schedule.settle, from the
        loop's DataLoader stock). A cell re-run as the step that iterates a loader itself
        makes a new iterator each run: nothing is held ready from one run to the next (only a
        cell that takes `next(it)` from an iterator made before it has a stock to wait out)."""
        if self.settings.mode == "body" and self.stalls.iterated:
            return 0
        return settle_steps(self.stalls.stock)

    # mode and phases --------------------------------------------------------
    def use_body(self, first_run_started: float | None = None) -> None:
        """Auto mode, after a first run with at most one step: the cell is one step, re-run it.

        `first_run_started` (perf_counter) lets that first run count as the first warm-up step.
        """
        self.flops.cancel()
        self._end_probes()
        if self.ranges is not None:
            self.ranges.deactivate()
        self.driver.abort()  # stops a profiler that started at the first step (no warm-up)
        self.settings.mode = "body"
        if self.run is not None:
            self.run.meta.settings = self.settings.to_meta()
        self.driver = StepDriver(self.settings.schedule(), self._make_profiler,
                                 listener=self._on_event, settle=self._settle_steps)
        self.driver.start()
        if first_run_started is not None and self.settings.warmup >= 2:
            self.driver.count_first_warmup(first_run_started)

    def _on_event(self, event: str) -> None:
        ranges = self.ranges
        if event == BASELINE_CLOCK:
            # the baseline's first timed step begins (its set-up, and the steps that took the
            # batches made ready meanwhile, are done): the short way to each boundary, and the
            # cost account, start with its clock
            self._time_steps(True)
            COST.on_event(BASELINE_START)
            return
        if event in (BASELINE_START, CAPTURE_START):
            self._end_probes()  # before the cost account starts: not a cost of the baseline
        if event != BASELINE_START:
            COST.on_event(event)
        self.conditions.on_event(event)
        if event == BASELINE_START:
            self.memory.pause()  # the timed steps run without the history's cost
        elif event == CAPTURE_START:
            self._time_steps(False)
            if self.driver.first_traced > self.driver.n:
                self.memory.start()  # the profiler's wait and warm-up steps: phases on, untraced
        if event == LAST_WARMUP:
            if self.eager.begin():
                # the probes' modes change what the step holds (FLOP counting keeps much of what
                # a checkpointed layer frees): the probed step is kept out of the memory record
                self.memory.pause()
                self._probed = True
                if self.settings.count_flops:
                    self.flops.begin()
                self.callsites.begin()
            else:
                self.flops.error = self.eager.skipped
        elif event == CAPTURE_START:
            if ranges is not None:
                ranges.activate()
        elif event == DONE:
            if ranges is not None:
                ranges.deactivate()
            self._finalize(status="complete", cleanup=False)
            if self.settings.mode != "body":  # a loop goes on: time its steps to its end
                self.after.start(self.driver.n - self.driver.schedule.baseline_first)
            if self.on_complete is not None:
                self.on_complete(self)

    # end --------------------------------------------------------------------
    def _rank(self) -> tuple[int, int] | None:
        return job_rank()

    def _finalize(self, *, status: str, error: str | None = None, cleanup: bool = True) -> None:
        """Stop the profiler, write trace and meta; runs once (the DONE event or finish())."""
        if self.finalized:
            return
        self.finalized = True
        if self.ranges is not None:
            with contextlib.suppress(Exception):
                self.ranges.deactivate()
        self._end_probes()
        try:
            self.driver.abort()
        except Exception as e:  # noqa: BLE001
            error = error or f"profiler stop failed: {error_line(e, with_type=True)}"
            status = "failed"
        rank_ws = self._rank()
        rank = rank_ws[0] if rank_ws else None
        trace_problem = outcome.write_trace(self, rank)
        outcome.write_memory_history(self, error, rank)  # named like the trace
        meta = self.run.meta  # type: ignore[union-attr]
        if status == "complete" and trace_problem:
            status, error = "failed", trace_problem
        meta.status, meta.error = status, error
        outcome.fill_meta(self, meta)
        if rank_ws:
            meta.rank, meta.world_size = rank_ws
        try:
            self.run.write_meta(rank=rank if self._shared_folder and rank_ws else None)  # type: ignore[union-attr]
        except OSError as e:  # a full disk: one line, and the training it runs goes on
            print(f"gpuprof: the run could not be saved ({error_line(e)}); its folder keeps "
                  f"what was written before: {self.run.path}", file=sys.stderr)  # type: ignore[union-attr]
        if cleanup:
            self._remove_hooks()

    def incomplete_reason(self) -> str:
        """Why a capture that ended before DONE is incomplete, phrased for the user."""
        return outcome.incomplete_reason(self)

    def discard(self) -> None:
        """Close without writing anything (a helper process that never ran a training step)."""
        self.closed = True
        with contextlib.suppress(Exception):
            self.driver.abort()
        with contextlib.suppress(Exception):
            self.conditions.finish()  # a sampler thread started with the baseline stops too
        self._remove_hooks()

    def finish(self, exc: BaseException | None = None) -> Run:
        """Close: on error or an unfinished capture keep trace + meta as failed; remove hooks."""
        if self.closed:
            return self.run  # type: ignore[return-value]
        try:
            if self.finalized and (not self._shared_folder or self.after.started):
                self._write_after()
            if not self.finalized:
                error = (error_line(exc, with_type=True) if exc is not None
                         else self.incomplete_reason())
                self._finalize(status="failed", error=error, cleanup=False)
        finally:
            self.closed = True
            self._remove_hooks()
        return self.run  # type: ignore[return-value]

    def _write_after(self) -> None:
        """The training went on after the capture: its meta gets the final step count, the
        steps after the capture and the stall events they ran."""
        meta, ranked = self.run.meta, self._rank()  # type: ignore[union-attr]
        with contextlib.suppress(Exception):
            meta.training.update(self.training.to_meta())
            if meta.status == "complete" and (after := self.after.to_meta()) is not None:
                meta.baseline["after"] = after
                meta.baseline["stalls"] = [e.copy() for e in self.stalls.events]
            self.run.write_meta(  # type: ignore[union-attr]
                rank=ranked[0] if self._shared_folder and ranked else None)
            if "after" in meta.baseline:
                self.run.forget_summary()  # type: ignore[union-attr]

    def _end_probes(self) -> None:
        """The probed warm-up step is over: keep its FLOPs and call sites, give back the stance;
        the peak starts again after it (the run's peak is the program's, not the probes')."""
        self.flops.end()
        self.callsites.end()
        self.eager.end()
        if self._probed:
            from .environment import reset_peak_memory

            self._probed = False
            reset_peak_memory()

    def _remove_hooks(self) -> None:
        self.memory.close()  # a discarded session never leaves the allocator recording
        self.callsites.end()  # never leave the call-site mode on the torch mode stack
        self.eager.end()
        try:
            if self._remove_step_hook is not None:
                self._remove_step_hook()
                self._remove_step_hook = None
            if self.ranges is not None:
                self.ranges.deactivate()
            self.training.remove()
            self.stalls.remove()
        finally:
            if _Active.session is self:
                _Active.session = None

    def describe(self) -> str:
        """One line on what was measured and where it went."""
        return outcome.describe(self)


def current_session() -> ProfileSession | None:
    """The capture running in this process, if any."""
    return _Active.session


def step() -> None:
    """Mark a training-step boundary for the running capture (no-op when none runs)."""
    session = _Active.session
    if session is not None:
        session.manual_step()
