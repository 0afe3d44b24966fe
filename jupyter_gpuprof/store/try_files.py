"""The `tries/` subfolder of a run: what `jupyter gpuprof run --try` measured in each extra run.

A script cannot be re-run one step at a time, so each fix is tried by running the command again
in a fresh process with the fix applied at start-up. That process reports into the run it is a
try of, never as a run of its own: `tries/<fix>.json` (its step times, conditions and peak
memory, or the one-line reason it measured nothing), `tries/<fix>.log` (the command's own
output) and `tries/<fix>.losses.json` (its first losses, beside `tries/original.losses.json`
of the run itself). Opened through `safe_files`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import BinaryIO, cast

from ..oneline import first_line
from . import safe_files
from .json_checks import decode
from .meta_blocks import TryMeta
from .run import Run

TRIES_DIR = "tries"


def _name(fix: str, ending: str) -> str:
    """`tries/<fix><ending>`, refusing a fix name that could leave the folder (a stack's name
    joins identifiers with "+": `tries/loader+graphs.json`)."""
    if not all(part.isidentifier() for part in fix.split("+")):
        raise ValueError(f"not a fix name: {fix!r}")
    return f"{TRIES_DIR}/{fix}{ending}"


def try_result_name(fix: str) -> str:
    """`tries/<fix>.json`: where a try process saves what it measured."""
    return _name(fix, ".json")


def write_try_result(run_path: str | Path, fix: str, result: TryMeta) -> None:
    """Save one try's measurement (or its error) as tries/<fix>.json, atomically."""
    safe_files.make_dir(Path(run_path), TRIES_DIR)
    data = json.dumps(result, default=str, allow_nan=False).encode()
    safe_files.write_bytes(Path(run_path), _name(fix, ".json"), data)


def read_try_result(run: Run, fix: str) -> TryMeta | None:
    """The measurement a try process saved, or None when it saved nothing (it died first);
    a file that is not a try's result is that try's one-line error, never a crash."""
    name = _name(fix, ".json")
    try:
        value = decode(run.read_file(name), TryMeta)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        return TryMeta(fix=fix, error=f"{name} is not a try's result: {first_line(str(e))}")
    return cast(TryMeta, value)  # decode checked it against TryMeta


def write_losses(run_path: str | Path, label: str, losses: list[float]) -> None:
    """Save the first losses of the original run (`label` "original") or of a try, as
    tries/<label>.losses.json."""
    safe_files.make_dir(Path(run_path), TRIES_DIR)
    data = json.dumps([float(x) for x in losses], allow_nan=False).encode()
    safe_files.write_bytes(Path(run_path), _name(label, ".losses.json"), data)


def read_losses(run: Run, label: str) -> list[float]:
    """The first losses a run or try saved (empty when it saved none)."""
    try:
        value = decode(run.read_file(_name(label, ".losses.json")))
    except (OSError, ValueError):
        return []
    ok = isinstance(value, list) and all(isinstance(x, (int, float)) for x in value)
    return [float(x) for x in value] if ok else []


def clear_try(run: Run, fix: str) -> None:
    """Forget an earlier try of this fix, so a result read later is this try's own."""
    safe_files.make_dir(run.path, TRIES_DIR)
    safe_files.unlink(run.path, _name(fix, ".json"))
    safe_files.unlink(run.path, _name(fix, ".losses.json"))


def open_try_log(run: Run, fix: str) -> BinaryIO:
    """tries/<fix>.log, truncated, for the try process's stdout and stderr."""
    leaf = _name(fix, ".log").split("/")[-1]
    safe_files.make_dir(run.path, TRIES_DIR)
    with safe_files.folder_fd(run.path, TRIES_DIR) as dfd:
        fd = os.open(leaf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o666,
                     dir_fd=dfd)
    return os.fdopen(fd, "wb")


def try_log_path(run: Run, fix: str) -> Path:
    """Where the output of the try of `fix` is kept (for the user to read)."""
    return run.path / _name(fix, ".log")


def last_log_line(run: Run, fix: str, limit: int = 64_000) -> str | None:
    """The last non-blank line the try process printed (its exception, when it died)."""
    try:
        data = safe_files.read_bytes(run.path, _name(fix, ".log"))[-limit:]
    except OSError:
        return None
    lines = [ln.strip() for ln in data.decode(errors="replace").splitlines() if ln.strip()]
    return lines[-1] if lines else None
