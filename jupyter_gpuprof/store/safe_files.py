"""The one rule for opening files of a run folder: never through a symlink, reads and writes.

A runs folder can be shared (a team folder, a run unpacked from a tar archive, which keeps
symlinks), so a planted `summary.json -> ~/.local/share/jupyter/runtime/jpserver-1.json` must
not make the server read, serve or overwrite a file outside the run. Every component below the
runs root (the run folder, `ncu/`, the file) is opened relative to its parent's descriptor with
`O_NOFOLLOW`, and only regular files are read. Writes go into a folder opened the same way, so a
writer can never recreate a run folder that a DELETE removed meanwhile.
"""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from .temp_files import temp_name

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
# O_NONBLOCK: a planted FIFO must not hang the server thread that opens it
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class SymlinkRefused(OSError):
    """A run folder, or a file in it, is a symlink or not a regular file: never followed."""


def _refuse(where: Path, what: str) -> SymlinkRefused:
    return SymlinkRefused(f"{where.name} in {where.parent.name} is {what}; the store never "
                          "follows symlinks (replace it with the real file)")


def _open_child_dir(parent_fd: int, path: Path) -> int:
    try:
        return os.open(path.name, _DIR_FLAGS, dir_fd=parent_fd)
    except OSError as e:
        if _is_link(parent_fd, path.name):
            raise _refuse(path, "a symlink") from None
        raise e from None


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return False
    return stat.S_ISLNK(st.st_mode)


