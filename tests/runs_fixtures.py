"""Run folders for the run-browser tests: real before/after captures, broken and hostile runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tracebuilder import TraceBuilder

REAL = Path(__file__).parent / "data" / "real"
EXPECTED_SUMMARY = Path(__file__).parent / "data" / "expected" / "compute.summary.json"
BEFORE = "20261129-200000-tinygpt_before"
AFTER = "20261129-200500-tinygpt_after"
RUNNING = "20261129-201000-running"
CORRUPT = "20261129-201500-corrupt"
XSS = "20261129-202000-xss"
PAYLOAD = "<img src=x onerror=alert(1)>"


def write_meta(folder: Path, **fields: Any) -> None:
    """A store-style meta.json (schema_version 1) with the given fields."""
    folder.mkdir(parents=True, exist_ok=True)
    meta = {"schema_version": 1, "id": folder.name, "name": folder.name.split("-", 2)[-1],
            "created": f"2026-11-29T{folder.name[9:11]}:{folder.name[11:13]}:00+00:00",
            "status": "complete", "error": None, "env": {"gpu_name": "NVIDIA H200"},
            "code": "model(x).sum().backward()", **fields}
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")


def real_run(root: Path, run_id: str, fixture: str, **fields: Any) -> Path:
    """A run folder holding one of tests/data/real's traces and its baseline step times."""
    folder = root / run_id
    steps = json.loads((REAL / fixture / "meta.json").read_text())["step_ms_all"]
    write_meta(folder, baseline={"step_ms": steps, "timing": "cuda_event"}, **fields)
    shutil.copy(REAL / fixture / "trace.json.gz", folder / "trace.json.gz")
    return folder


def xss_run(root: Path) -> Path:
    """A run whose op, kernel and range names are an HTML/JS payload."""
    folder = root / XSS
    write_meta(folder, name=PAYLOAD, code=f"print('{PAYLOAD}')",
               baseline={"step_ms": [2.0, 2.1, 2.0, 1.9], "timing": "cuda_event"})
    b = TraceBuilder()
    for i in range(3):
        t = i * 2000.0
        b.step(i, t, 1900.0)
        b.annotation(PAYLOAD, t + 10, 100.0)
        ext = b.op(PAYLOAD, t + 100, 500.0)
        b.kernel(PAYLOAD, t + 150, t + 300, 1200.0, ext=ext)
    b.write(folder / "trace.json.gz")
    return folder


def build_runs_root(root: Path) -> Path:
    """before/after (real), a run still being written, a corrupt folder and the payload run."""
    real_run(root, BEFORE, "tinygpt_before", name="tinygpt before", tags=["baseline"])
    real_run(root, AFTER, "tinygpt_after", name="tinygpt after", tags=["fix", "bf16"])
    write_meta(root / RUNNING, status="running", baseline={"step_ms": [], "timing": None})
    (root / CORRUPT).mkdir(parents=True)
    (root / CORRUPT / "meta.json").write_text('{"name": "half-writ', encoding="utf-8")
    xss_run(root)
    return root


def full_summary(**blocks: Any) -> dict[str, Any]:
    """A complete summary.json (a real trace's, decoded by the report model), ``blocks`` replaced.

    Only summaries that decode into the report model are served from the cache; tests that
    plant a cached summary start from this one.
    """
    summary: dict[str, Any] = json.loads(EXPECTED_SUMMARY.read_text())
    for key, block in blocks.items():  # a partial block overrides only the keys it names
        old = summary.get(key)
        summary[key] = {**old, **block} if isinstance(old, dict) and isinstance(block, dict) \
            else block
    return summary
