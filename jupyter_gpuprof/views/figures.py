"""Plotly figure builders: summary dict in, plotly figure dict out (pure, no plotly import).

The exported HTML report and `Report` users draw these with plotly.js; the inline widget draws
its own SVG so a saved notebook does not carry plotly.js. Names go into hover text escaped,
since plotly renders hover text as HTML.
"""

from __future__ import annotations

from html import escape
from typing import TypedDict

import numpy as np

from .. import units
from ..stats import describe_steps
from .palette import CAUSE_COLORS, LANE_COLORS
from .summary_doc import (
    KernelKindDoc,
    LaneDoc,
    StepsDoc,
    SummaryDoc,
    SyncsDoc,
    TimelineDoc,
    TransferDoc,
)

#: one plotly trace, shape, annotation or layout: plotly's own schema (its keys are plotly's
#: and vary by trace type), built here and only ever serialised, never read back
Plotly = dict[str, object]


class Figure(TypedDict):
    """A plotly figure as plotly.js takes it (`Plotly.newPlot(div, data, layout)`)."""

    data: list[Plotly]
    layout: Plotly


_LAYOUT: Plotly = {"template": "plotly_white",
                   "margin": {"l": 60, "r": 20, "t": 40, "b": 40}, "hovermode": "closest"}


def _layout(title: str, **extra: object) -> Plotly:
    return {**_LAYOUT, "title": {"text": escape(title)}, **extra}


def _outliers(v: np.ndarray) -> np.ndarray:
    return np.asarray(describe_steps(v.tolist())["outliers"], dtype=int)


def step_time_figure(steps: StepsDoc) -> Figure:
    """Strip + box per series (warm-up greyed, baseline, profiled): median, p95, outliers."""
    data: list[Plotly] = []
    annotations: list[Plotly] = []
    shapes: list[Plotly] = []
    for name, series, color in (("warm-up (excluded)", steps.get("warmup_ms"), "#bbbbbb"),
                                ("baseline (unprofiled)", steps.get("baseline_ms"), "#2c7fb8"),
                                ("profiled window", steps.get("profiled_ms"), "#e6550d")):
        vals = series or []
        if not vals:
            continue
        v = np.asarray(vals, dtype=float)
        st = describe_steps(vals)
        if st["median_ms"] is None or st["p95_ms"] is None:
            continue  # no finite step time in the series
        med, p95 = st["median_ms"], st["p95_ms"]
        data.append({"type": "box", "x": vals, "name": name, "orientation": "h",
                     "boxpoints": "all", "jitter": 0.4, "pointpos": 0,
                     "marker": {"color": color, "size": 5}, "line": {"color": color},
                     "customdata": list(range(len(vals))),
                     "hovertemplate": "step %{customdata}: %{units.ms(x)}<extra></extra>"})
        for value, label, dash in ((med, "median", "solid"), (p95, "p95", "dash")):
            shapes.append({"type": "line", "xref": "x", "yref": "y", "x0": value, "x1": value,
                           "y0": name, "y1": name, "line": {"color": "#222", "dash": dash}})
            annotations.append({"x": value, "y": name, "xref": "x", "yref": "y",
                                "text": f"{label} {value:.3g} ms", "showarrow": False,
                                "yshift": 22 if label == "median" else -22})
        for i in _outliers(v):
            annotations.append({"x": float(v[i]), "y": name, "text": f"#{int(i)}",
                                "showarrow": True, "arrowhead": 0, "ay": -18,
                                "font": {"color": "#c0392b"}})
    return {"data": data, "layout": _layout("Step time", xaxis={"title": {"text": "ms"}},
                                            height=140 + 110 * len(data),
                                            showlegend=False, shapes=shapes,
                                            annotations=annotations)}


def _hover(tl: TimelineDoc, lane: LaneDoc, i: int) -> str:
    names = tl["names"]
    parts = [escape(names[lane["name"][i]])]
    if lane.get("op") and names[lane["op"][i]]:
        parts.append("op: " + escape(names[lane["op"][i]]))
    if lane.get("shape") and names[lane["shape"][i]] not in ("", "[]"):
        parts.append("shapes: " + escape(names[lane["shape"][i]]))
    n = lane["count"][i]
    parts.append(units.us(lane['dur'][i]) + (f" ({n} events merged)" if n > 1 else ""))
    return "<br>".join(parts)


