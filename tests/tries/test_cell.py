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


def _wait_idle(widget, timeout_s=240.0):
    import time

    deadline = time.monotonic() + timeout_s
    while widget.try_running and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not widget.try_running, widget.try_status


def test_the_widget_tries_the_fixes_and_redraws_its_report(ip, tmp_path):
    """The widget's "Try the top fixes": the same tries as --try, run from the widget in a
    thread of the kernel; its report is redrawn with what they measured. A CPU step has no
    finding to take fixes from: it offers compile."""
    ip.run_cell(SETUP)
    ip.run_cell(f"%%gpuprofile --steps 4 --warmup 1 --active 1 --runs-root {tmp_path}\n{CELL}")
    widget = ip.user_ns["_gpuprof"].shown
    assert widget.try_offer == "Try the top fixes (compile)" and widget.summary["tries"] is None
    widget._on_action(widget, {"action": "try"}, [])
    assert widget.try_running
    _wait_idle(widget)
    assert widget.try_status.startswith("tried"), widget.try_status
    (tried,) = widget.summary["tries"]
    assert tried["fix"] == "compile" and "change" in tried
    (run,) = RunStore(tmp_path).list()
    assert [t["fix"] for t in run.meta.tries] == ["compile"]


def test_a_cancelled_try_keeps_nothing_and_puts_the_kernel_back(ip, tmp_path):
    ip.run_cell(SETUP)
    ip.run_cell(f"%%gpuprofile --steps 4 --warmup 1 --active 1 --runs-root {tmp_path}\n{CELL}")
    widget = ip.user_ns["_gpuprof"].shown
    weights = [p.detach().clone() for p in ip.user_ns["model"].parameters()]
    widget._on_action(widget, {"action": "try"}, [])
    widget._on_action(widget, {"action": "cancel"}, [])
    _wait_idle(widget)
    assert widget.try_status.startswith("cancelled"), widget.try_status
    (run,) = RunStore(tmp_path).list()
    assert not run.meta.tries and widget.summary["tries"] is None
    assert all(torch.equal(a, b) for a, b in
               zip(weights, ip.user_ns["model"].parameters(), strict=True))


class _Sleeper:
    """A fake applier module: its fix takes SLEEP_SAVES[name] ms off the sleeping cell."""

    def __init__(self, name):
        self.name = name

    def notebook(self, ns, step, cuda):
        import contextlib

        @contextlib.contextmanager
        def fixed():
            def run():
                ns["pause"] = ns["pause"] - SLEEP_SAVES[self.name] / 1e3
                step()

            yield run

        return fixed()


#: what each fake fix takes off the cell's 24 ms sleep; tf32 nothing; loader and amp 10 ms apart, so
#: a loaded machine cannot swap which one measures better
SLEEP_SAVES = {"loader": 14.0, "amp": 4.0, "tf32": 0.0}
SLEEPY = """
import time
time.sleep(pause)
pause = 0.024
"""


def test_try_stacks_the_fixes_in_the_kernel_and_prints_the_stack(ip, tmp_path, capsys,
                                                                   monkeypatch):
    """The magic's --try: each fix alone, then the best one kept and the others tried on top;
    the stack is printed under the tries and kept in the run."""
    from jupyter_gpuprof.tries import appliers

    monkeypatch.setattr(appliers, "load", _Sleeper)
    ip.user_ns["pause"] = 0.024
    ip.run_cell(f"%%gpuprofile --steps 16 --warmup 1 --active 1 --runs-root {tmp_path} -q "
                f"--try tf32,amp,loader\n{SLEEPY}")
    out = capsys.readouterr().out
    (run,) = RunStore(tmp_path).list()
    assert not run.broken, (run.error, out)
    stack = run.meta.stack
    assert stack["fixes"] == ["loader", "amp"], stack
    assert [(s["fix"], s["kept"]) for s in stack["steps"]] == [
        ("loader+amp", True), ("loader+amp+tf32", False)]
    assert run.read_summary()["stack"]["fixes"] == ["loader", "amp"]
    assert "Fixes stacked" in out and "All kept fixes together (loader + amp)" in out
    assert "# 2. amp: bf16 autocast around the step" in out
    assert ip.user_ns["pause"] == 0.024  # the cell's own value, put back after every try
