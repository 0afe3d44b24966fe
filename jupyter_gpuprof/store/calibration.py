"""The calibration record of a runs root: what each `--try` predicted and what it measured.

One JSON object a line in `<runs root>/calibration.jsonl`, appended by every judged try (the
notebook's `%%gpuprofile --try` and `jupyter gpuprof run --try`), never rewritten: the record
outlives the run folders it names, so deleting a run keeps what its tries taught. Appends take
an exclusive lock and write whole lines in one call (`safe_files.append_locked`), so two
processes trying fixes at once never interleave; a line that does not decode into a
`CalibrationEntry` is skipped with a `CalibrationWarning`, never fatal.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TypedDict

from . import safe_files
from .json_checks import BadJson, decode

#: the record's file name, directly in the runs root (`RunStore.list` skips plain files)
CALIBRATION_FILE = "calibration.jsonl"


class CalibrationWarning(UserWarning):
    """Lines of the record that were skipped (damaged, or not an entry)."""


class TryConditions(TypedDict):
    """The GPU's state while the try ran: its median SM clock and any throttle reasons."""

    sm_clock_mhz: float | None
    throttle: list[str]


class CalibrationEntry(TypedDict):
    """One judged try: its fix, where it ran, and the predicted beside the measured gain."""

    fix: str
    category: str | None  # the verdict category the fix measures (advice/fix_table.py)
    gpu_name: str | None  # meta.json env.gpu_name; None on a machine without a GPU
    workload: str  # advice/calibration.py `workload_fingerprint`
    conditions: TryConditions | None
    predicted_gain_pct: float | None  # the finding's expected gain when the try ran
    measured_gain_pct: float | None
    significant: bool | None  # the change passed the try's test (None: nothing measured)
    error: str | None  # why the try measured nothing (it crashed, timed out)
    run_id: str
    source: str  # notebook | script | corpus
    created: str  # when the entry was appended (ISO 8601, local time with offset)


def append_entries(root: Path, entries: Sequence[CalibrationEntry]) -> None:
    """Append the entries to the runs root's record (created on first use), in one locked
    write."""
    if not entries:
        return
    data = b"".join(json.dumps(e, allow_nan=False, separators=(",", ":")).encode() + b"\n"
                    for e in entries)
    safe_files.append_locked(root, CALIBRATION_FILE, data)


def read_entries(root: Path) -> list[CalibrationEntry]:
    """Every usable entry of the runs root's record, oldest first (none when it has no
    record); damaged lines are skipped with one CalibrationWarning naming them."""
    try:
        data = safe_files.read_root_file(root, CALIBRATION_FILE)
    except (FileNotFoundError, NotADirectoryError):
        return []
    if not data:
        return []
    entries: list[CalibrationEntry] = []
    bad: list[str] = []
    for n, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            entries.append(decode(line, CalibrationEntry))
        except BadJson as e:
            bad.append(f"line {n}: {e}")
    if bad:
        warnings.warn(f"{root / CALIBRATION_FILE}: {len(bad)} line(s) skipped ({bad[0]})",
                      CalibrationWarning, stacklevel=2)
    return entries
