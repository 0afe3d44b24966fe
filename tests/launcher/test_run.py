"""`jupyter gpuprof run`'s parent side: what it launches, and when the command may end early."""

from __future__ import annotations

import sys

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