def timeline_figure(tl: TimelineDoc | None) -> Figure:
    """CPU lanes above GPU stream lanes (bars), idle gaps shaded and labelled by cause."""
    if not tl or not tl.get("lanes"):
        return {"data": [], "layout": _layout("GPU timeline (not available)")}
    lanes = tl["lanes"]
    labels = [escape(lane["label"]) for lane in lanes]
    data: list[Plotly] = []
    for lane, label in zip(lanes, labels, strict=True):
        data.append({"type": "bar", "orientation": "h", "base": [s / 1e3 for s in lane["start"]],
                     "x": [d / 1e3 for d in lane["dur"]], "y": [label] * len(lane["start"]),
                     "name": label, "marker": {"color": LANE_COLORS.get(lane["kind"], "#555")},
                     "hovertext": [_hover(tl, lane, i) for i in range(len(lane["start"]))],
                     "hoverinfo": "text", "showlegend": False})
    gaps = tl["gaps"]
    shapes: list[Plotly] = []
    seen: set[str] = set()
    for s, d, cause in zip(gaps.get("start", []), gaps.get("dur", []), gaps.get("cause", []),
                           strict=False):
        shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": s / 1e3,
                       "x1": (s + d) / 1e3, "y0": 0, "y1": 1, "line": {"width": 0},
                       "fillcolor": CAUSE_COLORS.get(cause, "#999"), "opacity": 0.18,
                       "layer": "below"})
        seen.add(cause)
    for cause in sorted(seen):  # legend entries for the gap colours
        data.append({"type": "scatter", "x": [None], "y": [None], "mode": "markers",
                     "name": f"idle: {cause}", "marker": {"color": CAUSE_COLORS[cause],
                                                          "symbol": "square", "size": 10}})
    scale = tl.get("profiled_scale")
    title = f"Timeline (profiled time, ×{scale:.2f} of real)" if scale else \
        "Timeline (profiled time)"
    return {"data": data, "layout": _layout(
        title, barmode="overlay", shapes=shapes, height=120 + 40 * len(lanes),
        xaxis={"title": {"text": "ms of profiled time"}, "rangeslider": {"visible": False}},
        yaxis={"autorange": "reversed", "categoryorder": "array", "categoryarray": labels},
        dragmode="zoom")}


def transfers_figure(transfers: list[TransferDoc], syncs: SyncsDoc) -> Figure:
    """Bytes and bandwidth per copy direction (pageable vs pinned), then sync callers."""
    data: list[Plotly] = []
    if transfers:
        labels = [f"{t['kind']} {'pageable' if t['pageable'] else 'pinned'}" for t in transfers]
        data.append({"type": "bar", "x": labels, "y": [t["bytes"] / 1e6 for t in transfers],
                     "name": "MB copied", "xaxis": "x", "yaxis": "y",
                     "customdata": [[t["count"], t.get("gbps") or 0, t["blocking"]]
                                    for t in transfers],
                     "hovertemplate": "%{y:.2f} MB in %{customdata[0]} copies, "
                                      "%{customdata[1]:.1f} GB/s, %{customdata[2]} blocking"
                                      "<extra></extra>"})
    top = syncs.get("top") or []
    if top:
        data.append({"type": "bar", "orientation": "h", "xaxis": "x2", "yaxis": "y2",
                     "y": [escape(t["caller"]) for t in top],
                     "x": [t.get("cost_ms_per_step") or 0 for t in top], "name": "sync",
                     "customdata": [t["calls"] for t in top],
                     "hovertemplate": "%{customdata} calls, GPU idle after them %{units.ms(x)} "
                                      "per real step<extra></extra>"})
    return {"data": data, "layout": _layout(
        "Transfers & syncs", showlegend=False,
        grid={"rows": 1, "columns": 2, "pattern": "independent"},
        yaxis={"title": {"text": "MB"}},
        xaxis2={"title": {"text": "GPU idle after them (ms per real step)"}})}


def kernel_kinds_figure(kinds: list[KernelKindDoc]) -> Figure:
    """GPU time by kernel kind, Tensor-Core kernels split out."""
    labels = [f"{k['kind']}{' (Tensor Cores)' if k.get('tensor_core') else ''}" for k in kinds]
    if not kinds:
        return {"data": [], "layout": _layout("GPU time by kernel kind (no GPU activity)")}
    return {"data": [{"type": "bar", "orientation": "h", "y": labels,
                      "x": [k.get("ms_per_step") or 0 for k in kinds],
                      "customdata": [k.get("calls_per_step") or 0 for k in kinds],
                      "hovertemplate": "%{units.ms(x)}, %{customdata:.1f} calls per real step"
                                       "<extra></extra>",
                      "marker": {"color": "#6a51a3"}}],
            "layout": _layout("GPU time by kernel kind (ms per real step)",
                              xaxis={"title": {"text": "ms per real step"}},
                              yaxis={"autorange": "reversed"})}


def report_figures(s: SummaryDoc) -> dict[str, Figure]:
    """Every figure of a report summary, by panel."""
    return {"steps": step_time_figure(s["steps"]),
            "timeline": timeline_figure(s["timeline"]),
            "transfers": transfers_figure(s["transfers"], s["syncs"]),
            "kinds": kernel_kinds_figure(s["kernel_kinds"])}