@contextmanager
def folder_fd(folder: Path, *parts: str) -> Iterator[int]:
    """A descriptor of ``folder/parts...``: the folder (a run) and each part opened no-follow.

    ``folder``'s parent (the runs root, or whatever holds a bare run folder) is trusted.
    FileNotFoundError when the run is gone: callers never create it again.
    """
    parent = os.open(folder.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fd = _open_child_dir(parent, folder)
    finally:
        os.close(parent)
    try:
        where = folder
        for part in parts:
            where = where / part
            sub = _open_child_dir(fd, where)
            os.close(fd)
            fd = sub
        yield fd
    finally:
        os.close(fd)


def _split(name: str) -> tuple[tuple[str, ...], str]:
    *parts, leaf = name.split("/")
    if not leaf or any(p in ("", ".", "..") for p in (*parts, leaf)):
        raise ValueError(f"not a file name inside a run: {name!r}")
    return tuple(parts), leaf


def open_read(folder: Path, name: str) -> BinaryIO:
    """``folder/name`` open for reading (``name`` may be ``ncu/x.json``); no component followed."""
    parts, leaf = _split(name)
    with folder_fd(folder, *parts) as dfd:
        try:
            fd = os.open(leaf, _READ_FLAGS, dir_fd=dfd)
        except OSError as e:
            if _is_link(dfd, leaf):
                raise _refuse(folder / name, "a symlink") from None
            raise e from None
    f = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
        f.close()
        raise _refuse(folder / name, "not a regular file")
    return f


def read_bytes(folder: Path, name: str) -> bytes:
    """The bytes of ``folder/name``, read through `open_read`."""
    with open_read(folder, name) as f:
        return f.read()


def regular_file(folder: Path, name: str) -> os.stat_result | None:
    """The stat of a regular ``folder/name``; None if absent; SymlinkRefused if a link or other."""
    parts, leaf = _split(name)
    try:
        with folder_fd(folder, *parts) as dfd:
            st = os.stat(leaf, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(folder / name, "a symlink" if stat.S_ISLNK(st.st_mode) else "not a file")
    return st


def names_in(folder: Path, *parts: str) -> list[str]:
    """The entries of a run folder (or its ``parts`` sub-folder), read through a no-follow fd."""
    with folder_fd(folder, *parts) as dfd:
        return os.listdir(dfd)


def _first_link(dir_fd: int) -> tuple[str | None, list[str]]:
    """The first symlink among a folder's entries, and its visible sub-folders."""
    subdirs = []
    for entry in sorted(os.listdir(dir_fd)):
        mode = os.stat(entry, dir_fd=dir_fd, follow_symlinks=False).st_mode
        if stat.S_ISLNK(mode):
            return entry, []
        if stat.S_ISDIR(mode) and not entry.startswith("."):
            subdirs.append(entry)
    return None, subdirs


def find_symlink(folder: Path) -> str | None:
    """The first symlink inside a run folder or its sub-folders (ncu/), as ``name`` or
    ``ncu/name``; None when it has none (or the folder is gone)."""
    try:
        with folder_fd(folder) as dfd:
            link, subdirs = _first_link(dfd)
        if link is not None:
            return link
        for sub in subdirs:
            with folder_fd(folder, sub) as sfd:
                link, _ = _first_link(sfd)
            if link is not None:
                return f"{sub}/{link}"
    except FileNotFoundError:
        return None
    return None


@contextmanager
def atomic_file(folder: Path, name: str) -> Iterator[BinaryIO]:
    """Write ``folder/name`` so readers see the old file or the new one, never half of it.

    The folder must exist (a deleted run is never recreated: FileNotFoundError). The new file
    keeps the mode of the one it replaces; a new one gets the umask's mode, like ``open``.
    """
    parts, leaf = _split(name)
    with folder_fd(folder, *parts) as dfd:
        try:
            old = os.stat(leaf, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        if old is not None and not stat.S_ISREG(old.st_mode):
            raise _refuse(folder / name, "a symlink" if stat.S_ISLNK(old.st_mode) else "not a file")
        tmp = temp_name(leaf)  # swept once its writer is dead (store/temp_files.py)
        # 0o666 & ~umask, as open() would (mkstemp's 0600 hid files of a shared runs folder)
        f = os.fdopen(os.open(tmp, _NEW_FLAGS, 0o666, dir_fd=dfd), "wb")
        try:
            with f:
                if old is not None:
                    os.fchmod(f.fileno(), stat.S_IMODE(old.st_mode))
                yield f
            os.replace(tmp, leaf, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except OSError:
                pass
            raise


@contextmanager
def scratch_file(folder: Path, leaf: str) -> Iterator[Path]:
    """An empty temporary file in ``folder`` (created no-follow, exclusive) for another
    library to write by path (the profiler's export), removed when the ``with`` ends, however
    it ends; a killed process leaves it to the start-up sweep (store/temp_files.py)."""
    name = temp_name(leaf)
    with folder_fd(folder) as dfd:
        os.close(os.open(name, _NEW_FLAGS, 0o666, dir_fd=dfd))
    try:
        yield folder / name
    finally:
        unlink(folder, name)


def write_bytes(folder: Path, name: str, data: bytes) -> None:
    """`atomic_file` for data already in memory."""
    with atomic_file(folder, name) as f:
        f.write(data)


def make_dir(folder: Path, name: str) -> None:
    """Create the sub-folder ``folder/name`` (no-follow) if missing."""
    with folder_fd(folder) as dfd:
        try:
            os.mkdir(name, dir_fd=dfd)
        except FileExistsError:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode):
                raise _refuse(folder / name, "not a folder") from None


def unlink(folder: Path, name: str) -> None:
    """Remove ``folder/name`` if present (a link is removed, never its target)."""
    parts, leaf = _split(name)
    try:
        with folder_fd(folder, *parts) as dfd:
            os.unlink(leaf, dir_fd=dfd)
    except FileNotFoundError:
        pass


def _root_leaf(root: Path, name: str, flags: int) -> int:
    """``root/name`` opened no-follow (``root`` itself, the runs root, is trusted)."""
    if "/" in name or name in ("", ".", ".."):
        raise ValueError(f"not a file name inside the runs root: {name!r}")
    dfd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fd = os.open(name, flags | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o666,
                         dir_fd=dfd)
        except OSError as e:
            if _is_link(dfd, name):
                raise _refuse(root / name, "a symlink") from None
            raise e from None
    finally:
        os.close(dfd)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _refuse(root / name, "not a regular file")
    return fd


def append_locked(root: Path, name: str, data: bytes) -> None:
    """Append ``data`` (whole lines) to ``root/name`` under an exclusive lock, so appends of
    two processes never interleave; a torn last line (a writer killed mid-write) is ended
    first, so it stays one bad line and never swallows the next record."""
    fd = _root_leaf(root, name, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # released when the descriptor closes
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def read_root_file(root: Path, name: str) -> bytes | None:
    """The bytes of ``root/name`` (None when absent), read no-follow under a shared lock."""
    try:
        fd = _root_leaf(root, name, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_SH)
        return f.read()
