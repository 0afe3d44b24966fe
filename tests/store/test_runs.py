"""Run folders: meta round trip, atomic writes, broken folders listed, escaping ids refused."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from runs_fixtures import full_summary

from jupyter_gpuprof.store import (
    RUN_META_SCHEMA_VERSION,
    BrokenRun,
    InvalidRunId,
    Run,
    RunMeta,
    RunNotFound,
    RunStore,
    default_root,
    open_run,
)
from jupyter_gpuprof.store import run as run_mod
from jupyter_gpuprof.store.meta_lock import LOCK_FILE


def test_meta_round_trip_and_tolerance():
    meta = RunMeta(
        id="x",
        name="n",
        status="complete",
        baseline={"step_ms": [1.0, 2.0], "timing": "cuda_event"},
        flops_per_step=3e9,
        rank=1,
        world_size=2,
        settings={"steps": 2},
    )
    assert RunMeta.from_json(json.loads(json.dumps(meta.to_json()))) == meta
    old = RunMeta.from_json({"id": "old", "status": "complete", "some_future_key": 1})
    assert old.schema_version == RUN_META_SCHEMA_VERSION
    assert old.baseline == {"step_ms": [], "timing": None}
    assert old.profiled_step_ms == [] and old.env == {}
    assert RunMeta.from_json({"baseline": None, "env": "junk"}).baseline["step_ms"] == []
    with pytest.raises(ValueError):
        RunMeta.from_json([1, 2])  # type: ignore[arg-type]


def test_create_is_unique_and_named(tmp_path):
    store = RunStore(tmp_path / "runs")
    a, b = store.create("My Run/../x"), store.create("My Run/../x")
    assert a.path != b.path and a.path.parent == b.path.parent == tmp_path / "runs"
    assert a.id[:15].replace("-", "").isdigit() and a.id[15:] == "-my-run-x"
    assert b.id == a.id + "-2" or b.id[:15] != a.id[:15]
    assert store.get(a.id).path == a.path.resolve()  # every created id is one get() accepts
    assert store.create("..").id.endswith("-run") and store.create("v1.2 bs=32").id.endswith(
        "-v1-2-bs-32"
    )
    meta = json.loads((a.path / "meta.json").read_text())
    assert (
        meta["status"] == "running"
        and meta["name"] == "My Run/../x"
        and meta["schema_version"] == 1
    )


def test_atomic_write_leaves_old_file_on_failure(tmp_path, monkeypatch):
    run = RunStore(tmp_path).create("a")
    run.meta.status = "complete"
    run.write_meta()

    def boom(src, dst, **dir_fds):
        raise OSError("disk full")

    monkeypatch.setattr(run_mod.os, "replace", boom)  # the same os module safe_files uses
    run.meta.status = "failed"
    with pytest.raises(OSError):
        run.write_meta()
    assert json.loads((run.path / "meta.json").read_text())["status"] == "complete"
    # no temp file left behind (the meta lock file stays: it is the run's lock, not a temp file)
    assert sorted(p.name for p in run.path.iterdir()) == [LOCK_FILE, "meta.json"]


def test_write_trace_gzips_and_orders_rank_traces(tmp_path):
    run = RunStore(tmp_path).create("t")
    src = tmp_path / "t.json"
    src.write_text('{"traceEvents": []}')
    for r in (10, 2, 0):
        run.write_trace(src, rank=r)
    assert [p.name for p in run.trace_paths()] == [
        "trace.rank0.json.gz",
        "trace.rank2.json.gz",
        "trace.rank10.json.gz",
    ]
    run.write_trace(src)
    assert [p.name for p in run.trace_paths()] == ["trace.json.gz"]
    assert json.loads(gzip.open(run.path / "trace.json.gz").read()) == {"traceEvents": []}
    assert not [p for p in run.path.iterdir() if p.name.startswith(".") and p.name != LOCK_FILE]


def test_summary_round_trip_and_corrupt_summary(tmp_path):
    run = RunStore(tmp_path).create("s")
    assert run.read_summary() is None
    summary = full_summary(verdict={"category": "gpu_bound", "summary": "GPU-bound"})
    run.write_summary(summary)
    assert open_run(run.path).read_summary() == summary
    (run.path / "summary.json").write_text("{trunc")
    assert run.read_summary() is None


def test_list_newest_first_with_broken_entries(tmp_path):
    store = RunStore(tmp_path)
    assert RunStore(tmp_path / "missing").list() == []
    old = Run(
        tmp_path / "20200101-000000-old",
        RunMeta(id="20200101-000000-old", created="2020-01-01T00:00:00"),
    )
    old.path.mkdir()
    old.write_meta()
    new = store.create("new")
    corrupt = tmp_path / "20990101-000000-corrupt"
    corrupt.mkdir()
    (corrupt / "meta.json").write_text("{not json")
    empty = tmp_path / "20100101-000000-empty"
    empty.mkdir()
    (tmp_path / ".hidden").mkdir()
    (tmp_path / "stray.txt").write_text("x")
    entries = store.list()
    assert [e.id for e in entries] == [corrupt.name, new.id, old.id, empty.name]
    assert (
        isinstance(entries[0], BrokenRun) and entries[0].broken and "unreadable" in entries[0].error
    )
    assert isinstance(entries[3], BrokenRun) and entries[3].error == "no meta.json"
    assert not entries[1].broken and entries[1].meta.status == "running"


@pytest.mark.parametrize(
    "bad", ["..", ".", "", "../x", "a/b", "a\\b", "/etc", "x/../..", "..foo", ".hidden", "a\x00b"]
)
def test_get_refuses_traversal(tmp_path, bad):
    store = RunStore(tmp_path / "runs")
    store.create("ok")
    with pytest.raises(InvalidRunId):
        store.get(bad)
    with pytest.raises(InvalidRunId):
        store.delete(bad)


def test_get_refuses_symlinks_out_of_root(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    Run(outside, RunMeta(id="outside")).write_meta()
    store = RunStore(tmp_path / "runs")
    store.create("ok")
    os.symlink(outside, store.root / "link")
    with pytest.raises(InvalidRunId):
        store.get("link")
    with pytest.raises(InvalidRunId):
        store.delete("link")
    assert (outside / "meta.json").exists()
    assert "link" not in [e.id for e in store.list()]


def test_get_and_delete(tmp_path):
    store = RunStore(tmp_path)
    run = store.create("r")
    assert store.get(run.id).meta.id == run.id
    with pytest.raises(RunNotFound):
        store.get("20200101-000000-nope")
    store.delete(run.id)
    assert not run.path.exists()
    with pytest.raises(RunNotFound):
        store.delete(run.id)


def test_merge_rank_metas(tmp_path):
    run = RunStore(tmp_path).create("ddp")
    for rank, status in ((0, "complete"), (1, "failed")):
        m = RunMeta(
            id=run.id,
            status=status,
            error=None if rank == 0 else "OOM",
            rank=rank,
            world_size=2,
            baseline={"step_ms": [float(rank + 1)], "timing": "cuda_event"},
        )
        Run(run.path, m).write_meta(rank=rank)
    run.merge_rank_metas()
    merged = open_run(run.path).meta
    assert merged.status == "failed" and merged.error == "rank 1: OOM"
    assert merged.world_size == 2 and merged.baseline["step_ms"] == [1.0]


def test_default_root(monkeypatch, tmp_path):
    monkeypatch.delenv("JUPYTER_GPUPROF_RUNS", raising=False)
    assert default_root() == Path(".gpuprof") / "runs"
    monkeypatch.setenv("JUPYTER_GPUPROF_RUNS", str(tmp_path))
    assert default_root() == tmp_path and RunStore().root == tmp_path


def test_open_run_errors(tmp_path):
    with pytest.raises(OSError):
        open_run(tmp_path)
    (tmp_path / "meta.json").write_text("[]")
    with pytest.raises(ValueError):
        open_run(tmp_path)


WRITER = """
import sys
from jupyter_gpuprof.store import RunStore
store = RunStore(sys.argv[1])
for i in range(25):
    run = store.create("same name")
    run.meta.status, run.meta.code = "complete", f"{sys.argv[2]} {i}"
    run.write_meta()
"""


def test_two_processes_writing_runs_into_one_root_at_once(tmp_path):
    """Two writers creating runs of one name in the same seconds: each run its own folder
    (an exclusive mkdir), every run whole, none lost."""
    import subprocess
    import sys

    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), who])
             for who in ("a", "b")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    runs = RunStore(tmp_path).list()
    assert not [r for r in runs if r.broken]
    codes = sorted(r.meta.code for r in runs)
    assert codes == sorted(f"{who} {i}" for who in ("a", "b") for i in range(25))
    assert len({r.id for r in runs}) == 50
