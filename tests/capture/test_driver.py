"""StepDriver sequencing with a fake profiler and fake clocks; CUDA-event clock with fake events."""

from __future__ import annotations

import pytest

from jupyter_gpuprof.analysis.summary import probe_neighbour_ms
from jupyter_gpuprof.capture import driver as drv
from jupyter_gpuprof.capture.driver import (
    CudaEventClock,
    PerfCounterClock,
    Phase,
    Schedule,
    StepDriver,
)


class FakeProfiler:
    def __init__(self, log: list[str]) -> None:
        self.log = log

    def start(self) -> None:
        self.log.append("prof.start")

    def step(self) -> None:
        self.log.append("prof.step")

    def stop(self) -> None:
        self.log.append("prof.stop")


class FakeClock:
    """Each mark reads the next value of a shared fake time (ms)."""

    timing = "fake"

    def __init__(self, now: list[float], log: list[str], name: str) -> None:
        self.now, self.log, self.name, self.t = now, log, name, []

    def mark(self) -> None:
        self.log.append(f"{self.name}.mark")
        self.t.append(self.now[0])

    def durations_ms(self) -> list[float]:
        self.log.append(f"{self.name}.read")
        return [b - a for a, b in zip(self.t, self.t[1:], strict=False)]


def make(schedule: Schedule, settle: int = 0):
    log: list[str] = []
    now = [0.0]
    clocks: list[FakeClock] = []

    def clock(expected: int) -> FakeClock:
        c = FakeClock(now, log, f"clock{len(clocks)}")
        c.expected = expected
        clocks.append(c)
        return c

    d = StepDriver(
        schedule, lambda: FakeProfiler(log), clock, listener=lambda e: log.append(f"event:{e}"),
        settle=lambda: settle,
    )
    return d, log, now, clocks


def test_the_batches_a_loader_made_ready_during_a_pause_of_ours_are_not_timed():
    """A DataLoader's workers go on making batches while the capture sets up its baseline or
    starts its profiler; the steps after such a pause take them at once. With a loader that
    holds 3 ready (settle 3), 3 untimed steps follow the baseline's set-up and the profiler's
    start: the baseline's clock starts after them, and the profiler waits them out."""
    s = Schedule(warmup=2, steps=3, wait=1, prof_warmup=1, active=2)
    d, log, now, clocks = make(s, settle=3)
    d.start()
    assert d.schedule.settle == 3 and d.schedule.total == 2 + 3 + 3 + (3 + 4)
    # the steps right after each pause are fast (batches ready), the loop's own pace is 10 ms
    durations = [100.0, 50.0, 1.0, 1.0, 1.0, 10.0, 11.0, 12.0, 1.0, 1.0, 1.0, 20.0, 21.0, 22.0,
                 23.0]
    phases = run_steps(d, now, durations)
    W, B, C = Phase.WARMUP, Phase.BASELINE, Phase.CAPTURE
    assert phases == [W] * 5 + [B] * 3 + [C] * 7
    assert d.baseline_ms == [10.0, 11.0, 12.0]  # none of the settling steps
    assert len(d.warmup_ms) == 2 + 3  # shown with the warm-up (host clock)
    assert d.profiled_ms == [22.0, 23.0]
    assert d.first_traced == 2 + 3 + 3 + 3 + 1 + 1
    events = [e for e in log if e.startswith("event:") or e == "clock0.mark"]
    # the set-up at boundary 2, the clock's first mark 3 boundaries later
    assert events[:4] == ["event:last_warmup", "event:baseline", "event:baseline_clock",
                          "clock0.mark"]
    assert log.index("event:baseline") < log.index("event:baseline_clock")
    # nothing to settle: the set-up and the clock at the same boundary, as before
    d0, log0, now0, _ = make(s)
    d0.start()
    assert d0.schedule.total == s.total and run_steps(d0, now0, durations[:9]) == (
        [W, W, B, B, B, C, C, C, C])


