"""What the profiler prints to descriptor 2 while it runs becomes report warnings, never red
output under the cell; everything else keeps going to stderr."""

from __future__ import annotations

import os
import time

from jupyter_gpuprof.capture.driver import Schedule, StepDriver
from jupyter_gpuprof.capture.profiler_log import MAX_LINES, ProfilerLog
from jupyter_gpuprof.report.build import Report
from jupyter_gpuprof.store.run import RunMeta, parse_meta

START = "USDT:2026-12-01 21:51:24 5967:5967 SyncActivityProfilerHandler.cpp:52] profiler_start"
ALLOC = ("[W1201 21:51:24.845603141 CPUAllocator.cpp:245] Memory block of unknown size was "
         "allocated before the profiling started")
STOP = "USDT:2026-12-01 21:51:24 5967:5967 SyncActivityProfilerHandler.cpp:59] profiler_stop"


class ChattyProfiler:
    """Writes to descriptor 2 as Kineto's C++ side does (below Python's sys.stderr)."""

    def start(self) -> None:
        os.write(2, f"{START}\n".encode())

    def step(self) -> None:
        os.write(2, f"{ALLOC}\n".encode())

    def stop(self) -> None:
        os.write(2, f"{STOP}\n".encode())


class QuietProfiler:
    def start(self) -> None: ...

    def step(self) -> None: ...

    def stop(self) -> None: ...


class Clock:
    timing = "fake"

    def __init__(self, _n: int) -> None:
        self.n = 0

    def mark(self) -> None:
        self.n += 1

    def durations_ms(self) -> list[float]:
        return [1.0] * max(self.n - 1, 0)


def test_the_profilers_own_output_is_kept_not_printed(capfd):
    s = Schedule(warmup=1, steps=2, wait=0, prof_warmup=1, active=2)
    d = StepDriver(s, ChattyProfiler, Clock)
    d.start()
    os.write(2, b"the user's own stderr\n")
    for _ in range(s.total):
        d.boundary()
    assert d.done
    err = capfd.readouterr().err
    assert "the user's own stderr" in err  # only the profiler's calls are redirected
    assert "profiler_start" not in err and "CPUAllocator" not in err and "profiler_stop" not in err
    # each distinct line once, in order (the step's line was printed at every step)
    assert d.profiler_log.lines() == [START, ALLOC, STOP]


def test_the_allocators_line_from_inside_a_profiled_step_is_kept_too(capfd):
    """The CPU allocator prints when the user's step frees a block allocated before the
    profiler started: inside the step, between the profiler's calls."""
    s = Schedule(warmup=1, steps=1, wait=0, prof_warmup=1, active=2)
    d = StepDriver(s, QuietProfiler, Clock)
    d.start()
    for _ in range(s.total):
        if d.phase.name == "CAPTURE":
            os.write(2, f"{ALLOC}\n".encode())  # the user's free, mid-step
            os.write(2, b"the user's line while profiled\n")
        d.boundary()
    assert d.done
    err = capfd.readouterr().err
    assert "CPUAllocator" not in err
    assert err.count("the user's line while profiled") == 3  # passed on, each one
    assert d.profiler_log.lines() == [ALLOC]
    os.write(2, b"after\n")
    assert capfd.readouterr().err == "after\n"  # descriptor 2 is back


def test_a_worker_forked_while_profiled_keeps_its_stderr_and_release_does_not_wait(capfd):
    log = ProfilerLog()
    log.hold()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # a DataLoader worker: inherits the held descriptor 2, outlives the capture
        os.close(w)
        os.read(r, 1)
        os.write(2, b"worker line\n")
        os._exit(0)
    os.close(r)
    t0 = time.monotonic()
    log.release()
    assert time.monotonic() - t0 < 2
    os.write(w, b"x")
    os.close(w)
    os.waitpid(pid, 0)
    deadline = time.monotonic() + 5
    err = ""
    while "worker line" not in err and time.monotonic() < deadline:
        time.sleep(0.05)
        err += capfd.readouterr().err
    assert "worker line" in err


def test_a_progress_bar_without_newlines_is_passed_on_while_held(capfd):
    log = ProfilerLog()
    log.hold()
    os.write(2, b"\rbatch 3/10")
    deadline, err = time.monotonic() + 5, ""
    while "batch 3/10" not in err and time.monotonic() < deadline:
        time.sleep(0.05)
        err += capfd.readouterr().err
    os.write(2, b"[a partial line that could be the profiler's")
    t0 = time.monotonic()
    log.release()
    assert time.monotonic() - t0 < 2  # the partial line does not hide release()'s mark
    assert "batch 3/10" in err  # shown as it came, not when the hold ended
    assert "partial line" in capfd.readouterr().err  # and the partial one at release


def test_a_chatty_profiler_is_cut_to_max_lines(capfd):
    log = ProfilerLog()
    for i in range(MAX_LINES + 5):
        log.around(lambda i=i: os.write(2, f"line {i}\n".encode()))
    assert log.lines() == [f"line {i}" for i in range(MAX_LINES)]
    assert capfd.readouterr().err == ""
    assert log.lines() == []  # read once


def test_the_messages_are_saved_and_shown_as_report_warnings(tmp_path):
    meta = RunMeta(id="r", profiler_messages=[START, ALLOC])
    back = parse_meta(__import__("json").dumps(meta.to_json()).encode())
    assert back.profiler_messages == [START, ALLOC]
    report = Report.__new__(Report)
    report.meta, report.ranks = back, []

    class Info:
        warnings = ["a trace warning"]

    class Window:
        @staticmethod
        def notes() -> list[str]:
            return []

    class Analysis:
        info, window = Info(), Window()

    report.analysis = Analysis()  # type: ignore[assignment]
    assert report.warnings == ["a trace warning", f"the profiler printed: {START}",
                               f"the profiler printed: {ALLOC}"]
