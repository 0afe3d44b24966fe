"""The steps after the capture, timed to the script's end: periodic work the baseline is too
short to hold (an evaluation every 40 steps, a checkpoint every 80) is found in them, named
and priced on the wall time the script's own clock pays."""

from __future__ import annotations

import statistics

import pytest
from loop_scripts import LOG, run_script

from jupyter_gpuprof.capture import after_capture, stalls
from jupyter_gpuprof.capture.after_capture import AfterCapture
from jupyter_gpuprof.capture.stalls import StallWatch
from jupyter_gpuprof.report import analyze_path, run_summary
from jupyter_gpuprof.store import open_run
from jupyter_gpuprof.views.text import render_text

#: nanoGPT's and makemore's shape: evaluate every N iterations, save a checkpoint every M
EVERY = LOG + """
import time
import torch
from torch import nn
torch.manual_seed(0)
torch.set_num_threads(1)
model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(64, 64), torch.randn(64, 1)
ckpt, state = sys.argv[1] + ".pt", torch.randn(2_000_000)  # a checkpoint's optimizer state
for i in range(1, 201):
    opt.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    opt.step()
    if i % 40 == 0:               # an evaluation pass (a validation set's worth of time)
        model.eval()
        with torch.no_grad():
            model(x)
            time.sleep(0.08)
        model.train()
    if i % 80 == 20:              # a checkpoint
        torch.save({"model": model.state_dict(), "state": state}, ckpt)
    time.sleep(0.002)             # the rest of an iteration: a steady step of a few ms
    tick()
save()
"""


def test_work_every_n_steps_beyond_the_baseline_is_found_named_and_priced(tmp_path):
    run, own = run_script(tmp_path, EVERY)
    baseline = run.meta.baseline
    held = [e for e in baseline["stalls"] if 0 <= e["step"] < len(baseline["step_ms"])
            and e["what"] in ("eval", "save")]
    assert not held  # the baseline's 12 steps hold neither
    after = baseline["after"]
    assert after["steps"] >= 150 and len(after["step_ms"]) == after["steps"]
    summary = analyze_path(run.path).to_json()
    spikes = summary["steps"]["spikes"]
    causes = {s["cause"]: s["period_steps"] for s in spikes["stalls"] if s["cause"]}
    assert causes == {"eval": 40, "save": 80}
    # what a step costs over the long run is what the script's own clock paid per iteration
    # (its iterations after the capture: the first ones hold the capture's own start)
    assert spikes["wall_ms"] == pytest.approx(statistics.fmean(own[20:]), rel=0.2)
    assert spikes["wall_ms"] > 1.5 * summary["steps"]["median_ms"]
    text = render_text(summary)
    assert "steps after the capture" in text and "every 40 steps" in text
    # the cached summary is of the whole run: the meta grew after the capture, the cache went
    assert "every 80 steps" in str(run_summary(open_run(run.path))["steps"])


def test_without_the_steps_after_the_capture_the_baseline_cannot_see_the_period(tmp_path):
    """The same run read without `baseline.after`: its baseline holds no stall (the rule
    above is the steps after the capture, not a longer baseline)."""
    run, _ = run_script(tmp_path, EVERY)
    run.meta.baseline.pop("after")
    run.write_meta()
    run.forget_summary()
    spikes = analyze_path(run.path).to_json()["steps"]["spikes"]
    assert spikes is None or not [s for s in spikes["stalls"] if s["cause"] in ("eval", "save")]


def test_the_first_step_after_the_trace_is_left_out_and_a_long_run_kept_in_blocks(monkeypatch):
    monkeypatch.setattr(after_capture, "MAX_BLOCKS", 4)
    clock = AfterCapture()
    clock.mark()  # before start(): the capture still runs, nothing is stamped
    assert clock.to_meta() is None and clock.n == 0
    clock.start(17)
    for _ in range(12):
        clock.mark()
    meta = clock.to_meta()
    assert meta is not None
    # the first boundary only starts the clock (the profiler's teardown is in its step); 11
    # steps in at most 4 entries: blocks of 2 merged into blocks of 4 once 4 of 2 were full
    assert meta["first_step"] == 18 and meta["steps"] == 11
    assert meta["block_steps"] == 4 and len(meta["step_ms"]) == 2
    assert sum(meta["step_ms"]) * 4 <= meta["wall_ms"]  # the part-block's 3 steps: wall only


def test_a_long_runs_collections_leave_room_for_its_later_evaluations():
    """Events are capped by kind: a week of full GC passes must not crowd out the evaluation
    that comes after them (the steps after the capture stamp events to the script's end)."""
    watch = StallWatch(lambda: 0)
    for _ in range(3 * stalls.MAX_EVENTS):
        watch._record(stalls.GC, 5.0, generation=2)
    watch._record(stalls.EVAL, 300.0)
    assert sum(e["what"] == stalls.GC for e in watch.events) == stalls.MAX_EVENTS
    assert watch.events[-1]["what"] == stalls.EVAL
