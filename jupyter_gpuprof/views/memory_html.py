"""The static copy's memory sections: the lane as a chart, the peak explained, the priced fixes,
and the out-of-memory post-mortem, as the widget shows them (`src/report/memory.ts`)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from .. import units
from .memory_doc import MemoryDoc, MemoryFixDoc, MemoryOverStepDoc, OomDoc
from .memory_text import fix_cost, kinds_at_peak, peak_head, peak_label
from .palette import LIGHT_COLORS
from .png_charts import AXIS, MUTED, MakeSurface
from .raster import Canvas, text_width

#: how many lines / module calls the section lists (the widget's TOP_HOLDERS)
TOP_HOLDERS = 3
#: the peak mark's colour and the memory line's
PEAK_COLOR, LINE_COLOR = "#c0392b", LIGHT_COLORS["gpu"]


def memory_lane_png(m: MemoryOverStepDoc, width: int = 900, canvas: MakeSurface = Canvas) -> str:
    """Allocated bytes over the recorded steps, the phase ranges as bands, the peak marked."""
    us, held = m["series_us"], m["series_bytes"]
    if not us:
        return ""
    left, top, plot_h = 170, 26, 60
    plot_w, bottom = width - left - 10, top + plot_h
    c = canvas(width, bottom + 24)
    t0, span = us[0], max(us[-1] - us[0], 1)
    peak = max(m["peak_bytes"], 1)

    def x(t: int) -> float:
        return left + (t - t0) / span * plot_w

    for p in m["phases"]:
        c.rect(x(p["start_us"]), top, x(p["end_us"]), bottom,
               LIGHT_COLORS.get(p["name"], MUTED), alpha=0.18)
    ends = [*us[1:], us[-1]]
    for t, t_next, v in zip(us, ends, held, strict=True):  # the step line filled below
        c.rect(x(t), bottom - v / peak * plot_h, x(t_next), bottom, LINE_COLOR)
    px = x(m["peak_us"])
    c.rect(px - 1, top - 4, px + 1, bottom, PEAK_COLOR)
    head = peak_head(m)  # the kinds follow under the chart: too long for the bitmap font
    lx = px - 4 - text_width(head) if px > left + plot_w / 2 else px + 4
    c.text(max(lx, 2.0), 6, head, PEAK_COLOR)
    c.text(6, top + 8, "memory allocated", AXIS)
    c.text(6, top + 26, f"0 to {units.gb(m['peak_bytes'])}", MUTED)
    c.text(left, bottom + 6, "0", MUTED)
    end = f"{units.ms(span / 1e3)} of recorded (untraced) steps"
    c.text(left + plot_w - text_width(end), bottom + 6, end, MUTED)
    return c.img_tag(escape(f"memory allocated over the recorded steps: {peak_label(m)}"))


def _table(caption: str, head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    cells = "".join("<tr>" + "".join(f"<td class='n'>{escape(v)}</td>" for v in r) + "</tr>"
                    for r in rows)
    return (f"<table><caption class='gpuprof-sr'>{escape(caption)}</caption><thead><tr>"
            + "".join(f"<th class='n'>{escape(h)}</th>" for h in head)
            + f"</tr></thead><tbody>{cells}</tbody></table>")


def fixes_table(fixes: Sequence[MemoryFixDoc], caption: str) -> str:
    """The fixes: memory freed, time per step (or why unpriced), the `--try` that measures it."""
    return _table(caption, ["fix", "frees", "time per step", "measure it"], [
        [f["title"], units.gb(f["saves_bytes"]), fix_cost(f),
         f"--try {f['try_fix']}" if f.get("try_fix") else ""] for f in fixes])


def over_step_html(m: MemoryOverStepDoc, canvas: MakeSurface = Canvas) -> str:
    """The lane, the kinds at the peak, the top lines and modules, the headroom and the fixes."""
    phase = f" in {m['peak_phase']}" if m["peak_phase"] else ""
    out = ["<h4>Memory over the step</h4>", f"<p>{memory_lane_png(m, canvas=canvas)}</p>",
           f"<p class='gpuprof-mempeak'>{escape(peak_head(m))}: {escape(kinds_at_peak(m))}</p>",
           f"<p>Allocator history of {m['events']:,} events, recorded in the steps before the "
           "traced ones (its own time axis); bands: forward, backward, optimizer.</p>",
           f"<p>Peak {units.gb(m['peak_bytes'])}{escape(phase)}, reserved "
           f"{units.gb(m['reserved_bytes'])}.</p>",
           _table("Memory at the peak by kind", ["at the peak", "GB", "its own high"],
                  [[k["label"], units.gb(k["bytes_at_peak"]), units.gb(k["high_bytes"])]
                   for k in m["kinds"] if k["bytes_at_peak"] > 0 or k["high_bytes"] > 0])]
    for what, rows in (("line", m["lines"]), ("module call", m["modules"])):
        if rows:
            out.append(_table(f"The {what}s holding most at the peak",
                              [what, "held at the peak", "blocks"],
                              [[r["where"], units.gb(r["bytes"]), str(r["blocks"])]
                               for r in rows[:TOP_HOLDERS]]))
    if m["headroom_x"] is not None:
        out.append(f"<p>Headroom: the batch could grow ×{m['headroom_x']:.1f} before the peak "
                   "reaches the GPU's memory.</p>")
    if m["fixes"]:
        out.append(fixes_table(m["fixes"], "Memory fixes, priced"))
    return "<div class='gpuprof-memory'>" + "".join(out) + "</div>"


def oom_html(o: OomDoc) -> str:
    """What was allocated when an allocation failed, its largest blocks and the fixes."""
    limit = f" of {units.gb(o['limit_bytes'])} allowed" if o["limit_bytes"] else ""
    return ("<div class='gpuprof-oom'><h4>Out of memory</h4>"
            f"<p>{units.gb(o['requested_bytes'])} requested with "
            f"{units.gb(o['allocated_bytes'])} allocated{limit} (reserved "
            f"{units.gb(o['reserved_bytes'])}, largest free block "
            f"{units.gb(o['largest_free_bytes'])}).</p>"
            + _table("The largest blocks live at the error", ["block", "line", "module"],
                     [[units.gb(a["bytes"]), a["line"], a["module"]] for a in o["top"]])
            + (fixes_table(o["fixes"], "What would have let it fit") if o["fixes"] else "")
            + "</div>")


def memory_html(memory: MemoryDoc, canvas: MakeSurface = Canvas) -> str:
    """The post-mortem first, then the peak explained; empty without either."""
    oom, over = memory.get("oom"), memory.get("over_step")
    return (oom_html(oom) if oom else "") + (over_step_html(over, canvas) if over else "")
