"""A by-hand fix read over interleaved rounds, each against the script alone of its own round."""

from __future__ import annotations

import json
import math

import pytest
from benchmark_modules import load_benchmark
from paths import ROOT


@pytest.fixture(scope="module")
def rounds():
    return load_benchmark("corpus/fix_rounds")


def _round(alone, **fixes):
    return {"plain": {"median_ms": alone}, "fixes": {k: {"median_ms": v} for k, v in fixes.items()}}


def test_each_fix_is_read_against_the_alone_run_of_its_own_round(rounds):
    # the host's speed moves between rounds (5 → 7 ms alone); the fix saves 20 % in each
    made = [_round(5.0, a=4.0), _round(7.0, a=5.6), _round(6.0, a=4.8), _round(5.5)]
    assert rounds.ratios(made, "a") == pytest.approx([0.8, 0.8, 0.8])  # the round without it
    got = rounds.reading([*made, _round(6.5, a=5.2 * 1.01)], "a")
    assert got["said"] == "faster" and got["gain_pct"] == pytest.approx(
        100 * (1 - math.exp((3 * math.log(0.8) + math.log(0.808)) / 4)))


def test_a_fix_within_the_rounds_spread_is_not_shown_either_way(rounds):
    made = [_round(5.0, a=4.5), _round(5.0, a=5.6), _round(5.0, a=4.8), _round(5.0, a=5.3)]
    assert rounds.reading(made, "a")["said"] == "not shown"
    slower = [_round(5.0, a=5.6), _round(5.0, a=5.8), _round(5.0, a=5.7)]
    assert rounds.reading(slower, "a")["said"] == "slower"


def test_the_word_lms_fixes_measured_in_rounds_are_read_from_the_committed_evidence(rounds):
    doc = json.loads((ROOT / "docs" / "evidence" / "word_lm_fix_rounds_h100.json").read_text())
    assert len(doc["rounds"]) == 6
    both = rounds.reading(doc["rounds"], "no-item-compile-reduce-overhead")
    assert both["said"] == "slower" and both["rounds"] == 6
    assert rounds.reading(doc["rounds"], "no-item")["said"] == "not shown"
