"""Executed notebooks keep the widget state and a static text/html copy that nbconvert shows."""

import json
import os
import re

import nbformat
import pytest
from nbclient import NotebookClient
from nbconvert import HTMLExporter
from paths import ROOT
from traitlets.config import Config

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
STATE = "application/vnd.jupyter.widget-state+json"
EXECUTED = ["quickstart.ipynb", "walkthrough.ipynb"]


def _report_outputs(nb):
    """(widget output, the static copy's HTML: its own text/html or the output before it)."""
    found = []
    for c in nb.cells:
        if c.cell_type != "code":
            continue
        for i, o in enumerate(c.outputs):
            if WIDGET_VIEW in o.get("data", {}):
                html = o["data"].get("text/html") or \
                    (c.outputs[i - 1].get("data", {}).get("text/html", "") if i else "")
                found.append((o, html))
    return found


def _check_fallbacks(nb) -> list[dict]:
    """Every report output has median/p95/verdict (and the findings) in its static copy."""
    state = nb.metadata["widgets"][STATE]["state"]
    summaries = []
    for out, html in _report_outputs(nb):
        model = state[out["data"][WIDGET_VIEW]["model_id"]]["state"]
        s = model["summary"]
        assert "median" in html and "p95" in html and "Verdict" in html
        assert f"{s['steps']['median_ms']:.2f} ms" in html
        for f in s["findings"]:
            assert f["title"] in html
        assert "text/plain" in out["data"]
        # re-renders from state: a default export (bundlers write `export{x as default}`)
        assert re.search(r"export\s*(default\b|\{[^}]*\bas default\b)", model["_esm"] or "")
        summaries.append(s)
    return summaries


@pytest.mark.parametrize("name", EXECUTED)
def test_committed_notebooks_hold_widget_state_and_fallbacks(name):
    nb = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    assert len(_check_fallbacks(nb)) >= 2
    assert not [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
                if o.output_type == "error"]


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """A notebook that shows a GPU report with findings, executed headlessly."""
    path = (ROOT / "tests/data/real/input").as_posix()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        f"from jupyter_gpuprof.report import analyze_path\nanalyze_path({path!r})")])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    old = os.environ.copy()
    os.environ.update(env)  # the kernel inherits it
    try:
        NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    return nb


def test_executed_notebook_has_state_and_fallback(executed):
    (s,) = _check_fallbacks(executed)
    assert s["verdict"]["category"] == "input" and s["findings"]
    size = len(json.dumps(executed))
    assert size < 2_000_000


def test_plain_html_export_shows_the_static_copy_with_its_charts(executed):
    # plain `jupyter nbconvert --to html`: the widget view wins within its own output, so the
    # static copy is an output of its own, and its charts are PNG images
    html = HTMLExporter().from_notebook_node(executed)[0]
    assert re.search(r"<div class=[\"']gpuprof-static[\"']>", html)
    assert "Verdict: input" in html and "p95" in html
    assert "Data loading stalls the GPU" in html
    assert "Static copy of the report. The interactive report opens in JupyterLab" in html
    assert "Trust Notebook" not in html  # nbconvert's page has no such menu
    assert len(re.findall(r"<img [^>]*src=[\"']data:image/png;base64,", html)) >= 3
    c = Config()
    c.NbConvertBase.display_data_priority = ["text/html", "image/svg+xml", "image/png",
                                             "text/plain"]
    once = HTMLExporter(config=c).from_notebook_node(executed)[0]
    assert len(re.findall(r"<div class=[\"']gpuprof-static[\"']>", once)) == 1
