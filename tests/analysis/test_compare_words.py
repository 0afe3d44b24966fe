"""What a comparison says: a real change is never called noise; both-sides conditions are a
caveat in the same sentence; the sides' labels tell apart runs of the same script."""

from __future__ import annotations

import numpy as np

from jupyter_gpuprof.analysis.compare import compare_summaries, step_change
from jupyter_gpuprof.analysis.compare_words import headline, side_labels
from jupyter_gpuprof.analysis.conditions import shared_handicaps

CAPPED = {"available": True, "throttle": ["sw_power_cap"], "sm_clock_mhz": {"median": 1710}}
FREE = {"available": True, "throttle": [], "sm_clock_mhz": {"median": 1710}}


def _summary(name: str, steps: list[float], conditions: object, created: str,
             run_id: str) -> dict:
    return {"source": {"name": name, "created": created, "run_id": run_id},
            "steps": {"baseline_ms": steps}, "conditions": conditions}


def _fp32_bf16(conditions: object) -> dict:
    """nanoGPT fp32 → bf16 on an H200, power-capped on both sides: 308 → 130 ms a step."""
    rng = np.random.default_rng(0)
    return compare_summaries(
        _summary("train", list(rng.normal(308, 1.0, 20)), conditions, "2026-11-29T19:13:22",
                 "r1"),
        _summary("train", list(rng.normal(130, 1.0, 20)), conditions, "2026-11-29T19:40:05",
                 "r2"))


def test_a_real_change_under_a_power_cap_on_both_sides_is_real_with_the_caveat() -> None:
    c = _fp32_bf16(CAPPED)
    assert c["steps"]["verdict"] == "significant"
    assert c["caveats"] == ["the GPU was power-capped on both sides (sw_power_cap)"]
    assert c["headline"].startswith("The change is real: after is 57.")
    assert "power-capped on both sides" in c["headline"] and "noise" not in c["headline"]


def test_without_shared_conditions_the_headline_carries_no_caveat() -> None:
    c = _fp32_bf16(FREE)
    assert c["caveats"] == [] and c["headline"].endswith("faster (×2.37).")


def test_a_throttle_on_one_side_only_is_no_shared_caveat() -> None:
    assert shared_handicaps(CAPPED, FREE) == []
    assert shared_handicaps(CAPPED, {**CAPPED, "available": False}) == []


def test_noise_says_which_rule_it_failed() -> None:
    rng = np.random.default_rng(1)
    s = step_change(rng.normal(46, 0.6, 30), rng.normal(46, 0.6, 30))
    assert s["verdict"] == "noise"
    assert headline(s, []).startswith("No real change:")
    assert "interval includes zero" in headline(s, [])
    assert headline(step_change([1.0], [2.0]), []).startswith("Too few steps")


def test_labels_of_two_runs_of_one_script_differ() -> None:
    a = {"name": "train", "created": "2026-11-29T19:13:22", "run_id": "r1"}
    assert side_labels(a, {**a, "created": "2026-11-30T08:01:00"}) == (
        "train · 2026-11-29 19:13", "train · 2026-11-30 08:01")
    assert side_labels(a, {**a, "run_id": "r2"}) == ("train (r1)", "train (r2)")
    assert side_labels(a, {**a, "name": "train bf16"}) == ("train", "train bf16")
    assert _fp32_bf16(FREE)["before"]["label"] != _fp32_bf16(FREE)["after"]["label"]
