"""The static report's charts as inline PNG `<img>` tags (they survive every HTML sanitizer).

The same code draws the export's SVG charts: each chart takes the canvas to draw on
(`raster.Canvas`, the default, or `svg_canvas.SvgCanvas`).

Same data and colours as the live widget's charts (the palette's light theme); drawn on
`raster.Canvas`. Every chart states its basis in its title: ms per real step, or profiled time.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from html import escape
from typing import Protocol

from .. import units
from .palette import CAUSE_COLORS, LANE_COLORS
from .raster import Canvas, text_width
from .step_scale import StepScale, axis_labels, step_scale
from .summary_doc import KernelKindDoc, LaneDoc, StepsDoc, StepStatsDoc, TimelineDoc


class Surface(Protocol):
    """What a chart draws on: `raster.Canvas` (PNG) or `svg_canvas.SvgCanvas` (SVG)."""

    def rect(self, x0: float, y0: float, x1: float, y1: float, color: str,
             alpha: float = 1.0) -> None: ...

    def text(self, x: float, y: float, text: str, color: str = "#222222",
             scale: int = 2) -> float: ...

    def img_tag(self, alt: str) -> str: ...


#: makes the surface of a chart of (width, height) pixels
MakeSurface = Callable[[int, int], Surface]

GRID, AXIS, MUTED = "#e6e6e6", "#444444", "#666666"
#: height (px) of a static timeline lane while all lanes fit TIMELINE_PLOT_H
LANE_H = 20
#: past this plot height (px) lanes get thinner rather than dropped: every rank stays drawn
TIMELINE_PLOT_H = 240
#: thinnest lane: its 10-px label still clears the next one (32 lanes: a 416-px plot)
MIN_LANE_H = 13


def ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round tick values covering [lo, hi]."""
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = (lo // step) * step
    return [start + i * step for i in range(n + 3) if lo <= start + i * step <= hi]


def _tick_label(t: float) -> str:
    return f"{t:g}"


def _axis(c: Surface, lo: float, hi: float, left: int, right: int, top: int, bottom: int,
          unit: str) -> None:
    """Vertical grid lines with their values under the plot, and the unit at the right."""
    for t in ticks(lo, hi):
        x = left + (t - lo) / (hi - lo) * (right - left)
        c.rect(x, top, x + 1, bottom, GRID)
        label = _tick_label(t)
        c.text(x - text_width(label) / 2, bottom + 4, label, AXIS)
    c.text(right - text_width(unit), bottom + 16, unit, MUTED)


#: clipped steps whose times are written beside a series (the rest counted)
MAX_CLIPPED_LABELS = 3


def _clipped_note(values: list[float]) -> str:
    """The times of the steps drawn clipped at a series' end, slowest first, written whole."""
    slow = sorted(values, reverse=True)
    more = len(slow) - MAX_CLIPPED_LABELS
    text = ", ".join(units.ms(v) for v in slow[:MAX_CLIPPED_LABELS])
    return f"> {text}{f' +{more} more' if more > 0 else ''}"


def step_chart_png(steps: StepsDoc, width: int = 720, canvas: MakeSurface = Canvas) -> str:
    """Each step's time (ms) as a dot, with the quartile box and median, per series.

    Each series on its own scale, decided as the widget's step chart decides it
    (`step_scale`): a far outlier is drawn clipped at the right end with its time written
    whole, a spread far smaller than the step is drawn small, and the lowest label is left out
    where it would overprint the highest.
    """
    series: tuple[tuple[str, list[float], str, StepStatsDoc | None], ...] = (
        ("warm-up", steps["warmup_ms"], "#8c8c8c", None),
        ("baseline", steps["baseline_ms"], "#1f5f8b", steps["baseline"]),
        ("profiled", steps["profiled_ms"], "#b8460b", steps["profiled"]))
    rows = [(name, [float(v) for v in vals if math.isfinite(v)], color, stats)
            for name, vals, color, stats in series]
    rows = [r for r in rows if r[1]]
    if not rows:
        return ""
    left, right, row_h = 150, width - 16, 56
    height = 8 + row_h * len(rows) + 18
    c = canvas(width, height)
    for i, (name, vals, color, stats) in enumerate(rows):
        scale = step_scale(vals)
        top = 8 + row_h * i
        y = top + 24

        def x(v: float, scale: StepScale = scale) -> float:
            return left + scale.frac(v) * (right - left)

        clipped = [v for v in vals if scale.clipped(v)]
        c.rect(left, y + 14, right, y + 15, GRID)
        title = f"{name} n={len(vals)}" + (f", {len(clipped)} above" if clipped else "")
        c.text(6, y - 5, title, color)
        q1, med, q3 = (stats["q1_ms"], stats["median_ms"], stats["q3_ms"]) if stats \
            else (None, None, None)
        if q1 is not None and med is not None and q3 is not None and len(vals) >= 2:
            # the summary's statistics, not computed again here
            c.rect(x(q1), y - 10, max(x(q3), x(q1) + 1), y + 10, color, alpha=0.18)
            if not scale.clipped(med):
                c.rect(x(med) - 1, y - 13, x(med) + 2, y + 13, color)
        for k, val in enumerate(vals):
            jitter = ((k * 7919) % 13 - 6) * 0.9
            if scale.clipped(val):  # on the broken right edge, a larger marker
                c.rect(right - 3, y + jitter - 3, right + 3, y + jitter + 3, color)
            else:
                c.rect(x(val) - 2, y + jitter - 2, x(val) + 2, y + jitter + 2, color, alpha=0.8)
        if clipped:  # the scale's broken end; their times written whole above the dots
            for dy in range(-12, 13, 6):
                c.rect(right, y + dy, right + 1, y + dy + 3, AXIS)
            note = _clipped_note(clipped)
            c.text(max(left, right - text_width(note)), top + 1, note, AXIS)
        labels = axis_labels(scale, vals, right - left,
                             lambda a, b: (text_width(a) + text_width(b)) / 2 + 8)
        for value, text in labels:
            at = min(max(x(value) - text_width(text) / 2, left), right - text_width(text))
            c.rect(x(value), y + 12, x(value) + 1, y + 17, AXIS)
            c.text(at, y + 19, text, AXIS)
    unit = "ms per step, each series on its own scale"
    c.text(right - text_width(unit), height - 14, unit, MUTED)
    return c.img_tag("step time per step (ms): warm-up, unprofiled baseline, profiled steps, "
                     "each on its own scale, far outliers clipped and their times written")


def kinds_png(kinds: list[KernelKindDoc], width: int = 720,
              canvas: MakeSurface = Canvas) -> str:
    """GPU time by kernel kind, ms per real step (Tensor-Core use split out)."""
    rows = [(f"{k['kind']}{' (tc)' if k['tensor_core'] else ''}", float(k["ms_per_step"]))
            for k in kinds[:12]]
    if not rows:
        return ""
    top = max(v for _, v in rows) or 1.0
    left, bar_h = 170, 20
    c = canvas(width, bar_h * len(rows) + 10)
    for i, (label, v) in enumerate(rows):
        y = 5 + i * bar_h
        w = (width - left - 110) * v / top
        c.text(6, y + 5, label, AXIS)
        c.rect(left, y + 2, left + max(w, 1), y + bar_h - 3, "#5b4596")
        c.text(left + w + 6, y + 5, f"{v:.3g} ms", AXIS)
    return c.img_tag("GPU time by kernel kind, ms per real step")


def _lane_height(n_lanes: int) -> int:
    """Pixels per lane: LANE_H, thinner once the lanes would pass TIMELINE_PLOT_H."""
    return max(MIN_LANE_H, min(LANE_H, TIMELINE_PLOT_H // max(n_lanes, 1)))


def _rank_of(lane: LaneDoc) -> str | None:
    """The rank prefix of a multi-rank lane id ('rank3:gpu:3:7' -> 'rank3'), else None."""
    head = lane["id"].split(":", 1)[0]
    return head if head.startswith("rank") else None


def timeline_png(tl: TimelineDoc | None, width: int = 900,
                 canvas: MakeSurface = Canvas) -> str:
    """Overview of the profiled window: lanes, idle gaps shaded by cause, step boundaries.

    Every lane is drawn (a multi-rank run's lane groups, one per rank, ruled apart): many
    lanes make each thinner and the image taller, never fewer ranks.
    """
    if not tl or not tl["lanes"] or not tl["dur_us"]:
        return ""
    lanes = tl["lanes"]
    left, top = 222, 8
    lane_h = _lane_height(len(lanes))
    inset = max(1, lane_h // 6)
    plot_w = width - left - 10
    bottom = top + lane_h * len(lanes)
    c = canvas(width, bottom + 52)
    scale = plot_w / float(tl["dur_us"])
    gaps = tl["gaps"]
    for s, d, cause in zip(gaps["start"], gaps["dur"], gaps["cause"], strict=False):
        c.rect(left + s * scale, top, left + (s + d) * scale, bottom,
               CAUSE_COLORS.get(cause, "#999999"), alpha=0.22)
    for st in tl["steps"]:
        c.rect(left + st["start"] * scale, top, left + st["start"] * scale + 1, bottom, MUTED)
    for i, lane in enumerate(lanes):
        y = top + i * lane_h
        if i and _rank_of(lane) != _rank_of(lanes[i - 1]):  # a new rank's group starts
            c.rect(6, y, left + plot_w, y + 1, MUTED)
        c.text(6, y + (lane_h - 10) // 2, str(lane["label"])[:26], AXIS)
        color = LANE_COLORS.get(lane["kind"], "#555555")
        for s, d in zip(lane["start"], lane["dur"], strict=False):
            c.rect(left + s * scale, y + inset, left + (s + d) * scale, y + lane_h - inset, color)
    _axis(c, 0.0, tl["dur_us"] / 1e3, left, left + plot_w, top, bottom, "ms of profiled time")
    x = float(left)
    for cause, color in CAUSE_COLORS.items():  # the legend of the shaded idle gaps
        c.rect(x, bottom + 34, x + 10, bottom + 44, color)
        x = c.text(x + 14, bottom + 36, cause, AXIS) + 12
    scale_note = tl["profiled_scale"]
    note = f"profiled time ({scale_note:.2f}× the real step)" if scale_note else "profiled time"
    return c.img_tag(escape(f"timeline of the profiled steps, {note}; idle gaps by cause"))
