"""The runs root's calibration record: appended whole lines, safe across processes, damage
skipped with a warning."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
from paths import ROOT

from jupyter_gpuprof.store.calibration import (
    CALIBRATION_FILE,
    CalibrationEntry,
    CalibrationWarning,
    append_entries,
    read_entries,
)
from jupyter_gpuprof.store.safe_files import SymlinkRefused


def entry(fix: str = "compile", run_id: str = "r1", measured: float | None = 10.0,
          predicted: float | None = 20.0) -> CalibrationEntry:
    return {"fix": fix, "category": "fusion", "gpu_name": "NVIDIA H200", "workload": "abc",
            "conditions": {"sm_clock_mhz": 1980.0, "throttle": []},
            "predicted_gain_pct": predicted, "measured_gain_pct": measured,
            "significant": measured is not None, "error": None if measured is not None
            else "RecursionError: maximum recursion depth exceeded", "run_id": run_id,
            "source": "script", "created": "2026-12-02T10:00:00+0000"}


def test_entries_are_appended_in_order_and_read_back(tmp_path):
    assert read_entries(tmp_path) == []  # no record yet
    append_entries(tmp_path, [entry(run_id="a"), entry("graphs", "a", None)])
    append_entries(tmp_path, [entry(run_id="b")])
    append_entries(tmp_path, [])  # nothing to add: no write
    got = read_entries(tmp_path)
    assert [(e["fix"], e["run_id"]) for e in got] == [("compile", "a"), ("graphs", "a"),
                                                       ("compile", "b")]
    assert got[1]["error"].startswith("RecursionError") and got[0]["conditions"] == {
        "sm_clock_mhz": 1980.0, "throttle": []}
    assert (tmp_path / CALIBRATION_FILE).read_bytes().count(b"\n") == 3  # one line each


APPENDER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from jupyter_gpuprof.store.calibration import append_entries
    root, who, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    pad = "x" * 5000  # lines longer than a pipe buffer: a torn write would show
    for i in range(n):
        append_entries(root, [{"fix": "compile", "category": None, "gpu_name": None,
            "workload": pad, "conditions": None, "predicted_gain_pct": float(i),
            "measured_gain_pct": 1.0, "significant": True, "error": None,
            "run_id": f"{who}-{i}", "source": "script", "created": "now"},
            {"fix": "graphs", "category": None, "gpu_name": None, "workload": pad,
            "conditions": None, "predicted_gain_pct": None, "measured_gain_pct": None,
            "significant": None, "error": "x", "run_id": f"{who}-{i}", "source": "script",
            "created": "now"}])
""")


def test_two_processes_appending_at_once_never_interleave(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", APPENDER, str(tmp_path), who, "150"],
                              env=env) for who in ("p", "q")]
    assert [p.wait() for p in procs] == [0, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a single damaged line would warn
        got = read_entries(tmp_path)
    assert len(got) == 600
    for who in ("p", "q"):
        mine = [e["run_id"] for e in got if e["run_id"].startswith(who)]
        # each call's two entries stay together, and each process's calls stay in order
        assert mine == [f"{who}-{i}" for i in range(150) for _ in range(2)]


def test_a_damaged_line_is_skipped_with_a_warning(tmp_path):
    append_entries(tmp_path, [entry(run_id="a")])
    with (tmp_path / CALIBRATION_FILE).open("ab") as f:
        f.write(b'{"fix": "compile"}\n')  # not an entry
        f.write(b"\x00garbage\n")
        f.write(b'{"fix": "graphs", "catego')  # a writer killed mid-line
    append_entries(tmp_path, [entry(run_id="b")])  # ends the torn line first
    with pytest.warns(CalibrationWarning, match=r"3 line\(s\) skipped \(line 2: "):
        got = read_entries(tmp_path)
    assert [e["run_id"] for e in got] == ["a", "b"]


def test_a_symlinked_record_is_never_followed(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("secret\n")
    root = tmp_path / "runs"
    root.mkdir()
    (root / CALIBRATION_FILE).symlink_to(victim)
    with pytest.raises(SymlinkRefused):
        append_entries(root, [entry()])
    with pytest.raises(SymlinkRefused):
        read_entries(root)
    assert victim.read_text() == "secret\n"


def test_a_runs_root_that_does_not_exist_has_no_record(tmp_path):
    assert read_entries(Path(tmp_path / "nowhere")) == []
