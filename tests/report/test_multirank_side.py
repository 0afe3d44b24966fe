"""A job's report reads the meta's side of the baseline as a one-GPU run's does: rank 0's
stall events and the steps after its capture are priced in the ranks' report too."""

from __future__ import annotations

import shutil

import pytest
from paths import TESTS

from jupyter_gpuprof.report.build import analyze_path
from jupyter_gpuprof.store.runs import RunStore

RANKS = TESTS / "data" / "real" / "ddp_workload_balanced"  # two H200 ranks, ~55 ms a step


def _job(root, after_ms, events):
    run = RunStore(root).create("ddp")
    run.meta.baseline = {"step_ms": [55.0] * 30, "timing": "cuda_event", "stalls": events,
                         "after": {"first_step": 30, "steps": len(after_ms),
                                   "wall_ms": sum(after_ms), "step_ms": after_ms}}
    run.meta.status = "complete"
    run.write_meta()
    for f in RANKS.iterdir():
        shutil.copy(f, run.path / f.name)
    return run


def test_a_jobs_evaluations_after_the_capture_are_priced(tmp_path):
    ms, events = [55.0] * 400, []
    for k in range(50, 400, 100):  # rank 0 evaluates for 500 ms every 100 steps
        ms[k] += 500.0
        events.append({"what": "eval", "step": 30 + k, "ms": 500.0})
    summary = analyze_path(_job(tmp_path, ms, events).path).to_json()
    assert len(summary["distributed"]["ranks"]) == 2
    spikes = summary["steps"]["spikes"]
    assert [s["cause"] for s in spikes["stalls"]] == ["eval"] * 4
    assert all(s["period_steps"] == 100 for s in spikes["stalls"])
    assert spikes["mean_ms"] == pytest.approx(60.0)
    assert spikes["share_pct"] == pytest.approx(100 * 2000 / sum(ms))
