"""The static report: HTML text + inline SVG charts, for viewers that cannot run the widget.

This is what a saved notebook shows on GitHub, nbviewer or in `nbconvert --to html`, and the
body of `jupyter gpuprof export`. Built from the summary dict only; names are escaped.
"""

from __future__ import annotations

from html import escape
from typing import Any

from .html import render_html
from .svg import kinds_svg, step_chart_svg, timeline_svg

CSS = """
.gpuprof-static{font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:13px}
.gpuprof-static h4{margin:.8em 0 .2em}.gpuprof-static .gpuprof-svg{max-width:100%;height:auto}
.gpuprof-static table{border-collapse:collapse}.gpuprof-static td,.gpuprof-static th{
 border-bottom:1px solid #ddd;padding:2px 8px;text-align:right}
"""


def _transfers_html(s: dict[str, Any]) -> str:
    rows = s.get("transfers") or []
    syncs = s.get("syncs") or {}
    out = ["<h4>Transfers &amp; syncs</h4>"]
    if rows:
        out.append("<table><tr><th>direction</th><th>memory</th><th>copies</th><th>MB</th>"
                   "<th>GB/s</th><th>blocking</th></tr>")
        for t in rows:
            out.append(f"<tr><td>{escape(str(t['kind']))}</td>"
                       f"<td>{'pageable' if t['pageable'] else 'pinned'}</td>"
                       f"<td>{t['count']}</td><td>{t['bytes'] / 1e6:,.2f}</td>"
                       f"<td>{(t.get('gbps') or 0):,.1f}</td><td>{t['blocking']}</td></tr>")
        out.append("</table>")
    else:
        out.append("<p>No host↔device copies recorded.</p>")
    out.append(f"<p>{syncs.get('count', 0)} sync calls ({(syncs.get('per_step') or 0):.1f} per "
               "step)" + (": " + ", ".join(
                   f"{escape(str(t['caller']))} ×{t['calls']} "
                   f"({(t['gpu_idle_after_us'] or 0) / 1e3:.2f} ms GPU idle after)"
                   for t in syncs.get("top") or []) if syncs.get("top") else "") + "</p>")
    return "".join(out)


def static_report(s: dict[str, Any]) -> str:
    """The full static report fragment: numbers, verdict, findings, charts."""
    charts = []
    inp = s.get("input") or {}
    if (inp.get("host_share_pct") or 0) >= 1:
        charts.append(f"<p>Data pipeline: {inp['host_share_pct']:.0f}% of the host timeline "
                      f"({(inp.get('ms_per_step') or 0):.1f} ms per profiled step).</p>")
    if step := step_chart_svg(s.get("steps") or {}):
        charts.append(f"<h4>Step time distribution</h4>{step}")
    if tl := timeline_svg(s.get("timeline")):
        charts.append(f"<h4>GPU timeline (profiled steps)</h4>{tl}")
    if kinds := kinds_svg(s.get("kernel_kinds") or []):
        charts.append(f"<h4>GPU time by kernel kind</h4>{kinds}")
    return (f"<style>{CSS}</style><div class='gpuprof-static'>{render_html(s)}"
            f"{''.join(charts)}{_transfers_html(s)}</div>")
