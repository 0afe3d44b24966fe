"""The text report and the widget read the same: label, order, figures and units, per fixture.

Every committed real trace (tests/data/real) is analysed; its summary (timeline left out, the
first op rows kept) and the facts the text report states go into
tests/data/expected/parity.json. `src/__tests__/parity.spec.ts` renders each summary through the
widget's code and reads the same facts from the DOM: a widget that decides a label, an order or
a unit again fails there. Regenerate with `PYTHONPATH=tests python tests/views/test_parity.py`
after a model change.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from paths import ROOT

from jupyter_gpuprof.advice.fix_table import TRIES_OF
from jupyter_gpuprof.report import analyze_path
from jupyter_gpuprof.report.finding_line import cost_line
from jupyter_gpuprof.report.model import from_builtins, to_builtins
from jupyter_gpuprof.step_definition import step_definition
from jupyter_gpuprof.views.text import render_text

REAL = ROOT / "tests" / "data" / "real"
TABLE = ROOT / "tests" / "data" / "expected" / "parity.json"
OP_ROWS = 12  # the op rows each summary keeps: the text's top 10 and a margin


def facts(text: str) -> dict[str, Any]:
    """What the text report says, read back from its lines."""
    lines = text.splitlines()
    step = next(ln for ln in lines if ln.startswith("Step time ("))
    verdict = next(ln for ln in lines if ln.startswith("VERDICT: "))
    out: dict[str, Any] = {
        "verdict_label": re.match(r"VERDICT: (.*) \(\w+ confidence\)$", verdict).group(1),
        "median": re.search(r"median (\S+ \S+?),", step).group(1),
        "p95": re.search(r"p95 (\S+ \S+?),", step).group(1),
        # each finding's title and its one cost-and-gain line (the model's `cost_line`)
        "findings": [re.match(r"\d+\. (\[.*?\] .*?) — (costs .*)$", ln).groups()
                     for ln in lines if re.match(r"\d+\. \[", ln)],
        "whatif": [ln for ln in lines if ln.startswith(("Every 1,000 steps", "Conditions ("))],
        "measured": [ln.strip() for ln in lines if ln.strip().startswith("Measured: ")],
        "tries": [ln for ln in _section(lines, "Fixes tried (") if not ln.startswith("  Loss not")],
        "stack": _section(lines, "Fixes stacked (", until="Apply them:"),
        "stack_code": [ln.removeprefix("  ") for ln in _section(lines, "Apply them:")],
        "one_time": [ln for ln in lines if ln.startswith("One-time costs in the trace")],
        "step": next((ln.strip() for ln in lines if ln.startswith("  A step is ")), None),
        "stalls": next((ln.strip() for ln in lines if ln.startswith("  Stalls: ")), None),
        "busy": next((m.group(0) for ln in lines
                      if (m := re.search(r"GPU busy \S+ real / \S+ under profiler", ln))), None),
        "peak": next((m.group(0) for ln in lines
                      if (m := re.search(r"Peak memory [^·]*\S", ln))), None),
    }
    if "Top ops (per real step)" in text:
        start = lines.index(next(ln for ln in lines if ln.startswith("Top ops")))
        ops = []
        for ln in lines[start + 1:]:
            if not ln.strip():
                break
            ops.append(ln[:46].rstrip().removesuffix("…"))
        out["ops"] = ops
    return out


def _section(lines: list[str], head: str, until: str | None = None) -> list[str]:
    """The lines under a heading, up to the next blank line (or the line `until`)."""
    start = next((i for i, ln in enumerate(lines) if ln.startswith(head)), None)
    if start is None:
        return []
    out = []
    for ln in lines[start + 1:]:
        if not ln.strip() or (until is not None and ln.startswith(until)):
            break
        out.append(ln)
    return out


#: real summaries with what a trace alone lacks (tries, GPU conditions), from H200 runs
EVIDENCE = [ROOT / "docs" / "evidence" / "run_try_script_h200.json"]
#: recorded H200 runs whose tries were stacked (a fix kept on top, one reverted)
STACKED = [ROOT / "tests" / "data" / "corpus" / name
           for name in ("mingpt-adder-stack", "vae-mnist-stack")]


def evidence_case(path: Path) -> dict[str, Any]:
    """A saved H200 summary, brought to today's model, with its tries and conditions."""
    summary = to_builtins(from_builtins(json.loads(path.read_text())))
    # saved before summaries said what a step is: what that run's capture found
    summary["steps"]["definition"] = summary["steps"]["definition"] or step_definition(
        {"steps_by": "optimizer.step()", "micro_batches_per_step": 1}, "script")
    spikes = summary["steps"]["spikes"]
    for f in summary["findings"]:  # saved before findings named their tries and cost line
        f["try_fixes"] = f["try_fixes"] or list(TRIES_OF.get(f["category"], ()))
        f["cost_line"] = f["cost_line"] or cost_line(
            f, summary["steps"]["median_ms"], spikes["wall_ms"] if spikes else None)
    summary["source"]["path"] = None
    summary["timeline"] = None
    summary["ops"] = summary["ops"][:OP_ROWS]
    return {"name": path.stem, "summary": summary, "facts": facts(render_text(summary))}


def case(path: Path) -> dict[str, Any]:
    """One fixture: its trimmed summary and the facts its text report states (a run folder is
    analysed from a copy: the analysis writes its summary beside the trace)."""
    with tempfile.TemporaryDirectory() as tmp:
        if (path / "meta.json").is_file():
            path = Path(shutil.copytree(path, Path(tmp) / path.name))
        summary = analyze_path(path).to_json()
    summary["source"]["path"] = None
    summary["timeline"] = None  # the timeline has its own tests; parity reads the tables
    summary["ops"] = summary["ops"][:OP_ROWS]
    return {"name": path.name, "summary": summary, "facts": facts(render_text(summary))}


def table() -> list[dict[str, Any]]:
    return [case(p) for p in sorted(REAL.iterdir()) if p.is_dir()] + \
        [evidence_case(p) for p in EVIDENCE] + [case(p) for p in STACKED]


def test_the_committed_parity_table_is_what_python_says_now():
    committed = json.loads(TABLE.read_text())
    now = json.loads(json.dumps(table()))
    assert [c["name"] for c in committed] == [c["name"] for c in now]
    for old, new in zip(committed, now, strict=True):
        assert old["facts"] == new["facts"], old["name"]
        assert old["summary"]["verdict"] == new["summary"]["verdict"], old["name"]


def test_every_fixture_states_its_facts():
    cases = json.loads(TABLE.read_text())
    for c in cases:
        f = c["facts"]
        assert f["verdict_label"] and f["median"].endswith(("ms", "µs")), c["name"]
        assert f.get("ops"), c["name"]
    # the what-if parts are covered too: predictions, tries, conditions, cost
    assert any("predicted" in line for c in cases for _, line in c["facts"]["findings"])
    assert any(c["facts"]["tries"] for c in cases) and any(c["facts"]["whatif"] for c in cases)
    assert any(c["facts"]["measured"] for c in cases)
    assert any(c["facts"]["stack"] and c["facts"]["stack_code"] for c in cases)
    assert any(c["facts"]["step"] for c in cases)


if __name__ == "__main__":
    TABLE.write_text(json.dumps(table(), indent=None, ensure_ascii=False) + "\n")
    print(f"wrote {TABLE} ({TABLE.stat().st_size / 1e3:.0f} kB)", file=sys.stderr)
