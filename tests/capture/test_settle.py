"""The steps after a pause of the capture's own are not timed while they take the batches a
DataLoader's workers made ready during it: the baseline reads the loop's pace, not a burst."""

from __future__ import annotations

import statistics
import time
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, Dataset

import jupyter_gpuprof
from jupyter_gpuprof.capture import driver as drv
from jupyter_gpuprof.capture.session import CaptureSettings, ProfileSession
from jupyter_gpuprof.capture.stalls import StallWatch
from jupyter_gpuprof.store import RunStore

SCHEDULE = dict(steps=12, warmup=2, wait=1, prof_warmup=1, active=3, count_flops=False)
#: the capture's set-up on a GPU host (the sampler's NVML start, the clock's CUDA events, the
#: probes ending) made long enough here for one worker to fill its prefetch
PAUSE_S = 0.12
ITEM_S = 0.005  # 4 items a batch: one worker makes a batch in about 20 ms


class Slow(Dataset):
    """A per-sample transform: the one worker sets the loop's pace."""

    def __len__(self) -> int:
        return 4 * 400

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        time.sleep(ITEM_S)
        return torch.randn(16), torch.randn(1)


def _train(tmp_path, monkeypatch) -> tuple[Any, list[float]]:
    """A worker-paced loop under a capture whose baseline set-up and profiler start each pause
    for PAUSE_S; returns the run and the loop's own step times after it."""
    original = ProfileSession._on_event

    def paused(self, event: str) -> None:
        original(self, event)
        if event in (drv.BASELINE_START, drv.CAPTURE_START):  # the profiler started
            time.sleep(PAUSE_S)

    monkeypatch.setattr(ProfileSession, "_on_event", paused)
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(Slow(), batch_size=4, num_workers=1, prefetch_factor=4)
    own: list[float] = []
    with jupyter_gpuprof.profile("settle", runs_root=tmp_path, **SCHEDULE) as session:
        t = time.perf_counter()
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
            now = time.perf_counter()
            if session.driver.done:
                own.append((now - t) * 1e3)
                if len(own) == 40:
                    break
            t = now
    run = RunStore(tmp_path).list()[0]
    assert run.meta.status == "complete", run.meta.error
    return run, own


def test_the_baseline_reads_the_loaders_pace_not_the_batches_it_made_ready(tmp_path, monkeypatch):
    run, own = _train(tmp_path, monkeypatch)
    meta = run.meta
    base = meta.baseline
    # 1 worker x prefetch_factor 4, and the step whose batch the worker began when the first
    # of them was taken (without it, that step reads short by the time they took)
    assert base["settle_steps"] == 5
    pace = statistics.median(own[10:])  # the loop alone, after the capture
    steps = base["step_ms"]
    # no burst: the first timed steps wait for their batches as the loop does (without the
    # settling steps, the 4 after the pause read about 1 ms each)
    assert statistics.fmean(steps[:3]) > 0.6 * pace, (steps, pace)
    assert statistics.fmean(steps) == pytest.approx(pace, rel=0.25)
    # the profiler's start is a pause too: its recorded steps wait for their batches as well
    assert min(meta.profiled_step_ms) > 0.35 * pace, (meta.profiled_step_ms, pace)


def test_a_loader_without_workers_holds_nothing_ready_and_the_largest_stock_counts():
    watch = StallWatch(lambda: 0)
    watch._note_stock(0, None)
    assert watch.stock == 0
    watch._note_stock(2, None)  # torch's default prefetch_factor is 2
    assert watch.stock == 4
    watch._note_stock(1, 8)
    watch._note_stock(1, 3)
    assert watch.stock == 8
    one = StallWatch(lambda: 0)
    one._note_stock(2, 4, 1)  # an epoch of one batch: nothing of the next is made ahead
    assert one.stock == 1


def test_a_cell_that_makes_its_own_iterator_each_run_has_nothing_to_wait_out(tmp_path):
    """In a cell re-run as the step, a loader the cell iterates itself starts afresh each run;
    a cell that takes next(it) from an iterator made before it keeps its stock."""
    session = ProfileSession(CaptureSettings(mode="body"), store=RunStore(tmp_path))
    session.stalls.stock = 4
    assert session._settle_steps() == 5  # next(it): the iterator was made before the cell
    session.stalls.iterated = 1
    assert session._settle_steps() == 0  # the cell's own `for x, y in loader`
    session.settings.mode = "script"
    assert session._settle_steps() == 5  # a loop's loader lives across its steps
    session.stalls.stock = 0
    assert session._settle_steps() == 0  # no workers: nothing made ahead
