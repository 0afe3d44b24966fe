"""Verdicts on real H200 traces of workloads built to have one bottleneck each.

Each workload's label was checked against its own GPU timeline when it was captured
(`ground_truth` and `label_holds` in its meta.json, measured by benchmarks/ground_truth.py,
which shares no code with the package), so these are measurements, not intentions.
"""

import json

import pytest
from paths import TESTS

from jupyter_gpuprof.report import analyze_path

DATA = TESTS / "data" / "real"
WORKLOADS = ["input", "sync", "launch", "precision", "compute", "memory", "transfer", "host"]


@pytest.mark.parametrize("name", WORKLOADS)
def test_workload_gets_its_measured_verdict(name):
    meta = json.loads((DATA / name / "meta.json").read_text())
    assert meta["label_holds"], "the capture's ground truth disagrees with the label"
    report = analyze_path(DATA / name)
    assert report.verdict.category == name
    assert report.verdict.confidence in ("high", "medium")
    if name != "compute":
        top = report.advice.findings[0]
        assert top.category == name and 0 < top.expected_gain_pct <= 100


def test_gpu_busy_matches_the_independent_ground_truth():
    for name in WORKLOADS:
        meta = json.loads((DATA / name / "meta.json").read_text())
        busy = analyze_path(DATA / name).analysis.busy_pct
        assert busy == pytest.approx(meta["ground_truth"]["gpu_busy_pct"], abs=2.0), name
