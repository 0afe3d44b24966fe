"""Static HTML and plain-text panels for Nsight Compute results (readable without a kernel).

Per kernel: duration; speed-of-light memory vs compute; a tensor-aware roofline point;
occupancy achieved vs theoretical and its limiter; the warp-stall breakdown; cache hit rates
and DRAM; Tensor-Core pipe use; our verdict and next step; Nsight Compute's own rule
results, attributed to it. Every name from a report is escaped.
"""

from __future__ import annotations

import math
from html import escape
from typing import Any

from ..views.text import short_name
from .session import SessionInfo
from .targets import ReplayTargetJson

CSS = """
.gpuprof-ncu{font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:13px;max-width:1100px}
.gpuprof-ncu .k{border:1px solid #ddd;border-radius:4px;margin:8px 0;padding:6px 10px}
.gpuprof-ncu .k h4{margin:2px 0;font-family:monospace;font-size:13px}
.gpuprof-ncu .v{border-left:4px solid #c0392b;background:#fbeeee;padding:3px 8px;margin:4px 0}
.gpuprof-ncu .grid{display:flex;flex-wrap:wrap;gap:14px}
.gpuprof-ncu .bar{background:#eee;width:160px;height:10px;display:inline-block;
 vertical-align:middle}
.gpuprof-ncu .bar span{display:block;height:10px;background:#2e86c1}
.gpuprof-ncu table{border-collapse:collapse}.gpuprof-ncu td{padding:1px 6px}
.gpuprof-ncu .nsight{color:#555;font-size:12px}.gpuprof-ncu .warn{color:#a04000}
"""
STALL_SHOWN = 5


def _num(v: Any) -> float:
    """A value as float, NaN when it is not a number."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _fmt(v: Any, unit: str = "", digits: int = 1) -> str:
    """A number with its unit for the panel, 'n/a' when missing."""
    x = _num(v)
    return "n/a" if x != x else f"{x:,.{digits}f}{unit}"


def _bar(pct: Any) -> str:
    """A small percentage bar."""
    x = _num(pct)
    w = 0.0 if x != x else max(0.0, min(100.0, x))
    return f"<span class='bar'><span style='width:{w:.0f}%'></span></span> {_fmt(x, ' %')}"


def stalls(row: Any, n: int = STALL_SHOWN) -> list[tuple[str, float]]:
    """Largest warp-stall reasons (cycles per issued instruction), 'selected' excluded."""
    pairs = [
        (k[6:], _num(row[k]))
        for k in row.index
        if k.startswith("stall_") and k != "stall_top" and k != "stall_selected"
    ]
    pairs = [(k, v) for k, v in pairs if v == v and v > 0]
    return sorted(pairs, key=lambda p: -p[1])[:n]


def skipped_targets(info: SessionInfo) -> list[ReplayTargetJson]:
    """Hot ops that replay could not profile, hotter than the last one it did profile."""
    targets = info.get("targets", [])
    done = [int(t["index"]) for t in targets if t.get("profiled")]
    last = max(done) if done else len(targets)
    return [t for t in targets if t.get("skip_reason") and int(t["index"]) < last]


def roofline_svg(row: Any, w: int = 220, h: int = 130) -> str:
    """A log-log roofline with the kernel's point (empty when FLOPs or bytes are unknown)."""
    ai, ach = _num(row.get("intensity")), _num(row.get("achieved_tflops"))
    peak = _num(row.get("peak_tensor_flops")) if _num(row.get("flops_tensor")) > 0 else math.nan
    if peak != peak:
        peak = _num(row.get("peak_fp32_flops"))
    bw = _num(row.get("peak_dram_bps"))
    if not (ai > 0 and ach > 0 and peak > 0 and bw > 0):
        return ""
    peak_t, ridge = peak / 1e12, peak / bw
    lo_x, hi_x = math.log10(min(ai, ridge) / 10), math.log10(max(ai, ridge) * 10)
    lo_y, hi_y = math.log10(min(ach, bw * 10**lo_x / 1e12) / 2), math.log10(peak_t * 2)

    def pt(x: float, y: float) -> tuple[float, float]:
        """Log-log chart coordinates of (intensity, TFLOP/s)."""
        return (
            (math.log10(x) - lo_x) / (hi_x - lo_x) * w,
            h - (math.log10(y) - lo_y) / (hi_y - lo_y) * h,
        )

    x0, y0 = pt(10**lo_x, bw * 10**lo_x / 1e12)
    xr, yr = pt(ridge, peak_t)
    x1, _ = pt(10**hi_x, peak_t)
    px, py = pt(ai, ach)
    return (
        f"<svg width='{w}' height='{h}' role='img' aria-label='roofline'>"
        f"<rect width='{w}' height='{h}' fill='#fafafa' stroke='#ccc'/>"
        f"<polyline points='{x0:.1f},{y0:.1f} {xr:.1f},{yr:.1f} {x1:.1f},{yr:.1f}' fill='none' "
        f"stroke='#555'/><circle cx='{px:.1f}' cy='{py:.1f}' r='4' fill='#c0392b'/>"
        f"<text x='4' y='12' font-size='10'>{peak_t:,.0f} TFLOP/s peak · "
        f"{bw / 1e12:.1f} TB/s</text></svg>"
    )


