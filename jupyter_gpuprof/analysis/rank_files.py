"""One rank's `RankSummary` as a file: made where the rank ran, merged here.

A job of hundreds of ranks leaves hundreds of traces on as many machines; copying them to one
place to parse is the slow, memory-hungry part. Each machine can instead reduce its own rank's
trace (`rank_loading.summarize_trace_to_file`, or
`python -m jupyter_gpuprof.analysis.rank_loading TRACE`) to a
file of a few hundred kB that carries exactly what the cross-rank analysis reads; a folder of
such files is then merged by `read_rank_summaries` + `distributed.analyze_ranks` without any
trace. The format is gzipped JSON (never pickle: the files come from other machines).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..store.layout import RANK_SUMMARY_ENDING
from .intervals import Coverage
from .rank_summary import RankSummary
from .timeline_ranks import RankLanes
from .tracefile import TraceError

FORMAT = "jupyter-gpuprof-rank-summary"
VERSION = 1
_STEP_COLUMNS = ["step", "step_us", "compute_us", "comm_us", "exposed_comm_us", "idle_us",
                 "input_us"]
_COLL_COLUMNS = ["step", "op", "ts_us", "dur_us"]


def is_rank_summary_file(path: str | Path) -> bool:
    """Whether a path names a rank summary file (by its ending)."""
    return str(path).endswith(RANK_SUMMARY_ENDING)


def _columns(df: pd.DataFrame, cols: list[str]) -> dict[str, list[Any]]:
    """A table as JSON columns (numpy scalars made plain)."""
    return {c: df[c].tolist() for c in cols}


def summary_to_doc(s: RankSummary) -> dict[str, Any]:
    """The JSON object of one rank summary."""
    return {
        "format": FORMAT, "version": VERSION, "rank": int(s.rank),
        "world_size": None if s.world_size is None else int(s.world_size),
        "path": s.path, "t0_us": float(s.t0_us), "span_us": float(s.span_us),
        "steps": _columns(s.steps, _STEP_COLUMNS),
        "collectives": _columns(s.collectives, _COLL_COLUMNS),
        "compute": {"starts": s.compute.starts.tolist(), "ends": s.compute.ends.tolist()},
        "lanes": None if s.lanes is None else {"rank": int(s.lanes.rank),
                                               "origin_us": float(s.lanes.origin_us),
                                               "timeline": s.lanes.timeline},
        "step_median_ms": None if s.step_median_ms is None else float(s.step_median_ms),
        "busy_pct": float(s.busy_pct), "warnings": [str(w) for w in s.warnings],
    }


def summary_from_doc(doc: Any, where: str) -> RankSummary:
    """A rank summary from its JSON object; a malformed one is a `TraceError` naming `where`."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise TraceError(f"{where}: not a rank summary file (no \"format\": \"{FORMAT}\")")
    if doc.get("version") != VERSION:
        raise TraceError(f"{where}: rank summary version {doc.get('version')!r}; this version "
                         f"reads version {VERSION} (make it again with this version)")
    try:
        steps = pd.DataFrame({c: doc["steps"][c] for c in _STEP_COLUMNS}, columns=_STEP_COLUMNS)
        steps = steps.astype({"step": np.int64} | {c: np.float64 for c in _STEP_COLUMNS[1:]})
        coll = pd.DataFrame({c: doc["collectives"][c] for c in _COLL_COLUMNS},
                            columns=_COLL_COLUMNS)
        coll = coll.astype({"step": np.int64, "op": object, "ts_us": np.float64,
                            "dur_us": np.float64})
        compute = Coverage(np.asarray(doc["compute"]["starts"], dtype=np.float64),
                           np.asarray(doc["compute"]["ends"], dtype=np.float64))
        lanes_doc = doc.get("lanes")
        lanes = None if lanes_doc is None else RankLanes(
            int(lanes_doc["rank"]), float(lanes_doc["origin_us"]), lanes_doc["timeline"])
        world, median = doc["world_size"], doc["step_median_ms"]
        return RankSummary(int(doc["rank"]), None if world is None else int(world),
                           str(doc["path"]), float(doc["t0_us"]), steps, coll, compute,
                           float(doc["span_us"]), lanes,
                           None if median is None else float(median), float(doc["busy_pct"]),
                           [str(w) for w in doc["warnings"]])
    except (KeyError, TypeError, ValueError) as e:
        raise TraceError(f"{where}: damaged rank summary ({type(e).__name__}: {e})") from None


def write_rank_summary(s: RankSummary, out: str | Path) -> Path:
    """Write one rank summary file (gzipped JSON); returns its path."""
    out = Path(out)
    with gzip.open(out, "wt", encoding="utf-8", compresslevel=6) as f:
        json.dump(summary_to_doc(s), f, separators=(",", ":"))
    return out


def read_rank_summary(path: str | Path) -> RankSummary:
    """Read one rank summary file; an unreadable one is a one-line `TraceError`."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, EOFError, ValueError) as e:
        raise TraceError(f"{path}: unreadable rank summary ({type(e).__name__}: {e})") from None
    return summary_from_doc(doc, str(path))


def folder_rank_summaries(folder: str | Path) -> list[Path]:
    """The rank summary files of a folder, by name."""
    return sorted(p for p in Path(folder).iterdir()
                  if p.is_file() and is_rank_summary_file(p.name))


def read_rank_summaries(paths: Sequence[str | Path]) -> list[RankSummary]:
    """Every rank summary file of a job, sorted by rank (each a few hundred kB)."""
    return sorted((read_rank_summary(p) for p in paths), key=lambda s: s.rank)
