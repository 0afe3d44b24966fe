"""CUPTI is let go after the capture where that is safe (capture/cupti_release.py): the
training after a capture must not keep paying the profiler's callbacks."""

from __future__ import annotations

import os

from jupyter_gpuprof.capture.cupti_release import (
    TEARDOWN,
    release_cupti_on_stop,
    teardown_decision,
)


def test_asked_for_on_a_recent_cuda_without_graphs():
    env: dict[str, str] = {}
    assert teardown_decision("13.0", 0, env) is None
    assert teardown_decision("12.6", 0, env) is None


def test_kept_where_a_teardown_can_crash_or_someone_chose():
    assert "12.6" in teardown_decision("12.4", 0, {})
    assert "graphs" in teardown_decision("12.8", 3, {})
    # torch.compile(mode="reduce-overhead") sets it to 0 itself: never overridden
    assert "already set" in teardown_decision("13.0", 0, {TEARDOWN: "0"})
    assert teardown_decision(None, 0, {}) == "no CUDA build"
    assert teardown_decision("garbage", 0, {}) == "no CUDA build"


def test_the_variable_is_set_only_when_asked(monkeypatch):
    import torch

    monkeypatch.setattr(torch.version, "cuda", "12.8")
    env: dict[str, str] = {}
    assert release_cupti_on_stop(0, env) is None and env[TEARDOWN] == "1"
    kept: dict[str, str] = {TEARDOWN: "0"}
    assert release_cupti_on_stop(0, kept) is not None and kept[TEARDOWN] == "0"
    graphs: dict[str, str] = {}
    assert release_cupti_on_stop(2, graphs) is not None and TEARDOWN not in graphs


def test_the_capture_asks_before_its_profiler_starts(monkeypatch, tmp_path):
    import torch

    from jupyter_gpuprof.capture.session import ProfileSession
    from jupyter_gpuprof.capture.settings import CaptureSettings
    from jupyter_gpuprof.store import RunStore

    monkeypatch.setattr(torch.version, "cuda", "12.8")
    monkeypatch.delenv(TEARDOWN, raising=False)
    session = ProfileSession(CaptureSettings(mode="script"), store=RunStore(str(tmp_path)))
    try:
        session._make_profiler()
        assert os.environ.get(TEARDOWN) == "1" and session.cupti_kept is None
    finally:
        os.environ.pop(TEARDOWN, None)


def test_the_report_says_when_cupti_stayed_attached(tmp_path):
    """A capture that could not let CUPTI go (CUDA graphs, an older CUDA, torch.compile's own
    TEARDOWN_CUPTI=0) says so: the training after it may run slower until a restart."""
    import json
    import shutil

    from paths import ROOT

    from jupyter_gpuprof.report import analyze_path

    folder = tmp_path / "run"
    shutil.copytree(ROOT / "tests" / "data" / "corpus" / "word-lm", folder)
    meta = json.loads((folder / "meta.json").read_text())
    meta["cupti_kept"] = "TEARDOWN_CUPTI=0 was already set"
    (folder / "meta.json").write_text(json.dumps(meta))
    said = [w for w in analyze_path(folder).warnings if w.startswith("CUPTI stays attached")]
    assert said and "TEARDOWN_CUPTI=0" in said[0]
    meta["cupti_kept"] = None
    (folder / "meta.json").write_text(json.dumps(meta))
    assert not [w for w in analyze_path(folder).warnings if "CUPTI" in w]
