"""The `ncu/` subfolder of a run: gzipped Nsight Compute reports beside their CSV exports.

Layout, one set per profiling session `<name>`: `<name>.ncu-rep.gz` (the report, ~10x smaller
gzipped), `<name>.raw.csv.gz` and `<name>.details.csv.gz` (the `--page raw|details` exports,
readable without ncu or a GPU), `<name>.json` (what was profiled, and how) and, for op
replay, `<name>.replay.py` (the standalone script that ran under ncu); `<name>.error` holds
the one-line reason when a session (one rank of a job under ncu) left no report.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from .run import Run, atomic_write_bytes

NCU_DIR = "ncu"


def ncu_dir(run: Run) -> Path:
    """The run's ncu/ folder (created on first use)."""
    d = run.path / NCU_DIR
    d.mkdir(exist_ok=True)
    return d


def gzip_into(src: str | os.PathLike[str], dest: Path) -> Path:
    """Gzip a file into dest atomically (readers never see half a report)."""
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
    try:
        with open(src, "rb") as s, os.fdopen(fd, "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0) as gz:
                shutil.copyfileobj(s, gz, 1 << 20)
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return dest


def save_ncu(
    run: Run,
    name: str,
    report: str | os.PathLike[str] | None,
    raw_csv: str | None,
    details_csv: str | None,
    info: dict[str, Any],
    script: str | None = None,
) -> dict[str, Path]:
    """Store one profiling session's files under <run>/ncu/; returns what was written, by kind."""
    d = ncu_dir(run)
    out: dict[str, Path] = {}
    if report is not None and Path(report).is_file():
        out["report"] = gzip_into(report, d / f"{name}.ncu-rep.gz")
    for kind, text in (("raw", raw_csv), ("details", details_csv)):
        if text:
            path = d / f"{name}.{kind}.csv.gz"
            atomic_write_bytes(path, gzip.compress(text.encode(), 6, mtime=0))
            out[kind] = path
    if script is not None:
        path = d / f"{name}.replay.py"
        atomic_write_bytes(path, script.encode())
        out["script"] = path
    path = d / f"{name}.json"
    atomic_write_bytes(path, json.dumps(info, indent=1, default=str).encode())
    out["info"] = path
    return out


def list_ncu(run: Run) -> list[str]:
    """Names of the profiling sessions stored in the run, oldest first."""
    d = run.path / NCU_DIR
    if not d.is_dir():
        return []
    return sorted(
        (p.name[:-5] for p in d.glob("*.json")), key=lambda n: (d / f"{n}.json").stat().st_mtime
    )


def ncu_paths(run: Run, name: str) -> dict[str, Path]:
    """The files of one stored session that exist, by kind (report, raw, details, info, script)."""
    d = run.path / NCU_DIR
    cands = {
        "report": f"{name}.ncu-rep.gz",
        "raw": f"{name}.raw.csv.gz",
        "details": f"{name}.details.csv.gz",
        "info": f"{name}.json",
        "script": f"{name}.replay.py",
    }
    return {k: d / v for k, v in cands.items() if (d / v).is_file()}


def read_info(run: Run, name: str) -> dict[str, Any]:
    """The session's JSON description ({} when missing or unreadable)."""
    try:
        data = json.loads((run.path / NCU_DIR / f"{name}.json").read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_ncu_error(run: Run, name: str, message: str) -> Path:
    """Record why a session left no report (`<name>.error`): a rank fails, the CLI reports."""
    path = ncu_dir(run) / f"{name}.error"
    atomic_write_bytes(path, message.encode())
    return path


def read_ncu_error(run: Run, name: str) -> str | None:
    """The one-line error a session recorded instead of a report, if any."""
    try:
        return (run.path / NCU_DIR / f"{name}.error").read_text().strip() or None
    except OSError:
        return None