def _kernel_html(res: Any, row: Any) -> str:
    """One kernel's card: metrics, stalls, roofline, verdict and Nsight's rules."""
    kid = int(row["id"])
    title = escape(short_name(str(row["kernel"]), 110))
    head = f"<h4 title='{escape(str(row['kernel']))}'>#{kid} {title}</h4>"
    if "op" in row.index and row.get("op"):
        match = (
            ""
            if bool(row.get("name_match"))
            else (
                " <span class='warn'>(replayed kernel differs from the recorded "
                f"{escape(short_name(str(row.get('recorded_kernel')), 60))})</span>"
            )
        )
        head += f"<div>replayed from <code>{escape(str(row['op']))}</code>{match}</div>"
    verdict = (
        f"<div class='v'><b>{escape(str(row['verdict']))}</b>: {escape(str(row['why']))}"
        f"<br><b>Try:</b> {escape(str(row['next_step']))}</div>"
    )
    sol = (
        f"<table><tr><td>duration</td><td>{_fmt(row['duration_us'], ' µs', 2)}</td></tr>"
        f"<tr><td>memory SOL</td><td>{_bar(row['mem_pct'])}</td></tr>"
        f"<tr><td>compute SOL</td><td>{_bar(row['sm_pct'])}</td></tr>"
        f"<tr><td>DRAM</td><td>{_bar(row['dram_pct'])} "
        f"({_fmt(row['dram_gbs'], ' GB/s', 0)})</td></tr>"
        f"<tr><td>Tensor pipe</td><td>{_bar(row['tensor_pct'])}</td></tr></table>"
    )
    occ = (
        f"<table><tr><td>occupancy achieved</td><td>{_bar(row['occ_achieved_pct'])}</td></tr>"
        f"<tr><td>theoretical</td><td>{_bar(row['occ_theoretical_pct'])}</td></tr>"
        f"<tr><td>limited by</td><td>{escape(str(row['occ_limiter']) or 'nothing')}</td></tr>"
        f"<tr><td>regs/thread · grid×block</td><td>{_fmt(row['registers_per_thread'], '', 0)} · "
        f"{_fmt(row['grid_size'], '', 0)}×{_fmt(row['block_size'], '', 0)}</td></tr>"
        f"<tr><td>L1 · L2 hit</td><td>{_fmt(row['l1_hit_pct'], ' %')} · "
        f"{_fmt(row['l2_hit_pct'], ' %')}</td></tr></table>"
    )
    st = stalls(row)
    top = max([v for _, v in st] or [1.0])
    stall_html = (
        "<table>"
        + "".join(
            f"<tr><td>{escape(k)}</td><td><span class='bar'>"
            f"<span style='width:{100 * v / top:.0f}%'>"
            f"</span></span> {v:.1f}</td></tr>"
            for k, v in st
        )
        + "</table>"
        if st
        else "no stall data"
    )
    roof = roofline_svg(row)
    roof_txt = (
        (
            f"{_fmt(row.get('achieved_tflops'), ' TFLOP/s', 1)} at "
            f"{_fmt(row.get('intensity'), ' FLOP/B', 1)} = {_fmt(row.get('pct_of_roof'), ' %', 0)}"
            f" of the {escape(str(row.get('roof_bound')))} roof"
            f" (FLOPs from {escape(str(row.get('flops_source')))})"
        )
        if roof
        else ""
    )
    rules = res.rules_for(kid) if len(res.rules) else None
    nsight = ""
    if rules is not None and len(rules):
        items = "".join(
            f"<li><b>{escape(str(r['rule']))}</b> [{escape(str(r['type']))}"
            + (
                f", est. {r['speedup_type']} speedup {r['speedup_pct']:.0f} %"
                if r["speedup_pct"] == r["speedup_pct"]
                else ""
            )
            + f"]: {escape(short_name(str(r['message']), 240))}</li>"
            for _, r in rules.head(6).iterrows()
        )
        nsight = f"<div class='nsight'>Nsight Compute's guided analysis says:<ul>{items}</ul></div>"
    return (
        f"<div class='k'>{head}{verdict}<div class='grid'><div>{sol}</div><div>{occ}</div>"
        f"<div><b>warp stalls</b> (cycles/instr)<br>{stall_html}</div>"
        f"<div>{roof}<br><small>{roof_txt}</small></div></div>{nsight}</div>"
    )


