"""Static HTML report: readable without a kernel (GitHub, nbviewer, nbconvert, exports).

Every name that comes from a trace (ops, kernels, user ranges) is escaped here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from .summary_doc import FindingDoc, SummaryDoc, TryDoc
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
    tries_of,
    try_hint,
    try_line,
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
.gpuprof-report caption{text-align:left}.gpuprof-sr{position:absolute;width:1px;height:1px;
 overflow:hidden;clip-path:inset(50%);white-space:nowrap}
"""


def _f(v: float | None, unit: str = "", digits: int = 2) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}{unit}"


def _table(rows: Sequence[Mapping[str, object]], cols: list[tuple[str, str]],
           caption: str) -> str:
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
    return (f"<table><caption class='gpuprof-sr'>{escape(caption)}</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")


def _where(f: FindingDoc) -> str:
    """The user's line behind a finding, when the capture recorded it."""
    w = f.get("where")
    if not w:
        return ""
    return (f"<br>Your code: <code>{escape(str(w['file']))}:{w['line']}</code> "
            f"<code>{escape(str(w['code']))}</code>")


def head_html(s: SummaryDoc, title: bool = True) -> str:
    """Title, banners and warnings, the step line and the verdict with its what-if lines."""
    src, st, v = s["source"], s["steps"], s["verdict"]
    parts = ([f"<h3>GPU profile — {escape(str(src.get('name') or src.get('path')))}</h3>"]
             if title else [])
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
    return "".join(parts)


def _tries_pre(tries: Sequence[TryDoc], css: str) -> str:
    """Tries as the text report writes them (one line each, then why or the remedy)."""
    lines = [line for t in tries for line in try_line(t)]
    return f"<pre class='{css}'>{escape(chr(10).join(lines).strip(chr(10)))}</pre>"


def next_html(s: SummaryDoc) -> str:
    """The findings in order, each with its fix, what its tries measured (under it), and how to
    try it; then tries no finding owns, the stacked fixes and the one-time costs."""
    tries = s.get("tries") or []
    parts = []
    if s.get("findings"):
        parts.append("<h4>Next steps</h4><ol>")
        for f in s["findings"]:
            mine = tries_of(f, tries)
            parts.append(
                f"<li><b>[{escape(f['category'])}] {escape(f['title'])}</b> — "
                f"{escape(finding_line(f))}"
                f"<br>{escape(f['evidence'])}{_where(f)}"
                f"<pre>{escape(f['fix'])}</pre>"
                + "".join(f"<div>{escape(x)}</div>"
                          for x in (measured_for(f, tries),
                                    record_for(f, s.get("calibration")), try_hint(f)) if x)
                + (_tries_pre(mine, "gpuprof-tries") if mine else "")
                + "</li>")
        parts.append("</ol>")
    owned = {id(t) for f in s.get("findings") or [] for t in tries_of(f, tries)}
    if others := [t for t in tries if id(t) not in owned]:
        parts.append("<h4>Other fixes tried (measured like the baseline)</h4>"
                     + _tries_pre(others, "gpuprof-tries"))
    if tries and (note := try_lines(tries)[-1]).startswith("  Loss not compared"):
        parts.append(f"<p>{escape(note.strip())}</p>")
    if s.get("stack"):
        parts.append(f"<pre>{escape(chr(10).join(stack_lines(s['stack'])).strip())}</pre>")
    parts += [f"<p>{escape(line)}</p>" for line in one_time_lines(s)]
    return "".join(parts)


def ranks_html(s: SummaryDoc) -> str:
    """Each rank of a distributed run, ms per step (empty for one rank)."""
    dist = s["distributed"]
    if not (dist and dist["ranks"]):
        return ""
    return (f"<h4>Ranks ({len(dist['ranks'])}; {int(dist['collectives_matched'] or 0)} "
            "collectives matched), ms per step</h4>" + _table(dist["ranks"], [
                ("rank", "rank"), ("step_ms", "step"), ("compute_ms", "compute"),
                ("comm_ms", "comm"), ("exposed_comm_ms", "exposed comm"),
                ("wait_ms", "waiting"), ("idle_ms", "GPU idle"), ("extra_ms", "extra vs others"),
                ("phase", "slow phase")], "Each rank, ms per step"))


def ops_html(s: SummaryDoc, limit: int | None = 10) -> str:
    """The top operators (all of them with `limit=None`), ms per real step."""
    if not s.get("ops"):
        return ""
    rows = s["ops"] if limit is None else s["ops"][:limit]
    return "<h4>Top operators (ms per real step)</h4>" + _table(rows, [
        ("name", "op"), ("autograd", "autograd node"), ("calls_per_step", "calls/step"),
        ("cuda_self_ms_per_step", "GPU self ms"), ("cpu_self_ms_per_step", "CPU self ms"),
        ("pct_of_gpu", "% of GPU time"), ("gpu_pct_of_step", "% of step")],
        "Top operators, ms per real step")


def kernels_html(s: SummaryDoc, limit: int | None = 10) -> str:
    """The top GPU kernels (all of them with `limit=None`), ms per real step."""
    if not s.get("kernels"):
        return ""
    rows = s["kernels"] if limit is None else s["kernels"][:limit]
    table = s.get("kernel_table")
    held = f"; the report holds {table['label']}" if table else ""
    return (f"<h4>Top kernels (ms per real step{escape(held)})</h4>" + _table(rows, [
        ("short_name", "kernel"), ("kind", "kind"), ("tensor_core", "Tensor Cores"),
        ("calls_per_step", "calls/step"), ("ms_per_step", "ms"),
        ("pct_of_gpu", "% of GPU time"), ("pct_of_step", "% of step")],
        "Top GPU kernels, ms per real step"))


def render_html(s: SummaryDoc) -> str:
    """The report as one self-contained HTML fragment."""
    return (f"<style>{CSS}</style><div class='gpuprof-report'>{head_html(s)}{next_html(s)}"
            f"{ranks_html(s)}{ops_html(s)}{kernels_html(s)}</div>")
