"""The file names of a run folder, and which files of any folder are traces.

The one place that knows how a run folder is laid out on disk (meta.json, summary.json,
trace.json.gz, trace.rank<R>.json.gz) and how a loose folder of exported traces is recognised,
so the report asks the store for traces, meta and caches instead of reading names itself.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TypedDict, cast

import msgspec

from .meta_blocks import BaselineMeta

META_FILE = "meta.json"
SUMMARY_FILE = "summary.json"
TRACE_FILE = "trace.json.gz"
#: the CUDA allocator's history over the profiled steps (or up to an out-of-memory error)
MEMORY_HISTORY_FILE = "memory_history.json.gz"
#: the key of the capture's own additions (addresses, the OOM request) in that snapshot
MEMORY_HISTORY_KEY = "jupyter_gpuprof"
_RANK_TRACE = re.compile(r"^trace\.rank(\d+)\.json\.gz$")
#: endings of single-process traces outside run folders (torch.profiler exports and ours)
LOOSE_TRACE_ENDINGS = (".pt.trace.json", ".pt.trace.json.gz", "trace.json.gz", "trace.json")
#: other tools' per-rank names: HolisticTraceAnalysis's rank-N.json.gz and sampled_rank-N.json.gz,
#: rank_N/rankN inside a longer name (the rank in distributedInfo wins when the trace has one)
_OTHER_RANK_NAME = re.compile(r"(?:^|[_.-])rank[_-]?(\d+)(?=[._])", re.I)
#: one rank's summary made where it ran (analysis/rank_files.py): beside its trace, never a trace
RANK_SUMMARY_ENDING = ".rank-summary.json.gz"
#: endings of any JSON trace, for a folder where no file matches a known name
_JSON_ENDINGS = (".json", ".json.gz")


class SiblingMeta(TypedDict, total=False):
    """What a bare trace's meta file may say of its baseline: a run's meta.json, or a capture
    script's own (`step_ms_all`)."""

    step_ms_all: list[float]
    baseline: BaselineMeta
    flops_per_step: float | None
    host_probe_ms: float | None


def memory_history_name(rank: int | None) -> str:
    """File name of the allocator history: the single-process one, or one rank's."""
    return MEMORY_HISTORY_FILE if rank is None else f"memory_history.rank{int(rank)}.json.gz"


def rank_trace_name(rank: int) -> str:
    """File name of one rank's trace in a distributed run folder."""
    return f"trace.rank{int(rank)}.json.gz"


def trace_name(rank: int | None) -> str:
    """File name of a run's trace: the single-process one, or one rank's."""
    return TRACE_FILE if rank is None else rank_trace_name(rank)


def rank_of_trace(name: str) -> int | None:
    """The rank a trace file name belongs to (`trace.rank<R>.json.gz`), else None."""
    m = _RANK_TRACE.match(name)
    return int(m.group(1)) if m else None


def run_traces(folder: Path) -> list[Path]:
    """A run folder's traces: trace.json.gz, else the per-rank traces sorted by rank."""
    single = folder / TRACE_FILE
    if single.is_file():
        return [single]
    ranked = [(rank_of_trace(p.name), p) for p in folder.iterdir() if p.is_file()]
    return [p for r, p in sorted((r, p) for r, p in ranked if r is not None)]


def single_trace(path: Path) -> Path | None:
    """The one trace file that analysing `path` reads: the file itself, or a run folder's
    single-process trace (None for a folder of ranks or no trace): what can be read ahead."""
    if path.is_file():
        return path
    single = path / TRACE_FILE
    return single if path.is_dir() and single.is_file() and is_run_folder(path) else None


_RANK_HISTORY = re.compile(r"^memory_history\.rank(\d+)\.json\.gz$")


def run_memory_history(names: list[str]) -> str | None:
    """Which of a run folder's file names is its allocator history: the single-process one,
    else the lowest rank's (a job's ranks each write theirs)."""
    if MEMORY_HISTORY_FILE in names:
        return MEMORY_HISTORY_FILE
    ranked = sorted((int(m.group(1)), n) for n in names if (m := _RANK_HISTORY.match(n)))
    return ranked[0][1] if ranked else None


def rank_in_name(name: str) -> int | None:
    """The rank a trace's file name states, in our layout or another tool's, else None."""
    ours = rank_of_trace(name)
    if ours is not None:
        return ours
    m = _OTHER_RANK_NAME.search(name) if name.endswith(_JSON_ENDINGS) else None
    return int(m.group(1)) if m else None


def folder_traces(folder: Path) -> list[Path]:
    """Trace files of any folder: per-rank traces by rank, then single traces by name.

    A folder where no name is known (another tool's export: `<model>__<id>.json.gz`) gives its
    JSON files, less the store's own meta and summary files. Rank summaries are never traces.
    """
    files = [p for p in folder.iterdir()
             if p.is_file() and not p.name.endswith(RANK_SUMMARY_ENDING)]
    ranked = sorted((r, p) for p in files if (r := rank_in_name(p.name)) is not None)
    loose = sorted(p for p in files
                   if rank_in_name(p.name) is None and p.name.endswith(LOOSE_TRACE_ENDINGS))
    if not ranked and not loose:
        loose = sorted(p for p in files if p.name.endswith(_JSON_ENDINGS)
                       and p.name not in (META_FILE, SUMMARY_FILE)
                       and not p.name.endswith(".meta.json"))
    return [p for _, p in ranked] + loose


def is_run_folder(folder: Path) -> bool:
    """A run folder has a meta.json written by the store (it carries schema_version)."""
    try:
        data = json.loads((folder / META_FILE).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "schema_version" in data


def sibling_meta(trace: Path) -> SiblingMeta:
    """Baseline data stored beside a bare trace (`X.meta.json` or `meta.json`), if any; a file
    whose baseline fields have other types is passed over."""
    stem = trace.name.split(".")[0]
    for cand in (trace.with_name(f"{stem}.meta.json"), trace.with_name(META_FILE)):
        if cand.is_file():
            try:
                data = json.loads(cand.read_text())
                msgspec.convert(data, SiblingMeta)  # checks only: the file's own dict is kept
            except (OSError, ValueError, msgspec.ValidationError):
                continue
            return cast(SiblingMeta, data)
    return {}
