"""The static step chart's axis: the widget's rule (far outliers clipped and written whole, a
small spread drawn small, no overprinted labels), checked on the fixture the widget's own test
(src/__tests__/stepscale.spec.ts) reads, so the two renderers cannot drift apart."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from jupyter_gpuprof import units
from jupyter_gpuprof.stats import describe_steps
from jupyter_gpuprof.views import png_charts
from jupyter_gpuprof.views.png_charts import step_chart_png
from jupyter_gpuprof.views.raster import text_width
from jupyter_gpuprof.views.step_scale import axis_labels, outlier_cap, step_scale
from jupyter_gpuprof.views.svg_canvas import SvgCanvas

EXPECTED = Path(__file__).resolve().parents[1] / "data" / "expected"
FIXTURE = EXPECTED / "step_scale.json"

#: series made to show the rule: a 1 s spike on a 75 ms step, two spikes, a flat series,
#: too few steps to call any an outlier, jitter on a long step
SYNTHETIC = {
    "one spike": [74.8, 75.1, 74.6, 1079.7, 75.0, 74.9, 75.3, 74.7],
    "two spikes": [74.1, 74.3, 74.8, 75.0, 74.6, 808.2, 74.9, 75.2, 74.4, 1079.7, 74.7, 74.5],
    "flat": [92.0, 92.0, 92.0, 92.01, 92.0],
    "too few": [10.0, 10.1, 500.0],
    "jitter": [74.0, 75.0, 76.0, 75.5],
}


def _cases() -> dict[str, list[float]]:
    """The synthetic series, then every step series of the committed real summaries."""
    cases = dict(SYNTHETIC)
    for entry in json.loads((EXPECTED / "parity.json").read_text()):
        steps = entry["summary"]["steps"]
        for key in ("warmup_ms", "baseline_ms", "profiled_ms"):
            if steps.get(key):
                cases[f"{entry['name']} {key}"] = [float(v) for v in steps[key]]
    return cases


def _decide(values: list[float]) -> dict[str, object]:
    scale = step_scale(values)
    return {"cap": scale.cap, "lo": scale.lo, "hi": scale.hi,
            "clipped": [i for i, v in enumerate(values) if scale.clipped(v)]}


def write_fixture() -> None:
    """Regenerate tests/data/expected/step_scale.json (after a deliberate change of the rule)."""
    cases = [{"name": name, "values": values, **_decide(values)}
             for name, values in _cases().items()]
    FIXTURE.write_text(json.dumps(cases, indent=1) + "\n")


def test_the_fixture_holds_every_committed_series():
    names = [c["name"] for c in json.loads(FIXTURE.read_text())]
    assert names == list(_cases())


#: read at collection; a missing fixture fails the test above (and `--write` can recreate it)
_FIXTURE_CASES = json.loads(FIXTURE.read_text()) if FIXTURE.exists() else []


@pytest.mark.parametrize("case", _FIXTURE_CASES, ids=lambda c: c["name"])
def test_python_decides_the_axis_the_widget_does(case):
    got = _decide(case["values"])
    assert got["clipped"] == case["clipped"]
    assert (got["cap"] is None) == (case["cap"] is None)
    for key in ("cap", "lo", "hi"):
        if case[key] is not None:
            assert got[key] == pytest.approx(case[key], rel=1e-12, abs=1e-12), key


def test_a_far_spike_is_clipped_and_the_rest_keep_their_scale():
    spiked = SYNTHETIC["one spike"]
    scale = step_scale(spiked)
    assert scale.cap is not None and scale.clipped(1079.7)
    assert [v for v in spiked if scale.clipped(v)] == [1079.7]
    assert 50 < scale.lo and scale.hi < 100  # not 0 .. 1,080 ms
    # the 0.7 ms spread gets 4% of the width (0.06% on a 0 .. 1,080 ms scale)
    assert scale.frac(75.3) - scale.frac(74.6) > 0.03
    assert outlier_cap(SYNTHETIC["flat"]) is None
    assert outlier_cap(SYNTHETIC["too few"]) is None


def test_equal_ends_write_one_label_and_close_ones_never_overprint():
    room = lambda a, b: 60.0  # noqa: E731 -- the labels' width, as the chart measures it
    flat = SYNTHETIC["flat"]  # 92.00 and 92.01 ms, a fraction of a pixel apart: one label
    labels = axis_labels(step_scale(flat), flat, 554, room)
    assert [t for _, t in labels] == ["92.01 ms"]
    same = [92.0, 92.001, 92.002, 92.0]  # min ≈ max: both read 92.00 ms, however far apart
    assert len(axis_labels(step_scale(same), same, 554, lambda a, b: 0)) == 1
    wide = [40.0, 80.0, 120.0, 100.0]
    assert [t for _, t in axis_labels(step_scale(wide), wide, 554, room)] == \
        ["120.00 ms", "40.00 ms"]
    assert len(axis_labels(step_scale(wide), wide, 40, room)) == 1  # too close: one


def _steps_doc(baseline: list[float], profiled: list[float]) -> dict[str, object]:
    return {"warmup_ms": [], "baseline_ms": baseline, "profiled_ms": profiled,
            "baseline": describe_steps(baseline), "profiled": describe_steps(profiled)}


class Recorder:
    """A chart surface that records what is drawn (the `png_charts.Surface` calls)."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.rects: list[tuple[float, float, float, float, str]] = []
        self.texts: list[tuple[float, float, str]] = []

    def rect(self, x0: float, y0: float, x1: float, y1: float, color: str,
             alpha: float = 1.0) -> None:
        self.rects.append((x0, y0, x1, y1, color))

    def text(self, x: float, y: float, text: str, color: str = "#222222",
             scale: int = 2) -> float:
        self.texts.append((x, y, text))
        return x + text_width(text, scale)

    def img_tag(self, alt: str) -> str:
        return alt


