"""Every committed notebook still works: the CPU ones run, the GPU ones call only what exists.

The CPU notebooks are executed by `scripts/execute_notebook.sh`, the script the README's main
command (`scripts/example.sh`) runs them with; the GPU ones are read by `notebook_calls`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from notebook_calls import check_notebook
from paths import ROOT

from jupyter_gpuprof.report import build

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
RUNS_ON = ("cpu", "gpu")


def _runs_on(path: Path) -> str:
    return str(nbformat.read(path, as_version=4).metadata.get("jupyter_gpuprof", {})
               .get("runs_on"))


CPU = [p for p in NOTEBOOKS if _runs_on(p) == "cpu"]


def test_every_committed_notebook_says_where_it_runs():
    """A notebook without the mark would be neither executed nor read: it must say."""
    assert NOTEBOOKS and CPU
    assert {p.name: _runs_on(p) for p in NOTEBOOKS if _runs_on(p) not in RUNS_ON} == {}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_calls_only_names_that_exist(path):
    """Report attributes, summary keys, magic options and CLI flags, read from the code."""
    calls = check_notebook(path)
    assert [str(p) for p in calls.problems] == []
    # it read something of ours: a notebook that uses a report checks its names
    assert calls.checked and calls.magics


@pytest.mark.parametrize("path", CPU, ids=lambda p: p.name)
def test_cpu_notebook_executes_headlessly(path, tmp_path):
    """Executed as the README's main command executes it; a cell that raises fails the test."""
    env = dict(os.environ, JUPYTER_GPUPROF_RUNS=str(tmp_path / "runs"),
               PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    done = subprocess.run(["bash", str(ROOT / "scripts/execute_notebook.sh"), str(path),
                           str(tmp_path / "out")], env=env, capture_output=True, text=True,
                          timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    executed = tmp_path / "out" / path.name
    nb = json.loads(executed.read_text())
    outputs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    assert not [o for o in outputs if o["output_type"] == "error"]
    assert all(c.get("execution_count") for c in nb["cells"] if c["cell_type"] == "code")
    html = (tmp_path / "out" / f"{path.stem}.html").read_text()
    assert "Step time" in html and "Verdict" in html  # the reports' static copies are there
    if path.name == "quickstart.ipynb":
        _leads_with_a_verdict(nb)


def _leads_with_a_verdict(nb: dict) -> None:
    """The first output a new user sees: verdict, the fix as code, the gain, how to try it."""
    first = next(c for c in nb["cells"] if c["cell_type"] == "code" and c["outputs"])
    text = "".join("".join(o.get("text", "")) for o in first["outputs"])
    # the headline states the finding's one cost line ("… gain ≈82%")
    assert "Verdict: precision" in text and "Top fix:" in text and "gain ≈" in text
    assert "allow_tf32 = True" in text and "--try" in text


def test_committed_quickstart_leads_with_a_verdict_its_fix_and_its_worth():
    _leads_with_a_verdict(json.loads((ROOT / "notebooks/quickstart.ipynb").read_text()))


def _notebook(tmp_path: Path, *cells: str) -> Path:
    path = tmp_path / "probe.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]),
                   path)
    return path


GOOD = [
    "%load_ext jupyter_gpuprof",
    "%%gpuprofile --steps 5 --try amp -o r\nstep()",
    "j = r.to_json()\nprint(j['steps']['median_ms'], r.verdict.category, r.step_table.head())\n"
    "f = next(f for f in j['findings'] if f['id'] == 'x')\nprint(f['where']['code'])\n"
    "top = j['findings'][0] if j['findings'] else {}\nprint(top.get('expected_gain_pct'))",
    "for n in ['r']:\n    q = globals()[f'r{n[1:]}']\n    print(q.advice.findings[0].fix)",
    "!jupyter gpuprof analyze .gpuprof/runs/x --json",
    "%%time\n%ncu --top 3 --set basic",
    "from jupyter_gpuprof.report import analyze_path\nprint(analyze_path('x').ops)",
]


def test_the_reader_passes_code_that_uses_what_exists(tmp_path):
    calls = check_notebook(_notebook(tmp_path, *GOOD))
    assert [str(p) for p in calls.problems] == []
    for name in ("Report.step_table", "Steps['median_ms']", "Where['code']", "Finding.fix",
                 "Finding['expected_gain_pct']", "jupyter_gpuprof.report.analyze_path"):
        assert name in calls.checked
    assert len(calls.magics) == 3


@pytest.mark.parametrize(("cell", "said"), [
    ("r.steps.head()", "Report has no attribute 'steps'"),
    ("r.to_json()['steps']['median']", "Steps has no key 'median'"),
    ("r.to_json().steps", "read it by key"),
    ("r.verdict.label", "Verdict has no attribute 'label'"),
    ("[f['fixx'] for f in r.to_json()['findings']]", "Finding has no key 'fixx'"),
    ("r.advice.findings[0].fixes", "Finding has no attribute 'fixes'"),
    ("%%gpuprofile --stepz 3\nstep()", "%%gpuprofile --stepz 3"),
    ("%ncu --topp 3", "%ncu --topp 3"),
    ("!jupyter gpuprof run --tryy amp -- python t.py", "the CLI refuses"),
    ("from jupyter_gpuprof.report import analyse_path", "has no analyse_path"),
])
def test_the_reader_names_what_no_longer_exists(tmp_path, cell, said):
    calls = check_notebook(_notebook(tmp_path, GOOD[1], cell))
    assert any(said in str(p) for p in calls.problems), calls.problems


def test_renaming_a_report_attribute_a_committed_notebook_uses_fails(monkeypatch):
    """The rule itself: take away `Report.step_table` and the quickstart's use of it is named."""
    before = check_notebook(ROOT / "notebooks/quickstart.ipynb")
    assert not before.problems and "Report.step_table" in before.checked
    monkeypatch.delattr(build.Report, "step_table")
    after = check_notebook(ROOT / "notebooks/quickstart.ipynb")
    assert [p.text for p in after.problems] == ["Report has no attribute 'step_table'"]
