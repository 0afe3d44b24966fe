"""`jupyter gpuprof export RUN --html OUT`: one self-contained HTML report to share.

A page of tens of kB that opens offline and from a mail attachment: the report's panels as tabs
that work without scripts (radio buttons and CSS), its charts as vector SVG drawn by the same
chart code as the notebook's PNG copies (`png_charts` on an `SvgCanvas`), text in a sans-serif
font. No script, no CDN, no plotly.js (4.6 MB of the old 5.3 MB page).
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from .fallback import transfers_html
from .html import CSS as REPORT_CSS
from .html import head_html, kernels_html, next_html, ops_html, ranks_html
from .memory_html import memory_html
from .png_charts import kinds_png, step_chart_png, timeline_png
from .summary_doc import SummaryDoc
from .svg_canvas import SvgCanvas

#: the page around the report: a sans-serif font everywhere (the browser's default is serif),
#: the CSS-only tabs (each radio input shows the panel of the same name) and the reader's dark
#: colour scheme (the charts keep their light card, the palette they are drawn in); it follows
#: the report's own stylesheet, so that its dark rules win
PAGE_CSS = """
body{margin:16px auto;max-width:1120px;padding:0 12px;
 font-family:system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif;
 color:#1f1f1f;background:#fff}
h1{font-size:20px;margin:.3em 0}
.gpuprof-tabs{display:flex;flex-wrap:wrap;margin-top:12px}
.gpuprof-tabs>input{position:absolute;opacity:0;width:1px;height:1px}
.gpuprof-tabs>label{order:0;padding:6px 12px;border:1px solid #ccc;border-bottom:none;
 margin-right:2px;cursor:pointer;background:#f3f3f3;border-radius:4px 4px 0 0}
.gpuprof-tabs>input:checked+label{background:#fff;font-weight:600;position:relative;top:1px}
.gpuprof-tabs>input:focus-visible+label{outline:2px solid #1f5f8b;outline-offset:1px}
.gpuprof-tabs>section{order:1;width:100%;display:none;border-top:1px solid #ccc;padding:8px 0}
.gpuprof-svg{max-width:100%;height:auto;display:block;margin:6px 0}
@media print{.gpuprof-tabs>section{display:block}.gpuprof-tabs>label{display:none}}
@media (prefers-color-scheme:dark){body{color:#e6e6e6;background:#1b1b1b}
 .gpuprof-tabs>label{background:#2a2a2a;border-color:#555}
 .gpuprof-tabs>input:checked+label{background:#1b1b1b}
 .gpuprof-tabs>input:focus-visible+label{outline-color:#7fb8e0}
 .gpuprof-tabs>section{border-color:#555}
 .gpuprof-report pre{background:#2a2a2a}.gpuprof-report td,.gpuprof-report th{border-color:#444}
 .gpuprof-banner{background:#40381a;border-color:#8a7430}
 .gpuprof-verdict{background:#3a2323}}
"""


def _panels(s: SummaryDoc) -> list[tuple[str, str, str]]:
    """(id, tab label, body) of each panel, in the widget's tab order; empty ones left out."""
    st, tl = s["steps"], s["timeline"]
    scale = tl["profiled_scale"] if tl else None
    basis = f"profiled time, ×{scale:.2f} of real" if scale else "profiled time"
    step = step_chart_png(st, canvas=SvgCanvas)
    timeline = timeline_png(tl, canvas=SvgCanvas)
    kinds = kinds_png(s["kernel_kinds"], canvas=SvgCanvas)
    panels = [
        ("next", "Next steps", next_html(s) or "<p>No findings worth acting on.</p>"),
        ("steps", "Step time",
         f"<h4>Step time distribution (ms per step)</h4>{step}" if step else ""),
        ("timeline", "GPU timeline",
         (f"<h4>Timeline of the profiled steps ({basis})</h4>{timeline}" if timeline else "")
         + memory_html(s["memory"], canvas=SvgCanvas)),
        ("ops", "Operators", ranks_html(s) + ops_html(s, limit=None)),
        ("kernels", "Kernels",
         (f"<h4>GPU time by kernel kind (ms per real step)</h4>{kinds}" if kinds else "")
         + kernels_html(s, limit=None)),
        ("transfers", "Transfers & syncs", transfers_html(s)),
    ]
    return [p for p in panels if p[2]]


def _tabs(panels: list[tuple[str, str, str]]) -> str:
    """The panels as tabs that need no script: the first one shown."""
    out = []
    for i, (pid, label, _) in enumerate(panels):
        checked = " checked" if i == 0 else ""
        out.append(f"<input type='radio' name='gpuprof-tab' id='gpuprof-tab-{pid}'{checked}>"
                   f"<label for='gpuprof-tab-{pid}'>{escape(label)}</label>")
    out += [f"<section id='gpuprof-panel-{pid}' aria-label='{escape(label)}'>{body}</section>"
            for pid, label, body in panels]
    rules = ",".join(f"#gpuprof-tab-{pid}:checked~#gpuprof-panel-{pid}" for pid, _, _ in panels)
    return (f"<style>{rules}{{display:block}}</style>"
            f"<div class='gpuprof-tabs'>{''.join(out)}</div>")


def export_html(summary: SummaryDoc, title: str | None = None) -> str:
    """The whole HTML document of a report summary."""
    src = summary["source"]
    name = src["name"] or src["path"] or "run"
    title = title or f"GPU profile — {name}"
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width,initial-scale=1'>"
            f"<title>{escape(title)}</title><style>{REPORT_CSS}{PAGE_CSS}</style></head><body>"
            f"<main class='gpuprof-report gpuprof-export'><h1>{escape(title)}</h1>"
            f"{head_html(summary, title=False)}{_tabs(_panels(summary))}</main></body></html>")


def write_export(summary: SummaryDoc, out: str | Path) -> Path:
    """Write the HTML document of a summary to `out` (the caller analyses; views only draw)."""
    out = Path(out)
    out.write_text(export_html(summary), encoding="utf-8")
    return out
