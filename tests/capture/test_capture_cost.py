"""The capture states what its own code cost the baseline it timed, measured in its hooks."""

from __future__ import annotations

import time

import pytest
from capture_fixtures import Trainer, nothing_left_installed  # noqa: F401

import jupyter_gpuprof
from jupyter_gpuprof.capture.capture_cost import HookCost
from jupyter_gpuprof.report import analyze_path
from jupyter_gpuprof.store import RunStore
from jupyter_gpuprof.views.text import render_text

SMALL = dict(steps=4, warmup=2, wait=1, prof_warmup=1, active=3)
NEEDED = 1 + 2 + 4 + (1 + 1 + 3)
#: hook calls in one baseline step of Trainer (one backward, one optimizer step): the torch hook
#: after the optimizer step that ends it (capture/optimizer_hooks.py); the backward wrapper and
#: the hook before the step count per step elsewhere, paused through the timed steps
#: (TrainingCounters.pause)
CALLS_PER_STEP = 1


def _run(tmp_path, loader: bool = False):
    t = Trainer()
    with jupyter_gpuprof.profile("loop", runs_root=tmp_path, **SMALL):
        if loader:
            for x, y in t.loader(NEEDED + 2):
                t.step(x, y)
        else:
            for _ in range(NEEDED + 2):
                t.step()
    (run,) = RunStore(tmp_path).list()
    return run


def test_every_hook_of_a_baseline_step_is_charged(tmp_path):
    run = _run(tmp_path)
    cost = run.meta.baseline["capture_cost"]
    steps = len(run.meta.baseline["step_ms"])
    assert steps == 4
    assert cost["hook_calls"] == CALLS_PER_STEP * steps
    # the hooks are part of the steps they slow: never more than the steps themselves
    assert 0 < cost["hooks_ms"] < sum(run.meta.baseline["step_ms"])
    assert cost["sampler_cpu_ms"] == 0  # no CUDA here: no GPU-conditions sampler ran


def test_the_loader_wrapper_charges_its_bookkeeping(tmp_path):
    run = _run(tmp_path, loader=True)
    steps = len(run.meta.baseline["step_ms"])
    # one DataLoader __next__ a step on top of the step's own hooks
    assert run.meta.baseline["capture_cost"]["hook_calls"] == (CALLS_PER_STEP + 1) * steps


def test_the_report_states_the_cost_per_step_and_share(tmp_path):
    run = _run(tmp_path)
    steps = analyze_path(run.path).to_json()["steps"]
    cost, meta = steps["capture_cost"], run.meta.baseline["capture_cost"]
    per_step = meta["hooks_ms"] / len(run.meta.baseline["step_ms"])
    assert cost["hooks_ms_per_step"] == pytest.approx(per_step, rel=1e-3, abs=1e-5)
    # the summary keeps 3 decimals of the percentage and 5 of the milliseconds it comes from:
    # a cost of a microsecond or two a step is rounded by up to half of 10 ns there
    rounding = 100 * 0.5e-5 / steps["median_ms"]
    assert cost["pct_of_median"] == pytest.approx(100 * cost["ms_per_step"] / steps["median_ms"],
                                                  rel=1e-3, abs=6e-4 + rounding)
    assert cost["sentence"].startswith("The capture's own cost in the baseline, measured:")
    assert cost["sentence"] + "." in render_text(analyze_path(run.path).to_json())


@pytest.mark.parametrize("hooks_ms", [-1.0, 1e300])
def test_an_absurd_cost_is_left_out_not_printed(tmp_path, hooks_ms):
    """Negative, or more than the steps it is part of. (A cost of the wrong type, NaN or
    infinite never gets this far: the store rejects the meta.)"""
    bad = {"hooks_ms": hooks_ms, "hook_calls": 1, "sampler_cpu_ms": 0.0}
    run = _run(tmp_path)
    run.meta.baseline["capture_cost"] = bad
    run.write_meta()
    assert analyze_path(run.path).to_json()["steps"]["capture_cost"] is None


def test_a_call_spanning_a_phase_start_is_charged_from_the_start_on():
    cost = HookCost()

    @cost.timed
    def boundary(event: str | None) -> None:
        time.sleep(0.02)  # before the phase begins: the warm-up's, not the baseline's
        if event:
            cost.on_event(event)
        time.sleep(0.001)

    boundary("baseline")
    boundary("capture")  # ends the baseline while running: none of it is the baseline's
    hooks_ms = cost.to_meta(None)["hooks_ms"]
    assert 1.0 <= hooks_ms < 10.0  # the first call's millisecond after its event, no more


def test_the_warm_up_probes_end_before_the_baseline_clock_and_account_start(tmp_path,
                                                                            monkeypatch):
    """Ending the probed warm-up step (FLOP counts, call sites: milliseconds on a big model)
    is the capture's set-up, not the user's first timed step nor a cost of its hooks."""
    from jupyter_gpuprof.capture.session import ProfileSession

    pause_s, original = 1.0, ProfileSession._end_probes

    def slow_end(self):
        time.sleep(pause_s)
        original(self)

    monkeypatch.setattr(ProfileSession, "_end_probes", slow_end)
    run = _run(tmp_path)
    baseline = run.meta.baseline
    assert max(baseline["step_ms"]) < 1e3 * pause_s / 2
    assert baseline["capture_cost"]["hooks_ms"] < 1e3 * pause_s / 2


