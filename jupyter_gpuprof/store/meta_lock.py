"""One lock per run folder around every read-modify-write of its meta, so no edit is lost.

A run's meta.json has several writers: the server (a rename and a re-tag, possibly sent at
once), the capture (its first and final writes, while the user may rename the run in the
sidebar), the launcher (merging the ranks' metas), the tries. Each one holds this lock while it
reads the file again, changes only the fields it owns and replaces it (`Run.write_meta`,
`Run.edit_meta`), so two writers never both start from the same old file.

The lock is `flock` on `.meta.lock` in the run folder (opened no-follow, like every file of
the store): the kernel drops it when its holder dies, SIGKILL included, so a killed writer never
leaves a run locked. Readers take no lock: meta.json is replaced atomically.
"""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from . import safe_files

LOCK_FILE = ".meta.lock"
_FLAGS = os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


@contextmanager
def meta_locked(folder: Path) -> Iterator[None]:
    """Hold the run's meta lock (exclusive, blocking) for the body of the `with`.

    FileNotFoundError when the run folder is gone (a writer never recreates a deleted run).
    Not re-entrant: a writer that holds it must not take it again (flock would wait on itself).
    """
    with safe_files.folder_fd(folder) as dfd:
        try:
            fd = os.open(LOCK_FILE, os.O_RDWR | _FLAGS, 0o666, dir_fd=dfd)
        except PermissionError:  # another user's lock file in a shared runs folder
            fd = os.open(LOCK_FILE, os.O_RDONLY | _FLAGS, dir_fd=dfd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise safe_files.SymlinkRefused(f"{LOCK_FILE} in {folder.name} is not a file")
        fcntl.flock(fd, fcntl.LOCK_EX)  # released when the descriptor closes
        yield
    finally:
        os.close(fd)
