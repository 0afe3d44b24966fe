"""A sync that is a copy to the GPU waiting for itself (`x.to(device)` from pageable memory)
gets the fix for that copy, pinned memory and `non_blocking=True`, at the line that copies;
read-backs (`.item()`) keep the read-back fix."""

from __future__ import annotations

import dataclasses

from paths import TESTS

from jupyter_gpuprof.advice import fixes
from jupyter_gpuprof.advice.patterns import where_for
from jupyter_gpuprof.analysis.sync import COPY_OPS, upload_waits
from jupyter_gpuprof.report import analyze_path

# PARAM's ResNet trace (public, tests/data/wild): its batches copied from pageable memory
RESNET = TESTS / "data" / "wild" / "param" / "optimizer_steps_resnet" / "resnet_kineto.json.gz"


def _sync(report):
    (f,) = [f for f in report.advice.findings if f.category == "sync"]
    return f


def test_copies_that_wait_for_themselves_get_the_copy_fix():
    report = analyze_path(RESNET)
    a = report.analysis
    up = upload_waits(a.syncs, a.transfers)
    assert up.any() and a.syncs["op"][up].isin(COPY_OPS).all()
    f = _sync(report)
    assert f.data["upload_wait_pct"] >= 50
    assert f.fix == fixes.SYNC_UPLOAD and "non_blocking=True" in f.fix
    assert "copies to the GPU from pageable memory" in f.evidence


def test_read_backs_keep_the_read_back_fix():
    f = _sync(analyze_path(TESTS / "data" / "real" / "sync"))  # H200: .item() read-backs
    assert "upload_wait_pct" not in f.data and f.fix == fixes.SYNC


def test_the_copy_fix_points_at_the_line_that_copies():
    report = analyze_path(RESNET)
    f = _sync(report)
    sites = [{"file": "train.py", "line": 90, "code": "opt.step()", "call": "item", "calls": 160},
             {"file": "train.py", "line": 70, "code": "x = x.to(device)", "call": "to",
              "calls": 2}]
    assert where_for(f, report.analysis, sites)["line"] == 70
    plain = dataclasses.replace(f, data={k: v for k, v in f.data.items()
                                         if k != "upload_wait_pct"})
    assert where_for(plain, report.analysis, sites)["line"] == 90
