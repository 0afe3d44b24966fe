"""Stacks measured on the H200 (`run --try`, tests/data/corpus/*-stack): what the report says.

Each run folder holds the tries and the stack as the tool measured them on a public script;
the report is rebuilt from a copy. docs/benchmarks.md §18 has the table.
"""

from __future__ import annotations

import re

import pytest
from recorded_runs import corpus_report

from jupyter_gpuprof.advice.stacking import plan
from jupyter_gpuprof.views.html import render_html


def test_a_fix_slower_alone_is_kept_where_it_helps_on_top_of_the_best_one(tmp_path):
    """minGPT's adder: bf16 autocast alone measured 87 % slower, on top of CUDA graphs 23 %
    faster; graphs and amp together 40 % faster than the control, where graphs alone was 23 %.
    Only the stack shows it."""
    r = corpus_report(tmp_path, "mingpt-adder-stack")
    s = r.to_json()
    tries = {t["fix"]: t for t in s["tries"]}
    assert tries["amp"]["measured_gain_pct"] < -80 and tries["graphs"]["measured_gain_pct"] > 20
    st = s["stack"]
    assert st["fixes"] == ["graphs", "amp"]
    (step,) = st["steps"]
    assert step["kept"] and step["why"].startswith("kept: 22.6% faster on top of graphs")
    assert st["gain_pct"] == pytest.approx(40.1, abs=0.1)
    code = st["code"]
    assert code.index('mode="reduce-overhead"') < code.index("torch.autocast")
    text = r.to_text()
    assert "All kept fixes together (graphs + amp): 4.27 ms a step against 7.14 ms" in text
    assert "Apply them:" in text and "Fixes stacked" in render_html(s)


def test_the_verdict_quotes_the_measured_gain_of_its_own_fix(tmp_path):
    """Where a try ran, the verdict's gain is the measured one (its median step)."""
    r = corpus_report(tmp_path, "mingpt-adder-stack")
    v = r.advice.verdict
    assert v.category == "launch"
    assert re.search(r"its fix measured 23% faster", v.summary), v.summary


@pytest.mark.parametrize(("name", "kept", "reverted"), [
    ("fabric-mnist-stack", ["loader", "graphs"], []),
    ("vae-mnist-stack", ["loader"], ["loader+graphs"]),
])
def test_recorded_stacks_keep_what_measured_faster_on_top_and_revert_the_rest(
        tmp_path, name, kept, reverted):
    s = corpus_report(tmp_path, name).to_json()
    st = s["stack"]
    assert st["fixes"] == kept
    assert [t["fix"] for t in st["steps"] if not t["kept"]] == reverted
    # today's rule on the recorded tries picks the same fix to keep first
    assert plan(s["tries"]).base["fix"] == kept[0]
    assert st["gain_pct"] > max(t["measured_gain_pct"] for t in s["tries"]) - 1


def test_a_recurrent_model_that_compiles_to_nothing_gets_its_cause(tmp_path):
    """mnist_rnn: Dynamo skips nn.LSTM, so the graphs try compiled nothing (the try's own
    graph-break log on the H200); the report says why and what to do."""
    s = corpus_report(tmp_path, "mnist-rnn-tries").to_json()
    (graphs,) = [t for t in s["tries"] if t["fix"] == "graphs"]
    assert graphs["error"].startswith("torch.compile compiled no graph")
    assert "TORCH_LOGS=graph_breaks" in graphs["remedy"]
