"""A unit-test trace whose steps last 0.3 µs reads in µs everywhere, never "the 0.0 ms step"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tracebuilder import TraceBuilder

from jupyter_gpuprof.report import analyze_path
from jupyter_gpuprof.units import ms
from jupyter_gpuprof.views.html import render_html

STEP_US = 0.3
ZERO_MS = re.compile(r"(?<![\d.])0\.0+ ms (step|window|per real step)|(median|p95) 0\.0+ ms")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    b = TraceBuilder()
    for i in range(3):  # three 0.3 µs steps, one 0.1 µs kernel each
        t = i * STEP_US
        b.step(i, t, STEP_US)
        b.kernel("k", t + 0.01, t + 0.05, 0.1, launch_dur=0.02)
    return b.write(tmp_path_factory.mktemp("tiny") / "trace.json.gz")


def test_no_surface_calls_a_microsecond_step_zero_ms(tiny):
    report = analyze_path(tiny)
    s = report.to_json()
    assert s["steps"]["median_ms"] == pytest.approx(STEP_US / 1e3)
    verdict = s["verdict"]["summary"]
    assert "0.3 µs of GPU time in a 0.9 µs window" in verdict
    text, html = report.to_text(), render_html(s)
    for surface in (verdict, text, html):
        assert not ZERO_MS.search(surface), ZERO_MS.search(surface)
    assert "median 0.3 µs" in text and "median 0.3 µs" in re.sub("<[^>]+>", "", html)


def test_durations_switch_to_microseconds_below_a_tenth_of_a_millisecond():
    assert ms(112.34) == "112.34 ms"
    assert ms(0.1) == "0.10 ms"
    assert ms(0.0003) == "0.3 µs"
    assert ms(0.045) == "45 µs"
    assert ms(0.963) == "0.96 ms"
