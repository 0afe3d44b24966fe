"""`jupyter gpuprof run` killed (SIGKILL, the whole job) at each stage, several at once into
one runs root: a run is listed `interrupted` with what was kept, or `complete` with a trace that
reads, never `complete` with a broken trace; the other runs are untouched; the temporary files
the killed writers left are swept at the next start-up.

Each script kills its own job at a precise point: at a step of the baseline or of the profiled
capture (counted from the flags below), inside the trace's compression (the store's copy
patched in the script's process), inside the analysis (`run`'s own process, patched by a
wrapper) or inside a try (the try process kills `run` and itself).
"""

from __future__ import annotations

import gzip
import hashlib
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

# step 1 starts the count, 2 is the warm-up, 3-6 the baseline, 7-8 the profiled capture
FLAGS = ["--steps", "4", "--warmup", "1", "--wait", "0", "--prof-warmup", "0", "--active", "2",
         "--no-flops"]
TRAIN = with_trace_kill("""
import os, shutil, signal, sys
import torch
from torch import nn

STAGE = sys.argv[1]


def kill_job():
    print("killed at", STAGE, flush=True)
    os.killpg(os.getpgrp(), signal.SIGKILL)


stage, killed = STAGE, kill_job
{HALF_TRACE_THEN_KILLED}
if STAGE == "try" and os.environ.get("JUPYTER_GPUPROF_TRY") == "tf32":
    # a try's output goes to its log, through `run`: the mark is a file of its own
    open(os.path.join(os.environ["JUPYTER_GPUPROF_RUN_DIR"], "killed-at-try"), "w").close()
    os.kill(os.getppid(), signal.SIGKILL)  # `run`, waiting for this try
    os.kill(os.getpid(), signal.SIGKILL)
torch.manual_seed(0)
model = nn.Linear(8, 8)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(1, 13):
    if (STAGE, step) in (("baseline", 4), ("capture", 8)):
        kill_job()
    opt.zero_grad()
    model(torch.randn(4, 8)).square().mean().backward()
    opt.step()
""")
RUN_KILLED_IN_ANALYSIS = """
import os, signal, sys
import jupyter_gpuprof.report.build as build
from jupyter_gpuprof.cli import main


def killed(*args, **kwargs):
    print("killed at analysis", flush=True)
    os.killpg(os.getpgrp(), signal.SIGKILL)


build.analyze_run = killed
sys.exit(main(sys.argv[1:]))
"""
STAGES = ("baseline", "capture", "trace write", "analysis", "try")


def _digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _temp_files(*folders: Path) -> list[str]:
    return [p.name for f in folders for p in f.rglob("*") if is_temp(p.name)]


def _trace_reads(path: Path) -> bool:
    return isinstance(json.loads(gzip.decompress(path.read_bytes())).get("traceEvents"), list)


def test_runs_killed_at_each_stage_are_interrupted_or_sound_and_others_untouched(tmp_path):
    root, tmpdir = tmp_path / "runs", tmp_path / "tmpdir"
    tmpdir.mkdir()
    keep = root / "20260101-000000-kept"
    shutil.copytree(ROOT / "tests" / "data" / "real" / "compute", keep)
    before = _digests(keep)
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    env = {**os.environ, "TMPDIR": str(tmpdir), "JUPYTER_GPUPROF_TRY_TIMEOUT_S": "60"}
    procs = {}
    for stage in STAGES:  # all at once: five writers into one runs root
        head = ([sys.executable, "-c", RUN_KILLED_IN_ANALYSIS] if stage == "analysis"
                else [sys.executable, "-m", "jupyter_gpuprof"])
        extra = ["--try", "tf32"] if stage == "try" else []
        procs[stage] = subprocess.Popen(
            [*head, "run", "--runs-root", str(root), "--name", stage, *FLAGS, *extra, "--",
             sys.executable, str(script), stage],
            env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    outputs = {stage: p.communicate(timeout=240)[0].decode() for stage, p in procs.items()}
    for stage, p in procs.items():
        assert p.returncode == -signal.SIGKILL, (stage, outputs[stage][-2000:])
        assert stage == "try" or f"killed at {stage}" in outputs[stage], outputs[stage][-2000:]

    runs = {r.meta.name: r for r in RunStore(root).list() if not r.broken}
    assert sorted(runs) == sorted([*STAGES, "compute"]), sorted(runs)
    for stage in ("baseline", "capture", "trace write"):
        run = runs[stage]
        assert run.status == "interrupted", (stage, run.status)
        assert run.trace_paths() == [] and not (run.path / "summary.json").exists(), stage
        assert run.meta.code and run.meta.settings["steps"] == 4  # what it was is kept
    for stage in ("analysis", "try"):  # the capture had finished: its trace is whole
        run = runs[stage]
        assert run.status == "complete", (stage, run.status)
        assert [p.name for p in run.trace_paths()] == ["trace.json.gz"]
        assert _trace_reads(run.trace_paths()[0]), stage
        assert run.meta.tries == []  # a try that never finished is never recorded
    assert (runs["try"].path / "killed-at-try").exists()
    # the export never goes to $TMPDIR (torch's own caches may)
    assert [p.name for p in tmpdir.rglob("*") if "gpuprof" in p.name] == []
    # what the job killed in the trace write left is swept by the next store start-up (another
    # job's first run, if it started later), else here: its writer is dead
    sweep(root, include_tmpdir=False)
    assert _temp_files(root) == []
    assert _digests(keep) == before
