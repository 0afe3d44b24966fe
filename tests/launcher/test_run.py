"""`jupyter gpuprof run`'s parent side: what it launches, and when the command may end early."""

from __future__ import annotations

import sys

import pytest

from jupyter_gpuprof.cli import main
from jupyter_gpuprof.store import RunStore

LONG = """
import torch
from torch import nn
model = nn.Linear(32, 32)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(16, 32)
for i in range(2000):
    opt.zero_grad()
    model(x).square().mean().backward()
    opt.step()
print("trained to the end")
"""
FLAGS = ["--steps", "4", "--warmup", "1", "--wait", "1", "--prof-warmup", "1", "--active", "2"]


def test_stop_after_capture_ends_a_long_training_once_its_run_is_written(tmp_path, capfd):
    script = tmp_path / "train.py"
    script.write_text(LONG)
    rc = main(["run", "--runs-root", str(tmp_path / "runs"), *FLAGS, "--stop-after-capture",
               "--", sys.executable, str(script)])
    out, err = capfd.readouterr()
    assert rc == 0 and "trained to the end" not in out
    (run,) = RunStore(tmp_path / "runs").list()
    assert run.meta.status == "complete" and run.trace_paths()
    assert len(run.meta.baseline["step_ms"]) == 4
    assert "VERDICT" in out  # the report was printed for what was captured


ENDLESS = """
import time
import torch
from torch import nn
model = nn.Linear(64, 64)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
while True:  # a training that would run for hours
    opt.zero_grad()
    model(torch.randn(32, 64)).sum().backward()
    opt.step()
    time.sleep(0.005)
"""


@pytest.mark.parametrize("who", ["group", "cli"])
def test_ctrl_c_returns_within_5_s_with_one_line_and_keeps_the_run(tmp_path, who):
    """Ctrl-C on `run` over a long training (the ResNet example took 164 s to return and
    printed a traceback): it returns within 5 s, says so in one line, no traceback, and the
    completed capture stays. `group`: a terminal's Ctrl-C reaches the script too; `cli`: a
    SIGINT sent to `jupyter gpuprof run` alone is passed on to the script."""
    import os
    import signal
    import subprocess
    import time

    script = tmp_path / "train.py"
    script.write_text(ENDLESS)
    root = tmp_path / "runs"
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter_gpuprof", "run", "--runs-root", str(root), "--steps",
         "5", "--warmup", "1", "--wait", "0", "--prof-warmup", "0", "--active", "1",
         "--no-flops", "--", sys.executable, str(script)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        # as from a terminal: a shell's background job (CI started with `&`) ignores SIGINT,
        # and a process that starts with it ignored never sees a Ctrl-C
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # the capture is written, the training goes on
        runs = RunStore(root).list() if root.is_dir() else []
        if runs and runs[0].meta.status == "complete":
            break
        time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("the capture never completed")
    t0 = time.monotonic()
    if who == "group":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    took = time.monotonic() - t0
    assert took < 5.0, took
    assert proc.returncode == 128 + signal.SIGINT
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.startswith("gpuprof:")]
    assert lines[-1].startswith("gpuprof: interrupted; the capture is complete"), lines
    assert RunStore(root).list()[0].meta.status == "complete"
