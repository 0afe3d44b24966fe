"""Before/after comparison: statistics on known samples, the real TinyGPT fix, API and CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from paths import TESTS
from runs_fixtures import AFTER, BEFORE, build_runs_root

import jupyter_gpuprof
from jupyter_gpuprof.analysis.compare import (
    bootstrap_median_diff_ci,
    compare_summaries,
    mann_whitney_p,
    rounds_sign_p,
    step_change,
    table_deltas,
)
from jupyter_gpuprof.cli import main
from jupyter_gpuprof.report import analyze_path

REAL = TESTS / "data" / "real"


@pytest.fixture(scope="module")
def tinygpt() -> tuple[dict, dict]:
    return (analyze_path(REAL / "tinygpt_before").to_json(),
            analyze_path(REAL / "tinygpt_after").to_json())


def test_mann_whitney_matches_known_values() -> None:
    a, b = np.arange(1.0, 11.0), np.arange(11.0, 21.0)
    # Fully separated samples of 10: exact two-sided p = 2 / C(20, 10) ~ 1.1e-5; the normal
    # approximation with continuity correction gives ~1.8e-4.
    assert mann_whitney_p(a, b) == pytest.approx(1.83e-4, rel=0.05)
    assert mann_whitney_p(a, a) == pytest.approx(1.0)
    assert mann_whitney_p(np.ones(5), np.ones(5)) == 1.0  # all ties: no evidence


def test_bootstrap_interval_brackets_the_true_shift() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.normal(10.0, 0.3, 40), rng.normal(9.0, 0.3, 40)
    lo, hi = bootstrap_median_diff_ci(a, b)
    assert lo < -1.0 + 0.25 and hi > -1.0 - 0.25 and hi < 0


def test_tinygpt_fix_is_significant(tinygpt) -> None:
    c = compare_summaries(*tinygpt)
    s = c["steps"]
    assert (s["verdict"], s["direction"], s["significant"]) == ("significant", "faster", True)
    assert s["median_before_ms"] == pytest.approx(46.52, abs=0.01)
    assert s["median_after_ms"] == pytest.approx(18.36, abs=0.01)
    assert s["ci_low_ms"] < s["delta_ms"] < s["ci_high_ms"] < 0
    assert s["p_value"] < 1e-6 and s["speedup"] == pytest.approx(2.53, abs=0.02)
    assert c["kernel_kinds"]["improvements"][0]["name"] == "gemm"
    assert c["ops"]["improvements"][0]["name"] == "aten::mm"
    # The before-step's fp32 SIMT GEMMs lead (report/test_real_traces.py); the measured fix
    # did both (bf16 and the loader out of the step).
    assert (c["before"]["verdict"]["category"], c["after"]["verdict"]["category"]) == (
        "precision", "launch")
    assert "fp32-matmuls" in c["findings"]["resolved"]


def test_the_before_runs_predictions_stand_beside_the_measured_gain(tinygpt) -> None:
    """What the report predicted for the findings the fix resolved, and what the fix measured:
    TinyGPT's precision finding against 46.52 → 18.36 ms (bf16 and the loader fix together)."""
    c = compare_summaries(*tinygpt)
    p = c["prediction"]
    (precision,) = [f for f in p["resolved"] if f["id"] == "fp32-matmuls"]
    assert precision["category"] == "precision" and precision["expected_gain_pct"] > 30
    assert p["measured_gain_pct"] == pytest.approx(100 * (1 - 18.36 / 46.52), abs=0.1)
    assert p["ci_low_gain_pct"] < p["measured_gain_pct"] < p["ci_high_gain_pct"]
    assert p["verdict"] == "significant"
    from jupyter_gpuprof.report.comparison import render_text

    line = next(ln for ln in render_text(c).splitlines() if ln.startswith("Predicted by"))
    assert f"[precision] ≈{round(precision['expected_gain_pct'])}%" in line
    assert "measured here: gain +60.5% 95% CI [" in line and line.endswith("(significant)")
    # per-step deltas in ms, as every other figure, in the JSON too
    assert "     -21.37 ms  gemm" in render_text(c).splitlines()
    assert c["delta_unit"] == "ms_per_step"
    gemm = c["kernel_kinds"]["improvements"][0]
    assert gemm["delta_ms"] == pytest.approx(-21.37, abs=0.01)
    assert gemm["before_ms"] - gemm["after_ms"] == pytest.approx(-gemm["delta_ms"])


def test_two_halves_of_one_run_are_noise() -> None:
    steps = json.loads((REAL / "tinygpt_before" / "meta.json").read_text())["step_ms_all"]
    assert step_change(steps[::2], steps[1::2])["verdict"] == "noise"
    after = json.loads((REAL / "tinygpt_after" / "meta.json").read_text())["step_ms_all"]
    assert step_change(after[:15], after[15:])["verdict"] == "noise"


def test_same_distribution_is_noise_nearly_always() -> None:
    rng = np.random.default_rng(7)
    hits = sum(step_change(rng.normal(46, 0.6, 30), rng.normal(46, 0.6, 30), seed=i)["significant"]
               for i in range(100))
    assert hits <= 2


def _blocks(levels: list[float], per: int, rng: np.random.Generator) -> tuple[list, list]:
    """Step times in blocks of `per` around each block's level (a host whose speed moves
    between blocks), and each block's median."""
    steps = [list(rng.normal(level, 0.01 * level, per)) for level in levels]
    return [x for b in steps for x in b], [float(np.median(b)) for b in steps]