def test_the_baselines_set_up_is_not_charged_as_a_hook_cost(tmp_path, monkeypatch):
    """Starting the GPU-conditions sampler and stopping the allocator history happen once,
    before the baseline's clock starts; on the H200 they had been charged to the word LM's
    hooks as 0.34 ms a step (6.8 ms over 20 steps, one call)."""
    from jupyter_gpuprof.capture.conditions import PhaseConditions
    from jupyter_gpuprof.capture.memory_record import MemoryRecorder

    pause_s = 0.5
    original_event, original_pause = PhaseConditions.on_event, MemoryRecorder.pause

    def slow_event(self, event):
        if event == "baseline":
            time.sleep(pause_s)
        original_event(self, event)

    def slow_pause(self):
        time.sleep(pause_s)
        original_pause(self)

    monkeypatch.setattr(PhaseConditions, "on_event", slow_event)
    monkeypatch.setattr(MemoryRecorder, "pause", slow_pause)
    baseline = _run(tmp_path).meta.baseline
    assert max(baseline["step_ms"]) < 1e3 * pause_s / 2
    assert baseline["capture_cost"]["hooks_ms"] < 1e3 * pause_s / 2


def test_a_wrapped_call_whose_after_starts_a_phase_charges_only_what_follows(monkeypatch):
    """The backward wrapper (a loop stepping by backward) charges like the hooks do."""
    from types import SimpleNamespace

    from jupyter_gpuprof.capture import training
    from jupyter_gpuprof.capture.training import TrainingCounters

    cost = HookCost()
    monkeypatch.setattr(training, "COST", cost)
    owner = SimpleNamespace(work=lambda: None)

    def after() -> None:
        time.sleep(0.2)  # the warm-up's set-up, before the baseline begins
        cost.on_event("baseline")
        time.sleep(0.001)

    counters = TrainingCounters()
    counters._wrap(owner, "work", lambda: True, after)  # this call ends a step
    owner.work()
    cost.on_event("capture")
    assert 1.0 <= cost.to_meta(None)["hooks_ms"] < 100.0


def test_the_median_call_tells_a_steady_cost_from_one_long_call():
    """Nine 5 µs calls and one 5 ms call (a collector pass that started inside a hook) total
    5.045 ms; the median call (5 µs) and the longest (5 ms) say which it is. Calls before the
    baseline and after it are not among them."""
    cost = HookCost()
    cost.add(900_000)  # a warm-up call
    cost.on_event("baseline")
    for ns in [5_000] * 9 + [5_000_000]:
        cost.add(ns)
    cost.on_event("capture")
    cost.add(700_000)  # a profiled step's call
    meta = cost.to_meta(None)
    assert meta["hooks_ms"] == pytest.approx(5.045) and meta["hook_calls"] == 10
    assert meta["median_call_us"] == 5.0 and meta["max_call_us"] == 5000.0
    idle = HookCost()
    idle.on_event("baseline")
    idle.on_event("capture")
    assert "median_call_us" not in idle.to_meta(None)  # no call: nothing to state


def test_the_report_says_the_median_and_longest_call(tmp_path):
    run = _run(tmp_path)
    meta = run.meta.baseline["capture_cost"]
    assert meta["median_call_us"] <= meta["max_call_us"]
    sentence = analyze_path(run.path).to_json()["steps"]["capture_cost"]["sentence"]
    assert "one call:" in sentence and "the median" in sentence and "the longest" in sentence


def test_the_account_keeps_nothing_once_the_baseline_is_over():
    """The hooks stay in for the rest of a long script (its final step count): what they
    charge after the baseline is never read, so it is not kept either; a capture with no
    baseline closes its account when the profiler starts."""
    cost = HookCost()
    cost.add(5_000)  # a warm-up step's call: not the baseline's
    cost.on_event("last_warmup")
    cost.add(6_000)
    cost.on_event("baseline")
    for ns in (1_000, 2_000, 3_000):
        cost.add(ns)
    cost.on_event("capture")
    for _ in range(10_000):
        cost.add(1_000)
    assert cost.calls == 5
    meta = cost.to_meta(None)
    assert meta["hook_calls"] == 3 and meta["hooks_ms"] == pytest.approx(0.006)
    assert meta["median_call_us"] == 2.0
    none = HookCost()
    none.on_event("capture")
    none.add(1_000)
    assert none.calls == 0 and none.to_meta(None) is None
    none.reset()  # the next capture counts again
    none.add(1_000)
    assert none.calls == 1


def test_a_timed_step_runs_the_fewest_calls_of_ours(tmp_path):
    """Every call of ours inside a timed step is a share of it (on the H200 a 1 ms DDP step
    paid ~4 % for 17 of them): a baseline step of an optimizer loop runs one shared torch hook,
    the step hook's short way, the step count, the driver's boundary and the clock's mark,
    once each, nothing else of ours."""
    import sys
    from collections import Counter

    t, ours = Trainer(), Counter()

    def watch(frame, event, arg):
        if event == "call" and "jupyter_gpuprof" in frame.f_code.co_filename:
            ours[frame.f_code.co_name] += 1

    with jupyter_gpuprof.profile("loop", runs_root=tmp_path, **SMALL, count_flops=False) as s:
        for _ in range(4):
            t.step()
        assert s.driver.phase.name == "BASELINE"
        sys.setprofile(watch)
        try:
            for _ in range(2):
                t.step()
        finally:
            sys.setprofile(None)
        for _ in range(NEEDED):
            t.step()
    assert ours == {"_call": 2, "timed_step": 2, "on_optimizer_step": 2, "boundary": 2,
                    "<lambda>": 2}
