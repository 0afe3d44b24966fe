"""StepDriver: the one step state machine (warm-up -> baseline -> capture -> done) of every mode."""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from . import options
from .profiler_log import ProfilerLog


class Phase(enum.Enum):
    """Where the driver is; a step's phase is decided at the boundary that starts it."""

    IDLE = "idle"
    WARMUP = "warmup"
    BASELINE = "baseline"
    CAPTURE = "capture"
    DONE = "done"


class StepClock(Protocol):
    """Timestamps step boundaries; durations are read once, after the last mark."""

    timing: str

    def mark(self) -> None: ...

    def durations_ms(self) -> list[float]: ...  # read once: a clock may free its marks here


class PerfCounterClock:
    """Host wall clock, for CPU work (the host is the device)."""

    timing = "perf_counter"

    def __init__(self, expected_marks: int = 0) -> None:
        self._t: list[int] = []
        self.mark = self._mark_impl()

    def _mark_impl(self) -> Callable[[], None]:
        append, now = self._t.append, time.perf_counter_ns
        return lambda: append(now())

    def durations_ms(self) -> list[float]:
        t = self._t
        return [(b - a) / 1e6 for a, b in zip(t, t[1:], strict=False)]


class CudaEventClock:
    """CUDA events on the current stream: GPU time per step, no synchronize until durations_ms()."""

    timing = "cuda_event"

    def __init__(self, expected_marks: int = 0) -> None:
        import torch

        self._new: Callable[[], Any] = lambda: torch.cuda.Event(enable_timing=True)
        self._sync = torch.cuda.synchronize
        # The stream current when the baseline begins (the steps' stream), looked up once:
        # `record()` without one asks torch for the current stream at every mark, a new Python
        # object; the H200's host timed such a mark at 71 µs, 27 µs with the stream given
        # (docs/benchmarks.md §21, session 45).
        self._stream = torch.cuda.current_stream()
        # Created up front so a boundary only pops and records: torch creates an event's CUDA
        # event at its first record, so each is recorded once here, off the timed steps.
        self._pool = [self._new() for _ in range(expected_marks)]
        for ev in self._pool:
            ev.record(self._stream)
        self._used: list[Any] = []
        self.mark = self._mark_impl(_native_record(torch))

    def _mark_impl(self, record: Callable[[Any, Any], None] | None) -> Callable[[], None]:
        """A mark pops a made event and records it on the steps' stream: through torch's C
        method where there is one (`Event.record` is a Python frame over it, paid each step)."""
        pool, new, stream, used = self._pool, self._new, self._stream, self._used.append
        if record is None:
            def mark() -> None:
                ev = pool.pop() if pool else new()
                ev.record(stream)
                used(ev)
        else:
            def mark() -> None:
                ev = pool.pop() if pool else new()
                record(ev, stream)
                used(ev)
        return mark

    def durations_ms(self) -> list[float]:
        """The steps' GPU times; the events are freed here, by their count of references.
        Left to the cycle collector with the rest of a closed session, they would be freed in
        whichever process collects first: a DataLoader worker forked meanwhile, where a CUDA
        call aborts the worker and the user's training with it."""
        ev = self._used
        try:
            if not ev:
                return []
            self._sync()
            return [float(a.elapsed_time(b)) for a, b in zip(ev, ev[1:], strict=False)]
        finally:
            self._pool.clear()  # in place: the mark holds these very lists
            ev.clear()


def _native_record(torch: Any) -> Callable[[Any, Any], None] | None:
    """torch's C `record(event, stream)` under `torch.cuda.Event.record`, where it has one."""
    base = getattr(getattr(torch, "_C", None), "_CudaEventBase", None)
    record = getattr(base, "record", None)
    if base is None or record is None or not issubclass(torch.cuda.Event, base):
        return None
    return record  # type: ignore[no-any-return]


def default_clock(expected_marks: int) -> StepClock:
    """CUDA events when this process already uses CUDA, else the host clock (never inits CUDA)."""
    import sys

    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        return CudaEventClock(expected_marks)
    return PerfCounterClock(expected_marks)


class Profiler(Protocol):
    """The part of torch.profiler.profile the driver uses."""

    def start(self) -> None: ...

    def step(self) -> None: ...

    def stop(self) -> None: ...


