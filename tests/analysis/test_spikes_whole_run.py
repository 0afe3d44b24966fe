"""The stalls of the steps after the capture, timed on the host clock: a step that only queued
GPU work ends early, and the read-back that follows waits for it. That wait is no stall; an
evaluation is."""

from __future__ import annotations

import pytest

from jupyter_gpuprof.analysis.spikes import find_spikes, run_spikes, whole_run_spikes

GPU_STEP = 10.0  # the steady step on the GPU's clock (the baseline's median)


def _after(ms: list[float], first: int = 20) -> dict:
    return {"first_step": first, "steps": len(ms), "wall_ms": sum(ms), "step_ms": ms}


def _ahead_then_read_back(periods: int, every: int = 10, host: float = 2.0) -> list[float]:
    """A host that queues a step in `host` ms and reads a result back every `every` steps:
    that step waits for all the GPU work queued since the last one."""
    one = [host] * (every - 1) + [every * GPU_STEP - (every - 1) * host]
    return one * periods


def test_a_read_back_after_steps_that_ran_ahead_is_no_stall():
    ms = _ahead_then_read_back(30)
    s = whole_run_spikes(_after(ms), GPU_STEP)
    assert s is not None and s.stalls == []  # the host's own 2 ms median ran ahead of the GPU
    assert s.mean_ms == pytest.approx(GPU_STEP)


def test_an_evaluation_after_steps_that_ran_ahead_is_priced_at_its_own_time():
    ms = _ahead_then_read_back(30)
    events = []
    for k in (9, 109, 209):  # an evaluation of 300 ms in the read-back step, every 100 steps
        ms[k] += 300.0
        events.append({"what": "eval", "step": 20 + k, "ms": 300.0})
    s = whole_run_spikes(_after(ms), GPU_STEP, events)
    assert s is not None and [st.cause for st in s.stalls] == ["eval"] * 3
    assert all(st.excess_ms == pytest.approx(300.0) for st in s.stalls)
    assert all(st.period_steps == 100 for st in s.stalls)
    assert s.excess_ms_per_step == pytest.approx(3.0)


def test_a_host_that_keeps_pace_with_the_gpu_has_its_own_median_as_the_steady_step():
    ms = [9.0] * 200
    ms[150] = 60.0  # something nothing recorded explains, once
    s = whole_run_spikes(_after(ms), GPU_STEP)
    assert s is not None and s.median_ms == GPU_STEP  # the report's median, the baseline's
    assert [round(st.excess_ms, 6) for st in s.stalls] == [51.0]  # over the host's 9 ms


def test_the_steps_after_the_capture_are_priced_only_where_they_outnumber_the_baseline():
    baseline = [10.0] * 30
    short = _after([10.0] * 10 + [400.0] + [10.0] * 10)
    assert run_spikes(baseline, None, None, short).after_steps == 0  # the baseline's view
    long = _after([10.0] * 100 + [400.0] + [10.0] * 100)
    seen = run_spikes(baseline, None, None, long)
    assert seen.after_steps == 201 and len(seen.stalls) == 1
    assert "201 steps after the capture" in seen.summary()


def test_a_long_run_kept_in_blocks_still_finds_and_prices_its_stalls():
    """Past `MAX_BLOCKS` steps the capture keeps blocks of 2^k steps (their mean): an
    evaluation of 300 ms every 1,000 steps of 10 ms is still one stall every 1,000 steps,
    priced at 0.3 ms a step, and the drain of a read-back inside a block nets out."""
    steps = _ahead_then_read_back(1000)  # 10,000 steps that run ahead and read back
    events = []
    for k in range(999, 10_000, 1000):
        steps[k] += 300.0
        events.append({"what": "eval", "step": 20 + k, "ms": 300.0})
    b = 8
    blocks = [sum(steps[i:i + b]) / b for i in range(0, len(steps), b)]
    after = {"first_step": 20, "steps": len(steps), "wall_ms": sum(steps), "block_steps": b,
             "step_ms": blocks}
    s = whole_run_spikes(after, GPU_STEP, events)
    assert s is not None and [st.cause for st in s.stalls] == ["eval"] * 10
    assert all(st.period_steps == 1000 for st in s.stalls)
    assert s.excess_ms_per_step == pytest.approx(0.3, rel=0.05)
    assert s.n_steps == 10_000 and s.mean_ms == pytest.approx(GPU_STEP + 0.3)


def test_steps_after_the_capture_without_a_stall_say_so_with_their_measured_mean():
    """The baseline covers a period where it can, or says what it saw: a whole run without a
    stall is said, with what a step cost on average, not left unsaid."""
    s = run_spikes([10.0] * 30, None, None, _after([10.0] * 100 + [10.4] * 100))
    assert s is not None and s.after_steps == 200 and not s.stalls
    assert s.summary() == ("no stall in the 200 steps after the capture (to the script's "
                           "end: 10.20 ms a step on average, measured)")
    assert find_spikes([10.0] * 30).summary() is None  # a baseline without stalls: nothing