def run_steps(d: StepDriver, now: list[float], durations: list[float]) -> list[Phase]:
    phases = []
    for ms in durations:
        phases.append(d.phase)
        now[0] += ms
        d.boundary()
    return phases


def test_phase_sequence_and_exact_step_times():
    s = Schedule(warmup=2, steps=3, wait=1, prof_warmup=1, active=2)
    d, log, now, clocks = make(s)
    d.start()
    assert s.total == 2 + 3 + 4
    durations = [100.0, 50.0, 10.0, 11.0, 12.0, 20.0, 21.0, 22.0, 23.0]
    phases = run_steps(d, now, durations)
    W, B, C = Phase.WARMUP, Phase.BASELINE, Phase.CAPTURE
    assert phases == [W, W, B, B, B, C, C, C, C]
    assert d.done and d.n == 9
    assert d.baseline_ms == [10.0, 11.0, 12.0]  # warm-up 100/50 excluded
    assert d.capture_ms == [20.0, 21.0, 22.0, 23.0]
    assert d.profiled_ms == [22.0, 23.0]  # only the active steps (wait 1 + warm-up 1 dropped)
    assert d.timing == "fake"
    assert clocks[0].expected == 4 and clocks[1].expected == 5  # events pre-sized
    assert log.count("prof.step") == s.capture_steps
    assert [e for e in log if e.startswith("event:")] == [
        "event:last_warmup",
        "event:baseline",
        "event:baseline_clock",
        "event:capture",
        "event:done",
    ]
    # The baseline is read (one synchronize) before the profiler starts; stop comes last.
    assert log.index("clock0.read") < log.index("prof.start") < log.index("prof.stop")
    assert log.count("clock0.read") == 1
    # Extra boundaries after DONE are ignored: the loop keeps running untouched.
    n_log = len(log)
    run_steps(d, now, [1.0, 1.0])
    assert len(log) == n_log and d.n == 9


def test_last_warmup_event_precedes_the_last_warmup_step():
    d, log, now, _ = make(Schedule(warmup=3, steps=1, wait=0, prof_warmup=0, active=1))
    d.start()
    assert "event:last_warmup" not in log
    run_steps(d, now, [1.0])
    assert "event:last_warmup" not in log
    run_steps(d, now, [1.0])  # boundary 2 = W-1: step 3 is the last warm-up step
    assert log[-1] == "event:last_warmup" and d.phase is Phase.WARMUP


def test_no_warmup_starts_baseline_at_start():
    d, log, now, _ = make(Schedule(warmup=0, steps=2, wait=0, prof_warmup=0, active=1))
    d.start()
    assert d.phase is Phase.BASELINE and "event:last_warmup" not in log
    run_steps(d, now, [5.0, 6.0, 7.0])
    assert d.baseline_ms == [5.0, 6.0] and d.profiled_ms == [7.0] and d.done


def test_no_baseline_goes_straight_to_capture():
    d, log, now, _ = make(Schedule(warmup=1, steps=0, wait=0, prof_warmup=0, active=2))
    d.start()
    run_steps(d, now, [1.0])
    assert d.phase is Phase.CAPTURE and d.baseline_ms == []
    run_steps(d, now, [2.0, 3.0])
    assert d.done and d.profiled_ms == [2.0, 3.0]


def test_abort_during_capture_stops_profiler_and_keeps_times():
    d, log, now, _ = make(Schedule(warmup=0, steps=2, wait=0, prof_warmup=0, active=5))
    d.start()
    run_steps(d, now, [1.0, 2.0, 3.0])
    assert d.phase is Phase.CAPTURE
    d.abort()
    assert d.done and log.count("prof.stop") == 1
    assert d.baseline_ms == [1.0, 2.0] and d.profiled_ms == [3.0]
    d.abort()
    assert log.count("prof.stop") == 1


