"""The store never follows a symlink inside a run folder (reads, writes); file modes; owner."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT
from runs_fixtures import full_summary, write_meta

from jupyter_gpuprof.store import RunNotFound, RunStore, open_run
from jupyter_gpuprof.store.listing import LISTING_FILE, cached_row
from jupyter_gpuprof.store.ncu_files import list_ncu, ncu_paths, read_info, save_ncu
from jupyter_gpuprof.store.owner import current_owner, owner_gone
from jupyter_gpuprof.store.run import Run
from jupyter_gpuprof.store.safe_files import SymlinkRefused, read_bytes, write_bytes

SECRET = b'{"token": "server-secret"}'


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    return RunStore(tmp_path / "runs")


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file outside the runs root that must never be read through, nor overwritten."""
    path = tmp_path / "jpserver-1.json"
    path.write_bytes(SECRET)
    return path


def _complete_run(store: RunStore) -> Run:
    run = store.create("r")
    run.meta.status = "complete"
    run.write_meta()
    return run


def _plant(run: Run, name: str, target: Path) -> Path:
    link = run.path / name
    link.parent.mkdir(exist_ok=True)
    if link.exists():
        link.unlink()
    link.symlink_to(target)
    return link


@pytest.mark.parametrize("name", ["meta.json", "summary.json", "listing.json", "trace.json.gz",
                                  "trace.rank1.json.gz", "meta.rank1.json",
                                  "ncu/s.ncu-rep.gz", "ncu/s.json"])
def test_a_symlinked_file_is_never_read_and_the_run_is_listed_broken(store, victim, name):
    run = _complete_run(store)
    _plant(run, name, victim)
    with pytest.raises(SymlinkRefused, match="symlink"):
        read_bytes(run.path, name)
    [entry] = store.list()
    assert entry.broken and "symlink" in entry.error


def test_symlinked_summary_is_refused_not_served(store, victim):
    run = _complete_run(store)
    _plant(run, "summary.json", victim)
    with pytest.raises(SymlinkRefused):
        run.read_summary()


def test_symlinked_traces_are_refused_before_analysis(store, victim):
    run = _complete_run(store)
    _plant(run, "trace.json.gz", victim)
    with pytest.raises(SymlinkRefused):
        run.trace_paths()
    (run.path / "trace.json.gz").unlink()
    _plant(run, "trace.rank1.json.gz", victim)
    with pytest.raises(SymlinkRefused):
        run.trace_paths()


def test_symlinked_meta_is_a_corrupt_run(store, victim, tmp_path):
    run = _complete_run(store)
    other = tmp_path / "other"
    write_meta(other, code="secret code")
    _plant(run, "meta.json", other / "meta.json")
    with pytest.raises(Exception, match="symlink"):
        store.get(run.id)


@pytest.mark.parametrize("name", ["meta.json", "meta.rank1.json", "summary.json",
                                  "trace.json.gz", "trace.rank1.json.gz"])
def test_a_write_never_goes_through_a_symlink(store, victim, tmp_path, name):
    run = _complete_run(store)
    _plant(run, name, victim)
    src = tmp_path / "chrome.json"
    src.write_text('{"traceEvents": []}')
    writes = {
        "meta.json": lambda: run.write_meta(),
        "meta.rank1.json": lambda: run.write_meta(rank=1),
        "summary.json": lambda: run.write_summary(full_summary()),
        "trace.json.gz": lambda: run.write_trace(src),
        "trace.rank1.json.gz": lambda: run.write_trace(src, rank=1),
    }
    with pytest.raises(SymlinkRefused):
        writes[name]()
    assert victim.read_bytes() == SECRET and (run.path / name).is_symlink()


def test_listing_cache_neither_read_nor_written_through_a_symlink(store, victim):
    run = _complete_run(store)
    fake = {"version": 2, "signature": [], "row": {"name": "planted"}}
    victim.write_text(json.dumps(fake))
    _plant(run, LISTING_FILE, victim)
    row = cached_row(run, lambda r: {"name": "real"})
    assert row == {"name": "real"}
    assert json.loads(victim.read_text()) == fake


def test_ncu_files_never_follow_symlinks(store, victim, tmp_path):
    run = _complete_run(store)
    report = tmp_path / "s.ncu-rep"
    report.write_bytes(b"report")
    save_ncu(run, "s", report, "a,b\n", None, {"kernel": "k"})
    assert set(ncu_paths(run, "s")) == {"report", "raw", "info"}
    _plant(run, "ncu/s.ncu-rep.gz", victim)
    _plant(run, "ncu/s.json", victim)
    assert "report" not in ncu_paths(run, "s") and read_info(run, "s") == {}
    assert list_ncu(run) == []
    with pytest.raises(SymlinkRefused):
        save_ncu(run, "s", report, None, None, {"kernel": "k"})
    assert victim.read_bytes() == SECRET


