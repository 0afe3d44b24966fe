"""One run folder: its metadata (meta.json), traces and cached summary, written atomically."""

from __future__ import annotations

import copy
import dataclasses
import gzip
import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import safe_files
from .json_checks import decode
from .layout import (
    META_FILE,
    SUMMARY_FILE,
    TRACE_FILE,
    memory_history_name,
    rank_of_trace,
    run_memory_history,
    trace_name,
)
from .meta_blocks import (
    BaselineMeta,
    CallSiteMeta,
    EnvMeta,
    FrameworkMeta,
    OwnerMeta,
    PhaseConditionsMeta,
    SettingsMeta,
    StackMeta,
    TrainingMeta,
    TryMeta,
)
from .meta_lock import meta_locked
from .meta_schema import SALVAGED, salvage
from .owner import owner_gone

__all__ = ["META_FILE", "SUMMARY_FILE", "TRACE_FILE", "Run", "RunMeta", "open_run"]
RUN_META_SCHEMA_VERSION = 1
TRACE_ERROR_FILE = "trace.error"  # why the trace could not be analysed: the run is broken
_RANK_META = re.compile(r"^meta\.rank(\d+)\.json$")
STATUSES = ("running", "complete", "failed")
INTERRUPTED = "interrupted"  # listed, never written: `running` whose writer process is gone
#: the fields the user edits (the sidebar's rename and tags) while a capture may be running:
#: every other writer keeps what meta.json holds for them (store/meta_lock.py)
USER_FIELDS = ("name", "tags")


