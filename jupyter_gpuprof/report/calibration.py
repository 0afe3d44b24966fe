"""The calibration record as the report states it: the findings' fixes on this GPU.

Read when a summary is handed out (`summarize`, and over a cached summary.json in
`build.run_summary`), never frozen into the cache: the record grows with every try in the
runs root, so yesterday's figures would be stale.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from ..advice.calibration import (
    corrected_gain,
    predictions_by_fix,
    summarize_record,
)
from ..store.calibration import read_entries
from ..store.run import RunMeta
from .model_cost import CalibrationRow


def calibration_rows(root: Path, gpu_name: str | None,
                     findings: Sequence[Mapping[str, object]]) -> list[CalibrationRow] | None:
    """The record of each fix the findings name, on `gpu_name`, with this report's prediction
    and its correction; None when the record has no try of them (or there is no record)."""
    predicted = predictions_by_fix(findings)
    if not predicted:
        return None
    try:
        entries = [e for e in read_entries(root) if e["fix"] in predicted]
    except OSError:  # an unreadable record is no record: the report still opens
        return None
    rows = [CalibrationRow(**dataclasses.asdict(r),
                           predicted_gain_pct=predicted[r.fix],
                           corrected_gain_pct=corrected_gain(predicted[r.fix], r))
            for r in summarize_record(entries, gpu_name)]
    return rows or None


def record_table(root: Path) -> list[CalibrationRow]:
    """The whole record: one row per fix and GPU (`jupyter gpuprof calibration`)."""
    return [CalibrationRow(**dataclasses.asdict(r))
            for r in summarize_record(read_entries(root), every_gpu=True)]


def run_calibration(run_path: str | None, meta: RunMeta | None,
                    findings: Sequence[Mapping[str, object]]) -> list[CalibrationRow] | None:
    """`calibration_rows` for a run folder (its runs root is the folder that holds it)."""
    if meta is None or not run_path:
        return None
    return calibration_rows(Path(run_path).parent, meta.env.get("gpu_name"), findings)


def with_calibration(run_path: str, meta: RunMeta, summary: dict[str, Any]) -> dict[str, Any]:
    """A summary (as JSON) with today's record of its fixes in `calibration`."""
    findings = summary.get("findings")
    rows = run_calibration(run_path, meta, findings if isinstance(findings, list) else [])
    return {**summary, "calibration": None if rows is None else msgspec.to_builtins(rows)}
