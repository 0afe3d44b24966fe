"""Static HTML report: readable without a kernel (GitHub, nbviewer, nbconvert, exports).

Every name that comes from a trace (ops, kernels, user ranges) is escaped here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from .summary_doc import FindingDoc, SummaryDoc
from .text import (
    banner,
    finding_line,
    header_facts,
    ms_text,
    profiled_sentence,
    short_name,
    spikes_sentence,
    step_sentence,
    verdict_name,
)
from .whatif_text import (
    measured_for,
    one_time_lines,
    record_for,
    stack_lines,
    try_hint,
    try_lines,
    whatif_header,
)

CSS = """
.gpuprof-report{font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:13px;
 line-height:1.4;max-width:1100px}
.gpuprof-report h3{margin:.2em 0}.gpuprof-report table{border-collapse:collapse;margin:.4em 0}
.gpuprof-report td,.gpuprof-report th{border-bottom:1px solid #ddd;padding:2px 8px;
 text-align:right}
.gpuprof-report td.n,.gpuprof-report th.n{text-align:left;font-family:monospace}
.gpuprof-banner{background:#fff3cd;border:1px solid #e0c060;padding:4px 8px;margin:4px 0}
.gpuprof-verdict{border-left:4px solid #c0392b;padding:4px 10px;background:#fbeeee;margin:6px 0}
.gpuprof-report pre{background:#f6f8fa;padding:6px;overflow-x:auto;text-align:left}
"""


def _f(v: float | None, unit: str = "", digits: int = 2) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}{unit}"


def _table(rows: Sequence[Mapping[str, object]], cols: list[tuple[str, str]]) -> str:
    """Rows of one summary table (any block's rows: read by the keys `cols` names)."""
    head = "".join(f"<th class='{'n' if i == 0 else ''}'>{escape(t)}</th>"
                   for i, (_, t) in enumerate(cols))
    body = []
    for r in rows:
        cells = []
        for i, (key, _) in enumerate(cols):
            val = r.get(key)
            if isinstance(val, float):
                text = f"{val:,.3f}" if abs(val) < 10 else f"{val:,.1f}"
            elif isinstance(val, bool):
                text = "yes" if val else "no"
            else:
                text = short_name(str(val if val is not None else ""), 80)
            cells.append(f"<td class='{'n' if i == 0 else ''}' title='{escape(str(val))}'>"
                         f"{escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _where(f: FindingDoc) -> str:
    """The user's line behind a finding, when the capture recorded it."""
    w = f.get("where")
    if not w:
        return ""
    return (f"<br>Your code: <code>{escape(str(w['file']))}:{w['line']}</code> "
            f"<code>{escape(str(w['code']))}</code>")


def render_html(s: SummaryDoc) -> str:
    """The report as one self-contained HTML fragment."""
    src, st, v = s["source"], s["steps"], s["verdict"]
    parts = [f"<style>{CSS}</style><div class='gpuprof-report'>",
             f"<h3>GPU profile — {escape(str(src.get('name') or src.get('path')))}</h3>"]
    if (b := banner(s)) is not None:
        parts.append(f"<div class='gpuprof-banner'>{escape(b)}</div>")
    parts += [f"<div class='gpuprof-banner'>Trace: {escape(w)}</div>"
              for w in s.get("warnings") or []]
    label = "unprofiled baseline" if st.get("source") == "baseline" else "profiled steps"
    parts.append(
        f"<p><b>Step time</b> ({label}, n={st.get('n')}): median "
        f"<b>{ms_text(st.get('median_ms'))}</b>, p95 <b>{ms_text(st.get('p95_ms'))}</b>, "
        f"IQR {ms_text(st.get('iqr_ms'))}, outliers {len(st.get('outliers') or [])}. "
        f"GPU: {escape(str(src.get('gpu') or 'none'))}.")
    if facts := header_facts(s):
        parts.append(" " + " · ".join(f"<b>{escape(f)}</b>" for f in facts) + ".")
    if profiled := profiled_sentence(st):
        parts.append(f" {escape(profiled)}.")
    if what := step_sentence(st):
        parts.append(f" {escape(what)}")
    if stalls := spikes_sentence(st):
        parts.append(f" <b>{escape(stalls)}</b>")
    if cost := st.get("capture_cost"):
        parts.append(f" {escape(cost['sentence'])}.")
    parts.append("</p>")
    category = escape(verdict_name(v))
    parts.append(
        f"<div class='gpuprof-verdict'><b>Verdict: {category}"
        f"</b> ({escape(str(v.get('confidence')))} confidence)<br>{escape(str(v.get('summary')))}"
        "<ul>" + "".join(f"<li>{escape(r)}</li>" for r in v.get("reasons", [])) + "</ul></div>")
    parts += [f"<p>{escape(line)}</p>" for line in whatif_header(s)]
    if s.get("findings"):
        parts.append("<h4>Next steps</h4><ol>")
        for f in s["findings"]:
            parts.append(
                f"<li><b>[{escape(f['category'])}] {escape(f['title'])}</b> — "
                f"{escape(finding_line(f))}"
                f"<br>{escape(f['evidence'])}{_where(f)}"
                f"<pre>{escape(f['fix'])}</pre>"
                + "".join(f"<div>{escape(x)}</div>"
                          for x in (measured_for(f, s.get("tries")),
                                    record_for(f, s.get("calibration")), try_hint(f)) if x)
                + "</li>")
        parts.append("</ol>")
    if s.get("tries"):
        parts.append(f"<pre>{escape(chr(10).join(try_lines(s['tries'])).strip())}</pre>")
    if s.get("stack"):
        parts.append(f"<pre>{escape(chr(10).join(stack_lines(s['stack'])).strip())}</pre>")
    parts += [f"<p>{escape(line)}</p>" for line in one_time_lines(s)]
    dist = s["distributed"]
    if dist and dist["ranks"]:
        parts.append(
            f"<h4>Ranks ({len(dist['ranks'])}; {int(dist['collectives_matched'] or 0)} "
            "collectives matched), ms per step</h4>" + _table(dist["ranks"], [
                ("rank", "rank"), ("step_ms", "step"), ("compute_ms", "compute"),
                ("comm_ms", "comm"), ("exposed_comm_ms", "exposed comm"),
                ("wait_ms", "waiting"), ("idle_ms", "GPU idle"), ("extra_ms", "extra vs others"),
                ("phase", "slow phase")]))
    if s.get("ops"):
        parts.append("<h4>Top operators (ms per real step)</h4>" + _table(s["ops"][:10], [
            ("name", "op"), ("autograd", "autograd node"), ("calls_per_step", "calls/step"),
            ("cuda_self_ms_per_step", "GPU self ms"), ("cpu_self_ms_per_step", "CPU self ms"),
            ("pct_of_gpu", "% of GPU time"), ("gpu_pct_of_step", "% of step")]))
    if s.get("kernels"):
        table = s.get("kernel_table")
        held = f"; the report holds {table['label']}" if table else ""
        parts.append(f"<h4>Top kernels (ms per real step{escape(held)})</h4>"
                     + _table(s["kernels"][:10], [
                         ("short_name", "kernel"), ("kind", "kind"),
                         ("tensor_core", "Tensor Cores"), ("calls_per_step", "calls/step"),
                         ("ms_per_step", "ms"), ("pct_of_gpu", "% of GPU time"),
                         ("pct_of_step", "% of step")]))
    parts.append("</div>")
    return "".join(parts)