def _drawn(baseline: list[float], profiled: list[float]) -> Recorder:
    drawn: list[Recorder] = []

    def make(width: int, height: int) -> Recorder:
        drawn.append(Recorder(width, height))
        return drawn[-1]

    step_chart_png(_steps_doc(baseline, profiled), canvas=make)
    return drawn[0]


def test_the_static_chart_writes_a_clipped_spike_whole_and_keeps_the_spread_apart():
    c = _drawn(SYNTHETIC["two spikes"], SYNTHETIC["flat"])
    texts = [t for _, _, t in c.texts]
    assert "baseline n=12, 2 above" in texts
    assert "> 1,079.70 ms, 808.20 ms" in texts  # whole, never a clipped "079.7 ms"
    note = next(x for x, _, t in c.texts if t.startswith(">"))
    assert note + text_width("> 1,079.70 ms, 808.20 ms") <= c.width  # inside the chart
    # the flat profiled series: one label, never two overprinted
    assert texts.count(units.ms(92.01)) == 1 and units.ms(92.0) not in texts
    # the ten normal steps apart (1.1 ms of 75: 0.6 px on a 0 .. 1,080 ms scale), the two
    # spikes on the row's right edge
    dots = [(x0 + 2) for x0, _, x1, _, color in c.rects if color == "#1f5f8b" and x1 - x0 == 4]
    assert len(dots) == 10 and max(dots) - min(dots) > 20
    edge = [x0 + 3 for x0, _, x1, _, color in c.rects if color == "#1f5f8b" and x1 - x0 == 6]
    assert len(edge) == 2 and min(edge) > max(dots)


def test_the_png_and_svg_charts_draw_the_same_axis():
    doc = _steps_doc(SYNTHETIC["one spike"], SYNTHETIC["flat"])
    assert step_chart_png(doc).startswith("<img")
    svg = step_chart_png(doc, canvas=SvgCanvas)
    assert ">&gt; 1,079.70 ms</text>" in svg and ">baseline n=8, 1 above</text>" in svg
    assert png_charts.MAX_CLIPPED_LABELS >= 2


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    write_fixture()
