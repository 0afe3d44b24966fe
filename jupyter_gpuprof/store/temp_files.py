"""Temporary files of the store: one recognisable name, and the sweep of those a killed writer left.

Every file the store writes goes first to a temporary file in the folder it lands in (never
`$TMPDIR`), named `.gpuprof-tmp.<host>.<pid>-<start>.<random>.<leaf>.tmp`: hidden (never
listed), never taken for a trace (`.tmp`, not `.json`), and naming the process writing it. A
process killed mid-write (SIGKILL while the profiler exports, a full disk, a power cut) leaves it
behind; `sweep` removes it once its writer is known dead (same host, pid gone or reused) or,
for a writer on another host, once it is older than `STALE_AFTER_S`. The server and the store
sweep at start-up (`RunStore.create`, the server extension's `load`).
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import socket
import stat
import tempfile
import time
from pathlib import Path

from .meta_blocks import OwnerMeta
from .owner import current_owner, owner_gone

TEMP_PREFIX = ".gpuprof-tmp."
TEMP_SUFFIX = ".tmp"
#: a temporary file of a writer on another host (whose pid cannot be checked) is left this long
STALE_AFTER_S = 24 * 3600.0
#: the run folder's sub-folders that are written to (tries/, ncu/); deeper is never written
SUB_FOLDERS = ("tries", "ncu")
_NAME = re.compile(r"^\.gpuprof-tmp\.([0-9a-f]{8})\.(\d+)-(\d*)\.[0-9a-f]+\.")
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def _host_tag(host: str) -> str:
    return hashlib.sha256(host.encode(errors="surrogatepass")).hexdigest()[:8]


def temp_prefix() -> str:
    """A fresh `.gpuprof-tmp.<host>.<pid>-<start>.<random>.` naming this process, for a
    temporary file or folder (`tempfile`'s `prefix=`, as the ncu work folders use)."""
    me = current_owner()
    started = me.get("started")
    return (f"{TEMP_PREFIX}{_host_tag(me['host'])}.{me['pid']}-"
            f"{'' if started is None else started}.{secrets.token_hex(6)}.")


def temp_name(leaf: str) -> str:
    """A fresh temporary name for a file that will become `leaf`, naming this process."""
    return f"{temp_prefix()}{leaf}{TEMP_SUFFIX}"


def is_temp(name: str) -> bool:
    """Is this a temporary file of the store (never a run's file, never listed)?"""
    return name.startswith(TEMP_PREFIX)


def _writer_gone(name: str, mtime: float, now: float) -> bool:
    """True when the process that wrote this temporary file is known dead, or it is stale."""
    m = _NAME.match(name)
    if m is None:
        return now - mtime > STALE_AFTER_S  # our prefix, a foreign shape: by age only
    host = socket.gethostname()
    if m.group(1) != _host_tag(host):
        return now - mtime > STALE_AFTER_S
    started = int(m.group(3)) if m.group(3) else None
    return owner_gone(OwnerMeta(pid=int(m.group(2)), host=host, started=started))


def _sweep_fd(dir_fd: int, now: float) -> int:
    """Remove the stale temporary files (and folders) directly inside an open folder."""
    removed = 0
    for name in os.listdir(dir_fd):
        if not is_temp(name):
            continue
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if not _writer_gone(name, st.st_mtime, now):
                continue
            if stat.S_ISDIR(st.st_mode):
                _remove_tree(dir_fd, name)
            else:
                os.unlink(name, dir_fd=dir_fd)  # a link is removed, never its target
            removed += 1
        except OSError:
            continue  # gone meanwhile, or not ours to remove: the next sweep tries again
    return removed


def _remove_tree(parent_fd: int, name: str) -> None:
    """Remove a temporary folder (an ncu work folder), never following a link inside it."""
    fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    try:
        for entry in os.listdir(fd):
            if stat.S_ISDIR(os.stat(entry, dir_fd=fd, follow_symlinks=False).st_mode):
                _remove_tree(fd, entry)
            else:
                os.unlink(entry, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent_fd)


def _sweep_folder(parent_fd: int, name: str, now: float, depth: int) -> int:
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except OSError:
        return 0  # a symlink, a file, or gone: nothing of ours to sweep
    try:
        removed = _sweep_fd(fd, now)
        if depth:
            for sub in SUB_FOLDERS:
                removed += _sweep_folder(fd, sub, now, depth - 1)
        return removed
    finally:
        os.close(fd)


def sweep(root: str | os.PathLike[str], *, include_tmpdir: bool = True) -> int:
    """Remove the temporary files killed writers left in every run folder of `root` (and its
    tries/ and ncu/), and in `$TMPDIR`; how many were removed. Never raises."""
    now = time.time()
    removed = 0
    try:
        root_fd = os.open(Path(root), os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        root_fd = -1
    if root_fd >= 0:
        try:
            removed += _sweep_fd(root_fd, now)
            for name in os.listdir(root_fd):
                if not name.startswith("."):
                    removed += _sweep_folder(root_fd, name, now, depth=1)
        except OSError:
            pass
        finally:
            os.close(root_fd)
    if include_tmpdir:
        try:
            tmp_fd = os.open(tempfile.gettempdir(), os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return removed
        try:
            removed += _sweep_fd(tmp_fd, now)
        except OSError:
            pass
        finally:
            os.close(tmp_fd)
    return removed
