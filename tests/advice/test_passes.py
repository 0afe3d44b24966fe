"""Advice is one ordered list of passes, applied alike to a trace, a run and a rank folder."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

from paths import TESTS

from jupyter_gpuprof.advice import passes
from jupyter_gpuprof.report import analyze_path
from jupyter_gpuprof.store import RunStore

REAL = TESTS / "data" / "real"
HF = {"name": "transformers", "args": {"bf16": False, "fp16": False, "tf32": None}}


def test_the_passes_run_in_their_stated_order():
    assert [p.__name__ for p in passes.PASSES] == [
        "across_ranks", "framework_terms", "loop_terms", "refinements", "measured"]


def _run_folder(tmp_path: Path, traces: list[Path], **meta: object) -> Path:
    run = RunStore(tmp_path / "runs").create("probe")
    for i, t in enumerate(traces):
        raw = tmp_path / f"t{i}.json"
        with gzip.open(t, "rb") as src, open(raw, "wb") as dst:
            shutil.copyfileobj(src, dst)
        run.write_trace(str(raw), rank=i if len(traces) > 1 else None)
    run.meta.status = "complete"
    for k, v in meta.items():
        setattr(run.meta, k, v)
    run.write_meta()
    return run.path


def test_a_multi_rank_run_gets_its_framework_s_terms_like_a_single_trace(tmp_path):
    """Framework terms used to reach single-trace runs only: a Trainer under torchrun got
    plain-torch fixes."""
    one = analyze_path(_run_folder(tmp_path / "one", [REAL / "precision" / "trace.json.gz"],
                                   framework=HF))
    ranks = analyze_path(_run_folder(tmp_path / "ranks",
                                     sorted((REAL / "ddp2_balanced").glob("*.json.gz")),
                                     framework=HF, world_size=2))
    assert "TrainingArguments(" in one.to_json()["findings"][0]["fix"]
    fixes = [f["fix"] for f in ranks.to_json()["findings"]
             if f["category"] in ("precision", "memory", "launch", "input")]
    assert fixes and all("TrainingArguments(" in f for f in fixes)


def test_measured_tries_rank_the_findings_in_every_report(tmp_path):
    """A significant try's measured gain re-ranks the findings the report shows."""
    trace = [REAL / "tinygpt_before" / "trace.json.gz"]
    before = analyze_path(_run_folder(tmp_path / "a", trace)).to_json()["findings"]
    first, second = (f["category"] for f in before[:2])
    tried = {"input": "loader", "launch": "graphs", "precision": "amp"}
    def change(significant: bool) -> dict[str, object]:  # as step_change writes it
        return {"n_before": 20, "n_after": 20, "median_before_ms": 10.0, "median_after_ms": 8.0,
                "confidence": 0.95, "significant": significant,
                "verdict": "significant" if significant else "noise",
                "direction": "faster" if significant else "unchanged"}

    tries = [{"fix": tried[second], "measured_gain_pct": 55.0, "change": change(True)},
             {"fix": tried[first], "measured_gain_pct": 12.0, "change": change(False)}]
    ranked = analyze_path(_run_folder(tmp_path / "b", trace, tries=tries)).to_json()["findings"]
    assert [f["category"] for f in ranked][:2] == [second, first]
    assert ranked[0]["measured_gain_pct"] == 55.0 and ranked[1]["measured_gain_pct"] is None


def test_the_measured_pass_hands_the_verdict_to_the_finding_ranked_first():
    """The rule without the recorded runs: a verdict whose try measured slower gives way."""
    from jupyter_gpuprof.advice.findings import Finding, Verdict
    from jupyter_gpuprof.advice.tries import verdict_after_tries

    def finding(category, expected, measured=None):
        return Finding(id=category, category=category, title=category, evidence="", fix="",
                       cost_ms=1.0, expected_gain_pct=expected, measured_gain_pct=measured)

    v = Verdict("launch", "launch summary", "high", [])
    ranked = [finding("host", 20.0), finding("launch", 60.0, -30.0)]
    after = verdict_after_tries(v, ranked)
    assert after.category == "host" and "fixing it should save ≈20%" in after.summary
    assert after.reasons == ["launch was predicted ≈60%; its fix measured 30% slower"]
    unmeasured = [finding("launch", 60.0), finding("host", 20.0)]
    assert verdict_after_tries(v, unmeasured) is v
    straggler = Verdict("straggler", "rank 1", "high", [])
    assert verdict_after_tries(straggler, ranked) is straggler  # no priced finding of its own


