"""The static copy's memory sections (notebook fallback and export): the lane with its peak
marked, the kinds, the top lines, the priced fixes and the out-of-memory post-mortem."""

from __future__ import annotations

import json
import re
from html import unescape
from typing import Any, cast

import pytest
from memory_fixture import memory_fixture
from paths import TESTS

from jupyter_gpuprof.views.export import export_html
from jupyter_gpuprof.views.fallback import static_report
from jupyter_gpuprof.views.memory_html import LINE_COLOR, PEAK_COLOR, memory_lane_png
from jupyter_gpuprof.views.raster import Canvas
from jupyter_gpuprof.views.summary_doc import SummaryDoc

PEAK = ("peak 5.86 GB at 20.26 ms (backward): parameters 0.33 GB, optimizer state 0.66 GB, "
        "activations saved for backward 3.16 GB, temporaries 1.65 GB, model state (unnamed) "
        "0.07 GB")


@pytest.fixture(scope="module")
def blocks() -> dict[str, dict[str, Any]]:
    return memory_fixture()


def _summary(memory: dict[str, Any]) -> SummaryDoc:
    s = json.loads((TESTS / "data" / "expected" / "compute.summary.json").read_text())
    s["memory"].update(memory)
    return cast("SummaryDoc", s)


def _rows(html: str, caption: str) -> list[list[str]]:
    """The body rows of the table with `caption`, as text."""
    table = html.split(f"<caption class='gpuprof-sr'>{caption}</caption>", 1)[1]
    body = table.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [[unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", r)]
            for r in body.split("</tr>") if r]


class _Recorder(Canvas):
    """A raster canvas that keeps the rectangles and texts drawn on it."""

    drawn: list[tuple[Any, ...]] = []

    def rect(self, x0: float, y0: float, x1: float, y1: float, color: str,
             alpha: float = 1.0) -> None:
        _Recorder.drawn.append(("rect", x0, y0, x1, y1, color))
        super().rect(x0, y0, x1, y1, color, alpha)

    def text(self, x: float, y: float, text: str, color: str = "#222222",
             scale: int = 2) -> float:
        _Recorder.drawn.append(("text", x, y, text, color))
        return super().text(x, y, text, color, scale)


def test_the_notebook_copy_has_the_lane_and_the_peak_explained(blocks) -> None:
    html = static_report(_summary(blocks["gpt2"]))
    assert "<h4>Memory over the step</h4>" in html
    assert f"alt='memory allocated over the recorded steps: {PEAK}'" in unescape(html)
    assert unescape(html.split("<p class='gpuprof-mempeak'>")[1].split("</p>")[0]) == PEAK
    assert "<svg" not in html  # sanitizers keep PNGs, not inline SVG
    kinds = _rows(html, "Memory at the peak by kind")
    assert ["activations saved for backward", "3.16 GB", "3.16 GB"] in kinds
    lines = _rows(html, "The lines holding most at the peak")
    assert len(lines) == 3 and lines[0] == ["<script>:108", "3.16 GB", "130"]
    assert _rows(html, "The module calls holding most at the peak")[0][0] == "activations.py:66"
    assert _rows(html, "Memory fixes, priced") == [
        ["2 micro-batches with gradient accumulation", "2.40 GB",
         "not priced: the same work in smaller kernels (a little slower per sample)", ""],
        ["activation checkpointing of the 6 layers called at modeling_gpt2.py:608", "2.23 GB",
         "+29.20 ms (one extra forward of those layers: the forward's GPU time × their share of "
         "saved activations (73%; the trace's forward kernels repeat no sequence 6 times); GPU "
         "time: the step may pay host time too, the checkpoint's hooks and the recompute's "
         "launches (--try checkpoint measures it))",
         "--try checkpoint"],
        ["bf16 activations (autocast)", "1.58 GB",
         "not priced here: bf16 matmuls are faster; the precision finding prices them (at most: "
         "half the saved activations (no graph recorded))", "--try amp"],
    ]
    assert "the batch could grow ×31.0" in html
    assert "Out of memory" not in html


def test_the_lane_marks_the_peak_at_its_time_over_the_phases(blocks) -> None:
    over = blocks["gpt2"]["over_step"]
    _Recorder.drawn = []
    memory_lane_png(over, width=900, canvas=_Recorder)
    left, plot_w = 170, 900 - 170 - 10
    us = over["series_us"]
    px = left + (over["peak_us"] - us[0]) / (us[-1] - us[0]) * plot_w
    marks = [d for d in _Recorder.drawn if d[0] == "rect" and d[5] == PEAK_COLOR]
    assert len(marks) == 1 and marks[0][1] < px < marks[0][3]
    texts = [d[3] for d in _Recorder.drawn if d[0] == "text"]
    assert "peak 5.86 GB at 20.26 ms (backward)" in texts
    # one band per phase range, one column per point of the series
    rects = [d for d in _Recorder.drawn if d[0] == "rect" and d[4] == 86]
    bands = [d for d in rects if d[5] not in (LINE_COLOR, PEAK_COLOR)]
    assert [d[2] for d in bands] == [26] * len(over["phases"]) and len(bands) == 6
    columns = [d for d in rects if d[5] == LINE_COLOR]
    assert len(columns) == len(us)
    assert min(d[2] for d in columns) == pytest.approx(26)  # the peak column reaches the top


def test_the_out_of_memory_post_mortem_comes_first(blocks) -> None:
    html = static_report(_summary(blocks["oom"]))
    assert html.index("<h4>Out of memory</h4>") < html.index("<h4>Memory over the step</h4>")
    assert ("<p>0.20 GB requested with 8.86 GB allocated of 9.01 GB allowed (reserved 8.86 GB, "
            "largest free block 0.00 GB).</p>") in html
    assert _rows(html, "The largest blocks live at the error") == [
        ["0.81 GB", "<script>:203", "modeling_gpt2.py:239 › pytorch_utils.py:119"],
        ["0.81 GB", "<script>:203", "modeling_gpt2.py:240 › activations.py:66"],
        ["0.81 GB", "<script>:203", "modeling_gpt2.py:240 › activations.py:66"],
    ]
    assert _rows(html, "What would have let it fit")[0][:2] == [
        "16 micro-batches with gradient accumulation", "74.81 GB"]


def test_the_export_draws_the_lane_as_svg_in_the_timeline_tab(blocks) -> None:
    page = export_html(_summary({**blocks["gpt2"], "oom": blocks["oom"]["oom"]}))
    tab = page.split("<section id='gpuprof-panel-timeline'", 1)[1].split("</section><section", 1)[0]
    assert "Memory over the step" in tab and "Out of memory" in tab
    assert f"aria-label='memory allocated over the recorded steps: {PEAK}'" in unescape(tab)


def test_no_history_no_section() -> None:
    html = static_report(_summary({"over_step": None, "oom": None}))
    assert "Memory over the step" not in html and "Out of memory" not in html
