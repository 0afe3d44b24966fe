"""Temporary files: named by their writer, never in $TMPDIR, swept once the writer is dead; a
full disk (ENOSPC, injected at the store's one write path) is one line and leaves nothing
corrupt."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from capture_fixtures import Trainer, nothing_left_installed  # noqa: F401

import jupyter_gpuprof
from jupyter_gpuprof.cli import main
from jupyter_gpuprof.store import RunStore, safe_files
from jupyter_gpuprof.store import temp_files as tf
from jupyter_gpuprof.store.meta_lock import LOCK_FILE

SMALL = dict(steps=4, warmup=2, wait=1, prof_warmup=1, active=3, count_flops=False)


class _FullFile:
    """A file being written on a full disk: every write fails as the kernel says it."""

    def __init__(self, f):
        self.f = f

    def write(self, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __getattr__(self, name):
        return getattr(self.f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()


@pytest.fixture
def disk_full(monkeypatch):
    """`fill()`: from now on every file the store writes fails with ENOSPC."""
    def fill():
        def fdopen(fd, mode="r", *args, **kwargs):
            f = os.fdopen(fd, mode, *args, **kwargs)
            return _FullFile(f) if "w" in mode else f
        monkeypatch.setattr(safe_files, "os", SimpleNamespace(**{
            **{k: getattr(os, k) for k in dir(os) if not k.startswith("__")}, "fdopen": fdopen}))
    return fill


def test_a_disk_filling_up_mid_capture_is_one_line_and_leaves_nothing_corrupt(
        tmp_path, disk_full, capsys, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmpdir"))
    (tmp_path / "tmpdir").mkdir()
    t = Trainer()
    with jupyter_gpuprof.profile("full", runs_root=tmp_path / "runs", **SMALL) as session:
        t.step()
        disk_full()
        for _ in range(15):
            t.step()  # the training goes on: the capture's failure is not the user's
    assert t.steps == 16
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("gpuprof:")]
    assert len(err) == 1 and "No space left on device" in err[0], err
    names = sorted(p.name for p in session.run.path.iterdir())
    assert names == [LOCK_FILE, "meta.json"]  # no trace, no temporary file
    meta = json.loads((session.run.path / "meta.json").read_text())  # the last whole version
    assert meta["status"] == "running"
    assert list((tmp_path / "tmpdir").iterdir()) == []


def test_a_run_started_on_a_full_disk_is_one_line_and_no_folder(tmp_path, disk_full, capsys):
    disk_full()
    rc = main(["run", "--runs-root", str(tmp_path / "runs"), "--", sys.executable, "-c", "0"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "No space left on device" in err[0], err
    assert list((tmp_path / "runs").iterdir()) == []  # never a half-made run to list


def test_the_sweep_removes_dead_writers_files_only(tmp_path):
    run = RunStore(tmp_path).create("r")
    (run.path / "tries").mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    pid = int(dead.stdout)
    mine = tf.temp_name("meta.json")
    theirs = mine.replace(f".{os.getpid()}-", f".{pid}-", 1)
    far = tf.TEMP_PREFIX + "0badc0de.1-1.ab.summary.json.tmp"  # another host's writer
    for folder, name in [(run.path, mine), (run.path, theirs), (run.path / "tries", theirs),
                         (tmp_path, theirs), (run.path, far)]:
        (folder / name).write_bytes(b"x")
    old = time.time() - tf.STALE_AFTER_S - 60
    os.utime(run.path / far, (old, old))
    (run.path / "keep.json.tmp").write_bytes(b"a user's own file")
    assert tf.sweep(tmp_path, include_tmpdir=False) == 4
    assert sorted(p.name for p in run.path.iterdir()) == sorted(
        [LOCK_FILE, "meta.json", "keep.json.tmp", "tries", mine])
    assert list((run.path / "tries").iterdir()) == []


def test_the_store_sweeps_once_at_start_up(tmp_path, monkeypatch):
    from jupyter_gpuprof.store import runs as runs_mod

    calls: list[Path] = []
    monkeypatch.setattr(runs_mod, "sweep", lambda root: calls.append(Path(root)) or 0)
    monkeypatch.setattr(runs_mod, "_SWEPT", set())
    store = RunStore(tmp_path / "runs")
    store.create("a")
    store.create("b")
    assert calls == [tmp_path / "runs"]  # once per process and root, before the first run
