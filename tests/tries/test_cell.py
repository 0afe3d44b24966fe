"""%%gpuprofile --try end to end in a real IPython shell on CPU: tries measured and stored."""

from __future__ import annotations

import statistics

import pytest
import torch
from IPython.terminal.interactiveshell import TerminalInteractiveShell
from IPython.testing.globalipapp import start_ipython

from jupyter_gpuprof.store import RunStore
from jupyter_gpuprof.store.calibration import read_entries

SETUP = """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
"""
CELL = """
x = torch.randn(8, 16)
loss = nn.functional.cross_entropy(model(x), torch.randint(0, 4, (8,)))
loss.backward()
opt.step()
opt.zero_grad()
"""


@pytest.fixture(scope="module")
def ip():
    # one global test shell per session: a later start_ipython() returns None
    shell = start_ipython() or TerminalInteractiveShell.instance()
    shell.run_line_magic("load_ext", "jupyter_gpuprof")
    return shell


def test_try_measures_fixes_after_the_report(ip, tmp_path, capsys):
    for name in ("loader", "it"):  # another test's DataLoader would give `loader` work to do
        ip.user_ns.pop(name, None)
    ip.run_cell(SETUP)
    ip.run_cell(f"%%gpuprofile --steps 6 --warmup 2 --active 2 --runs-root {tmp_path} -q "
                f"--try amp,loader\n{CELL}")
    out = capsys.readouterr().out
    assert "Fixes tried" in out and "loader   failed: LookupError" in out
    (run,) = RunStore(tmp_path).list()
    tries = {t["fix"]: t for t in run.meta.tries}
    assert len(tries["amp"]["step_ms"]) == 6 and "change" in tries["amp"]
    # judged against the cell's step run again without a fix, not the capture's baseline
    assert tries["amp"]["reference"] == "none"
    baseline = statistics.median(run.meta.baseline["step_ms"])
    assert tries["amp"]["change"]["median_before_ms"] != baseline
    assert run.read_summary()["tries"][0]["fix"] == "amp"
    assert not torch.is_autocast_cpu_enabled()  # nothing of the try is left switched on
    # each judged try is in the runs root's calibration record, the crashed one with its cause
    record = {e["fix"]: e for e in read_entries(tmp_path)}
    assert set(record) == {"amp", "loader"}
    amp = record["amp"]
    assert (amp["run_id"], amp["source"], amp["category"], amp["gpu_name"]) == (
        run.id, "notebook", "precision", run.meta.env.get("gpu_name"))
    assert amp["measured_gain_pct"] == tries["amp"]["measured_gain_pct"]
    assert amp["significant"] == tries["amp"]["change"]["significant"] and not amp["error"]
    assert record["loader"]["error"].startswith("LookupError")
    assert len(amp["workload"]) == 12 and record["loader"]["workload"] == amp["workload"]


def test_unknown_fix_is_a_one_line_error(ip, tmp_path, capsys):
    ip.run_cell(SETUP)
    ip.run_cell(f"%%gpuprofile --steps 3 --warmup 1 --active 1 --runs-root {tmp_path} -q "
                f"--try fp8\n{CELL}")
    assert "gpuprofile: --try: unknown fix fp8; choose from tf32, amp" in capsys.readouterr().out
