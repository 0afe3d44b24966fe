"""Inline SVG charts for the static report: every viewer (GitHub, nbviewer, HTML) draws them.

Pure functions of the summary dict. Plotly's static export needs a headless browser, so the
fallback charts are drawn here as small SVG strings; every trace-derived name is escaped.
"""

from __future__ import annotations

import math
from html import escape
from typing import Any

import numpy as np

from .. import units
from ..stats import describe_steps
from .palette import CAUSE_COLORS, LANE_COLORS

#: columns the static timeline is re-binned to (one rectangle per column per lane at most)
STATIC_COLUMNS = 600
FONT = "font-family='sans-serif' font-size='11'"


def ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round tick values covering [lo, hi]."""
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = (lo // step) * step
    return [start + i * step for i in range(n + 3) if lo <= start + i * step <= hi]


def _box(values: list[float], y: float, x: Any, color: str, label: str) -> list[str]:
    """One strip + box row: points, quartile box, median line, p95 tick."""
    v = np.asarray(values, dtype=float)
    st = describe_steps(values)  # the report's own figures, so the tick matches its text
    q1, med, q3, p95 = st["q1_ms"], st["median_ms"], st["q3_ms"], st["p95_ms"]
    out_mask = np.zeros(len(v), dtype=bool)
    out_mask[st["outliers"]] = True
    inside = v[~out_mask] if (~out_mask).any() else v
    parts = [f"<text x='4' y='{y + 4:.1f}' {FONT}>{escape(label)} (n={len(v)})</text>",
             f"<line x1='{x(inside.min()):.1f}' x2='{x(inside.max()):.1f}' y1='{y:.1f}' "
             f"y2='{y:.1f}' stroke='{color}'/>",
             f"<rect x='{x(q1):.1f}' y='{y - 9:.1f}' width='{max(x(q3) - x(q1), 1):.1f}' "
             f"height='18' fill='{color}' fill-opacity='0.15' stroke='{color}'/>",
             f"<line x1='{x(med):.1f}' x2='{x(med):.1f}' y1='{y - 11:.1f}' y2='{y + 11:.1f}' "
             f"stroke='{color}' stroke-width='2.5'><title>median {units.ms(med)}</title></line>",
             f"<line x1='{x(p95):.1f}' x2='{x(p95):.1f}' y1='{y - 11:.1f}' y2='{y + 11:.1f}' "
             f"stroke='#333' stroke-dasharray='3,2'><title>p95 {units.ms(p95)}</title></line>",
             f"<text x='{x(med):.1f}' y='{y - 14:.1f}' {FONT} text-anchor='middle'>"
             f"median {units.ms(med)}</text>",
             f"<text x='{x(p95):.1f}' y='{y + 24:.1f}' {FONT} text-anchor='middle'>"
             f"p95 {units.ms(p95)}</text>"]
    for i, val in enumerate(v):
        jitter = ((i * 7919) % 13 - 6) * 0.9
        fill = "#c0392b" if out_mask[i] else color
        parts.append(f"<circle cx='{x(val):.1f}' cy='{y + jitter:.1f}' r='2.5' fill='{fill}' "
                     f"fill-opacity='0.7'><title>step {i}: {units.ms(val)}</title></circle>")
        if out_mask[i]:
            parts.append(f"<text x='{x(val) + 4:.1f}' y='{y + jitter - 4:.1f}' {FONT} "
                         f"fill='#c0392b'>#{i}</text>")
    return parts


def _points(values: list[float], y: float, x: Any, right: float, color: str,
            label: str) -> list[str]:
    """Greyed points only (warm-up steps are excluded from the statistics), clipped at the axis."""
    beyond = sum(1 for v in values if x(v) > right)
    parts = [f"<text x='4' y='{y + 4:.1f}' {FONT} fill='#888'>{escape(label)} (n={len(values)})"
             f"</text>"]
    for i, v in enumerate(values):
        parts.append(f"<circle cx='{min(x(v), right):.1f}' cy='{y:.1f}' r='2.5' fill='{color}'>"
                     f"<title>warm-up step {i}: {units.ms(v)}</title></circle>")
    if beyond:
        parts.append(f"<text x='{right:.1f}' y='{y - 6:.1f}' {FONT} fill='#888' "
                     f"text-anchor='end'>{beyond} slower →</text>")
    return parts


def step_chart_svg(steps: dict[str, Any], width: int = 640) -> str:
    """Strip + box of baseline step times beside the profiled steps (profiler overhead)."""
    rows = [(name, steps.get(key) or [], color)
            for name, key, color in (("warm-up", "warmup_ms", "#bbbbbb"),
                                     ("baseline", "baseline_ms", "#2c7fb8"),
                                     ("profiled", "profiled_ms", "#e6550d"))]
    rows = [r for r in rows if r[1]]
    if not rows:
        return ""
    # the axis fits the measured steps; slower warm-up steps (compilation) sit at its right edge
    every = [v for name, vals, _ in rows if name != "warm-up" for v in vals] or rows[0][1]
    lo, hi = min(every), max(every)
    pad = (hi - lo) * 0.08 or max(hi * 0.05, 0.01)
    lo, hi = max(0.0, lo - pad), hi + pad
    left, right = 130, width - 20
    height = 60 * len(rows) + 40

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * (right - left)

    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' class='gpuprof-svg' width='{width}' "
             f"height='{height}' viewBox='0 0 {width} {height}' role='img' "
             f"aria-label='step time distribution'>"]
    for t in ticks(lo, hi):
        parts.append(f"<line x1='{x(t):.1f}' x2='{x(t):.1f}' y1='10' y2='{height - 22}' "
                     f"stroke='#eee'/><text x='{x(t):.1f}' y='{height - 8}' {FONT} "
                     f"text-anchor='middle'>{t:g}</text>")
    parts.append(f"<text x='{right}' y='{height - 8}' {FONT} text-anchor='end'>ms</text>")
    for i, (name, vals, color) in enumerate(rows):
        if name == "warm-up":
            parts += _points(vals, 38 + 60 * i, x, right, color, name)
        else:
            parts += _box(vals, 38 + 60 * i, x, color, name)
    parts.append("</svg>")
    return "".join(parts)


def _rebin(start: list[float], dur: list[float], scale: float) -> list[tuple[float, float]]:
    """Merge rectangles that fall in the same pixel column (the static chart needs no more)."""
    out: list[tuple[float, float]] = []
    for s, d in zip(start, dur, strict=False):
        x0, x1 = s * scale, (s + d) * scale
        if out and int(x0) <= int(out[-1][1]):
            out[-1] = (out[-1][0], max(out[-1][1], x1))
        else:
            out.append((x0, x1))
    return out


def timeline_svg(tl: dict[str, Any] | None, width: int = 900) -> str:
    """Overview of the timeline: CPU lanes above GPU lanes, idle gaps shaded by cause."""
    if not tl or not tl.get("lanes") or not tl.get("dur_us"):
        return ""
    left, lane_h = 170, 18
    plot_w = width - left - 10
    lanes = tl["lanes"]
    height = 24 + lane_h * len(lanes) + 34
    scale = plot_w / tl["dur_us"]
    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' class='gpuprof-svg' width='{width}' "
             f"height='{height}' viewBox='0 0 {width} {height}' role='img' "
             f"aria-label='timeline'>"]
    gaps = tl.get("gaps") or {}
    for s, d, c in zip(gaps.get("start", []), gaps.get("dur", []), gaps.get("cause", []),
                       strict=False):
        if d * scale < 0.5:
            continue
        parts.append(f"<rect x='{left + s * scale:.1f}' y='20' width='{d * scale:.1f}' "
                     f"height='{lane_h * len(lanes)}' fill='{CAUSE_COLORS.get(c, '#999')}' "
                     f"fill-opacity='0.18'><title>idle {d / 1e3:.3g} ms: {escape(c)}</title>"
                     f"</rect>")
    for i, lane in enumerate(lanes):
        y = 20 + i * lane_h
        color = LANE_COLORS.get(lane["kind"], "#555")
        parts.append(f"<text x='4' y='{y + 13}' {FONT}>{escape(lane['label'])}</text>")
        for x0, x1 in _rebin(lane["start"], lane["dur"], scale):
            parts.append(f"<rect x='{left + x0:.1f}' y='{y + 3}' width='{max(x1 - x0, 0.6):.1f}'"
                         f" height='{lane_h - 6}' fill='{color}'/>")
    for t in ticks(0, tl["dur_us"] / 1e3):
        xx = left + t * 1e3 * scale
        parts.append(f"<text x='{xx:.1f}' y='{height - 18}' {FONT} text-anchor='middle'>"
                     f"{t:g}</text>")
    legend = " ".join(f"<tspan fill='{c}'>■ {k}</tspan>" for k, c in CAUSE_COLORS.items())
    parts.append(f"<text x='{left}' y='{height - 4}' {FONT}>ms · idle gaps: {legend}</text>")
    parts.append(f"<text x='{left}' y='13' {FONT} fill='#666'>{tl.get('n_events', 0):,} events "
                 f"drawn as {tl.get('n_rects', 0):,} rectangles</text></svg>")
    return "".join(parts)


def bars_svg(rows: list[tuple[str, float, str]], unit: str, width: int = 520) -> str:
    """Horizontal bars (label, value, hover text): kernel kinds, transfers."""
    if not rows:
        return ""
    top = max(v for _, v, _ in rows) or 1.0
    left, bar_h = 170, 18
    height = bar_h * len(rows) + 8
    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' class='gpuprof-svg' width='{width}' "
             f"height='{height}' viewBox='0 0 {width} {height}' role='img'>"]
    for i, (label, v, hover) in enumerate(rows):
        y = 4 + i * bar_h
        w = (width - left - 90) * v / top
        parts.append(f"<text x='4' y='{y + 13}' {FONT}>{escape(label)}</text>"
                     f"<rect x='{left}' y='{y + 2}' width='{max(w, 1):.1f}' height='{bar_h - 5}' "
                     f"fill='#6a51a3'><title>{escape(hover)}</title></rect>"
                     f"<text x='{left + w + 4:.1f}' y='{y + 13}' {FONT}>{v:,.3g} {unit}</text>")
    parts.append("</svg>")
    return "".join(parts)


def kinds_svg(kinds: list[dict[str, Any]]) -> str:
    """GPU time by kernel kind (Tensor-Core use split out)."""
    rows = [(f"{k['kind']}{' (TC)' if k.get('tensor_core') else ''}", (k["total_us"] or 0) / 1e3,
             f"{k['calls']} calls") for k in kinds[:12]]
    return bars_svg(rows, "ms")
