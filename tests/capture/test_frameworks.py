"""%%gpuprofile over the training people run: HF Trainer, Lightning, Accelerate, accumulation.

Each cell trains a tiny GPT-2 for 40 optimizer steps with no top-level loop in the cell: the
magic must see a loop in the first run, run it once, and time real steps (the bug was 35
re-runs of the whole training and a "step" that was the whole job).
"""

from __future__ import annotations

import time

import pytest
from capture_fixtures import nothing_left_installed  # noqa: F401
from framework_fixtures import SETUP
from IPython.testing import globalipapp

from jupyter_gpuprof.store import RunStore

pytest.importorskip("transformers")
pytest.importorskip("lightning")
pytest.importorskip("accelerate")

STEPS = 40
#: profiler start, trace export and analysis on a tiny model, whatever the step count
START_UP_S = 25.0


@pytest.fixture(scope="module")
def ip():
    shell = globalipapp.start_ipython() or globalipapp.get_ipython()  # one shell per process
    shell.run_line_magic("load_ext", "jupyter_gpuprof")
    res = shell.run_cell(SETUP)
    assert res.error_in_exec is None
    return shell


def run_once(ip, cell):
    """Seconds the cell took unprofiled (after one warm run of the same code)."""
    ip.run_cell(cell)
    t = time.perf_counter()
    assert ip.run_cell(cell).error_in_exec is None
    return time.perf_counter() - t


def profiled(ip, root, cell, capsys):
    """Run the cell under %%gpuprofile; its run's meta, the seconds it took, what it printed."""
    capsys.readouterr()
    t = time.perf_counter()
    res = ip.run_cell(f"%%gpuprofile -q --runs-root {root}\n{cell}")
    took = time.perf_counter() - t
    assert res.error_in_exec is None
    runs = RunStore(root).list()
    assert len(runs) == 1
    return runs[0].meta, took, capsys.readouterr().out


def check_loop(meta, took, plain_s, printed, micro=1):
    """The acceptance of the issue: one run, >= 30 steps, bounded time, a real step time."""
    assert meta.status == "complete", meta.error
    assert meta.training["mode"] == "auto"
    assert meta.training["optimizer_steps"] >= 30
    assert meta.training["micro_batches_per_step"] == micro
    assert f"ran {meta.training['optimizer_steps']} training steps in one run" in printed
    assert took <= 3 * plain_s + START_UP_S, (took, plain_s)
    median = sorted(meta.baseline["step_ms"])[len(meta.baseline["step_ms"]) // 2]
    assert median <= 3 * 1e3 * plain_s / STEPS, (median, plain_s)
    assert len(meta.baseline["step_ms"]) >= 20
    assert meta.profiled_step_ms
    # the host probe is taken inside the framework's own loop: one warm-up step's host time,
    # the one before the FLOP-counted step; a training fitted to one warm-up step has none
    probe = meta.baseline["host_probe_ms"]
    if meta.settings["warmup"] >= 2:
        assert probe is not None and 0 < probe <= 3 * 1e3 * plain_s / STEPS + 50, probe
    else:
        assert probe is None


def test_hf_trainer_train_runs_once(ip, tmp_path, capsys):
    cell = f"hf_trainer({STEPS}, {str(tmp_path / 'hf')!r}, dataloader_num_workers=0).train()"
    plain = run_once(ip, cell)
    meta, took, printed = profiled(ip, tmp_path / "runs", cell, capsys)
    check_loop(meta, took, plain, printed)
    assert "(transformers Trainer)" in printed
    fw = meta.framework
    assert fw["name"] == "transformers" and fw["max_steps"] == STEPS
    assert fw["args"]["bf16"] is False and fw["args"]["dataloader_num_workers"] == 0
    assert "the training runs 40 optimizer steps" in meta.training["schedule_fitted"]


def test_lightning_fit_runs_once(ip, tmp_path, capsys):
    cell = f"lightning_trainer({STEPS}).fit(TinyLM(), lightning_loader())"
    plain = run_once(ip, cell)
    meta, took, printed = profiled(ip, tmp_path / "runs", cell, capsys)
    check_loop(meta, took, plain, printed)
    assert meta.framework["name"] == "lightning"
    assert meta.framework["args"]["precision"] == "32-true"


def test_accelerate_loop_in_a_function_runs_once(ip, tmp_path, capsys):
    cell = f"train_accelerate({STEPS + 10})"  # no Trainer: nobody tells the step budget
    plain = run_once(ip, cell)
    meta, took, printed = profiled(ip, tmp_path / "runs", cell, capsys)
    check_loop(meta, took, plain * STEPS / (STEPS + 10), printed)
    assert meta.framework == {}


def test_gradient_accumulation_counts_micro_batches(ip, tmp_path, capsys):
    cell = f"train_accumulating({STEPS + 10}, micro=4)"
    plain = run_once(ip, cell)
    meta, took, printed = profiled(ip, tmp_path / "runs", cell, capsys)
    check_loop(meta, took, plain * STEPS / (STEPS + 10), printed, micro=4)
    assert meta.training["optimizer_steps"] == STEPS + 10
    assert "one optimizer step of 4 micro-batches (gradient accumulation)" in printed


def test_single_step_cell_still_reruns(ip, tmp_path, capsys):
    ip.run_cell("m1 = torch.nn.Linear(4, 4)\no1 = torch.optim.SGD(m1.parameters(), 0.1)")
    cell = "m1(torch.randn(2, 4)).sum().backward(); o1.step()"
    meta, _, printed = profiled(ip, tmp_path / "runs", cell, capsys)
    assert "ran 1 training step(s): profiled as one step" in printed
    assert meta.training["mode"] == "body" and meta.status == "complete"
    assert len(meta.baseline["step_ms"]) == 30
