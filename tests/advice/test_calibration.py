"""The record summarised per fix and GPU, and the documented correction rule it backs."""

from __future__ import annotations

import pytest

from jupyter_gpuprof.advice.calibration import (
    FixRecord,
    corrected_gain,
    entries_of_tries,
    predictions_by_fix,
    summarize_record,
    workload_fingerprint,
)
from jupyter_gpuprof.advice.thresholds import CALIBRATION_MAX_SHIFT_PTS, CALIBRATION_MIN_TRIES
from jupyter_gpuprof.store.calibration import CalibrationEntry

H200, A100 = "NVIDIA H200", "NVIDIA A100"


def e(fix: str, predicted: float | None, measured: float | None, significant: bool | None,
      gpu: str | None = H200, error: str | None = None) -> CalibrationEntry:
    return {"fix": fix, "category": "launch" if fix == "graphs" else "memory", "gpu_name": gpu,
            "workload": "w", "conditions": None, "predicted_gain_pct": predicted,
            "measured_gain_pct": measured, "significant": significant, "error": error,
            "run_id": "r", "source": "script", "created": "t"}


RECORD = [
    e("compile", 20.0, 14.0, True),   # +6
    e("compile", 10.0, 24.0, True),   # -14
    e("compile", 30.0, 28.0, True),   # +2
    e("compile", 30.0, 0.5, False),   # noise: counted, not in the errors
    e("compile", None, None, None, error="RecursionError: too deep"),
    e("compile", 50.0, 0.0, True, gpu=A100),  # another GPU
    e("graphs", 60.0, 10.0, True),    # +50
    e("graphs", None, 12.0, True),    # no prediction: not in the errors
]


def test_the_summary_figures_are_exact():
    rows = summarize_record(RECORD, H200)
    # the fix table's order (compile before graphs), one row a fix on this GPU
    assert rows == [
        FixRecord("compile", "memory", H200, n_tries=5, n_significant=3, n_errors=1,
                  mean_abs_error_pts=pytest.approx(22 / 3), worst_error_pts=14.0,
                  mean_bias_pts=pytest.approx(-2.0)),
        FixRecord("graphs", "launch", H200, n_tries=2, n_significant=1, n_errors=0,
                  mean_abs_error_pts=50.0, worst_error_pts=50.0, mean_bias_pts=50.0),
    ]


def test_every_gpu_gets_its_own_rows_and_a_fix_with_no_significant_try_has_no_errors():
    rows = summarize_record(RECORD, every_gpu=True)
    assert [(r.fix, r.gpu_name) for r in rows] == [("compile", A100), ("compile", H200),
                                                   ("graphs", H200)]
    only_noise = summarize_record([e("amp", 10.0, 1.0, False)], H200)[0]
    assert (only_noise.n_tries, only_noise.mean_abs_error_pts, only_noise.worst_error_pts,
            only_noise.mean_bias_pts) == (1, None, None, None)
    assert summarize_record(RECORD, "NVIDIA B200") == []


def row(n_significant: int, bias: float) -> FixRecord:
    return FixRecord("compile", "memory", H200, n_significant, n_significant, 0,
                     abs(bias), abs(bias), bias)


def test_the_correction_needs_enough_significant_tries():
    assert corrected_gain(20.0, row(CALIBRATION_MIN_TRIES - 1, 6.0)) is None
    assert corrected_gain(20.0, row(CALIBRATION_MIN_TRIES, 6.0)) == pytest.approx(14.0)
    assert corrected_gain(20.0, row(CALIBRATION_MIN_TRIES, -5.0)) == pytest.approx(25.0)
    assert corrected_gain(None, row(CALIBRATION_MIN_TRIES, 6.0)) is None


def test_the_correction_is_clamped():
    big = CALIBRATION_MAX_SHIFT_PTS + 30
    assert corrected_gain(60.0, row(5, big)) == pytest.approx(60.0 - CALIBRATION_MAX_SHIFT_PTS)
    assert corrected_gain(10.0, row(5, CALIBRATION_MAX_SHIFT_PTS)) == 0.0  # never below 0 %
    assert corrected_gain(95.0, row(5, -big)) == 100.0  # nor above 100 %


def test_the_fingerprint_names_the_code_and_top_kernels():
    a = workload_fingerprint("python  train.py\n--lr 1", ["gemm", "relu"])
    assert a == workload_fingerprint("python train.py --lr 1", ["gemm", "relu"])
    assert a != workload_fingerprint("python train.py --lr 1", ["relu", "gemm"])
    assert a != workload_fingerprint("python other.py", ["gemm", "relu"])
    assert len(a) == 12 and int(a, 16) >= 0
    # kernels past the top FINGERPRINT_KERNELS do not change it
    assert (workload_fingerprint("x", list("abcde") + ["f"])
            == workload_fingerprint("x", list("abcde") + ["g"]))


def test_entries_of_judged_tries():
    tries = [
        {"fix": "compile", "predicted_gain_pct": 20.0, "measured_gain_pct": 14.5,
         "change": {"significant": True, "verdict": "significant"},
         "conditions": {"available": True, "sm_clock_mhz": {"min": 1900.0, "median": 1980.0,
                                                            "max": 1980.0},
                        "throttle": ["power cap"]}},
        {"fix": "graphs", "error": "InternalTorchDynamoError: RecursionError",
         "predicted_gain_pct": 14.6},
    ]
    got = entries_of_tries(tries, gpu_name=H200, workload="w", run_id="r1", source="script",
                           created="t")
    assert got[0] == {"fix": "compile", "category": "memory", "gpu_name": H200,
                      "workload": "w", "conditions": {"sm_clock_mhz": 1980.0,
                                                      "throttle": ["power cap"]},
                      "predicted_gain_pct": 20.0, "measured_gain_pct": 14.5,
                      "significant": True, "error": None, "run_id": "r1",
                      "source": "script", "created": "t"}
    assert (got[1]["category"], got[1]["significant"], got[1]["measured_gain_pct"],
            got[1]["error"], got[1]["conditions"]) == (
        "launch", None, None, "InternalTorchDynamoError: RecursionError", None)


def test_each_fix_takes_its_findings_expected_gain():
    findings = [{"expected_gain_pct": 40, "try_fixes": ["graphs"]},
                {"expected_gain_pct": 10.5, "try_fixes": ["compile", "graphs"]},
                {"expected_gain_pct": None, "try_fixes": ["tf32"]}]
    assert predictions_by_fix(findings) == {"graphs": 40.0, "compile": 10.5, "tf32": None}