def test_abort_during_baseline_keeps_partial_baseline():
    d, log, now, _ = make(Schedule(warmup=0, steps=10, wait=0, prof_warmup=0, active=1))
    d.start()
    run_steps(d, now, [4.0, 5.0])
    d.abort()
    assert d.baseline_ms == [4.0, 5.0] and "prof.start" not in log


def test_boundaries_before_start_are_ignored_and_reset_rewinds():
    d, log, now, _ = make(Schedule(warmup=2, steps=1, wait=0, prof_warmup=0, active=1))
    d.boundary()
    assert d.n == 0 and not d.started
    d.start()
    run_steps(d, now, [1.0])
    d.reset()
    assert d.phase is Phase.IDLE and d.n == 0
    d.start()
    with pytest.raises(RuntimeError):
        d.start()


@pytest.mark.parametrize("kw", [{"active": 0}, {"steps": -1}, {"warmup": -2}, {"wait": -1}])
def test_schedule_rejects_bad_counts(kw):
    with pytest.raises(ValueError):
        Schedule(**kw)


def test_perf_counter_clock(monkeypatch):
    ticks = iter([1_000_000, 3_000_000, 3_500_000])
    monkeypatch.setattr(drv.time, "perf_counter_ns", lambda: next(ticks))
    c = PerfCounterClock(3)
    for _ in range(3):
        c.mark()
    assert c.durations_ms() == [2.0, 0.5]
    assert c.timing == "perf_counter"


def test_cuda_event_clock_synchronizes_once(monkeypatch):
    import torch

    gpu_time = [0.0]
    syncs = []

    class FakeEvent:
        created = 0  # CUDA events made: as in torch, at an event's first record, not __init__

        def __init__(self, enable_timing: bool = False) -> None:
            assert enable_timing
            self.t = None

        def record(self, stream=None) -> None:
            assert stream is the_stream, "a mark asks torch for the current stream again"
            if self.t is None:
                FakeEvent.created += 1
            gpu_time[0] += 1.5
            self.t = gpu_time[0]

        def elapsed_time(self, other: FakeEvent) -> float:
            assert syncs, "elapsed_time read before synchronize"
            return other.t - self.t

    the_stream = object()  # the stream current when the clock is made
    streams = iter([the_stream])  # a second lookup (a mark's) fails the test
    monkeypatch.setattr(torch.cuda, "Event", FakeEvent)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: syncs.append(1))
    monkeypatch.setattr(torch.cuda, "current_stream", lambda *a: next(streams))
    c = CudaEventClock(4)
    assert FakeEvent.created == 4  # created before the first boundary, not on the hot path
    for _ in range(4):
        c.mark()
    assert FakeEvent.created == 4  # a mark only records: no CUDA event made in a timed step
    assert syncs == []  # no synchronize per step
    assert c.durations_ms() == [1.5, 1.5, 1.5]
    assert syncs == [1] and c.timing == "cuda_event"


def test_a_cuda_mark_records_through_torchs_c_method_not_the_python_frame_over_it(monkeypatch):
    import torch

    native = []

    class CBase:  # torch._C._CudaEventBase: its record is the C method
        def record(self, stream) -> None:
            native.append(stream)

    class FakeEvent(CBase):
        def __init__(self, enable_timing: bool = False) -> None:
            pass

        def record(self, stream=None) -> None:  # torch.cuda.Event.record, a Python frame
            calls.append(stream)
            super().record(stream)

    calls: list = []
    the_stream = object()
    monkeypatch.setattr(torch._C, "_CudaEventBase", CBase, raising=False)
    monkeypatch.setattr(torch.cuda, "Event", FakeEvent)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda *a: the_stream)
    c = CudaEventClock(3)
    calls.clear(), native.clear()  # the events' first records, made off the timed steps
    for _ in range(5):  # past the pool too: an event made on the spot is recorded the same way
        c.mark()
    assert native == [the_stream] * 5
    assert calls == []  # no step went through Event.record's Python frame
    assert len(c._used) == 5


