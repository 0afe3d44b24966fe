"""The `ncu/` subfolder of a run: gzipped Nsight Compute reports beside their CSV exports.

Layout, one set per profiling session `<name>`: `<name>.ncu-rep.gz` (the report, ~10x smaller
gzipped), `<name>.raw.csv.gz` and `<name>.details.csv.gz` (the `--page raw|details` exports,
readable without ncu or a GPU), `<name>.json` (what was profiled, and how) and, for op
replay, `<name>.replay.py` (the standalone script that ran under ncu); `<name>.error` holds
the one-line reason when a session (one rank of a job under ncu) left no report.
Every file is opened through `safe_files`: `ncu/` and its files are never followed as symlinks.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import safe_files
from .json_checks import decode
from .run import Run

NCU_DIR = "ncu"


def ncu_dir(run: Run) -> Path:
    """The run's ncu/ folder (created on first use)."""
    safe_files.make_dir(run.path, NCU_DIR)
    return run.path / NCU_DIR


def gzip_into(src: str | os.PathLike[str], run: Run, name: str) -> Path:
    """Gzip a file into the run's ncu/<name> atomically (readers never see half a report)."""
    with open(src, "rb") as s, safe_files.atomic_file(run.path, f"{NCU_DIR}/{name}") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0) as gz:
            shutil.copyfileobj(s, gz, 1 << 20)
    return run.path / NCU_DIR / name


def _write(run: Run, name: str, data: bytes) -> Path:
    safe_files.write_bytes(run.path, f"{NCU_DIR}/{name}", data)
    return run.path / NCU_DIR / name


def save_ncu(
    run: Run,
    name: str,
    report: str | os.PathLike[str] | None,
    raw_csv: str | None,
    details_csv: str | None,
    info: Mapping[str, object],
    script: str | None = None,
) -> dict[str, Path]:
    """Store one profiling session's files under <run>/ncu/; returns what was written, by kind."""
    ncu_dir(run)
    out: dict[str, Path] = {}
    if report is not None and Path(report).is_file():
        out["report"] = gzip_into(report, run, f"{name}.ncu-rep.gz")
    for kind, text in (("raw", raw_csv), ("details", details_csv)):
        if text:
            data = gzip.compress(text.encode(), 6, mtime=0)
            out[kind] = _write(run, f"{name}.{kind}.csv.gz", data)
    if script is not None:
        out["script"] = _write(run, f"{name}.replay.py", script.encode())
    out["info"] = _write(run, f"{name}.json", json.dumps(info, indent=1, default=str).encode())
    return out


def _entries(run: Run) -> dict[str, os.stat_result]:
    """Regular files of ncu/ by name (symlinks left out), {} when there is no ncu/ folder."""
    try:
        names = safe_files.names_in(run.path, NCU_DIR)
    except (FileNotFoundError, NotADirectoryError, safe_files.SymlinkRefused):
        return {}
    out = {}
    for n in names:
        try:
            st = safe_files.regular_file(run.path, f"{NCU_DIR}/{n}")
        except OSError:
            continue
        if st is not None:
            out[n] = st
    return out


def list_ncu(run: Run) -> list[str]:
    """Names of the profiling sessions stored in the run, oldest first."""
    files = _entries(run)
    infos = [(st.st_mtime, n[:-5]) for n, st in files.items() if n.endswith(".json")]
    return [n for _, n in sorted(infos)]


def ncu_paths(run: Run, name: str) -> dict[str, Path]:
    """The files of one stored session that exist, by kind (report, raw, details, info, script).

    Symlinks are left out, so whoever opens these paths reads files of this run only.
    """
    files = _entries(run)
    cands = {
        "report": f"{name}.ncu-rep.gz",
        "raw": f"{name}.raw.csv.gz",
        "details": f"{name}.details.csv.gz",
        "info": f"{name}.json",
        "script": f"{name}.replay.py",
    }
    return {k: run.path / NCU_DIR / v for k, v in cands.items() if v in files}


def read_info(run: Run, name: str) -> dict[str, Any]:
    """The session's JSON description ({} when missing, unreadable or a symlink).

    Its keys are ncu's own (`ncu.session.describe` writes them, `ncu.results` reads them), so
    the store hands the decoded object back as it is (`Any` values: ncu's to read).
    """
    try:
        data = decode(run.read_file(f"{NCU_DIR}/{name}.json"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_ncu_error(run: Run, name: str, message: str) -> Path:
    """Record why a session left no report (`<name>.error`): a rank fails, the CLI reports."""
    ncu_dir(run)
    return _write(run, f"{name}.error", message.encode())


def read_ncu_error(run: Run, name: str) -> str | None:
    """The one-line error a session recorded instead of a report, if any."""
    try:
        return run.read_file(f"{NCU_DIR}/{name}.error").decode(errors="replace").strip() or None
    except OSError:
        return None
