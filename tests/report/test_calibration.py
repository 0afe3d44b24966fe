"""Each report states the runs root's record of its findings' fixes on this GPU; the text and
HTML views only format it."""

from __future__ import annotations

from runs_fixtures import real_run

from jupyter_gpuprof.report import analyze_path
from jupyter_gpuprof.report.build import run_summary, run_summary_doc
from jupyter_gpuprof.store import open_run
from jupyter_gpuprof.store.calibration import CalibrationEntry, append_entries
from jupyter_gpuprof.views.html import render_html
from jupyter_gpuprof.views.text import render_text

RUN = "20261129-200000-launch"


def e(fix: str, predicted: float, measured: float, gpu: str = "NVIDIA H200",
      significant: bool = True) -> CalibrationEntry:
    return {"fix": fix, "category": None, "gpu_name": gpu, "workload": "w", "conditions": None,
            "predicted_gain_pct": predicted, "measured_gain_pct": measured,
            "significant": significant, "error": None, "run_id": "earlier", "source": "script",
            "created": "t"}


def test_a_run_whose_root_has_no_record_states_none(tmp_path):
    report = analyze_path(real_run(tmp_path, RUN, "launch"))  # a launch finding: --try graphs
    assert report.summary().calibration is None
    assert "Record:" not in report.to_text()


def test_the_record_of_the_findings_fix_on_this_gpu(tmp_path):
    folder = real_run(tmp_path, RUN, "launch")
    append_entries(tmp_path, [e("graphs", 60.0, 52.0), e("graphs", 70.0, 56.0),
                              e("graphs", 50.0, 48.0, significant=False),
                              e("graphs", 10.0, 90.0, gpu="NVIDIA A100"),  # not this GPU
                              e("loader", 10.0, 0.0)])  # no finding of this run names it
    summary = analyze_path(folder).to_json()
    [row] = summary["calibration"]
    assert (row["fix"], row["n_tries"], row["n_significant"], row["mean_abs_error_pts"],
            row["worst_error_pts"], row["mean_bias_pts"], row["predicted_gain_pct"],
            row["corrected_gain_pct"]) == ("graphs", 3, 2, 11.0, 14.0, 11.0,
                                           _launch_gain(summary), None)
    line = ("Record: graphs: 3 tries here, predictions off by 11 points on average, worst 14 "
            "(2 significant; they ran 11 points high)")
    assert f"   {line}" in render_text(summary).splitlines()
    assert f"<div>{line}</div>" in render_html(summary)


def test_enough_tries_correct_the_prediction_beside_it(tmp_path):
    folder = real_run(tmp_path, RUN, "launch")
    append_entries(tmp_path, [e("graphs", 60.0, 52.0), e("graphs", 70.0, 56.0),
                              e("graphs", 40.0, 40.0)])
    report = analyze_path(folder)
    predicted = _launch_gain(report.to_json())
    assert (f"graphs: 3 tries here, predictions off by 7 points on average, worst 14 "
            f"(3 significant; they ran 7 points high); corrected by the record: "
            f"≈{predicted - (8 + 14 + 0) / 3:.0f}% (predicted ≈{predicted:.0f}%)"  # mean bias
            ) in report.to_text()


def _launch_gain(summary: dict) -> float:
    """The prediction of the run's launch finding (what the record corrects)."""
    return next(f["expected_gain_pct"] for f in summary["findings"] if f["category"] == "launch")


def test_a_cached_summary_states_todays_record(tmp_path):
    run = open_run(real_run(tmp_path, RUN, "launch"))
    assert run_summary(run)["calibration"] is None  # analysed and cached without a record
    append_entries(tmp_path, [e("graphs", 60.0, 52.0)])
    assert run_summary(run)["calibration"][0]["n_tries"] == 1
    assert "Record: graphs: 1 try here" in render_text(run_summary_doc(run))