@dataclass(frozen=True)
class Schedule:
    """How many steps each phase lasts; the profiler follows schedule(wait, warmup, active)."""

    warmup: int = options.WARMUP
    steps: int = options.STEPS
    wait: int = options.WAIT
    prof_warmup: int = options.PROF_WARMUP
    active: int = options.ACTIVE
    #: untimed steps after each pause of the capture's (the baseline's set-up, the profiler's
    #: start), while which DataLoader workers made batches the next steps take at once: its
    #: stock and one more (capture/stalls.settle_steps; StepDriver asks at start())
    settle: int = 0

    def __post_init__(self) -> None:
        for name in ("warmup", "steps", "wait", "prof_warmup", "settle"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.active < 1:
            raise ValueError(f"active must be >= 1, got {self.active}")

    @property
    def capture_steps(self) -> int:
        """Steps run under the profiler (its wait, settling included, + warm-up + active)."""
        return self.profiler_wait + self.prof_warmup + self.active

    @property
    def profiler_wait(self) -> int:
        """The profiler's own `wait`: its steps skipped after it starts, settling included."""
        return self.settle + self.wait

    @property
    def baseline_settle(self) -> int:
        """Settling steps before the baseline's clock (none without a baseline)."""
        return self.settle if self.steps else 0

    @property
    def baseline_first(self) -> int:
        """The boundary that starts the baseline's first timed step."""
        return self.warmup + self.baseline_settle

    @property
    def total(self) -> int:
        """Step boundaries needed after start() to finish."""
        return self.baseline_first + self.steps + self.capture_steps


# Transition names passed to the listener, in order. BASELINE_START is the baseline's set-up;
# BASELINE_CLOCK, `settle` steps later (at once without any), starts its clock.
LAST_WARMUP, BASELINE_START, BASELINE_CLOCK, CAPTURE_START, DONE = (
    "last_warmup", "baseline", "baseline_clock", "capture", "done")


def gpu_sync() -> Callable[[], None]:
    """`torch.cuda.synchronize` when the step uses a GPU, else nothing to wait for."""
    import sys

    torch = sys.modules.get("torch")  # never import torch for a CPU-only probe
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        return torch.cuda.synchronize  # type: ignore[no-any-return]
    return lambda: None


class StepDriver:
    """Counts step boundaries and runs the phases; mark() and prof.step() are the whole hot path.

    Boundary 0 is start(); step k runs between boundary k-1 and k. The listener hears
    LAST_WARMUP (the next step is the last warm-up one: count its FLOPs), BASELINE_START (its
    set-up), BASELINE_CLOCK (its first timed step begins), CAPTURE_START (profiler just
    started) and DONE (profiler stopped, durations known). `settle`, asked at start(), says how
    many untimed steps follow each of the capture's pauses (Schedule.settle).
    """

    def __init__(
        self,
        schedule: Schedule,
        profiler_factory: Callable[[], Profiler],
        clock_factory: Callable[[int], StepClock] = default_clock,
        listener: Callable[[str], None] | None = None,
        settle: Callable[[], int] = lambda: 0,
    ) -> None:
        self.schedule = schedule
        self._profiler_factory = profiler_factory
        self._clock_factory = clock_factory
        self._listener = listener or (lambda event: None)
        self._settle = settle
        self._baseline_clock: StepClock | None = None  # made at the set-up, started after settling
        self.reset()

    def reset(self) -> None:
        """Forget all boundaries (only before the profiler started)."""
        if getattr(self, "phase", Phase.IDLE) in (Phase.CAPTURE,):
            raise RuntimeError("cannot reset a driver while the profiler runs")
        s = self.schedule
        self._baseline_clock = None
        self.phase = Phase.IDLE
        self.n = 0
        self.profiler: Profiler | None = None
        # what the profiler prints to descriptor 2: report warnings, not red cell output
        self.profiler_log = ProfilerLog()
        self.baseline_ms: list[float] = []
        #: the host clock (perf_counter_ns) at each baseline boundary: what happened on the host
        #: (a wait for data) is put in its step by them
        self.baseline_host_ns: list[int] = []
        self.capture_ms: list[float] = []
        self.warmup_ms: list[float] = []  # host clock: shown greyed beside the baseline
        # host time of one warm-up step begun with an empty GPU queue (the real host speed)
        self.host_probe_ms: float | None = None
        self._probe_t: float | None = None
        self._probe_step = s.warmup - 2 if s.warmup >= 2 else -1  # before the FLOP-counted one
        self._warm_t = 0.0
        self.timing: str | None = None
        self._clock: StepClock | None = None
        self._pclock: StepClock | None = None
        self._make_plan()

    def _make_plan(self) -> None:
        """The boundary at which each phase change happens, from the schedule."""
        s = self.schedule
        plan = []
        if s.warmup > 0:
            plan.append((s.warmup - 1, LAST_WARMUP))
        if s.steps > 0:
            plan.append((s.warmup, BASELINE_START))
            plan.append((s.baseline_first, BASELINE_CLOCK))
        plan.append((s.baseline_first + s.steps, CAPTURE_START))
        plan.append((s.total, DONE))
        #: the boundary after which the profiler records (its wait and warm-up steps done)
        self.first_traced = s.baseline_first + s.steps + s.profiler_wait + s.prof_warmup
        self._plan = plan
        #: the boundary count at which the next phase change happens (-1: none left)
        self.next_change = plan[0][0]

    @property
    def started(self) -> bool:
        return self.phase is not Phase.IDLE

    @property
    def done(self) -> bool:
        return self.phase is Phase.DONE

    @property
    def profiled_ms(self) -> list[float]:
        """Wall time of the profiler's active steps (compare with baseline_ms for its overhead)."""
        s = self.schedule
        return self.capture_ms[s.profiler_wait + s.prof_warmup :]

    def start(self) -> None:
        """Boundary 0: the first step begins now."""
        if self.started:
            raise RuntimeError("StepDriver.start() called twice")
        settle = max(0, int(self._settle()))
        if settle != self.schedule.settle:
            self.schedule = replace(self.schedule, settle=settle)
            self._make_plan()
        self.phase = Phase.WARMUP
        self._warm_t = time.perf_counter()
        if self._probe_step == 0:
            self._begin_probe()
        self._transitions()

    def count_first_warmup(self, started: float) -> None:
        """Count a step that already ran, from `started` (perf_counter s), as warm-up step 1."""
        if self.phase is Phase.WARMUP and self.n == 0:
            self._warm_t = started
            self.boundary()

    def boundary(self) -> None:
        """One step ended and the next begins."""
        phase = self.phase
        if phase is Phase.BASELINE:
            self._clock.mark()  # type: ignore[union-attr]
            self.baseline_host_ns.append(time.perf_counter_ns())
        elif phase is Phase.CAPTURE:
            self._pclock.mark()  # type: ignore[union-attr]
            self.profiler_log.around(self.profiler.step)  # type: ignore[union-attr]
        elif phase is Phase.WARMUP:
            now = time.perf_counter()  # warm-up steps are excluded: timing them costs nothing
            self.warmup_ms.append((now - self._warm_t) * 1e3)
            if self._probe_t is not None:
                self.host_probe_ms = (now - self._probe_t) * 1e3
                self._probe_t = None
            self._warm_t = now
        else:
            return
        self.n += 1
        if self.n == self._probe_step:
            self._begin_probe()
        if self.n == self.next_change:
            self._transitions()

    def _begin_probe(self) -> None:
        """Let the GPU drain, then time how long the host takes to issue the next step: with
        the queue empty nothing blocks it, so that is the step's unprofiled host time."""
        try:
            gpu_sync()()
        except Exception:  # noqa: BLE001 - a probe is worth less than the user's step
            return
        self._probe_t = time.perf_counter()

    def _transitions(self) -> None:
        plan = self._plan
        while plan and plan[0][0] == self.n:
            _, event = plan.pop(0)
            if event == BASELINE_START:
                # the clock's events made first, then the listener's own work (the warm-up
                # probes ending, the sampler started): neither is part of a timed step
                self._baseline_clock = self._clock_factory(self.schedule.steps + 1)
                self._listener(event)
                continue
            if event == BASELINE_CLOCK:
                # the settling steps done: the cost account starts, then the clock
                self._listener(event)
                clock, self._baseline_clock = self._baseline_clock, None
                self._on_baseline(clock)  # type: ignore[arg-type]
                continue
            getattr(self, "_on_" + event)()
            self._listener(event)
        self.next_change = plan[0][0] if plan else -1

    def _on_last_warmup(self) -> None:
        pass

    def _on_baseline(self, clock: StepClock) -> None:
        self.phase = Phase.BASELINE
        self._clock = clock
        self.timing = self._clock.timing
        self._clock.mark()
        self.baseline_host_ns.append(time.perf_counter_ns())

    def _on_capture(self) -> None:
        if self._clock is not None:
            self.baseline_ms = self._clock.durations_ms()  # the one synchronize of the baseline
        self.profiler = self._profiler_factory()
        self._pclock = self._clock_factory(self.schedule.capture_steps + 1)
        self.timing = self.timing or self._pclock.timing
        self.phase = Phase.CAPTURE
        self.profiler_log.around(self.profiler.start)
        self.profiler_log.hold()  # the profiler's lines printed from inside the user's steps
        self._pclock.mark()

    def _on_done(self) -> None:
        self._stop_profiler()

    def _stop_profiler(self) -> None:
        self.phase = Phase.DONE
        try:
            if self.profiler is not None:
                self.profiler_log.around(self.profiler.stop)
        finally:
            self.profiler_log.release()
            if self._pclock is not None:
                self.capture_ms = self._pclock.durations_ms()

    def abort(self) -> None:
        """Stop early (error, interrupt, short loop): stop the profiler, keep what was measured."""
        phase = self.phase
        if phase is Phase.DONE:
            return
        if phase is Phase.BASELINE and self._clock is not None:
            self.baseline_ms = self._clock.durations_ms()
        if phase is Phase.CAPTURE:
            self._stop_profiler()
        self.phase = Phase.DONE
