"""The compile the launch fix shows fuses every chain of memory-bound kernels it can: where no
memory finding prices the longer chains (their kernels under its share of GPU time), the launch
fix does, once; kernels the compiler already generated are never fused again; and the fusion
is no gain of the launch fix's own when it decides whether it leads the fix it needs first."""

from __future__ import annotations

import math

import pytest
from paths import TESTS
from recorded_runs import corpus_report

from jupyter_gpuprof.advice import whatif
from jupyter_gpuprof.advice.fusion import chain_members, memory_fusion_advised
from jupyter_gpuprof.analysis.kernels import compiler_generated
from jupyter_gpuprof.analysis.step_replay import predict
from jupyter_gpuprof.report import analyze_path

REAL = TESTS / "data" / "real"


def _short_chains_only(a) -> float:
    """The launch fix's step with only its short kernels' chains fused."""
    return predict(a.graph, whatif.launch_fix(a.graph)[0], a.real.step_ms, a.baseline_probe_ms,
                   a.sync_held_ms, a.real.source == "baseline")


def test_without_a_memory_finding_the_launch_fix_prices_the_longer_chains():
    report = analyze_path(REAL / "sync")  # H200: 13 read-backs a step, 29 % memory-bound
    a = report.analysis
    assert not memory_fusion_advised(a)
    assert "memory" not in [f.category for f in report.advice.findings]
    launch = whatif.predictions_for(a)["launch"]
    short = _short_chains_only(a)
    assert launch.predicted_step_ms < short - 0.3  # the longer chains' fusion counted here
    assert launch.fusion_ms == pytest.approx(short - launch.predicted_step_ms)
    (found,) = [f for f in report.advice.findings if f.category == "launch"]
    assert found.data["fusion_gain_pct"] > 0
    # the fusion is not the graphs' own gain: the read-backs, which must go first, lead
    assert report.verdict.category == "sync"


def test_with_a_memory_finding_the_launch_fix_fuses_only_short_chains():
    a = analyze_path(REAL / "memory").analysis  # the elementwise chain workload
    assert memory_fusion_advised(a)
    launch = whatif.predictions_for(a)["launch"]
    assert launch.fusion_ms == 0.0
    assert launch.predicted_step_ms == pytest.approx(_short_chains_only(a))


def test_kernels_the_compiler_generated_are_never_fused_again(tmp_path):
    a = corpus_report(tmp_path, "nanogpt-bf16-compiled").analysis  # H200, torch.compile'd
    names = a.graph.gpu["name"]
    assert compiler_generated(names).sum() > 100
    members, _ = chain_members(a.graph, 0.0, math.inf)
    assert len(members) and not compiler_generated(names.iloc[members]).any()
