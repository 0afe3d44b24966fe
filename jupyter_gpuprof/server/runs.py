"""Run summaries for the sidebar: one small JSON-ready dict per run folder.

NOTE: ``jupyter_gpuprof.store`` (RunStore) did not exist when this was written, so the two
files the sidebar needs (``meta.json``, ``summary.json``, format in docs/architecture.md) are
read here directly. Swap ``_read_json`` for the store's reader once it lands.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypedDict

BROKEN = "broken"


class RunListing(TypedDict):
    """One row of ``GET /jupyter-gpuprof/runs``."""

    id: str
    name: str
    created: str | None
    status: str
    verdict: str | None
    error: str | None


def _read_json(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict):
        raise ValueError(f"{path.name} holds {type(data).__name__}, not an object")
    return data


def _verdict(summary: dict[str, Any]) -> str | None:
    """The one-line verdict of a ``summary.json``, whatever shape the report gave it."""
    verdict = summary.get("verdict")
    if isinstance(verdict, dict):
        for key in ("headline", "label", "title", "kind", "id"):
            if isinstance(verdict.get(key), str):
                return str(verdict[key])
        return None
    return verdict if isinstance(verdict, str) else None


def describe_run(folder: Path) -> RunListing:
    """Summarise one run folder; a folder that cannot be read is reported as ``broken``."""
    try:
        meta = _read_json(folder / "meta.json")
    except (OSError, ValueError) as exc:
        return RunListing(
            id=folder.name,
            name=folder.name,
            created=None,
            status=BROKEN,
            verdict=None,
            error=f"meta.json: {exc}".splitlines()[0],
        )
    verdict: str | None = None
    error = meta.get("error") if isinstance(meta.get("error"), str) else None
    summary_path = folder / "summary.json"
    if summary_path.exists():
        try:
            verdict = _verdict(_read_json(summary_path))
        except (OSError, ValueError) as exc:
            error = error or f"summary.json: {exc}".splitlines()[0]
    created = meta.get("created")
    return RunListing(
        id=folder.name,
        name=str(meta.get("name") or folder.name),
        created=created if isinstance(created, str) else None,
        status=str(meta.get("status") or "unknown"),
        verdict=verdict,
        error=error,
    )


def list_runs(root: Path) -> list[RunListing]:
    """All runs under ``root``, newest first; a missing root is simply empty."""
    if not root.is_dir():
        return []
    runs = [describe_run(p) for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")]
    # Folder names start with a timestamp, so they order runs even when meta.json is broken.
    return sorted(runs, key=lambda r: r["id"], reverse=True)
