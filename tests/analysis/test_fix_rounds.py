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


ENTRY = {"id": "toy", "command": ["train.py"],
         "own_log": {"regex": r"dt ([\d.]+)", "unit": "ms", "group": 1},
         "fixes": {"fast": {"args": ["--fast"]}, "slow": {"args": ["--slow"]}}}


def _fake_runs(ran):
    """A `_run` whose script logs 10 ms a step alone, 8 with --fast, 12 with --slow."""
    def fake(cmd, cwd, env, timeout):
        ran.append(cmd[-1])
        ms = {"train.py": 10.0, "--fast": 8.0, "--slow": 12.0}[cmd[-1]]
        return {"code": 0, "wall_s": 1.0, "out": "".join(f"dt {ms}\n" for _ in range(6)),
                "lines": []}
    return fake


def test_a_fix_matrix_times_each_variant_by_the_scripts_log_and_keeps_its_tail(monkeypatch,
                                                                               tmp_path):
    run_gpu = load_benchmark("corpus/run_gpu")
    monkeypatch.setattr(run_gpu, "_run", _fake_runs([]))
    monkeypatch.setattr(run_gpu, "make_data", lambda entry, folder: None)
    monkeypatch.delenv("CORPUS_FIX_ROUNDS", raising=False)
    monkeypatch.delenv("CORPUS_FIX_NAMES", raising=False)
    got = run_gpu.run_entry(ENTRY, tmp_path, tmp_path / "out", no_tool=True)
    assert got["plain"]["median_ms"] == pytest.approx(10.0) and "dt 10.0" in got["plain"]["tail"]
    assert {k: v["median_ms"] for k, v in got["fixes"].items()} == {"fast": 8.0, "slow": 12.0}
    assert all("dt" in v["tail"] for v in got["fixes"].values())


def test_rounds_turn_their_order_so_no_variant_always_runs_first(monkeypatch, tmp_path):
    """`CORPUS_FIX_ROUNDS`: each round runs the script alone and each fix in a fresh process,
    the order turned by one a round; each process is timed by the script's own log."""
    run_gpu = load_benchmark("corpus/run_gpu")
    ran = []
    monkeypatch.setattr(run_gpu, "_run", _fake_runs(ran))
    made = run_gpu.fix_rounds(ENTRY, tmp_path, ["python", "train.py"], {}, 10.0,
                              ENTRY["fixes"], 4)
    assert [r["order"] for r in made] == [["plain", "fast", "slow"], ["fast", "slow", "plain"],
                                         ["slow", "plain", "fast"], ["plain", "fast", "slow"]]
    assert ran[:3] == ["train.py", "--fast", "--slow"] and ran[3:5] == ["--fast", "--slow"]
    reader = load_benchmark("corpus/fix_rounds")
    assert reader.reading(made, "fast")["ratio"] == pytest.approx(0.8)
    assert reader.reading(made, "slow")["ratio"] == pytest.approx(1.2)
