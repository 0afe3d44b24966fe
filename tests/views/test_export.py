"""`jupyter gpuprof export`: a small page (tens of kB, not megabytes), tabs without scripts,
vector charts, a sans-serif page, and each try shown under the finding it tests."""

from __future__ import annotations

import re
from html import unescape

import pytest

from jupyter_gpuprof.cli import main
from jupyter_gpuprof.report import analyze_path
from jupyter_gpuprof.views.export import export_html
from jupyter_gpuprof.views.summary_doc import SummaryDoc

REAL = "tests/data/real"
#: what a shared report may weigh: the old page (plotly.js and PNG charts inlined) was 5.3 MB
MAX_BYTES = 120_000


@pytest.fixture(scope="module")
def summary() -> SummaryDoc:
    return analyze_path(f"{REAL}/input").to_json()


@pytest.mark.parametrize("trace", ["input", "sync", "ddp2_heavy1"])
def test_export_weighs_tens_of_kilobytes(tmp_path, trace):
    out = tmp_path / "report.html"
    assert main(["export", f"{REAL}/{trace}", "--html", str(out)]) == 0
    size = out.stat().st_size
    assert 5_000 < size < MAX_BYTES, size


def test_charts_are_vector_svg_with_their_text_as_text(summary):
    page = export_html(summary)
    svgs = re.findall(r"<svg [^>]*>.*?</svg>", page, flags=re.S)
    assert len(svgs) == 3  # step times, timeline, kernel kinds
    for svg in svgs:
        assert "role='img'" in svg and re.search(r"aria-label='[^']{10,}'", svg)
        assert "<text " in svg and "sans-serif" in svg
    assert "<img" not in page and "base64" not in page
    # the step chart's axis labels are text a reader can select and search
    assert "ms per step" in svgs[0]


def test_tabs_work_without_scripts(summary):
    page = export_html(summary)
    assert "<script" not in page
    radios = re.findall(r"<input type='radio' name='gpuprof-tab' id='gpuprof-tab-(\w+)'", page)
    sections = re.findall(r"<section id='gpuprof-panel-(\w+)'", page)
    assert radios == sections and radios[0] == "next" and len(radios) == 6
    assert page.count(" checked>") == 1
    for pid in radios:
        assert f"<label for='gpuprof-tab-{pid}'>" in page
        assert f"#gpuprof-tab-{pid}:checked~#gpuprof-panel-{pid}" in page
    # hidden unless picked, all shown when printed
    assert ".gpuprof-tabs>section{order:1;width:100%;display:none" in page
    assert "@media print{.gpuprof-tabs>section{display:block}" in page


def test_page_and_heading_are_sans_serif(summary):
    page = export_html(summary)
    body = re.search(r"body\{[^}]*\}", page)
    assert body and "sans-serif" in body.group(0) and "serif" not in body.group(0).replace(
        "sans-serif", "")
    assert re.search(r"<h1>GPU profile — [^<]+</h1>", page)


def _finding_items(page: str) -> list[str]:
    ol = re.search(r"<h4>Next steps</h4><ol>(.*?)</ol>", page, flags=re.S)
    assert ol
    return re.findall(r"<li>(.*?)</li>", ol.group(1), flags=re.S)


def test_each_try_shows_under_its_finding(summary):
    s = dict(summary)
    s["tries"] = [
        {"fix": "loader", "median_ms": 20.0, "measured_gain_pct": 31.5, "change": None,
         "predicted_gain_pct": 40.0},
        {"fix": "compile", "error": "torch.compile failed", "remedy": "pass --try graphs"},
    ]
    page = unescape(export_html(s))  # type: ignore[arg-type]
    items = _finding_items(page)
    loader = next(i for i in items if "--try loader" in i)
    assert re.search(r"<pre class='gpuprof-tries'>\s*loader\s+20\.00 ms, measured gain "
                     r"\+31\.5%", loader)
    assert "torch.compile failed" not in "".join(items)
    # a try no finding owns is listed after them, under its own heading
    tail = page.split("</ol>", 1)[1]
    assert "Other fixes tried" in tail and "compile  failed: torch.compile failed" in tail
    assert "loader   20.00 ms" not in tail


def test_every_table_has_a_caption(summary):
    page = export_html(summary)
    tables = re.findall(r"<table>(.*?)</table>", page, flags=re.S)
    assert len(tables) >= 2
    assert all(t.startswith("<caption") for t in tables)