def test_a_clock_frees_its_cuda_events_when_read_not_when_the_collector_finds_them(monkeypatch):
    """A closed session is a cycle of objects: CUDA events still held by its clock would be
    freed by whichever process collects first, and in a DataLoader worker forked meanwhile
    the event's CUDA call aborts the worker (seen on the H200: the VAE and LSTM MNIST scripts,
    "DataLoader worker exited unexpectedly")."""
    import gc
    import weakref

    import torch

    made: list = []

    class FakeEvent:
        def __init__(self, enable_timing: bool = False) -> None:
            made.append(weakref.ref(self))

        def record(self, stream=None) -> None:
            pass

        def elapsed_time(self, other: FakeEvent) -> float:
            return 1.0

    monkeypatch.setattr(torch.cuda, "Event", FakeEvent)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda *a: object())
    gc.disable()
    try:
        c = CudaEventClock(4)  # 4 made up front, 2 more made past the pool
        for _ in range(6):
            c.mark()
        assert c.durations_ms() == [1.0] * 5
        assert len(made) == 6 and all(r() is None for r in made)  # freed by the reading itself
        assert c.durations_ms() == []  # read once
        unread = CudaEventClock(2)
        unread.mark()
        assert unread.durations_ms() == []  # one mark: no step, and its events go too
        assert all(r() is None for r in made)
    finally:
        gc.enable()


def test_host_probe_times_the_warmup_step_before_the_last_after_a_gpu_drain(monkeypatch):
    syncs: list[float] = []
    monkeypatch.setattr(drv, "gpu_sync", lambda: (lambda: syncs.append(now[0])))
    d, log, now, _ = make(Schedule(warmup=4, steps=1, wait=0, prof_warmup=0, active=1))
    times = iter([0.0, 0.005, 0.011, 0.011, 0.031, 0.040, 0.050])
    monkeypatch.setattr(drv.time, "perf_counter", lambda: next(times))
    d.start()  # warm-up step 0 runs 0 → 5 ms, step 1 → 11 ms
    run_steps(d, now, [1.0, 1.0])
    assert syncs == [2.0] and d.host_probe_ms is None  # drained before step 2 (warmup - 2)
    run_steps(d, now, [1.0])  # step 2: issued from 11 ms to 31 ms
    assert d.host_probe_ms == pytest.approx(20.0)
    run_steps(d, now, [1.0])
    assert d.host_probe_ms == pytest.approx(20.0) and len(syncs) == 1
    # the analysis takes the step before the probe (step 1, 5 → 11 ms) from the warm-up times
    assert probe_neighbour_ms(d.warmup_ms) == pytest.approx(6.0)


def test_no_host_probe_with_fewer_than_two_warmup_steps(monkeypatch):
    monkeypatch.setattr(drv, "gpu_sync", lambda: pytest.fail("no probe without warm-up"))
    d, _, now, _ = make(Schedule(warmup=1, steps=1, wait=0, prof_warmup=0, active=1))
    d.start()
    run_steps(d, now, [1.0, 1.0, 1.0])
    assert d.host_probe_ms is None


def test_the_baseline_clock_is_made_before_the_baseline_event_and_marked_after_it():
    """Making the clock (a CUDA event per step) is set-up: it comes before the listener starts
    the capture's cost account on the 'baseline' event, and the first mark comes after the
    listener's own work, so neither is charged to the hooks nor timed in a step."""
    d, log, now, clocks = make(Schedule(warmup=1, steps=2, wait=0, prof_warmup=0, active=1))
    made: list[int] = []
    original = d._clock_factory

    def clock(expected: int):
        made.append(len(log))
        return original(expected)

    d._clock_factory = clock
    d.start()
    run_steps(d, now, [1.0])
    at_event = log.index("event:baseline")
    assert made and made[0] <= at_event
    first_mark = next(i for i, line in enumerate(log) if "mark" in line)
    assert first_mark > at_event
