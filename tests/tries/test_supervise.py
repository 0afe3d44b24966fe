"""A try process on a leash: output capped, Ctrl-C escalated to SIGKILL, leftovers stopped.

Plain Python commands stand in for the user's script (no torch): each test is about the
process, not the fix.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from jupyter_gpuprof.store import RunStore
from jupyter_gpuprof.store.try_files import try_log_path
from jupyter_gpuprof.tries import supervise
from jupyter_gpuprof.tries.script import run_one_try

PRINTS_100_MB = """
import sys
line = b"x" * 999_999 + b"\\n"
for _ in range(100):
    sys.stdout.buffer.write(line)
print("the last line", flush=True)
sys.exit(3)
"""
IGNORES = """
import signal, sys, time
for name in sys.argv[1:]:
    signal.signal(getattr(signal, name), signal.SIG_IGN)
print("ready", flush=True)
while True:
    time.sleep(0.05)
"""
FORKS_A_DAEMON = """
import os, sys, time
pid = os.fork()
if pid == 0:
    os.setsid()  # out of the try's process group, as a daemon does
    if os.fork():
        os._exit(0)
    with open(sys.argv[1], "w") as f:
        f.write(str(os.getpid()))
    print("daemon started", flush=True)  # it keeps the output pipe open
    time.sleep(600)
    os._exit(0)
os.waitpid(pid, 0)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
print("main done", flush=True)
"""


def _run(tmp_path: Path):
    run = RunStore(tmp_path / "runs").create("r")
    run.meta.status = "complete"
    run.write_meta()
    return run


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie is dead
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_a_try_that_prints_100_mb_is_capped_and_still_reported(tmp_path):
    run = _run(tmp_path)
    t0 = time.monotonic()
    result, interrupted = run_one_try(run, [sys.executable, "-c", PRINTS_100_MB], dict(os.environ),
                                      "control")
    assert not interrupted and time.monotonic() - t0 < 30
    assert result["error"].startswith("the command exited with status 3") and \
        result["error"].endswith("the last line")
    log = try_log_path(run, "control")
    size = log.stat().st_size
    assert size <= supervise.LOG_HEAD_BYTES + supervise.LOG_TAIL_BYTES + 100, size
    assert b"bytes of output left out]" in log.read_bytes()[supervise.LOG_HEAD_BYTES:]


def _ctrl_c_after(seconds: float) -> threading.Timer:
    """A Ctrl-C (SIGINT to this process: KeyboardInterrupt in the main thread) a bit later."""
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    return timer


@pytest.mark.parametrize("ignored", [["SIGINT"], ["SIGINT", "SIGTERM"]])
def test_ctrl_c_stops_a_try_that_ignores_it(tmp_path, monkeypatch, ignored):
    """SIGINT, then SIGTERM after INTERRUPT_GRACE_S, then SIGKILL after TERMINATE_GRACE_S, to
    the try's whole process group (graces shortened here)."""
    monkeypatch.setattr(supervise, "INTERRUPT_GRACE_S", 0.5)
    monkeypatch.setattr(supervise, "TERMINATE_GRACE_S", 0.5)
    log = (tmp_path / "log").open("wb")
    with supervise.leashed([sys.executable, "-c", IGNORES, *ignored], dict(os.environ),
                           log) as proc:
        while b"ready" not in (tmp_path / "log").read_bytes():
            time.sleep(0.02)
        _ctrl_c_after(0.1)
        t0 = time.monotonic()
        code, interrupted = supervise.wait_try(proc, timeout_s=30)
        took = time.monotonic() - t0
    assert interrupted and took < 3.0, took
    want = signal.SIGKILL if "SIGTERM" in ignored else signal.SIGTERM
    assert code == -want


def test_a_daemon_the_try_forked_is_stopped_with_it(tmp_path):
    pid_file = tmp_path / "daemon.pid"
    log = (tmp_path / "log").open("wb")
    t0 = time.monotonic()
    with supervise.leashed([sys.executable, "-c", FORKS_A_DAEMON, str(pid_file)],
                           dict(os.environ), log) as proc:
        code, interrupted = supervise.wait_try(proc, timeout_s=30)
    assert code == 0 and not interrupted
    assert time.monotonic() - t0 < 10  # its open output pipe did not hold the try
    daemon = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(daemon) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(daemon)
    assert b"main done" in (tmp_path / "log").read_bytes()


def test_a_try_result_without_step_times_is_that_tries_error(tmp_path):
    """A tries/<fix>.json with no step times once stopped `run --try` from printing any report
    (its median was formatted as a number): it is that try's one-line error."""
    run = _run(tmp_path)
    write = ("import json, pathlib, sys; pathlib.Path(sys.argv[1], 'tries', 'tf32.json')"
             ".write_text(json.dumps({'fix': 'tf32', 'step_ms': []}))")
    result, _ = run_one_try(run, [sys.executable, "-c", write, str(run.path)],
                            dict(os.environ), "tf32")
    assert result["error"] == "its result (tries/tf32.json) holds no usable step times"


def test_tries_gone_wrong_never_cost_the_runs_report(tmp_path, monkeypatch, capsys):
    import shutil

    from paths import ROOT

    from jupyter_gpuprof.store import open_run
    from jupyter_gpuprof.tries import script

    folder = tmp_path / "20260101-000000-run"
    shutil.copytree(ROOT / "tests" / "data" / "real" / "compute", folder)
    run = open_run(folder)
    run.meta.status = "complete"
    run.write_meta()

    def broken(*args):
        raise TypeError("unsupported format string passed to NoneType.__format__")

    monkeypatch.setattr(script, "try_fixes_on_script", broken)
    script.print_report_with_tries(run, ["true"], {}, "tf32", as_json=False)
    out, err = capsys.readouterr()
    assert "VERDICT" in out
    assert err.strip() == ("gpuprof: --try stopped: TypeError: unsupported format string passed "
                           "to NoneType.__format__; the report without the tries follows")
