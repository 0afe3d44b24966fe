"""The corpus score compares like with like: the tool's per-step baseline against the script
alone per step, whatever a line of the script's log stands for."""

import pytest
from benchmark_modules import load_benchmark


def test_the_script_alone_is_compared_per_step_whatever_its_log_counts():
    """A log line of the DDP tutorial stands for a 64-step epoch: the tool's per-step baseline
    is set against the script alone per step, as recorded before or after `per` was kept."""
    run_gpu, score = load_benchmark("corpus/run_gpu"), load_benchmark("corpus/score")
    entry = {"own_log": {"regex": r"^Epoch (\d+)", "unit": "epochs", "group": 0, "per": 64,
                         "skip": 0}}
    run = {"lines": [(0.0, "Epoch 1"), (0.128, "Epoch 2"), (0.256, "Epoch 3")], "out": ""}
    made = run_gpu.own_times(entry, run)
    assert made["per"] == 64 and made["median_ms"] == pytest.approx(2.0)
    assert score.plain_step_ms(entry, made) == pytest.approx(2.0)
    before = {"median_ms": 128.0, "per": 1}  # a record made when the manifest said nothing
    assert score.plain_step_ms(entry, before) == pytest.approx(2.0)
    assert score.plain_step_ms(entry, {"median_ms": 2.0}) == pytest.approx(2.0)


def _round(alone: float, fixes: dict[str, float]) -> dict:
    return {"plain": {"median_ms": alone}, "fixes": {k: {"median_ms": v} for k, v in fixes.items()}}


def test_interleaved_rounds_outrank_one_process_a_variant():
    """One process a variant read a fix at −31.5 %; eight interleaved rounds read it within
    the noise, and another fix faster: the truth follows the rounds."""
    score = load_benchmark("corpus/score")
    entry = {"fix_categories": {"graphs": ["launch"], "captured": ["launch"]}}
    measured = {"plain": {"mean_ms": 6.43}, "fixes": {"graphs": {"mean_ms": 4.40}}}
    assert score.truth(entry, measured)["fix"] == "graphs"
    rounds = [_round(5.0 + 0.1 * (i % 3), {"graphs": 5.0 + 0.1 * ((i + 1) % 3),
                                           "captured": 2.5 + 0.05 * (i % 2)}) for i in range(8)]
    gains = score.round_gains({"fix_rounds": [{"id": "word-lm", "rounds": rounds}]})["word-lm"]
    assert gains["graphs"] == 0.0 and gains["captured"] > 45
    t = score.truth(entry, measured, gains)
    assert t["fix"] == "captured" and t["all"]["graphs"] == 0.0


def test_rounds_on_another_card_are_scored_against_the_run_recorded_on_that_card():
    """The word LM's rounds ran on an H100 (no H200 came): its truth is scored against the
    report of the run recorded on that H100 in the same session, not the H200's recording,
    and the row's observer ratio is that session's (tool baseline over the script alone)."""
    score = load_benchmark("corpus/score")
    evidence = {"fix_rounds": [{"id": "word-lm", "device": "NVIDIA H100 80GB HBM3",
                                "file": "word_lm_fix_rounds_h100_s55.json",
                                "recording": "word-lm-h100"}]}
    (other,) = score.recordings(evidence).values()
    assert other["recording"] == "word-lm-h100"
    assert other["plain_ms"] == pytest.approx(3.5, abs=0.15)
    assert other["baseline_ms"] == pytest.approx(3.72, abs=0.01)
    gains = score.round_gains(evidence)["word-lm"]
    assert gains["no-item-cuda-graph"] == pytest.approx(46.0, abs=1.0)
    assert not score.recordings({"fix_rounds": [{"id": "word-lm", "rounds": []}]})
