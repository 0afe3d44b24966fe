"""`jupyter gpuprof export RUN --html OUT`: one self-contained HTML report to share.

Everything is inlined (plotly.js from the installed plotly package, figures, styles), so the
file opens offline and from a mail attachment; no CDN is referenced. The static report (inline
SVG) sits above the interactive plotly figures, so it still reads with scripts blocked.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

from .fallback import static_report
from .figures import Figure, report_figures
from .summary_doc import SummaryDoc

PAGE_CSS = "body{margin:16px auto;max-width:1120px;padding:0 12px}.gpuprof-fig{margin:12px 0}"


def plotly_js() -> str:
    """The plotly.js bundle shipped inside the plotly Python package (no network)."""
    import plotly

    return (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_text("utf-8")


def _json_for_script(obj: dict[str, Figure]) -> str:
    """JSON safe inside <script>: no '</' can close the tag, no '<!--' opens a comment."""
    return (json.dumps(obj).replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("&", "\\u0026"))


def export_html(summary: SummaryDoc, title: str | None = None) -> str:
    """The whole HTML document of a report summary."""
    src = summary["source"]
    title = title or f"GPU profile — {src['name'] or src['path'] or 'run'}"
    figs = {k: v for k, v in report_figures(summary).items() if v["data"]}
    divs = "".join(f"<div class='gpuprof-fig' id='gpuprof-fig-{k}'></div>" for k in figs)
    script = ("const figs = JSON.parse(document.getElementById('gpuprof-figs').textContent);"
              "for (const [k, f] of Object.entries(figs)) Plotly.newPlot('gpuprof-fig-' + k,"
              " f.data, f.layout, {responsive: true, displaylogo: false});")
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'>"
            f"<title>{escape(title)}</title><style>{PAGE_CSS}</style></head><body>"
            f"{static_report(summary, notice=False)}<h3>Interactive charts</h3>{divs}"
            f"<script type='application/json' id='gpuprof-figs'>{_json_for_script(figs)}</script>"
            f"<script>{plotly_js()}</script><script>{script}</script></body></html>")


def write_export(summary: SummaryDoc, out: str | Path) -> Path:
    """Write the HTML document of a summary to `out` (the caller analyses; views only draw)."""
    out = Path(out)
    out.write_text(export_html(summary), encoding="utf-8")
    return out
