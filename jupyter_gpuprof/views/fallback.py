"""The static report: HTML text + PNG charts, for viewers that cannot run the widget.

This is what an untrusted notebook, GitHub, nbviewer and `nbconvert --to html` show, and the
body of `jupyter gpuprof export`. Charts are inline PNG images: sanitizers (JupyterLab's for
untrusted notebooks, GitHub's) keep `<img src="data:image/png…">` and strip inline SVG. Built
from the summary dict only; names are escaped.
"""

from __future__ import annotations

from html import escape

from .. import units
from .html import render_html
from .memory_html import memory_html
from .png_charts import kinds_png, step_chart_png, timeline_png
from .summary_doc import SummaryDoc

#: first line of the notebook fallback: how to get the interactive report. It must read true
#: wherever the copy shows: an untrusted notebook in JupyterLab, but also nbconvert's HTML,
#: GitHub and nbviewer, where nothing can be trusted or run, so it names where to go instead.
STATIC_NOTICE = ("Static copy of the report. The interactive report opens in JupyterLab or "
                 "Notebook 7 with jupyter_gpuprof installed, once the notebook is trusted; "
                 "`jupyter gpuprof export RUN --html report.html` writes it as one page.")

CSS = """
.gpuprof-static{font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:13px}
.gpuprof-static h4{margin:.8em 0 .2em}.gpuprof-static .gpuprof-png{max-width:100%;height:auto}
.gpuprof-static table{border-collapse:collapse}.gpuprof-static td,.gpuprof-static th{
 border-bottom:1px solid #ddd;padding:2px 8px;text-align:right}
"""


def transfers_html(s: SummaryDoc) -> str:
    """Copies by direction and memory kind, then the sync calls and their callers."""
    rows = s["transfers"]
    syncs = s["syncs"]
    out = ["<h4>Transfers &amp; syncs</h4>"]
    if rows:
        out.append("<table><caption class='gpuprof-sr'>Host↔device copies</caption>"
                   "<tr><th>direction</th><th>memory</th><th>copies/step</th>"
                   "<th>ms/step</th><th>MB (all)</th><th>GB/s</th><th>blocking</th></tr>")
        for t in rows:
            out.append(f"<tr><td>{escape(str(t['kind']))}</td>"
                       f"<td>{'pageable' if t['pageable'] else 'pinned'}</td>"
                       f"<td>{units.count(t.get('count_per_step') or 0)}</td>"
                       f"<td>{(t.get('ms_per_step') or 0):,.3f}</td>"
                       f"<td>{t['bytes'] / 1e6:,.2f}</td>"
                       f"<td>{(t.get('gbps') or 0):,.1f}</td><td>{t['blocking']}</td></tr>")
        out.append("</table>")
    else:
        out.append("<p>No host↔device copies recorded.</p>")
    cost = syncs.get("cost_ms_per_step")
    out.append(f"<p>{units.count(syncs.get('per_step') or 0)} sync calls per step"
               + (f", costing {units.ms(cost)} per real step of GPU idle" if cost else "")
               + (": " + ", ".join(
                   f"{escape(str(t['caller']))} ×{units.count(t.get('calls_per_step'))}/step "
                   f"({units.ms(t.get('cost_ms_per_step') or 0)})"
                   for t in syncs.get("top") or []) if syncs.get("top") else "") + "</p>")
    return "".join(out)


def static_report(s: SummaryDoc, notice: bool = True) -> str:
    """The full static report fragment: numbers, verdict, findings, charts, memory.

    `notice`: start with how to open the interactive report (notebook outputs; not exports).
    """
    charts = []
    inp = s["input"]
    if (inp.get("host_share_pct") or 0) >= 1:
        charts.append(f"<p>Data pipeline: {units.pct(inp['host_share_pct'])} of the host timeline "
                      f"({units.ms(inp.get('ms_per_step') or 0)} per profiled step).</p>")
    if step := step_chart_png(s["steps"]):
        charts.append(f"<h4>Step time distribution (ms per step)</h4><p>{step}</p>")
    if (timeline := s["timeline"]) is not None and (tl := timeline_png(timeline)):
        scale = timeline["profiled_scale"]
        basis = f"profiled time, ×{scale:.2f} of real" if scale else "profiled time"
        charts.append(f"<h4>Timeline of the profiled steps ({basis})</h4><p>{tl}</p>")
    charts.append(memory_html(s["memory"]))
    if kinds := kinds_png(s["kernel_kinds"]):
        charts.append(f"<h4>GPU time by kernel kind (ms per real step)</h4><p>{kinds}</p>")
    head = f"<p><b>{escape(STATIC_NOTICE)}</b></p>" if notice else ""
    return (f"<style>{CSS}</style><div class='gpuprof-static'>{head}{render_html(s)}"
            f"{''.join(charts)}{transfers_html(s)}</div>")