def test_a_no_op_measured_in_rounds_is_noise_when_the_host_moves_between_blocks() -> None:
    """A/A on a shared host: the same step, control and try interleaved in 8 rounds, the
    host's speed moving from block to block. Pooled, the step-level tests see two tight,
    shifted samples and call it significant; the rounds disagree, so it is noise."""
    rng = np.random.default_rng(3)
    control, control_rounds = _blocks([10, 10, 10, 12, 10, 10, 12, 10], 4, rng)
    tried, tried_rounds = _blocks([12, 12, 10, 12, 12, 12, 10, 12], 4, rng)
    assert step_change(control, tried)["significant"]  # the rule without rounds
    ch = step_change(control, tried, rounds=(control_rounds, tried_rounds))
    assert not ch["significant"] and ch["verdict"] == "noise"
    assert ch["rounds_p_value"] == pytest.approx(rounds_sign_p(control_rounds, tried_rounds)[0])


def test_a_fix_that_wins_every_round_is_significant_whatever_the_host_did() -> None:
    rng = np.random.default_rng(4)
    levels = [10, 12, 10, 15, 11, 10, 13, 10]
    control, control_rounds = _blocks(levels, 4, rng)
    tried, tried_rounds = _blocks([0.8 * x for x in levels], 4, rng)
    ch = step_change(control, tried, rounds=(control_rounds, tried_rounds))
    assert ch["significant"] is True and ch["direction"] == "faster"  # JSON's own bool
    assert ch["rounds_p_value"] == pytest.approx(2 / 2**8)
    # seven rounds of eight are not enough at the 1 % level (p = 18/256)
    assert not step_change(control, tried, rounds=(control_rounds, tried_rounds[:7] + [
        control_rounds[7] + 1]))["significant"]


def test_the_sign_test_counts_rounds_each_way() -> None:
    assert rounds_sign_p([1, 1, 1], [2, 2, 2]) == (0.25, 1)
    assert rounds_sign_p([2] * 8, [1] * 8) == (2 / 256, -1)
    assert rounds_sign_p([1, 2], [2, 1]) == (1.0, 0)
    assert rounds_sign_p([1, 1], [1, 1]) == (1.0, 0)


def test_too_few_steps_is_insufficient() -> None:
    assert step_change([1.0, 2.0], [1.0, 2.0, 3.0])["verdict"] == "insufficient data"


def test_table_deltas_split_regressions_and_improvements() -> None:
    before = [{"name": "a", "t": 10.0}, {"name": "b", "t": 5.0}, {"name": "gone", "t": 2.0}]
    after = [{"name": "a", "t": 4.0}, {"name": "b", "t": 9.0}, {"name": "new", "t": 1.0}]
    d = table_deltas(before, after, "name", "t", per_before=2.0, per_after=1.0)
    # per step: a 5 -> 4, b 2.5 -> 9, gone 1 -> 0, new 0 -> 1
    assert [(r["name"], r["delta_ms"]) for r in d["improvements"]] == [("a", -1.0),
                                                                        ("gone", -1.0)]
    assert [(r["name"], r["delta_ms"]) for r in d["regressions"]] == [("b", 6.5), ("new", 1.0)]
    scaled = table_deltas(before, after, "name", "t", per_before=2.0, scale=1e-3)
    assert scaled["regressions"][0]["delta_ms"] == pytest.approx(6.5e-3)  # b: 2.5 µs -> 9 µs


def test_public_api_on_store_runs(tmp_path: Path) -> None:
    root = build_runs_root(tmp_path / "runs")
    result = jupyter_gpuprof.compare(BEFORE, AFTER, runs_root=root)
    assert result.significant
    text = result.to_text()
    assert "SIGNIFICANT" in text and "46.52 ms -> 18.36 ms" in text
    # the comparison's own sentence leads, as in the compare view; sides by their labels
    assert text.splitlines()[0] == "The change is real: after is 60.5% faster (×2.53)."
    assert text.splitlines()[1].startswith("Before: tinygpt before  (baseline steps")
    assert (root / BEFORE / "summary.json").is_file()  # analysed once, cached in the run
    assert "<pre" in result._repr_html_()


def test_cli_compare_json_and_text(tmp_path: Path, capsys) -> None:
    assert main(["compare", str(REAL / "tinygpt_before"), str(REAL / "tinygpt_after"),
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["steps"]["verdict"] == "significant"
    assert main(["compare", "no-such-run", str(REAL / "tinygpt_after"),
                 "--runs-root", str(tmp_path)]) == 2
    assert "no run 'no-such-run'" in capsys.readouterr().err


def test_the_prediction_line_reads_as_the_compare_view_writes_it() -> None:
    """The same figures as src/__tests__/views.spec.ts: both surfaces write one line."""
    from jupyter_gpuprof.report.comparison import prediction_line

    finding = {"id": "fp32-matmuls", "category": "precision", "title": "t",
               "expected_gain_pct": 41.1, "measured_gain_pct": None}
    check = {"resolved": [finding], "measured_gain_pct": 60.53, "ci_low_gain_pct": 59.22,
             "ci_high_gain_pct": 62.68, "verdict": "significant"}
    assert prediction_line(check) == ("Predicted by the before run: [precision] ≈41%; measured "
                                      "here: gain +60.5% 95% CI [+59.2%, +62.7%] (significant)")
    assert prediction_line({**check, "resolved": []}) is None
