"""Recording a device call's observer runs: each run keeps its call, its card and the GPU's
clock through it, and a call is never recorded twice."""

from __future__ import annotations

import json

import pytest
from benchmark_modules import load_benchmark


@pytest.fixture(scope="module")
def rec():
    return load_benchmark("corpus/observer_record")


def _folder(tmp_path, name="toy", csv=True):
    d = tmp_path / name
    d.mkdir()
    run = {"id": name, "block_s": 0.5, "rounds": [1.0, 0.99], "pooled": {"pairs": 2, "ratio": 0.995,
                                                                         "verdict": "not shown"}}
    (d / "observer_inprocess.json").write_text(json.dumps({"settle_s": "5", "cpus": [2, 3],
                                                           name: run}))
    if csv:
        (d / "gpu.csv").write_text(
            "2026/12/05 09:32:35.875, 345 MHz, 0 %, 71.06 W\n"
            "2026/12/05 09:32:36.382, 1980 MHz, 40 %, 300.1 W\n"
            "2026/12/05 09:32:36.882, 1980 MHz, 50 %, 310.0 W\n"
            "2026/12/05 09:32:37.3")  # the line the kill cut short
    return d


def test_each_run_keeps_its_call_card_settings_and_the_gpus_clock(rec, tmp_path):
    (run,) = rec.runs_of(_folder(tmp_path), "51.1", "NVIDIA H100 80GB HBM3")
    assert run["call"] == "51.1" and run["device"] == "NVIDIA H100 80GB HBM3"
    assert run["cpus"] == [2, 3] and run["settle_s"] == "5"
    assert run["gpu_sampled"] == {"every_s": 0.5, "sm_clock": {"1980 MHz": 2, "345 MHz": 1},
                                  "utilization_mean_pct": 30.0}
    (bare,) = rec.runs_of(_folder(tmp_path, "bare", csv=False), "51.5", "NVIDIA H100 80GB HBM3")
    assert "gpu_sampled" not in bare


def test_a_call_recorded_twice_is_refused(rec, tmp_path):
    new = rec.runs_of(_folder(tmp_path), "51.1", "NVIDIA H100 80GB HBM3")
    once = rec.record({"about": "", "runs": []}, new)
    assert [r["call"] for r in once["runs"]] == ["51.1"]
    with pytest.raises(ValueError, match="already recorded: toy 51.1"):
        rec.record(once, new)
    again = rec.runs_of(_folder(tmp_path, "other"), "51.1", "NVIDIA H100 80GB HBM3")
    assert len(rec.record(once, again)["runs"]) == 2  # another script of the same call is new
