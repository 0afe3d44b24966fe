"""Time `GET /jupyter-gpuprof/runs` logic over N run folders (cold cache, then warm).

Usage: python benchmarks/bench_run_listing.py [N]   (default 1000)
Each run gets a real summary.json (tests/data/real/tinygpt_before, hard-linked) and a meta.json
with 30 baseline steps, as the magic writes them.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

from jupyter_gpuprof.report import analyze_path
from jupyter_gpuprof.server.runs import list_runs

REAL = Path(__file__).resolve().parent.parent / "tests" / "data" / "real"


def make_runs(root: Path, n: int, summary: dict) -> None:
    """n run folders sharing one summary.json (hard links: same bytes, no disk blow-up)."""
    root.mkdir(parents=True, exist_ok=True)
    shared = root.parent / "summary.json"
    shared.write_text(json.dumps(summary))
    steps = json.loads((REAL / "tinygpt_before" / "meta.json").read_text())["step_ms_all"]
    for i in range(n):
        month, day = (i // 1440) % 12 + 1, (i // 60) % 24 + 1
        run_id = f"2026{month:02d}{day:02d}-{i % 60:02d}{i:04d}-run{i}"
        folder = root / run_id
        folder.mkdir()
        meta = {"schema_version": 1, "id": run_id, "name": f"run {i}", "status": "complete",
                "created": "2026-11-29T20:00:00+00:00", "env": {"gpu_name": "NVIDIA H200"},
                "tags": ["bench"] if i % 2 else [], "code": "x" * 400,
                "baseline": {"step_ms": steps, "timing": "cuda_event"}}
        (folder / "meta.json").write_text(json.dumps(meta))
        os.link(shared, folder / "summary.json")


def timed(root: Path, **query: str) -> tuple[float, dict]:
    t0 = time.perf_counter()
    page = list_runs(root, **query)
    return time.perf_counter() - t0, page


def main(n: int) -> None:
    summary = analyze_path(REAL / "tinygpt_before").to_json()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "runs"
        make_runs(root, n, summary)
        print(f"{n} runs, summary.json {len(json.dumps(summary)) / 1e3:.0f} kB each")
        cold, page = timed(root)
        warm, _ = timed(root)
        search, hits = timed(root, q="run 99", tag="bench")
        print(f"cold (builds listing.json caches): {cold:.3f} s; total {page['total']}")
        print(f"warm (cached rows), first page of {len(page['runs'])}: {warm:.3f} s")
        print(f"warm search q='run 99' tag=bench: {search:.3f} s ({hits['total']} hits)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
