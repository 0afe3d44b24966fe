"""Training scripts run under `jupyter gpuprof run` by the loop tests: each logs its own
iteration times (the script's own clock) to the file it is given."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from jupyter_gpuprof.cli import main
from jupyter_gpuprof.store import RunStore

#: every script logs its iterations' wall time (its own clock) to the file it is given
LOG = """
import json, sys, time
_times, _t = [], [time.perf_counter()]
def tick():
    now = time.perf_counter(); _times.append(1e3 * (now - _t[0])); _t[0] = now
def save():
    json.dump(_times, open(sys.argv[1], "w"))
"""

FLAGS = ["--steps", "12", "--warmup", "2", "--wait", "1", "--prof-warmup", "1", "--active", "3",
         "--no-flops"]


def run_script(tmp_path: Path, code: str) -> tuple[object, list[float]]:
    script, log = tmp_path / "train.py", tmp_path / "own_log.json"
    script.write_text(code)
    rc = main(["run", "--runs-root", str(tmp_path / "runs"), *FLAGS, "--", sys.executable,
               str(script), str(log)])
    assert rc == 0
    (run,) = RunStore(tmp_path / "runs").list()
    assert run.meta.status == "complete", run.meta.error
    return run, json.loads(log.read_text())