@dataclass
class RunMeta:
    """What a run was, how it was captured and what the capture measured (meta.json)."""

    schema_version: int = RUN_META_SCHEMA_VERSION
    id: str = ""
    name: str = ""
    created: str = ""
    status: str = "running"
    error: str | None = None
    settings: SettingsMeta = field(default_factory=lambda: SettingsMeta())
    env: EnvMeta = field(default_factory=lambda: EnvMeta())
    code: str = ""
    tags: list[str] = field(default_factory=list)
    baseline: BaselineMeta = field(default_factory=lambda: BaselineMeta(step_ms=[], timing=None))
    profiled_step_ms: list[float] = field(default_factory=list)
    flops_per_step: float | None = None
    max_memory_allocated_bytes: int | None = None
    flops_error: str | None = None  # why flops_per_step is missing, when it is
    rank: int | None = None
    world_size: int | None = None
    ranks: list[int] | None = None  # distributed runs: the ranks that wrote a trace
    owner: OwnerMeta | None = None  # the creating process (store/owner.py)
    # optimizer steps, micro-batches per step, loop/body decision, CUDA graph replays
    training: TrainingMeta = field(default_factory=lambda: TrainingMeta())
    # the Trainer that ran the steps (transformers / lightning) and its settings that matter
    framework: FrameworkMeta = field(default_factory=lambda: FrameworkMeta())
    # GPU conditions per phase (NVML), by phase: baseline, capture
    conditions: dict[str, PhaseConditionsMeta] = field(default_factory=dict)
    tries: list[TryMeta] = field(default_factory=list)  # fixes tried and measured
    stack: StackMeta | None = None  # the measured fixes stacked (advice/stacking.py)
    callsites: list[CallSiteMeta] = field(default_factory=list)  # capture/callsites.py
    # what the profiler printed while it ran (capture/profiler_log.py): report warnings
    profiler_messages: list[str] = field(default_factory=list)
    # why CUPTI stayed attached after the trace (capture/cupti_release.py; None: let go)
    cupti_kept: str | None = None
    # what the reader dropped as wrongly shaped (meta_schema.salvage), one line each: shown
    # in the run's list row and report, never written back
    problems: list[str] = field(default_factory=list, compare=False)
    # the dropped blocks as the file held them, by field, with what was kept of each: written
    # back unchanged while the field is, so a rename never erases what the reader skipped
    _as_read: dict[str, tuple[Any, Any]] = field(default_factory=dict, repr=False,
                                                  compare=False)

    def to_json(self) -> dict[str, object]:
        """Plain dict for json.dumps: meta.json's object, these fields by name."""
        out = dataclasses.asdict(self)
        del out["problems"], out["_as_read"]
        for name, (raw, kept) in self._as_read.items():
            if out.get(name) == kept:
                out[name] = raw
        return out

    @classmethod
    def from_json(cls, data: Any) -> RunMeta:
        """Build from a meta.json dict; unknown keys are ignored and missing ones take defaults."""
        if not isinstance(data, dict):
            raise ValueError("meta.json does not hold a JSON object")
        known = {f.name for f in dataclasses.fields(cls)} - {"problems", "_as_read"}
        meta = cls(**{k: v for k, v in data.items() if k in known})
        baseline: Any = meta.baseline  # as decoded: the JSON may hold anything here
        if not isinstance(baseline, dict):
            meta.baseline = BaselineMeta(step_ms=[], timing=None)
        meta.baseline.setdefault("step_ms", [])
        meta.baseline.setdefault("timing", None)
        for name in ("settings", "env", "training", "framework"):
            if not isinstance(getattr(meta, name), dict):
                setattr(meta, name, {})
        tags: Any = meta.tags  # as decoded: the JSON may hold anything here
        meta.tags = [str(t) for t in tags] if isinstance(tags, list) else []
        return meta


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write data to path so readers see the old file or the new one, never half of it."""
    safe_files.write_bytes(path.parent, path.name, data)


def parse_meta(data: bytes, name: str = META_FILE) -> RunMeta:
    """A RunMeta from meta.json's bytes; ValueError (one line) if it is not a valid meta.json.

    The one check of a run's meta: strict JSON (`json_checks.decode`), then `MetaSchema`'s
    types, wrongly shaped entries of the blocks a run can be shown without dropped and listed
    in `RunMeta.problems` (`meta_schema.salvage`).
    """
    value = decode(data)
    if not isinstance(value, dict):
        raise ValueError(f"{name} does not hold a JSON object")
    kept, problems = salvage(value)  # BadJson when what is left still does not fit
    meta = RunMeta.from_json(kept)
    meta.problems = [f"{name}: {p}" for p in problems]
    meta._as_read = {k: (v, copy.deepcopy(getattr(meta, k))) for k, v in value.items()
                     if k in SALVAGED and (k not in kept or kept[k] is not v)}
    return meta


def meta_digest(data: bytes) -> str:
    """What identifies one version of meta.json: the listing cache is valid for it alone."""
    return hashlib.sha256(data).hexdigest()


class Run:
    """A run folder and its metadata; every write goes through here."""

    broken = False

    def __init__(self, path: str | os.PathLike[str], meta: RunMeta | None = None,
                 digest: str | None = None) -> None:
        self.path = Path(path)
        self.meta = meta if meta is not None else RunMeta(id=self.path.name, name=self.path.name)
        #: `meta_digest` of the meta.json bytes `meta` was read from (None: built in memory)
        self.digest = digest

    @property
    def id(self) -> str:
        """The folder name, which is the run's id in the store."""
        return self.path.name

    def __repr__(self) -> str:
        return f"Run({str(self.path)!r}, status={self.meta.status!r})"

    @property
    def status(self) -> str:
        """meta.json's status, or `interrupted` for a `running` run whose writer is gone."""
        if self.meta.status == "running" and owner_gone(self.meta.owner):
            return INTERRUPTED
        return self.meta.status

    def trace_paths(self) -> list[Path]:
        """Trace files: trace.json.gz, else the per-rank traces sorted by rank.

        Each one checked to be a regular file, not a symlink (SymlinkRefused), so the analysis
        that opens these paths reads files of this run only.
        """
        if safe_files.regular_file(self.path, TRACE_FILE) is not None:
            return [self.path / TRACE_FILE]
        ranked = []
        for name in safe_files.names_in(self.path):
            rank = rank_of_trace(name)
            if rank is not None and safe_files.regular_file(self.path, name) is not None:
                ranked.append((rank, self.path / name))
        return [p for _, p in sorted(ranked)]

    def read_file(self, name: str) -> bytes:
        """The bytes of a file of this run (``ncu/x`` for the ncu folder), never via a symlink."""
        return safe_files.read_bytes(self.path, name)

    def write_meta(self, rank: int | None = None) -> None:
        """Save meta.json (or meta.rank<R>.json, which each rank of a job writes for itself),
        under the run's meta lock: the user's fields (`USER_FIELDS`: a rename or re-tag made
        while this writer ran) are taken from the file as it is now, never overwritten."""
        name = META_FILE if rank is None else f"meta.rank{rank}.json"
        with meta_locked(self.path):
            on_disk = self._meta_on_disk() if rank is None else None
            if on_disk is not None:
                for field_name in USER_FIELDS:
                    setattr(self.meta, field_name, getattr(on_disk, field_name))
            self._save(name)

    def edit_meta(self, change: Callable[[RunMeta], None]) -> RunMeta:
        """Read meta.json, `change` it and save it, all under the run's meta lock: an edit of
        one field (the server's rename, re-tag) keeps every other writer's fields as they are
        on disk now. OSError / ValueError as `open_run` when meta.json is missing or corrupt."""
        with meta_locked(self.path):
            meta = parse_meta(safe_files.read_bytes(self.path, META_FILE))
            if not meta.id:
                meta.id = self.path.name
            change(meta)
            self.meta = meta
            self._save(META_FILE)
        return meta

    def _meta_on_disk(self) -> RunMeta | None:
        """meta.json as it is now, or None when absent or unreadable (then ours replaces it)."""
        try:
            return parse_meta(safe_files.read_bytes(self.path, META_FILE))
        except FileNotFoundError:
            if not self.path.is_dir():
                raise
            return None
        except (OSError, ValueError, TypeError):
            return None

    def _save(self, name: str) -> None:
        data = json.dumps(self.meta.to_json(), indent=1, default=str).encode()
        atomic_write_bytes(self.path / name, data)
        if name == META_FILE:
            self.digest = meta_digest(data)

    def rank_metas(self) -> dict[int, RunMeta]:
        """Per-rank metadata written by the ranks of a distributed job, by rank; an unreadable
        one is a failed rank with the reason (the merge then lists the run failed, says why)."""
        out = {}
        for name in safe_files.names_in(self.path):
            m = _RANK_META.match(name)
            if m:
                try:
                    out[int(m.group(1))] = parse_meta(self.read_file(name), name)
                except (OSError, ValueError) as e:  # that rank failed: said, never fatal
                    out[int(m.group(1))] = RunMeta(status="failed",
                                                   error=f"unreadable {name}: {e}")
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
            "callsites",
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

    def export_file(self) -> AbstractContextManager[Path]:
        """A temporary file in this run's folder for the profiler to export its trace into
        (`write_trace` then compresses it); removed when the `with` ends."""
        return safe_files.scratch_file(self.path, "export.json")

    def write_trace(self, chrome_trace: str | os.PathLike[str], rank: int | None = None) -> Path:
        """Gzip an exported Chrome trace into trace.json.gz (or trace.rank<R>.json.gz)."""
        name = trace_name(rank)
        with open(chrome_trace, "rb") as src, safe_files.atomic_file(self.path, name) as raw:
            # compresslevel 6: ~3x faster than 9 on 300 MB traces for a few % more bytes.
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6,
                               mtime=0) as gz:
                shutil.copyfileobj(src, gz, 1 << 20)
        return self.path / name

    def write_memory_history(self, history: Mapping[str, object], rank: int | None = None
                             ) -> Path:
        """Save the allocator's history (a torch memory snapshot plus our addresses) gzipped;
        each rank of a job sharing the folder writes its own."""
        name = memory_history_name(rank)
        data = json.dumps(history, separators=(",", ":"), default=str).encode()
        safe_files.write_bytes(self.path, name, gzip.compress(data, 6, mtime=0))
        return self.path / name

    def memory_history_path(self) -> Path | None:
        """The saved allocator history (a job's: the lowest rank's), when the capture wrote one;
        never via a symlink."""
        name = run_memory_history(safe_files.names_in(self.path))
        if name is None or safe_files.regular_file(self.path, name) is None:
            return None
        return self.path / name

    def write_summary(self, summary: Mapping[str, object]) -> None:
        """Cache the report's JSON form as summary.json."""
        data = json.dumps(summary, default=str, allow_nan=False).encode()
        atomic_write_bytes(self.path / SUMMARY_FILE, data)

    def read_summary(self) -> dict[str, object] | None:
        """The cached summary as strict JSON, or None when absent or unreadable (recomputed then).

        Its shape is the report model's to check (`report.cached_summary`): the store only
        guarantees bounded nesting, finite numbers and a JSON object.

        SymlinkRefused when summary.json is a symlink: it is never read.
        """
        try:
            value = decode(self.read_file(SUMMARY_FILE))
        except safe_files.SymlinkRefused:
            raise
        except (OSError, ValueError):
            return None
        return value if isinstance(value, dict) else None

    def forget_summary(self) -> None:
        """Drop the cached summary: the meta it was made from has grown since (the steps
        after the capture, written at the script's end)."""
        safe_files.unlink(self.path, SUMMARY_FILE)

    def write_trace_error(self, message: str) -> None:
        """Record why the trace could not be analysed, so the list shows the run `broken`."""
        safe_files.write_bytes(self.path, TRACE_ERROR_FILE, message.encode())

    def clear_trace_error(self) -> None:
        """Forget a recorded trace error once the trace was analysed."""
        safe_files.unlink(self.path, TRACE_ERROR_FILE)

    def trace_error(self) -> str | None:
        """The recorded reason the trace could not be analysed, if any."""
        try:
            return self.read_file(TRACE_ERROR_FILE).decode(errors="replace").strip() or None
        except OSError:
            return None


def open_run(path: str | os.PathLike[str]) -> Run:
    """Open a run folder; OSError or ValueError if meta.json is missing or corrupt."""
    p = Path(path)
    data = safe_files.read_bytes(p, META_FILE)
    meta = parse_meta(data)
    if not meta.id:
        meta.id = p.name
    return Run(p, meta, meta_digest(data))
