"""A run folder's saved allocator history through the typed summary, the text report and analyze."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

from memory_recordings import MEMORY, history, known, truth, within
from runs_fixtures import real_run

from jupyter_gpuprof.report import analyze_run, model
from jupyter_gpuprof.store import open_run
from jupyter_gpuprof.store.layout import MEMORY_HISTORY_FILE, MEMORY_HISTORY_KEY

RUN = "20261203-120000-gpt2"


def _with_history(tmp_path: Path, case: str, ours: dict[str, object] | None = None) -> Path:
    folder = real_run(tmp_path, RUN, "tinygpt_before")
    snap = json.loads(gzip.decompress((MEMORY / f"{case}.snapshot.json.gz").read_bytes()))
    if ours is not None:
        snap[MEMORY_HISTORY_KEY] = ours
    (folder / MEMORY_HISTORY_FILE).write_bytes(gzip.compress(json.dumps(snap).encode()))
    return folder


def test_schema_version_is_eight() -> None:
    assert model.SUMMARY_SCHEMA_VERSION == 8


def test_the_peak_explained_in_the_summary_and_the_text(tmp_path) -> None:
    folder = _with_history(tmp_path, "gpt2", {"addresses": known("gpt2"),
                                              "param_element_size": 4})
    report = analyze_run(open_run(folder))
    over = report.to_json()["memory"]["over_step"]
    assert over is not None and over["known_addresses"]
    assert within(sum(k["bytes_at_peak"] for k in over["kinds"]),
                  truth("gpt2")["max_memory_allocated"], 5)
    assert [f["id"] for f in over["fixes"]][:1] == ["micro_batches"]
    assert {"checkpointing", "autocast"} <= {f["id"] for f in over["fixes"]}
    text = report.to_text()
    assert "Memory over the step: peak 5.86 GB (in backward)" in text
    assert "activations saved for backward 3.16 GB" in text
    assert "activation checkpointing of the 6 layers" in text
    # the cached summary.json holds it too
    cached = json.loads((folder / "summary.json").read_text())
    assert cached["memory"]["over_step"]["peak_bytes"] == over["peak_bytes"]


def test_no_history_no_block(tmp_path) -> None:
    folder = real_run(tmp_path, RUN, "tinygpt_before")
    assert analyze_run(open_run(folder)).to_json()["memory"]["over_step"] is None


def test_an_out_of_memory_run_has_its_post_mortem(tmp_path) -> None:
    t = truth("oom")
    folder = _with_history(tmp_path, "oom", {"oom": {"requested": t["observer_requested"],
                                                     "error": t["error"]}})
    report = analyze_run(open_run(folder))
    oom = report.to_json()["memory"]["oom"]
    assert oom is not None and oom["requested_bytes"] == t["observer_requested"]
    assert len(oom["top"]) == 3 and oom["fixes"]
    assert "Out of memory: 0.20 GB requested with 8.86 GB allocated" in report.to_text()
    # the failed step's own fixes would price a split of the part that ran: one recommendation
    over = report.to_json()["memory"]["over_step"]
    assert over is not None and over["fixes"] == [] and over["headroom_x"] is None


def test_an_unreadable_history_is_one_warning(tmp_path) -> None:
    folder = real_run(tmp_path, RUN, "tinygpt_before")
    (folder / MEMORY_HISTORY_FILE).write_bytes(b"not gzip")
    report = analyze_run(open_run(folder))
    assert report.to_json()["memory"]["over_step"] is None
    assert any(w.startswith("memory history not read:") for w in report.to_json()["warnings"])
    shutil.rmtree(folder)


def test_analyze_prints_the_post_mortem_of_a_run_without_trace(tmp_path, capsys) -> None:
    """Out of memory in a warm-up step: no trace, the history alone makes the report."""
    from jupyter_gpuprof.cli import main

    t = truth("oom")
    folder = _with_history(tmp_path, "oom", {"oom": {"requested": t["observer_requested"],
                                                     "error": t["error"]}})
    (folder / "trace.json.gz").unlink()
    assert main(["analyze", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "Out of memory: 0.20 GB requested" in out and "<script>:203" in out
    assert "micro-batches with gradient accumulation" in out


def test_checkpointing_priced_from_the_traces_forward_kernels(tmp_path) -> None:
    """The report prices checkpointing from its own timeline's forward kernels: the kernels the
    recompute re-runs, or (this trace's model is not the history's) the forward by share."""
    from jupyter_gpuprof.advice.thresholds import GPU_BOUND_BUSY_FRAC
    from jupyter_gpuprof.analysis.memory_step import memory_step
    from jupyter_gpuprof.analysis.recompute_time import recompute_cost
    from jupyter_gpuprof.report.memory_summary import forward_kernels

    folder = _with_history(tmp_path, "gpt2", {"addresses": known("gpt2")})
    report = analyze_run(open_run(folder))
    summary = report.summary()
    busy = (summary.gpu.busy_pct_real or 0) / 100
    fwd = forward_kernels(summary.timeline, busy >= GPU_BOUND_BUSY_FRAC)
    assert fwd is not None
    ops = memory_step(history("gpt2"), known("gpt2")).layer_ops
    over = summary.memory.over_step
    assert over is not None and over.heavy is not None
    fix = {f.id: f for f in over.fixes}["checkpointing"]
    share = over.heavy.saved_bytes / next(k.high_bytes for k in over.kinds
                                          if k.kind == "saved_activations")
    cost = recompute_cost(fwd, over.heavy.calls, ops, share)
    assert cost is not None and 0 < cost.ms < (summary.steps.median_ms or 0)
    assert fix.time_ms == cost.ms and fix.time_note == cost.note
