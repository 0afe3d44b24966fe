"""Bytes a report adds to a notebook, and what each part weighs, for a small and a big trace.

Usage: python benchmarks/bench_report_views.py TRACE_OR_RUN [...] (prints one JSON line each).
Executes a one-cell notebook that displays the report (as `%%gpuprofile` does), so the count
includes the widget state (summary + ESM + CSS) and the text/html + text/plain fallbacks.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


def measure(path: str) -> dict:
    """Sizes (bytes) and times (s) of one report."""
    from jupyter_gpuprof.report import analyze_path
    from jupyter_gpuprof.views.export import export_html
    from jupyter_gpuprof.views.widget import ReportWidget

    t0 = time.perf_counter()
    summary = analyze_path(path).to_json()
    analyse_s = time.perf_counter() - t0
    data, _ = ReportWidget(summary)._repr_mimebundle_()
    src = f"from jupyter_gpuprof.report import analyze_path\nanalyze_path({str(path)!r})"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src)])
    empty = len(nbformat.writes(nb))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=600, kernel_name="python3").execute()
    return {
        "trace": str(path), "trace_bytes": Path(path).stat().st_size if Path(path).is_file()
        else sum(p.stat().st_size for p in Path(path).iterdir()),
        "analyse_s": round(analyse_s, 2), "execute_cell_s": round(time.perf_counter() - t0, 2),
        "summary_bytes": len(json.dumps(summary)),
        "timeline_bytes": len(json.dumps(summary.get("timeline"))),
        "timeline_rects": (summary.get("timeline") or {}).get("n_rects"),
        "timeline_events": (summary.get("timeline") or {}).get("n_events"),
        "fallback_html_bytes": len(data["text/html"]), "text_plain_bytes": len(data["text/plain"]),
        "notebook_bytes_added": len(nbformat.writes(nb)) - empty,
        "export_html_bytes": len(export_html(summary)),
    }


if __name__ == "__main__":
    for p in sys.argv[1:]:
        print(json.dumps(measure(p)), flush=True)
