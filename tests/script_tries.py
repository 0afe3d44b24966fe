"""`jupyter gpuprof run --try` on a test script: the run, and what each try printed."""

from __future__ import annotations

import sys

from jupyter_gpuprof.cli import main
from jupyter_gpuprof.store import RunStore

FLAGS = ["--steps", "4", "--warmup", "2", "--wait", "0", "--prof-warmup", "0", "--active", "2"]
STEPS = 1 + 2 + 4 + 2  # what the run needs; a try stops after 1 + 2 + 4


def run_try_on(tmp_path, path, fixes, *extra):
    """`run --try FIXES` on the script at `path`: exit status and the run."""
    root = tmp_path / "runs"
    argv = ["run", "--runs-root", str(root), *FLAGS, *extra]
    argv += ["--try", fixes] if fixes else ["--try"]
    rc = main([*argv, "--", sys.executable, str(path)])
    runs = RunStore(root).list()
    assert len(runs) == 1, runs  # the tries are part of the run, never runs of their own
    return rc, runs[0]


def try_log(run, fix):
    """What the script printed in the try of `fix`, by line head ('loader', 'tf32', 'step')."""
    out: dict[str, list[list[str]]] = {}
    for line in (run.path / "tries" / f"{fix}.log").read_text().splitlines():
        head, *rest = line.split()
        out.setdefault(head, []).append(rest)
    return out
