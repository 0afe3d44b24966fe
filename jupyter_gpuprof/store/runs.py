"""RunStore: the runs root folder, one sub-folder per run, safe against hostile run ids."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from . import safe_files
from .owner import current_owner
from .run import META_FILE, Run, RunMeta, open_run
from .temp_files import sweep

#: the environment variable naming the runs root, and the root when it is unset (relative:
#: to the working directory here, to the server's root_dir in the server)
ENV_ROOT = "JUPYTER_GPUPROF_RUNS"
DEFAULT_ROOT = Path(".gpuprof") / "runs"
_SLUG_BAD = re.compile(r"[^a-z0-9_]+")  # no dots: ids never contain ".."
_MAX_SLUG = 48
MAX_ID_BYTES = 255  # a longer name cannot be a folder: refused before the filesystem is asked
TRASH_PREFIX = ".deleted-"  # a run being deleted: hidden, so never listed


def has_control_chars(text: str) -> bool:
    """A name holding a newline, escape or other control character (C0, DEL, C1): such a
    folder name would forge lines in logs and terminals, so the store never serves it."""
    return any(ord(c) < 32 or 127 <= ord(c) < 160 for c in text)


class RunStoreError(Exception):
    """Base of the store's errors, so callers (REST handlers, CLI) can map them in one place."""


class InvalidRunId(RunStoreError, ValueError):
    """The run id could name something outside the store (separators, '..', absolute, symlink)."""


class RunNotFound(RunStoreError, LookupError):
    """No run folder with that id."""


class CorruptRun(RunStoreError, ValueError):
    """The run folder exists but its meta.json is missing or unreadable."""


class RunInProgress(RunStoreError):
    """The run is still being written: it has no trace to analyse yet."""


@dataclass
class BrokenRun:
    """A folder in the store whose meta.json is missing or unreadable; listed, never raised."""

    path: Path
    error: str
    broken = True

    @property
    def id(self) -> str:
        """The folder name."""
        return self.path.name


_SWEPT: set[str] = set()  # runs roots this process swept already


def sweep_once(root: Path) -> int:
    """Sweep the temporary files killed writers left under `root` (store/temp_files.py), once
    per process and root: at the store's start-up, before this process writes its first run."""
    key = os.path.abspath(root)
    if key in _SWEPT:
        return 0
    _SWEPT.add(key)
    return sweep(root)


def default_root() -> Path:
    """Runs root: $JUPYTER_GPUPROF_RUNS, else ./.gpuprof/runs."""
    env = os.environ.get(ENV_ROOT)
    return Path(env) if env else DEFAULT_ROOT


def slugify(name: str) -> str:
    """A folder-safe form of a run name: lowercase [a-z0-9_] words joined by single dashes."""
    slug = _SLUG_BAD.sub("-", name.strip().lower()).strip("-")
    return slug[:_MAX_SLUG].rstrip("-") or "run"


