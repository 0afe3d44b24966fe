"""An IPython shell running `%%gpuprofile` killed (SIGKILL, as a kernel is by a restart or the
OOM killer) at each stage, all at once into one runs root: the run is listed `interrupted`
with what was kept, or `complete` with a trace that reads, never `complete` with a broken
trace, and the other runs are untouched.

The cell is one step (body mode) and counts its calls, so it kills its own shell at a precise
call: the baseline (call 3), the profiled capture (call 7); inside the trace's compression (the
store's copy patched in the shell), inside the analysis (patched too), or in a try of `--try`
(a call after the capture's 7).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from fault_marks import with_trace_kill
from paths import ROOT

from jupyter_gpuprof.store import RunStore
from jupyter_gpuprof.store.temp_files import is_temp, sweep

FLAGS = "--steps 4 --warmup 1 --wait 0 --prof-warmup 0 --active 2 --no-flops --body"
SHELL = with_trace_kill("""
import os, shutil, signal, sys
from IPython.testing import globalipapp

stage, root = sys.argv[1], sys.argv[2]


def killed(*args, **kwargs):
    print("killed at", stage, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


{HALF_TRACE_THEN_KILLED}
if stage == "analysis":
    import jupyter_gpuprof.report as report
    report.analyze_run = killed
shell = globalipapp.start_ipython() or globalipapp.get_ipython()
shell.run_line_magic("load_ext", "jupyter_gpuprof")
shell.run_cell('''
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(8, 8)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
calls = 0
''')
kill_at = {"baseline": 3, "capture": 7, "try": 9}.get(stage)
shell.user_ns["kill_at"], shell.user_ns["killed"] = kill_at, killed
extra = "--try tf32" if stage == "try" else ""
shell.run_cell(f'''%%gpuprofile {FLAGS} --name {stage.replace(" ", "_")} --runs-root {root} {extra}
calls += 1
if calls == kill_at:
    killed()
opt.zero_grad()
model(torch.randn(4, 8)).square().mean().backward()
opt.step()
''')
print("the shell was not killed")
""".replace("{FLAGS}", FLAGS))
STAGES = ("baseline", "capture", "trace write", "analysis", "try")


def _trace_reads(path: Path) -> bool:
    return isinstance(json.loads(gzip.decompress(path.read_bytes())).get("traceEvents"), list)


def test_shells_killed_at_each_stage_leave_interrupted_or_sound_runs(tmp_path):
    root = tmp_path / "runs"
    keep = root / "20260101-000000-kept"
    shutil.copytree(ROOT / "tests" / "data" / "real" / "compute", keep)
    before = {p.name: p.read_bytes() for p in keep.iterdir()}
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    procs = {stage: subprocess.Popen([sys.executable, "-c", SHELL, stage, str(root)], env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
             for stage in STAGES}
    outputs = {stage: p.communicate(timeout=240)[0].decode() for stage, p in procs.items()}
    for stage, p in procs.items():
        assert p.returncode == -signal.SIGKILL, (stage, outputs[stage][-2000:])
        assert f"killed at {stage}" in outputs[stage], (stage, outputs[stage][-2000:])
    runs = {r.meta.name.replace("_", " "): r for r in RunStore(root).list() if not r.broken}
    assert sorted(runs) == sorted([*STAGES, "compute"]), sorted(runs)
    for stage in ("baseline", "capture", "trace write"):
        run = runs[stage]
        assert run.status == "interrupted", (stage, run.status)
        assert run.trace_paths() == [] and not (run.path / "summary.json").exists(), stage
        assert run.meta.code.startswith("calls += 1")  # what it profiled is kept
    for stage in ("analysis", "try"):
        run = runs[stage]
        assert run.status == "complete", (stage, run.status)
        assert _trace_reads(run.trace_paths()[0]), stage
        assert run.meta.tries == []
    # what the shell killed in the trace write left is swept by the next store start-up (a
    # later shell's first run), else here
    sweep(root, include_tmpdir=False)
    assert [p for p in root.rglob("*") if is_temp(p.name)] == []
    assert {p.name: p.read_bytes() for p in keep.iterdir()} == before
