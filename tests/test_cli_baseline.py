"""`jupyter gpuprof analyze TRACE --baseline-ms MS`: offline traces reconciled like the magic's."""

import json

from paths import TESTS

from jupyter_gpuprof.cli import main

LAUNCH = TESTS / "data" / "real" / "launch" / "trace.json.gz"


def test_baseline_ms_reconciles_an_offline_trace(capsys):
    assert main(["analyze", "--json", str(LAUNCH), "--baseline-ms", "6.39"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["steps"]["source"] == "baseline" and s["steps"]["median_ms"] == 6.39
    top = s["findings"][0]
    assert top["category"] == "launch" and top["predicted_step_ms"] < 6.39
    assert round(100 * (1 - top["predicted_step_ms"] / 6.39), 1) == top["expected_gain_pct"]


def test_a_slower_real_step_changes_the_prediction(capsys):
    main(["analyze", "--json", str(LAUNCH), "--baseline-ms", "6.39"])
    fast = json.loads(capsys.readouterr().out)["findings"][0]["predicted_step_ms"]
    main(["analyze", "--json", str(LAUNCH), "--baseline-ms", "13.0,13.2"])
    slow = json.loads(capsys.readouterr().out)["findings"][0]["predicted_step_ms"]
    assert slow > fast


def test_bad_baseline_is_a_one_line_error(capsys, tmp_path):
    assert main(["analyze", str(LAUNCH), "--baseline-ms", "fast"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "give step times in ms" in err
    assert main(["analyze", str(tmp_path), "--baseline-ms", "5"]) == 2
    assert "applies to a trace file" in capsys.readouterr().err
