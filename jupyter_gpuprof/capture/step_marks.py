"""Where a step of the user's code ends: the cell's end, the loop's optimizer step, or step().

Body mode marks one step per call of the cell (`run_steps`). In a loop the first optimizer to
step marks them (a global post-hook), or a backward when no optimizer steps; once the code calls
`jupyter_gpuprof.step()`, only its calls do. ProfileSession mixes these methods in.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from typing import Any, Protocol

from ..oneline import error_line
from ..store import Run, RunStore
from .after_capture import AfterCapture
from .capture_cost import COST
from .driver import Phase, StepDriver
from .flops import StepFlops
from .memory_record import MemoryRecorder
from .ranks import rank_selected
from .settings import CaptureSettings
from .training import TrainingCounters


class MarkedSession(Protocol):
    """What the step marks read and call on the session they are mixed into."""

    settings: CaptureSettings
    driver: StepDriver
    after: AfterCapture
    ranges: Any
    closed: bool
    boundaries: int
    training: TrainingCounters
    flops: StepFlops
    memory: MemoryRecorder
    store: RunStore
    run: Run | None
    _manual: bool
    _probed: bool
    _optimizer_id: int | None
    _shared_folder: bool

    def boundary(self) -> None:
        """A step ended."""

    def discard(self) -> None:
        """Close without writing anything."""

    def _learn_framework(self) -> None:
        """At the first optimizer step: which framework runs it, and fit the schedule."""

    def _end_probes(self) -> None:
        """The probed warm-up step is over."""

    def _finalize(self, *, status: str, error: str | None = None, cleanup: bool = True
                  ) -> None:
        """Stop the profiler, write trace and meta."""

    def _guarded_boundary(self) -> None:
        """A step ended inside the user's loop."""

    def _loop_boundary(self) -> None:
        """A step of the loop ended."""

    def _skip_rank(self) -> None:
        """Leave a rank outside `ranks` untouched."""

    def _capture_failed(self, e: Exception) -> None:
        """A step boundary raised."""

    def _on_optimizer_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        """After every optimizer step."""


class StepMarks:
    """The boundaries of the steps a capture times, whichever way the code marks them."""

    _optimizer_id: int | None  # the optimizer whose steps count (None until one steps)

    def boundary(self: MarkedSession) -> None:
        """A step ended; the driver decides what happens next."""
        ranges = self.ranges
        if ranges is not None and ranges.active:
            ranges.end_step()
        if self.driver.n + 1 == self.driver.first_traced:
            self.memory.keep()  # the history's cost stays out of the traced steps
        self.driver.boundary()
        if ranges is not None and ranges.active:
            ranges.begin_step()

    def run_steps(self: MarkedSession, step: Callable[[], object]) -> None:
        """Body mode: call step() until the driver is done."""
        driver, boundary = self.driver, COST.timed(self.boundary)
        while not driver.done:
            step()
            boundary()

    def _on_optimizer_step(self: MarkedSession, optimizer: Any, args: Any, kwargs: Any) -> None:
        """After every optimizer step: each call here is paid by every timed step, so the
        steady state (the counted optimizer, a loop marking its steps by it) takes the fewest
        calls on its way to the boundary."""
        if self.closed:
            return
        if self._optimizer_id is None:
            self._optimizer_id = id(optimizer)  # with several optimizers, the first to step counts
            self._learn_framework()
            self.memory.note_optimizer(optimizer)  # its tensors name the model's memory
        counted = id(optimizer) == self._optimizer_id
        driver = self.driver
        if counted and driver.phase in (Phase.IDLE, Phase.WARMUP) and not self._probed:
            self.memory.start()  # a script touches CUDA after the capture began: from now
        self.training.on_optimizer_step(id(optimizer), counted)
        if not counted or self._manual or self.settings.mode == "body":
            return
        if driver.phase is Phase.DONE:
            self.after.mark()
        else:
            self._guarded_boundary()

    def _timed_step_hook(self: MarkedSession) -> Callable[[Any, Any, Any], None]:
        """The optimizer post-hook while the baseline's steps are timed (the session swaps it
        in at the baseline's start, and out at its end). Every call here is paid by every timed
        step, so a step of the counted optimizer goes straight to the driver's boundary: no
        phase ranges run, no probe begins, no memory history starts there. Anything else takes
        the general way (_on_optimizer_step): another optimizer, step() in use, the boundary
        that ends the baseline (its phase change)."""
        general, counted, training = self._on_optimizer_step, self._optimizer_id, self.training

        def timed_step(optimizer: Any, args: Any, kwargs: Any) -> None:
            driver = self.driver
            if (id(optimizer) != counted or self._manual or self.closed
                    or driver.phase is not Phase.BASELINE or driver.n + 1 >= driver.next_change):
                general(optimizer, args, kwargs)
                return
            training.on_optimizer_step(counted, True)
            self.boundaries += 1
            try:
                driver.boundary()
            except Exception as e:  # noqa: BLE001 - the training goes on (_guarded_boundary)
                self._capture_failed(e)

        return timed_step

    def _loop_boundary(self: MarkedSession) -> None:
        """A step of the loop ended (its optimizer stepped, or its backward ran)."""
        if self._manual or self.settings.mode == "body" or self.closed:
            return
        if self.driver.done:
            self.after.mark()
        else:
            self._guarded_boundary()

    @COST.timed
    def manual_step(self: MarkedSession) -> None:
        """jupyter_gpuprof.step(): from its first call on, optimizer hooks no longer mark steps."""
        if self.settings.mode == "body" or self.closed:
            return
        if self.driver.done:
            if self._manual:
                self.after.mark()
            return
        if not self._manual:
            self.boundaries = 0
            self._manual = True
            if self.driver.phase in (Phase.IDLE, Phase.WARMUP):
                self.flops.cancel()
                self._end_probes()
                self.driver.reset()  # hook-counted steps so far may not line up with step() calls
        self._guarded_boundary()

    def _guarded_boundary(self: MarkedSession) -> None:
        # Inside a user's loop a profiler error must not kill the training: record it and go inert.
        self.boundaries += 1
        try:
            if self.driver.phase is Phase.IDLE:  # not started
                if not rank_selected(self.settings.ranks):
                    self._skip_rank()  # the rank became known only now (init_process_group)
                    return
                self.driver.start()
            else:
                self.boundary()
        except Exception as e:  # noqa: BLE001
            self._capture_failed(e)

    def _capture_failed(self: MarkedSession, e: Exception) -> None:
        """A step boundary raised: say so once, keep what was measured, go inert."""
        warnings.warn(
            f"jupyter_gpuprof: capture stopped: {error_line(e, with_type=True)}",
            RuntimeWarning, stacklevel=4,
        )
        with contextlib.suppress(Exception):
            self._finalize(
                error=f"capture error: {error_line(e, with_type=True)}", status="failed",
                cleanup=False,
            )

    def _skip_rank(self: MarkedSession) -> None:
        """Leave a rank outside `ranks` untouched: no hooks, and no run folder of its own."""
        self.discard()
        if not self._shared_folder and self.run is not None:
            with contextlib.suppress(OSError, LookupError, ValueError):
                self.store.delete(self.run.id)

    @property
    def manual(self: MarkedSession) -> bool:
        """The code marks its steps itself (jupyter_gpuprof.step())."""
        return self._manual

    @property
    def steps_seen(self: MarkedSession) -> int:
        """Steps the code took so far: step() calls once used, else optimizer steps."""
        return self.boundaries if self._manual else self.training.steps()
