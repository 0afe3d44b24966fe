"""ProfileSession: a StepDriver run into a store folder (trace + meta); profile() and step()."""

from __future__ import annotations

import contextlib
import os
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..store import Run, RunStore
from .callsites import CallSites
from .driver import (
    BASELINE_START,
    CAPTURE_START,
    DONE,
    LAST_WARMUP,
    Phase,
    StepDriver,
    summarize_ms,
)
from .flops import StepFlops
from .ranks import env_ranks, rank_selected
from .settings import CaptureSettings, distributed_rank, one_line

__all__ = ["CaptureSettings", "ProfileSession", "current_session", "profile", "step"]


class _Active:
    """The session that step() and the global hooks report to (one per process)."""

    session: ProfileSession | None = None


class ProfileSession:
    """One capture: run folder, phase ranges, step driver, FLOPs; finish() leaves a readable run.

    Modes: `body` (the caller runs one step per boundary via run_steps), `loop` and `script`
    (boundaries come from a global optimizer step hook, or from step() once the user calls it).
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
        self.callsites = CallSites()  # the user's lines behind the findings (one warm-up step)
        self.driver = StepDriver(settings.schedule(), self._make_profiler, listener=self._on_event)
        self.ranges: Any = None
        self.finalized = False
        self.closed = False
        self._hook_handle: Any = None
        self._optimizer_id: int | None = None
        self._manual = False
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
        if self.settings.phases:
            from .phases import PhaseRanges

            self.ranges = PhaseRanges()
            self.ranges.install()  # before the step hook, so "optimizer" closes before a boundary
        if self.settings.mode != "body":
            from torch.optim.optimizer import register_optimizer_step_post_hook

            self._hook_handle = register_optimizer_step_post_hook(self._on_optimizer_step)
        else:
            self.driver.start()

    def _make_profiler(self) -> Any:
        import torch
        from torch.profiler import ProfilerActivity, profile, schedule

        activities = [ProfilerActivity.CPU]
        if torch.cuda.is_available():
            activities.append(ProfilerActivity.CUDA)
        s = self.settings
        return profile(
            activities=activities,
            schedule=schedule(wait=s.wait, warmup=s.prof_warmup, active=s.active, repeat=1),
            record_shapes=s.record_shapes,
            profile_memory=s.profile_memory,
            with_stack=s.with_stack,
        )

    # boundaries -------------------------------------------------------------
    def boundary(self) -> None:
        """A step ended; the driver decides what happens next."""
        ranges = self.ranges
        if ranges is not None and ranges.active:
            ranges.end_step()
        self.driver.boundary()
        if ranges is not None and ranges.active:
            ranges.begin_step()

    def run_steps(self, step: Callable[[], object]) -> None:
        """Body mode: call step() until the driver is done."""
        driver = self.driver
        while not driver.done:
            step()
            self.boundary()

    def _on_optimizer_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if self._manual or self.closed or self.driver.done:
            return
        if self._optimizer_id is None:
            self._optimizer_id = id(optimizer)  # with several optimizers, the first to step counts
        elif id(optimizer) != self._optimizer_id:
            return
        self._guarded_boundary()

    def manual_step(self) -> None:
        """jupyter_gpuprof.step(): from its first call on, optimizer hooks no longer mark steps."""
        if self.settings.mode == "body" or self.closed or self.driver.done:
            return
        if not self._manual:
            self._manual = True
            if self.driver.phase in (Phase.IDLE, Phase.WARMUP):
                self.flops.cancel()
                self.driver.reset()  # hook-counted steps so far may not line up with step() calls
        self._guarded_boundary()

    def _guarded_boundary(self) -> None:
        # Inside a user's loop a profiler error must not kill the training: record it and go inert.
        try:
            if not self.driver.started:
                if not rank_selected(self.settings.ranks):
                    self._skip_rank()  # the rank became known only now (init_process_group)
                    return
                self.driver.start()
            else:
                self.boundary()
        except Exception as e:  # noqa: BLE001
            warnings.warn(
                f"jupyter_gpuprof: capture stopped: {one_line(e)}", RuntimeWarning, stacklevel=3
            )
            with contextlib.suppress(Exception):
                self._finalize(
                    error=f"capture error: {one_line(e)}", status="failed", cleanup=False
                )

    def _skip_rank(self) -> None:
        """Leave a rank outside `ranks` untouched: no hooks, and no run folder of its own."""
        self.discard()
        if not self._shared_folder and self.run is not None:
            with contextlib.suppress(OSError, LookupError, ValueError):
                self.store.delete(self.run.id)

    def _on_event(self, event: str) -> None:
        ranges = self.ranges
        if event == LAST_WARMUP:
            if self.settings.count_flops:
                self.flops.begin()
            self.callsites.begin()
        elif event == BASELINE_START:
            self.flops.end()
            self.callsites.end()
        elif event == CAPTURE_START:
            self.flops.end()
            self.callsites.end()
            if ranges is not None:
                ranges.activate()
        elif event == DONE:
            if ranges is not None:
                ranges.deactivate()
            self._finalize(status="complete", cleanup=False)
            if self.on_complete is not None:
                self.on_complete(self)

    # end --------------------------------------------------------------------
    def _rank(self) -> tuple[int, int] | None:
        return distributed_rank()

    def _write_trace(self, rank: int | None) -> str | None:
        prof: Any = self.driver.profiler
        if prof is None:
            return "no trace: the profiler never started"
        fd, tmp = tempfile.mkstemp(prefix="gpuprof-", suffix=".json")
        os.close(fd)
        try:
            prof.export_chrome_trace(tmp)
            self.run.write_trace(tmp, rank=rank)  # type: ignore[union-attr]
        except Exception as e:  # noqa: BLE001 - e.g. stopped before any active step
            return f"no trace: {one_line(e)}"
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return None

    def _finalize(self, *, status: str, error: str | None = None, cleanup: bool = True) -> None:
        """Stop the profiler, write trace and meta; runs once (the DONE event or finish())."""
        if self.finalized:
            return
        self.finalized = True
        from .environment import collect_env, max_memory_allocated

        if self.ranges is not None:
            with contextlib.suppress(Exception):
                self.ranges.deactivate()
        self.flops.end()
        self.callsites.end()
        try:
            self.driver.abort()
        except Exception as e:  # noqa: BLE001
            error = error or f"profiler stop failed: {one_line(e)}"
            status = "failed"
        rank_ws = self._rank()
        rank = rank_ws[0] if rank_ws else None
        trace_problem = self._write_trace(rank)
        meta = self.run.meta  # type: ignore[union-attr]
        if status == "complete" and trace_problem:
            status, error = "failed", trace_problem
        meta.status, meta.error = status, error
        with contextlib.suppress(Exception):
            meta.env = collect_env()
        meta.baseline = {"step_ms": self.driver.baseline_ms, "timing": self.driver.timing,
                         "warmup_ms": self.driver.warmup_ms}
        meta.profiled_step_ms = self.driver.profiled_ms
        meta.flops_per_step = self.flops.flops
        meta.flops_error = self.flops.error
        meta.callsites = self.callsites.result()
        if meta.flops_per_step is None and meta.flops_error is None:
            meta.flops_error = (
                "FLOP counting disabled"
                if not self.settings.count_flops
                else "no warm-up step to count FLOPs on (--warmup 0)"
                if self.settings.warmup == 0
                else "FLOPs not counted: the capture ended before the last warm-up step"
            )
        with contextlib.suppress(Exception):
            meta.max_memory_allocated_bytes = max_memory_allocated()
        if rank_ws:
            meta.rank, meta.world_size = rank_ws
        self.run.write_meta(rank=rank if self._shared_folder and rank_ws else None)  # type: ignore[union-attr]
        if cleanup:
            self._remove_hooks()

    def incomplete_reason(self) -> str:
        """Why a capture that ended before DONE is incomplete, phrased for the user."""
        d, s = self.driver, self.settings
        if self.settings.mode == "body":
            return f"capture incomplete after {d.n} of {d.schedule.total} steps"
        if not d.started:
            return (
                "no training steps seen: the code never called optimizer.step() "
                "(or jupyter_gpuprof.step())"
            )
        # In loop/script mode the first step only starts the count (it includes setup).
        return (
            f"capture incomplete: the code ran {d.n + 1} steps, the capture needs "
            f"{d.schedule.total + 1} (1 to start + warm-up {s.warmup} + baseline {s.steps} + "
            f"profiler {d.schedule.capture_steps}); "
            "run more steps or lower --steps/--warmup/--active"
        )

    def discard(self) -> None:
        """Close without writing anything (a helper process that never ran a training step)."""
        self.closed = True
        with contextlib.suppress(Exception):
            self.driver.abort()
        self._remove_hooks()

    def finish(self, exc: BaseException | None = None) -> Run:
        """Close: on error or an unfinished capture keep trace + meta as failed; remove hooks."""
        if self.closed:
            return self.run  # type: ignore[return-value]
        try:
            if not self.finalized:
                error = one_line(exc) if exc is not None else self.incomplete_reason()
                self._finalize(status="failed", error=error, cleanup=False)
        finally:
            self.closed = True
            self._remove_hooks()
        return self.run  # type: ignore[return-value]

    def _remove_hooks(self) -> None:
        self.callsites.end()  # never leave the call-site mode on the torch mode stack
        try:
            if self._hook_handle is not None:
                self._hook_handle.remove()
                self._hook_handle = None
            if self.ranges is not None:
                self.ranges.remove()
        finally:
            if _Active.session is self:
                _Active.session = None

    def describe(self) -> str:
        """One line on what was measured and where it went."""
        d = self.driver
        path = self.run.path if self.run else "?"
        st = summarize_ms(d.baseline_ms)
        if st["n"]:
            timing = (
                f"baseline {st['median_ms']:.3f} ms/step median, p95 {st['p95_ms']:.3f} ms "
                f"over {st['n']} steps ({d.timing})"
            )
        else:
            timing = "no baseline steps"
        prof = summarize_ms(d.profiled_ms)
        if prof["n"]:
            timing += f"; profiled {prof['median_ms']:.3f} ms/step median over {prof['n']} steps"
        return f"gpuprofile: {timing} -> {path}"


def current_session() -> ProfileSession | None:
    """The capture running in this process, if any."""
    return _Active.session


def step() -> None:
    """Mark a training-step boundary for the running capture (no-op when none runs)."""
    session = _Active.session
    if session is not None:
        session.manual_step()


@contextlib.contextmanager
def profile(
    name: str = "profile",
    steps: int = 30,
    warmup: int = 5,
    wait: int = 1,
    prof_warmup: int = 2,
    active: int = 5,
    *,
    with_stack: bool = False,
    record_shapes: bool = True,
    profile_memory: bool = True,
    phases: bool = True,
    count_flops: bool = True,
    runs_root: str | os.PathLike[str] | None = None,
    ranks: str | list[int] | None = None,
) -> Iterator[ProfileSession]:
    """Profile the training loop inside the block; steps come from optimizer.step() or step()."""
    settings = CaptureSettings(
        steps=steps,
        warmup=warmup,
        wait=wait,
        prof_warmup=prof_warmup,
        active=active,
        record_shapes=record_shapes,
        profile_memory=profile_memory,
        with_stack=with_stack,
        phases=phases,
        count_flops=count_flops,
        mode="loop",
        ranks=ranks if ranks is not None else env_ranks(),
    )
    root = Path(runs_root) if runs_root is not None else None
    if not rank_selected(settings.ranks):  # ranks (default $JUPYTER_GPUPROF_RANKS) leave us out
        inert = ProfileSession(settings, name=name, store=RunStore(root))
        inert.closed = True  # untouched: step() and finish() see a closed session
        yield inert
        return
    run = None
    existing = _Active.session
    if existing is not None and existing.settings.mode == "script" and not existing.driver.started:
        # Under `jupyter gpuprof run` the script's own profile() block takes over the run folder.
        run = existing.run
        existing.discard()
    session = ProfileSession(settings, name=name, store=RunStore(root), run=run).begin()
    try:
        yield session
    except BaseException as e:
        try:
            session.finish(e)
        except Exception as save_error:  # noqa: BLE001 - never mask the block's own exception
            warnings.warn(
                f"jupyter_gpuprof: could not save the run: {one_line(save_error)}", stacklevel=3
            )
        raise
    session.finish()