def test_a_symlinked_ncu_folder_is_never_written_into(store, tmp_path):
    run = _complete_run(store)
    outside = tmp_path / "outside-ncu"
    outside.mkdir()
    (run.path / "ncu").symlink_to(outside, target_is_directory=True)
    with pytest.raises(SymlinkRefused):
        save_ncu(run, "s", None, "a,b\n", None, {})
    assert list(outside.iterdir()) == [] and ncu_paths(run, "s") == {}


def test_a_symlinked_run_folder_is_never_written_into(store, tmp_path):
    outside = tmp_path / "outside-run"
    write_meta(outside)
    store.root.mkdir(parents=True)
    (store.root / "20260101-000000-x").symlink_to(outside, target_is_directory=True)
    with pytest.raises(SymlinkRefused):
        Run(store.root / "20260101-000000-x").write_summary(full_summary())
    assert not (outside / "summary.json").exists()


def test_rewritten_files_keep_their_mode_and_new_ones_follow_the_umask(store):
    old = os.umask(0o022)
    try:
        run = _complete_run(store)
        meta = run.path / "meta.json"
        assert stat.S_IMODE(meta.stat().st_mode) == 0o644  # mkstemp would make 0600
        meta.chmod(0o664)
        run.write_meta()
        assert stat.S_IMODE(meta.stat().st_mode) == 0o664
    finally:
        os.umask(old)


def test_writers_never_recreate_a_deleted_run(store):
    run = _complete_run(store)
    store.delete(run.id)
    with pytest.raises(FileNotFoundError):
        run.write_summary(full_summary())
    with pytest.raises(FileNotFoundError):
        write_bytes(run.path, "listing.json", b"{}")
    assert not run.path.exists() and store.list() == []


def test_delete_leaves_no_trash(store):
    run = _complete_run(store)
    store.delete(run.id)
    assert list(store.root.iterdir()) == []


def test_create_records_the_owner(store):
    run = store.create("r")
    owner = open_run(run.path).meta.owner
    assert owner == current_owner() and owner["pid"] == os.getpid()
    assert run.status == "running"  # this process is alive


def test_owner_gone_when_the_pid_is_dead_or_reused():
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)
    me = current_owner()
    assert owner_gone({**me, "pid": int(child.stdout)})
    if me["started"] is not None:  # Linux: a pid now owned by another process
        assert owner_gone({**me, "started": me["started"] - 1})
    assert not owner_gone(me)
    assert not owner_gone({**me, "pid": int(child.stdout), "host": "another-host"})
    assert not owner_gone(None)


def test_running_run_of_a_dead_owner_is_interrupted(store):
    run = store.create("r")
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)
    run.meta.owner = {**current_owner(), "pid": int(child.stdout)}
    run.write_meta()
    assert open_run(run.path).status == "interrupted"
    assert json.loads((run.path / "meta.json").read_text())["status"] == "running"


def test_trace_bytes_are_written_gzipped_with_the_umask_mode(store, tmp_path):
    old = os.umask(0o022)
    try:
        run = _complete_run(store)
        src = tmp_path / "t.json"
        src.write_text('{"traceEvents": []}')
        path = run.write_trace(src)
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
        assert json.loads(gzip.decompress(path.read_bytes())) == {"traceEvents": []}
    finally:
        os.umask(old)


def test_update_of_a_run_deleted_meanwhile_is_not_found(store, monkeypatch):
    run = _complete_run(store)
    read = store.get

    def read_then_deleted(run_id: str) -> Run:
        found = read(run_id)
        store.delete(run_id)  # a DELETE lands between the read and the write
        return found

    monkeypatch.setattr(store, "get", read_then_deleted)
    with pytest.raises(RunNotFound):
        store.update(run.id, name="renamed")
    assert not run.path.exists() and list(store.root.iterdir()) == []


def test_ui_fixture_runs_stay_valid(tmp_path):
    from jupyter_gpuprof.server.runs import describe_run

    root = tmp_path / "runs"  # a copy: listing writes its cache into each run folder
    shutil.copytree(ROOT / "ui-tests" / "fixtures" / "runs", root)
    rows = {r["id"]: r for r in map(describe_run, RunStore(root).list())}
    assert rows["20261129-191322-mlp"]["verdict"] == "CPU-only run: GPU metrics unavailable"
    assert rows["20261129-191400-running"]["status"] == "running"
    assert rows["20261129-191500-corrupt"]["status"] == "broken"


def test_nesting_is_bounded_before_decoding_and_strings_do_not_count():
    from jupyter_gpuprof.store.json_checks import MAX_DEPTH, BadJson, check_depth, decode

    check_depth(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH)
    check_depth(b'["' + b"[" * 10_000 + b'"]')  # brackets inside a string are text
    with pytest.raises(BadJson, match="nested deeper"):
        check_depth(b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1))
    for bad in (b"[NaN]", b"[Infinity]", b"[1e400]", b"[-1e999]"):
        with pytest.raises(BadJson):
            decode(bad)
