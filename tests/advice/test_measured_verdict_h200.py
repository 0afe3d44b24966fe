"""Our own H200 workload's saved report with its tries: the verdict quotes what was measured.

`docs/evidence/run_try_script_h200.json` is the summary `run --try tf32,amp,graphs` wrote for
BERT in fp32 on the H200 (benchmarks/train_bert_fp32.py, docs/benchmarks.md §11), before the
verdict read its tries. Its findings, verdict and tries go through today's ranking and verdict
pass: the gain the verdict states must be the one its fix measured, within that try's interval.
"""

from __future__ import annotations

import dataclasses
import json
import re

from paths import ROOT

from jupyter_gpuprof.advice.findings import Finding, Verdict
from jupyter_gpuprof.advice.tries import rerank, verdict_after_tries

SAVED = ROOT / "docs" / "evidence" / "run_try_script_h200.json"


def test_the_verdict_states_the_gain_its_fix_measured_within_its_interval():
    s = json.loads(SAVED.read_text())
    names = {f.name for f in dataclasses.fields(Finding)}
    findings = [Finding(**{k: v for k, v in f.items() if k in names}) for f in s["findings"]]
    v = s["verdict"]
    verdict = Verdict(v["category"], v["summary"], v["confidence"], v["reasons"])
    tries = s["tries"]
    ranked = rerank(findings, tries)
    after = verdict_after_tries(verdict, ranked, tries)
    assert after.category == "precision"
    said = float(re.search(r"its fix measured (\d+)% faster", after.summary).group(1))
    best = max((t for t in tries if t["fix"] in ("tf32", "amp")),
               key=lambda t: t["measured_gain_pct"])
    assert best["fix"] == "tf32" and round(best["measured_gain_pct"]) == said
    ch = best["change"]
    assert -ch["ci_high_pct"] <= said <= -ch["ci_low_pct"]
    assert "fixing it should save" not in after.summary  # the prediction no longer leads