def test_a_fix_that_crashed_where_it_was_tried_drops_below_the_others_and_says_why():
    from jupyter_gpuprof.advice.findings import Finding, Verdict
    from jupyter_gpuprof.advice.tries import rerank, verdict_after_tries

    def finding(category, expected):
        return Finding(id=category, category=category, title=category, evidence="", fix="",
                       cost_ms=1.0, expected_gain_pct=expected)

    crash = {"fix": "graphs", "error": "RecursionError: maximum recursion depth exceeded"}
    # below every measured finding: the input fix measured 10 %, the crashed one predicted 60 %
    loader = {"fix": "loader", "step_ms": [1.0], "measured_gain_pct": 10.0,
              "change": {"significant": True}}
    tries = [crash, loader]
    ranked = rerank([finding("launch", 60.0), finding("input", 5.0)], tries)
    assert [f.category for f in ranked] == ["input", "launch"]
    after = verdict_after_tries(Verdict("launch", "s", "high", []), ranked, tries)
    assert after.category == "input"
    assert after.reasons == ["launch was predicted ≈60%; --try graphs crashed: "
                             "RecursionError: maximum recursion depth exceeded (remedy: "
                             "compile the model inside the wrapper (Lightning Fabric: compile "
                             "before fabric.setup))"]
    # with nothing measured its prediction still leads the untried ones, and says it is untested
    alone = rerank([finding("launch", 60.0), finding("host", 20.0)], [crash])
    assert [f.category for f in alone] == ["launch", "host"]
    kept = verdict_after_tries(Verdict("launch", "s", "high", []), alone, [crash])
    assert kept.category == "launch" and kept.reasons == [
        "--try graphs crashed: RecursionError: maximum recursion depth exceeded (remedy: "
        "compile the model inside the wrapper (Lightning Fabric: compile before "
        "fabric.setup)); the prediction is untested"]
    # a fix that crashed once and ran once is ranked by what it measured, not dropped
    both = [*tries, {"fix": "graphs", "step_ms": [1.0]}]
    assert [f.category for f in rerank([finding("launch", 60.0), finding("host", 20.0)],
                                       both)] == ["launch", "host"]


def test_a_try_of_another_route_of_the_fix_neither_measures_nor_sinks_its_finding():
    """A launch finding whose step is captured by hand (`try_fixes` empty: no try applies it)
    is not measured by the graphs try, which compiles the model: the word LM's graphs try ran
    54 % slower where capturing the step by hand ran 46 % faster (H100). The same try, on a
    finding it does apply to, still takes the verdict away."""
    from jupyter_gpuprof.advice.findings import Finding, Verdict
    from jupyter_gpuprof.advice.tries import rerank, verdict_after_tries

    def finding(category, expected, **data):
        return Finding(id=category, category=category, title=category, evidence="", fix="",
                       cost_ms=1.0, expected_gain_pct=expected, data=data)

    slower = {"fix": "graphs", "step_ms": [1.0], "measured_gain_pct": -54.0,
              "change": {"significant": True}}
    crash = {"fix": "graphs", "error": "RecursionError: maximum recursion depth exceeded"}
    verdict = Verdict("launch", "s", "high", [])
    for tries in ([slower], [crash]):
        by_hand = rerank([finding("launch", 60.0, try_fixes=[]), finding("host", 20.0)], tries)
        assert [f.category for f in by_hand] == ["launch", "host"]
        assert by_hand[0].measured_gain_pct is None
        assert verdict_after_tries(verdict, by_hand, tries) is verdict
    compiled = rerank([finding("launch", 60.0), finding("host", 20.0)], [slower])
    assert [f.category for f in compiled] == ["host", "launch"]
    assert verdict_after_tries(verdict, compiled, [slower]).category == "host"
