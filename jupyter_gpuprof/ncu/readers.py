"""Nsight Compute CSV exports -> metric records and rule results (no GPU, no ncu needed).

`raw_records` parses `ncu --import R --csv --page raw --print-units base` (one row per kernel,
units in the second row) into the same {metric: value} records `rep_reader` gets from a
`.ncu-rep`, so `metrics.frame` builds one DataFrame from either. Rule results (Nsight
Compute's guided analysis, attributed to it) come from `--page details`.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
import os
from pathlib import Path

import pandas as pd

from .errors import NcuReportError

RULE_COLUMNS = {
    "id": "kernel index",
    "kernel": "kernel name",
    "rule": "Nsight Compute rule id",
    "section": "section the rule belongs to",
    "type": "OPT | WRN | INF | ERR",
    "title": "short title ('' when the source has none)",
    "message": "the rule's text",
    "speedup_type": "global | local | ''",
    "speedup_pct": "estimated speedup, % (NaN if none)",
}
TIME_UNITS = {
    "ns": 1e-9,
    "nsecond": 1e-9,
    "us": 1e-6,
    "usecond": 1e-6,
    "ms": 1e-3,
    "msecond": 1e-3,
    "s": 1.0,
    "second": 1.0,
}
BYTE_UNITS = {"byte": 1.0, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "tbyte": 1e12}


def number(text: str) -> float:
    """A number as ncu prints it ("1,128,619.53", "n/a", "") -> float (NaN when not a number)."""
    t = text.strip().replace(",", "")
    try:
        return float(t)
    except ValueError:
        return math.nan


def open_text(path: Path) -> str:
    """A text file, gzipped or not; NcuReportError with the file name when unreadable."""
    try:
        raw = path.read_bytes()
        return (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8", "replace")
    except FileNotFoundError:
        raise NcuReportError(f"{path}: no such file") from None
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise NcuReportError(f"{path}: cannot read ({exc})") from None


def scaled(value: float, unit: str, base: str) -> float:
    """Convert to the base unit named by `base` (seconds or bytes) when a unit prefix is present."""
    u = unit.strip().lower()
    table = TIME_UNITS if base == "s" else BYTE_UNITS
    return value * table[u] if u in table else value


def raw_records(text: str, source: str = "<csv>") -> list[dict[str, float | str]]:
    """Parse a `--page raw --csv` export: one {column: value} dict per kernel (numbers as float)."""
    rows = [r for r in csv.reader(io.StringIO(text)) if r]
    head = next((i for i, r in enumerate(rows) if r and r[0] == "ID"), None)
    if head is None or "Kernel Name" not in rows[head]:
        raise NcuReportError(
            f"{source}: not an ncu --page raw --csv export (no ID/Kernel Name header)"
        )
    names, units = rows[head], rows[head + 1] if len(rows) > head + 1 else []
    has_units = bool(units) and units[0] == ""
    out = []
    for r in rows[head + (2 if has_units else 1) :]:
        if len(r) != len(names):
            continue  # program output or a warning line mixed into the file
        rec: dict[str, float | str] = {}  # Nsight's metric names: a number, else its text
        for i, (k, v) in enumerate(zip(names, r, strict=False)):
            num = number(v)
            unit = units[i] if has_units else ""
            if k.startswith("gpu__time_duration"):
                num = scaled(num, unit, "s") * 1e9  # keep ns, whatever the export used
            elif unit.lower().endswith("byte"):
                num = scaled(num, unit, "b")
            rec[k] = v if (math.isnan(num) and v.strip() not in ("", "n/a")) else num
        out.append(rec)
    return out



def read_details_rules(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Nsight Compute rule results (`RULE_COLUMNS`) from a `--page details --csv` export."""
    p = Path(path)
    rows = list(csv.reader(io.StringIO(open_text(p))))
    if not rows or "Rule Name" not in rows[0]:
        raise NcuReportError(f"{p}: not an ncu --page details --csv export (no 'Rule Name' column)")
    h = {k: i for i, k in enumerate(rows[0])}
    out = []
    for r in rows[1:]:
        if len(r) != len(h) or not r[h["Rule Name"]].strip():
            continue
        kind = r[h["Estimated Speedup Type"]].strip().lower()
        out.append(
            {
                "id": int(number(r[h["ID"]])),
                "kernel": r[h["Kernel Name"]],
                "rule": r[h["Rule Name"]],
                "section": r[h["Section Name"]],
                "type": r[h["Rule Type"]],
                "title": "",
                "message": " ".join(r[h["Rule Description"]].split()),
                "speedup_type": kind,
                "speedup_pct": number(r[h["Estimated Speedup"]]),
            }
        )
    return pd.DataFrame(out, columns=list(RULE_COLUMNS))


def details_metrics(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Every (kernel id, section, metric, unit, value) row of a `--page details --csv` export."""
    p = Path(path)
    rows = list(csv.reader(io.StringIO(open_text(p))))
    h = {k: i for i, k in enumerate(rows[0])} if rows else {}
    need = ("ID", "Section Name", "Metric Name", "Metric Unit", "Metric Value")
    if not all(k in h for k in need):
        raise NcuReportError(f"{p}: not an ncu --page details --csv export")
    out = [
        (
            int(number(r[h["ID"]])),
            r[h["Section Name"]],
            r[h["Metric Name"]],
            r[h["Metric Unit"]],
            number(r[h["Metric Value"]]),
        )
        for r in rows[1:]
        if len(r) >= h["Metric Value"] + 1 and r[h["Metric Name"]]
    ]
    return pd.DataFrame(out, columns=["id", "section", "metric", "unit", "value"])