class RunStore:
    """The runs root: create, list, get and delete run folders."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root) if root is not None else default_root()

    def __repr__(self) -> str:
        return f"RunStore({str(self.root)!r})"

    def create(self, name: str = "run") -> Run:
        """Make a new run folder <YYYYmmdd-HHMMSS>-<slug> (suffixed -2, -3… if taken)."""
        self.root.mkdir(parents=True, exist_ok=True)
        sweep_once(self.root)
        now = time.time()
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
        base = f"{stamp}-{slugify(name)}"
        for n in range(1, 10_000):
            run_id = base if n == 1 else f"{base}-{n}"
            path = self.root / run_id
            try:
                path.mkdir()  # exclusive: two kernels creating at once get different folders
            except FileExistsError:
                continue
            meta = RunMeta(
                id=run_id,
                name=name,
                created=time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(now)),
                owner=current_owner(),
            )
            run = Run(path, meta)
            try:
                run.write_meta()
            except BaseException:  # a full disk: no half-made run folder is left to list
                shutil.rmtree(path, ignore_errors=True)
                raise
            return run
        raise RunStoreError(f"could not create a unique run folder for {base!r}")

    def list(self) -> list[Run | BrokenRun]:
        """All runs, newest first; folders that cannot be used (see `_open_listed`) as BrokenRun."""
        if not self.root.is_dir():
            return []
        entries: list[tuple[str, str, Run | BrokenRun]] = []
        for p in self.root.iterdir():
            if (p.name.startswith(".") or has_control_chars(p.name) or p.is_symlink()
                    or not p.is_dir()):
                continue  # hidden, unservable (`_path_for` refuses its name) or not a run
            entry = _open_listed(p)
            if entry is not None:
                created = entry.meta.created if isinstance(entry, Run) else ""
                entries.append((created, p.name, entry))
        # Folder names start with the creation time, so they order runs whose meta is unreadable.
        entries.sort(key=lambda e: (e[1][:15], e[0], e[1]), reverse=True)
        return [e[2] for e in entries]

    def _path_for(self, run_id: str) -> Path:
        if (
            not isinstance(run_id, str)
            or not run_id
            or run_id in (".", "..")
            or ".." in run_id
            or "/" in run_id
            or "\\" in run_id
            or has_control_chars(run_id)
            or os.sep in run_id
            or (os.altsep and os.altsep in run_id)
            or os.path.isabs(run_id)
            or run_id.startswith(".")
            or len(run_id.encode(errors="surrogatepass")) > MAX_ID_BYTES
        ):
            raise InvalidRunId(f"invalid run id: {run_id!r} (a run id is a folder name without "
                               "separators, '..' or control characters)")
        path = self.root / run_id
        if path.is_symlink():
            raise InvalidRunId(f"run id names a symlink: {run_id!r}")
        root = self.root.resolve()
        resolved = path.resolve()
        if resolved.parent != root:
            raise InvalidRunId(f"run id resolves outside the store: {run_id!r}")
        return resolved

    def get(self, run_id: str) -> Run:
        """The run with this id; InvalidRunId if it could escape the root, RunNotFound if absent."""
        path = self._path_for(run_id)
        if not path.is_dir():
            raise RunNotFound(f"no run {run_id!r}")
        try:
            return open_run(path)
        except (OSError, ValueError, TypeError) as e:
            if not path.is_dir():
                raise RunNotFound(f"no run {run_id!r}") from None
            raise CorruptRun(f"run {run_id!r} has no readable meta.json: {e}") from None

    def update(
        self, run_id: str, name: str | None = None, tags: Sequence[str] | None = None
    ) -> Run:
        """Rename or re-tag a run in its meta.json (the folder, hence the id, stays): read,
        changed and written under the run's meta lock, so an edit sent at the same time as
        another (or as a capture's own write) is never lost."""
        run = self.get(run_id)

        def change(meta: RunMeta) -> None:
            if name is not None:
                meta.name = name
            if tags is not None:
                meta.tags = list(dict.fromkeys(tags))  # dedupe, keep order

        try:
            run.edit_meta(change)  # into the existing folder only: a deleted run never returns
        except FileNotFoundError:
            raise RunNotFound(f"no run {run_id!r} (deleted meanwhile)") from None
        except (ValueError, TypeError) as e:  # replaced by a corrupt one since `get`
            raise CorruptRun(f"run {run_id!r} has no readable meta.json: {e}") from None
        return run

    def file(self, run_id: str, name: str) -> Path:
        """A plain file directly inside a run folder; never a symlink or anything outside it."""
        folder = self._path_for(run_id)
        if not name or "/" in name or "\\" in name or name.startswith(".") or "\x00" in name:
            raise InvalidRunId(f"invalid file name: {name!r}")
        try:
            found = safe_files.regular_file(folder, name)
        except safe_files.SymlinkRefused as e:
            raise InvalidRunId(str(e)) from None
        except FileNotFoundError:
            found = None
        if found is None:
            raise RunNotFound(f"run {run_id!r} has no {name}")
        return folder / name

    def delete(self, run_id: str) -> None:
        """Remove a run folder: renamed to a hidden trash name first (one atomic step), so the
        list never shows it half-deleted and writers never find it again; then removed."""
        path = self._path_for(run_id)
        if not path.is_dir():
            raise RunNotFound(f"no run {run_id!r}")
        trash = self.root / f"{TRASH_PREFIX}{secrets.token_hex(8)}"
        try:
            os.rename(path, trash)
        except (FileNotFoundError, NotADirectoryError):  # deleted by a concurrent request
            raise RunNotFound(f"no run {run_id!r}") from None
        _remove_trash(trash)
        for leftover in self.root.glob(f"{TRASH_PREFIX}*"):  # an earlier delete's, if any
            _remove_trash(leftover, attempts=1)


def _remove_trash(trash: Path, attempts: int = 20) -> None:
    """Remove a renamed-away run folder; retried, since a writer that opened the folder just
    before the rename may still add a file (rmtree then fails with 'directory not empty')."""
    for attempt in range(attempts):
        try:
            shutil.rmtree(trash)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.005 * (attempt + 1))
    # still busy: left hidden (never listed) for the next delete to sweep


def _open_listed(folder: Path) -> Run | BrokenRun | None:
    """A listed folder as a Run, or BrokenRun with the reason; None if it vanished meanwhile."""
    try:
        link = safe_files.find_symlink(folder)
        if link is not None:
            return BrokenRun(folder, f"{link} is a symlink; the store never follows symlinks")
        return open_run(folder)
    except (OSError, ValueError, TypeError) as e:
        if not os.path.lexists(folder):
            return None  # deleted while we listed: not a broken run
        try:
            present = safe_files.regular_file(folder, META_FILE) is not None
        except OSError:
            present = True
        reason = f"unreadable meta.json: {e}" if present else "no meta.json"
        return BrokenRun(folder, reason)
