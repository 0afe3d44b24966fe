"""One run folder: its metadata (meta.json), traces and cached summary, written atomically."""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
META_FILE = "meta.json"
SUMMARY_FILE = "summary.json"
TRACE_FILE = "trace.json.gz"
_RANK_TRACE = re.compile(r"^trace\.rank(\d+)\.json\.gz$")
_RANK_META = re.compile(r"^meta\.rank(\d+)\.json$")
STATUSES = ("running", "complete", "failed")


@dataclass
class RunMeta:
    """What a run was, how it was captured and what the capture measured (meta.json)."""

    schema_version: int = SCHEMA_VERSION
    id: str = ""
    name: str = ""
    created: str = ""
    status: str = "running"
    error: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    env: dict[str, Any] = field(default_factory=dict)
    code: str = ""
    tags: list[str] = field(default_factory=list)
    baseline: dict[str, Any] = field(default_factory=lambda: {"step_ms": [], "timing": None})
    profiled_step_ms: list[float] = field(default_factory=list)
    flops_per_step: float | None = None
    max_memory_allocated_bytes: int | None = None
    flops_error: str | None = None  # why flops_per_step is missing, when it is
    rank: int | None = None
    world_size: int | None = None
    ranks: list[int] | None = None  # distributed runs: the ranks that wrote a trace
    conditions: dict[str, Any] = field(default_factory=dict)  # GPU conditions per phase (NVML)
    tries: list[dict[str, Any]] = field(default_factory=list)  # fixes tried and measured

    def to_json(self) -> dict[str, Any]:
        """Plain dict for json.dumps."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunMeta:
        """Build from a meta.json dict; unknown keys are ignored and missing ones take defaults."""
        if not isinstance(data, dict):
            raise ValueError("meta.json does not hold a JSON object")
        known = {f.name for f in dataclasses.fields(cls)}
        meta = cls(**{k: v for k, v in data.items() if k in known})
        if not isinstance(meta.baseline, dict):
            meta.baseline = {"step_ms": [], "timing": None}
        meta.baseline.setdefault("step_ms", [])
        meta.baseline.setdefault("timing", None)
        for name in ("settings", "env"):
            if not isinstance(getattr(meta, name), dict):
                setattr(meta, name, {})
        if not isinstance(meta.tags, list):
            meta.tags = []
        meta.tags = [str(t) for t in meta.tags]
        return meta


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write data to path so readers see the old file or the new one, never half of it."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        _unlink_quietly(tmp)
        raise


def _unlink_quietly(path: str | Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _read_json(path: Path) -> Any:
    with open(path, "rb") as f:
        return json.loads(f.read())


class Run:
    """A run folder and its metadata; every write goes through here."""

    broken = False

    def __init__(self, path: str | os.PathLike[str], meta: RunMeta | None = None) -> None:
        self.path = Path(path)
        self.meta = meta if meta is not None else RunMeta(id=self.path.name, name=self.path.name)

    @property
    def id(self) -> str:
        """The folder name, which is the run's id in the store."""
        return self.path.name

    def __repr__(self) -> str:
        return f"Run({str(self.path)!r}, status={self.meta.status!r})"

    def trace_paths(self) -> list[Path]:
        """Trace files: trace.json.gz, else the per-rank traces sorted by rank."""
        single = self.path / TRACE_FILE
        if single.is_file():
            return [single]
        ranked = []
        for p in self.path.iterdir():
            m = _RANK_TRACE.match(p.name)
            if m and p.is_file():
                ranked.append((int(m.group(1)), p))
        return [p for _, p in sorted(ranked)]

    def write_meta(self, rank: int | None = None) -> None:
        """Save meta.json (or meta.rank<R>.json, which each rank of a job writes for itself)."""
        name = META_FILE if rank is None else f"meta.rank{rank}.json"
        data = json.dumps(self.meta.to_json(), indent=1, default=str).encode()
        atomic_write_bytes(self.path / name, data)

    def rank_metas(self) -> dict[int, RunMeta]:
        """Per-rank metadata written by the ranks of a distributed job, by rank."""
        out = {}
        for p in self.path.iterdir():
            m = _RANK_META.match(p.name)
            if m:
                out[int(m.group(1))] = RunMeta.from_json(_read_json(p))
        return dict(sorted(out.items()))

    def merge_rank_metas(self) -> None:
        """Fold per-rank metadata into meta.json: rank 0's timings, worst status, first error."""
        ranks = self.rank_metas()
        if not ranks:
            return
        first = ranks[min(ranks)]
        for attr in (
            "env",
            "baseline",
            "profiled_step_ms",
            "flops_per_step",
            "max_memory_allocated_bytes",
            "flops_error",
        ):
            setattr(self.meta, attr, getattr(first, attr))
        self.meta.settings = {**self.meta.settings, **first.settings}
        self.meta.rank = None
        self.meta.world_size = first.world_size or len(ranks)
        self.meta.ranks = sorted(ranks)
        failed = [(r, m) for r, m in ranks.items() if m.status != "complete"]
        if failed:
            r, m = failed[0]
            self.meta.status = "failed"
            self.meta.error = f"rank {r}: {m.error or m.status}"
        else:
            self.meta.status = "complete"
            self.meta.error = None
        self.write_meta()

    def write_trace(self, chrome_trace: str | os.PathLike[str], rank: int | None = None) -> Path:
        """Gzip an exported Chrome trace into trace.json.gz (or trace.rank<R>.json.gz)."""
        name = TRACE_FILE if rank is None else f"trace.rank{rank}.json.gz"
        dest = self.path / name
        fd, tmp = tempfile.mkstemp(dir=self.path, prefix=f".{name}.", suffix=".tmp")
        try:
            with open(chrome_trace, "rb") as src, os.fdopen(fd, "wb") as raw:
                # compresslevel 6: ~3x faster than 9 on 300 MB traces for a few % more bytes.
                with gzip.GzipFile(
                    filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0
                ) as gz:
                    shutil.copyfileobj(src, gz, 1 << 20)
            os.replace(tmp, dest)
        except BaseException:
            _unlink_quietly(tmp)
            raise
        return dest

    def write_summary(self, summary: dict[str, Any]) -> None:
        """Cache the report's JSON form as summary.json."""
        data = json.dumps(summary, default=str).encode()
        atomic_write_bytes(self.path / SUMMARY_FILE, data)

    def read_summary(self) -> dict[str, Any] | None:
        """The cached summary, or None when absent or unreadable (it can always be recomputed)."""
        try:
            data = _read_json(self.path / SUMMARY_FILE)
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None


def open_run(path: str | os.PathLike[str]) -> Run:
    """Open a run folder; OSError or ValueError if meta.json is missing or corrupt."""
    p = Path(path)
    meta = RunMeta.from_json(_read_json(p / META_FILE))
    if not meta.id:
        meta.id = p.name
    return Run(p, meta)