def render_ncu_html(res: Any) -> str:
    """All kernels of one session as a self-contained HTML fragment."""
    info: SessionInfo = res.info or SessionInfo()
    what = escape(str(info.get("mode", "ncu")))
    sub = []
    if info.get("seconds") is not None:
        sub.append(f"{_num(info['seconds']):.1f} s")
    for key in ("set", "clock_control", "ncu_version"):
        if info.get(key):
            sub.append(f"{key.replace('_', ' ')} {escape(str(info[key]))}")
    skipped = skipped_targets(info)
    parts = [
        f"<style>{CSS}</style><div class='gpuprof-ncu'>",
        f"<h3>Nsight Compute — {what} ({len(res.kernels)} kernels; {' · '.join(sub)})</h3>",
    ]
    for t in skipped:
        parts.append(
            f"<div class='warn'>not replayed: {escape(str(t.get('op')))} "
            f"({escape(str(t.get('skip_reason')))})</div>"
        )
    parts += [_kernel_html(res, row) for _, row in res.kernels.iterrows()]
    if res.files.get("report"):
        parts.append(f"<p><small>report: {escape(str(res.files['report']))}</small></p>")
    return "".join(parts) + "</div>"


def render_ncu_text(res: Any) -> str:
    """The same panel as plain text (text/plain outputs, terminals, logs)."""
    info: SessionInfo = res.info or SessionInfo()
    lines = [f"Nsight Compute — {info.get('mode', 'ncu')}: {len(res.kernels)} kernels"]
    for t in skipped_targets(info):
        lines.append(f"  not replayed: {t.get('op')} ({t.get('skip_reason')})")
    for _, r in res.kernels.iterrows():
        lines.append(f"#{int(r['id'])} {short_name(str(r['kernel']), 90)}")
        if "op" in r.index and r.get("op"):
            note = (
                ""
                if bool(r.get("name_match"))
                else " — replayed kernel differs from the recorded one"
            )
            lines.append(f"   from {r['op']}{note}")
        lines.append(
            f"   {_fmt(r['duration_us'], ' µs', 2)} | memory {_fmt(r['mem_pct'], '%')} | "
            f"compute {_fmt(r['sm_pct'], '%')} | DRAM {_fmt(r['dram_pct'], '%')} | "
            f"occupancy {_fmt(r['occ_achieved_pct'], '%')}/{_fmt(r['occ_theoretical_pct'], '%')}"
            f"{' (' + str(r['occ_limiter']) + ')' if r['occ_limiter'] else ''} | "
            f"tensor {_fmt(r['tensor_pct'], '%')}"
        )
        st = ", ".join(f"{k} {v:.1f}" for k, v in stalls(r, 3))
        if st:
            lines.append(f"   stalls (cycles/instr): {st}")
        if _num(r.get("achieved_tflops")) > 0:
            lines.append(
                f"   roofline: {_fmt(r['achieved_tflops'], ' TFLOP/s')} = "
                f"{_fmt(r['pct_of_roof'], '%', 0)} of the {r['roof_bound']} roof "
                f"(FLOPs from {r['flops_source']})"
            )
        lines.append(f"   => {r['verdict']}: {r['why']}")
        lines.append(f"   try: {r['next_step']}")
        if len(res.rules):
            for _, q in res.rules_for(int(r["id"])).head(3).iterrows():
                sp = f" ~{q['speedup_pct']:.0f}%" if q["speedup_pct"] == q["speedup_pct"] else ""
                lines.append(
                    f"   Nsight Compute {q['rule']} [{q['type']}{sp}]: "
                    f"{short_name(str(q['message']), 150)}"
                )
    return "\n".join(lines)
