"""Whole-trace sanity checks: what no single event shows, fixed and said, or refused in one line.

A file can be valid event by event (`trace_validate`) and still be nonsense as a whole: every
event written twice (a merge gone wrong doubles every time), every clock value the same, steps
that run backwards, device properties that are not numbers, JSON nested past what the decoder
follows. Each is either repaired and said (a line in `TraceInfo.warnings`, which the report
shows) or a `TraceError`: no report is better than a confident wrong one.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .name_masks import containing
from .tracefile import TraceError

#: the device property fields the analyses read, and the type each must have
DEVICE_FIELDS: dict[str, type] = {"name": str, "id": int, "totalGlobalMem": int,
                                  "computeMajor": int, "computeMinor": int, "warpSize": int}
#: what a Kineto trace nests at most (document, list, event, args, shape list, shape)
KINETO_DEPTH = 6
_STEP_PREFIX = "ProfilerStep#"
_STEP_MARK = re.compile(_STEP_PREFIX + r"(\d+)$")
#: categories whose ProfilerStep marks are the host's own step ranges, one per step
_HOST_STEP_CATEGORIES = ("cpu_op", "user_annotation")


def nesting_error(path: Path) -> TraceError:
    """The one line for JSON nested past the decoder's limit (the interpreter's recursion
    limit, 1,000 levels by default), instead of a RecursionError."""
    return TraceError(
        f"{path}: JSON nested deeper than {sys.getrecursionlimit():,} levels (a profiler trace "
        f"nests at most {KINETO_DEPTH}): not a trace the profiler wrote, or a corrupted one; "
        f"re-export the trace")


def refuse_if_empty(path: Path, n_total: int) -> None:
    """Raise when the file holds no events at all: a report of nothing would be all zeros.
    (Events of kinds the table skips still make a partial report, e.g. a cell that failed
    before its first step.)"""
    if n_total == 0:
        raise TraceError(f"{path}: no events ('traceEvents' missing or empty): the profiler "
                         "recorded nothing (did the profiled code run inside the capture?)")


def check_clock(path: Path, ts: np.ndarray, warnings: list[str]) -> None:
    """Refuse a trace whose events all start at one instant; say when timestamps are negative.

    Kineto writes microseconds since an epoch or since the capture began: never below zero.
    Shifted wholesale, the times still read relative to the first event, so that is a warning.
    """
    if len(ts) > 1 and float(ts.min()) == float(ts.max()):
        raise TraceError(f"{path}: all {len(ts):,} events start at the same instant "
                         f"(ts {float(ts.min()):g}): the file's timestamps were lost or "
                         f"overwritten, so nothing can be timed; re-export the trace")
    n_neg = int((ts < 0).sum())
    if n_neg:
        warnings.append(f"{n_neg:,} event{'s' if n_neg != 1 else ''} with a negative timestamp: "
                        "the file's clock was rewritten by a tool other than the profiler; "
                        "times are read relative to the first event")


def check_step_order(path: Path, events: pd.DataFrame) -> None:
    """Refuse steps whose numbers run backwards in time on their thread: the clock is broken
    (ProfilerStep#N is numbered by the profiler in the order the steps ran)."""
    names = events["name"].cat.categories
    # the names holding the prefix first, in one scan: a trace may hold 666 k distinct names
    # and a handful of steps
    marks = [i for i in containing(names.to_numpy(dtype=object), _STEP_PREFIX).tolist()
             if names[i].startswith(_STEP_PREFIX) and _STEP_MARK.match(names[i])]
    if len(marks) < 2:
        return
    host = events["cat"].isin(_HOST_STEP_CATEGORIES).to_numpy()
    rows = events[host & np.isin(events["name"].cat.codes.to_numpy(), marks)]
    step_names = pd.Series(names.to_numpy()[rows["name"].cat.codes.to_numpy()], index=rows.index)
    numbers = step_names.str.extract(_STEP_MARK.pattern, expand=False).astype("int64")
    table = pd.DataFrame({"pid": rows["pid"], "tid": rows["tid"], "ts": rows["ts_us"],
                          "n": numbers}).sort_values(["pid", "tid", "ts"], kind="stable")
    same_thread = ((table["pid"].to_numpy()[1:] == table["pid"].to_numpy()[:-1])
                   & (table["tid"].to_numpy()[1:] == table["tid"].to_numpy()[:-1]))
    n = table["n"].to_numpy()
    back = np.flatnonzero(same_thread & (n[1:] <= n[:-1]))
    if len(back):
        i = int(back[0])
        raise TraceError(f"{path}: ProfilerStep#{n[i + 1]} starts after ProfilerStep#{n[i]} "
                         f"although it ran before it: the timestamps do not run forward "
                         f"(rewritten or shuffled by another tool); re-export the trace")


def drop_duplicates(events: pd.DataFrame, memory: pd.DataFrame, warnings: list[str]
                    ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The tables with each event written more than once kept once, and said.

    Two distinct events never agree on every field (a kernel's correlation id, an op's
    external id and start time are its own); a file merged twice does. Only rows sharing a
    category and a start time are compared, so a sound trace pays one pass over two columns.
    """
    n_before = len(events) + len(memory)
    events = _unique(events, [events["cat"].cat.codes.to_numpy(), events["ts_us"].to_numpy()])
    memory = _unique(memory, [memory["ts_us"].to_numpy()])
    n_dup = n_before - len(events) - len(memory)
    if n_dup:
        warnings.append(f"{n_dup:,} duplicated event{'s' if n_dup != 1 else ''} read once: "
                        f"the file holds them twice (merged or concatenated by another tool); "
                        f"counted twice, every time would double")
    return events, memory


def _unique(df: pd.DataFrame, keys: Sequence[np.ndarray]) -> pd.DataFrame:
    """`df` without rows identical in every column to an earlier one (order kept)."""
    if len(df) < 2:
        return df
    order = np.lexsort(tuple(reversed(keys)))
    same = np.ones(len(df) - 1, dtype=bool)
    for k in keys:
        ks = k[order]
        same &= ks[1:] == ks[:-1]
    if not same.any():
        return df
    candidates = np.zeros(len(df), dtype=bool)
    candidates[order[1:][same]] = True
    candidates[order[:-1][same]] = True
    idx = np.flatnonzero(candidates)
    dup = df.iloc[idx].astype({c: str for c in df.columns if df[c].dtype == "category"}
                              ).duplicated(keep="first").to_numpy()
    if not dup.any():
        return df
    keep = np.ones(len(df), dtype=bool)
    keep[idx[dup]] = False
    return df[keep].reset_index(drop=True)


def valid_devices(raw: Sequence[object], warnings: list[str]) -> list[dict[str, object]]:
    """The trace's deviceProperties with the fields the analyses read of the right type.

    A field that is not (a number written as text is read as the number) is left out and
    said: the GPU model, its peaks or its memory size are then unknown, not a crash.
    """
    out: list[dict[str, object]] = []
    bad: list[str] = []
    for i, dev in enumerate(raw):
        if not isinstance(dev, Mapping):
            bad.append(f"entry {i} is {type(dev).__name__}, not an object")
            continue
        kept: dict[str, object] = {}
        for key, value in dev.items():
            want = DEVICE_FIELDS.get(key)
            if want is None:
                kept[key] = value
            elif (typed := _typed(value, want)) is not None:
                kept[key] = typed
            else:
                bad.append(f"device {i} `{key}` is {_shown(value)}")
        out.append(kept)
    if bad:
        warnings.append("device properties ignored where they are not numbers or names ("
                        + "; ".join(bad[:3]) + (f"; {len(bad) - 3} more" if len(bad) > 3 else "")
                        + "): the GPU model, peaks or memory size may be unknown; re-export "
                        "the trace from the profiler")
    return out


def _typed(value: object, want: type) -> object | None:
    """`value` as `want` (an int from digits, as old traces write some), None when it is not."""
    if want is str:
        return value if isinstance(value, str) else None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if -2**63 <= value < 2**63 else None
    if isinstance(value, str) and value.strip().isdigit() and len(value) < 19:
        return int(value)
    return None


def _shown(value: object) -> str:
    """A bad value as a message shows it: short, quoted when text."""
    text = repr(value)
    return text if len(text) <= 24 else text[:23] + "…"
