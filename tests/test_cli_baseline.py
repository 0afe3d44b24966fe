"""`jupyter gpuprof analyze TRACE --baseline-ms MS`: offline traces reconciled like the magic's."""

import json

import pytest
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


@pytest.mark.parametrize("value,said", [
    ("nan", "nan is not a finite number"), ("inf", "inf is not a finite number"),
    ("1e400", "inf is not a finite number"), ("6.4,-inf", "-inf is not a finite number"),
    ("6.4,nan", "nan is not a finite number"), ("6.4,-1", "must be positive"),
    ("0", "must be positive"), ("1e-300", "is not a step time"), ("1e12", "is not a step time"),
])
def test_a_baseline_that_is_no_step_time_is_a_one_line_error(capsys, value, said):
    """Issue 24: nan, inf and 1e400 were silently ignored, 1e-300 believed ("9e303×")."""
    assert main(["analyze", str(LAUNCH), "--baseline-ms", value]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert captured.out == "" and err.count("\n") == 0
    assert err.startswith(f"gpuprof: --baseline-ms {value}: ") and said in err


@pytest.mark.parametrize("value,said", [
    ("0.0064", "× the baseline's 6.4 µs; a profiler slows a step at most 50×"),
    ("6390", "an unprofiled step is not 20× slower than a profiled one"),
])
def test_a_baseline_implausible_for_the_trace_is_a_one_line_error(capsys, value, said):
    """A baseline in the wrong unit (µs or s given as ms): the trace's own steps refute it."""
    assert main(["analyze", str(LAUNCH), "--baseline-ms", value]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and said in err and "are the times in milliseconds" in err


def test_the_plausible_range_is_the_named_constants():
    from jupyter_gpuprof.analysis.baseline_check import (
        MAX_BASELINE_SLOWER,
        MAX_PROFILER_SLOWDOWN,
        BaselineError,
        check_baseline,
    )

    check_baseline([1.0], MAX_PROFILER_SLOWDOWN)  # at either bound: still believed
    check_baseline([MAX_BASELINE_SLOWER], 1.0)
    with pytest.raises(BaselineError):
        check_baseline([1.0], MAX_PROFILER_SLOWDOWN * 1.01)
    with pytest.raises(BaselineError):
        check_baseline([MAX_BASELINE_SLOWER * 1.01], 1.0)
    check_baseline([1e-3, 86_400e3])  # a microsecond and a day: step times without a trace


def test_the_baseline_is_judged_before_the_trace_is_read(tmp_path, capsys):
    """A typo in the argument is said at once, not after decoding a 300 MB trace (nor hidden
    behind what is wrong with the file)."""
    broken = tmp_path / "truncated.json"
    broken.write_text('{"traceEvents": [')
    assert main(["analyze", str(broken), "--baseline-ms", "nan"]) == 2
    assert "--baseline-ms nan: nan is not a finite number" in capsys.readouterr().err
