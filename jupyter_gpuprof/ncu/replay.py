"""Op replay: profile a run's hottest kernels under ncu by rebuilding the op calls that launched
them (`targets`) in a fresh process running `replay_script.py`.

This profiles kernels without rerunning (or even having) the user's program, the way
Inductor's `--ncu`, TraceLens EventReplay and PARAM et_replay do. The script is standalone
(only torch) and is kept in the run folder with its parameters, so a replay can be rerun by
hand. Inputs are random: kernels whose speed depends on values (indexing, sparsity) are
approximations, and cuBLAS may pick another algorithm, so replayed kernel names are checked
against the recorded ones (`metrics.attribute_targets`, `name_match`).
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, cast

from .driver import build_command, export_csv, find_ncu, ncu_version, run_ncu
from .options import NcuOptions
from .targets import OUTER_RANGE, TARGET_RANGE_PREFIX, ReplayTarget, ReplayTargetJson

if TYPE_CHECKING:  # the script imports torch: its types only, never the module
    from .replay_script import ReplayOp, ReplayParams

#: prefix of the status lines the script prints, one per target
MARK = "GPUPROF_REPLAY "
#: kernels profiled per replayed op at most (an op rarely launches more)
KERNELS_PER_OP = 6
#: the script's source, next to this module; copied, never imported here (it imports torch)
SCRIPT_PATH = Path(__file__).with_name("replay_script.py")
TARGET_FIELDS = ("index", "op", "dims", "types", "strides", "concrete")


class ReplayRun(TypedDict):
    """What one replay under ncu left: its report, CSV exports, script, parameters, targets."""

    report: Path
    raw: str
    details: str
    script: str
    params: ReplayParams
    seconds: float
    ncu_version: str
    command: list[str]
    targets: list[ReplayTargetJson]


def replay_params(
    targets: list[ReplayTarget], warmup: int = 3, limit: int | None = None
) -> ReplayParams:
    """What the script needs: the replayable targets, and how many of them to profile."""
    data = [
        cast("ReplayOp", {k: v for k, v in asdict(t).items() if k in TARGET_FIELDS})
        for t in targets
        if not t.skip_reason
    ]
    return {
        "targets": data,
        "warmup": warmup,
        "limit": len(data) if limit is None else limit,
        "outer_range": OUTER_RANGE,
        "target_range_prefix": TARGET_RANGE_PREFIX,
        "mark": MARK,
    }


def write_replay(workdir: str | Path, params: ReplayParams) -> list[str]:
    """Copy the script and its parameters into `workdir`; the argv that runs it (after python).

    A copy, not the package's file: run from inside the package, its folder would come first
    on sys.path and shadow standard modules with ours.
    """
    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    script = work / "replay.py"
    shutil.copyfile(SCRIPT_PATH, script)
    (work / "replay.json").write_text(json.dumps(params))
    return [str(script), str(work / "replay.json")]


def replay_status(output: str) -> dict[int, str]:
    """Per-target status the script printed: '' (ran), 'unused' (a spare), or the error."""
    out: dict[int, str] = {}
    for line in output.splitlines():
        if MARK in line:
            try:
                d = json.loads(line.split(MARK, 1)[1])
            except ValueError:
                continue
            st = d.get("status")
            out[int(d["index"])] = (
                ""
                if st == "ok"
                else ("unused" if st == "unused" else str(d.get("error", "failed")))
            )
    return out


def run_replay(
    targets: list[ReplayTarget],
    workdir: str | Path,
    opts: NcuOptions | None = None,
    ncu: str | None = None,
    python: str | None = None,
    top: int | None = None,
) -> ReplayRun:
    """Profile the targets' replays under ncu: report, CSV exports, script, per-target status.

    Marks each live target `profiled` (it ran inside the range) or gives its `skip_reason`.
    """
    opts = opts or NcuOptions()
    exe = find_ncu(ncu)
    version = ncu_version(exe)
    live = [t for t in targets if not t.skip_reason]
    if not live:
        reasons = (
            "; ".join(f"{t.op}: {t.skip_reason}" for t in targets) or "no kernels in the trace"
        )
        raise ValueError(f"nothing to replay ({reasons}); use %%ncu with an NVTX range instead")
    work = Path(workdir)
    limit = min(top or len(live), len(live))
    params = replay_params(targets, limit=limit)
    script_argv = write_replay(work, params)
    opts.nvtx_include = [OUTER_RANGE]
    opts.launch_count = opts.launch_count or KERNELS_PER_OP * limit
    base = work / "replay"
    cmd = build_command(exe, opts, base, [python or sys.executable, *script_argv])
    result = run_ncu(cmd, base.with_suffix(".ncu-rep"), opts, cwd=work)
    raw = export_csv(exe, result.report, "raw")
    details = export_csv(exe, result.report, "details")
    status = replay_status(result.output)
    for t in live:
        st = status.get(t.index, "did not run (no status printed)")
        t.profiled = st == ""
        t.skip_reason = "" if st == "unused" else st
    return {
        "report": result.report,
        "raw": raw,
        "details": details,
        "script": SCRIPT_PATH.read_text(),
        "params": params,
        "seconds": result.seconds,
        "ncu_version": ".".join(map(str, version)),
        "command": cmd,
        "targets": [cast(ReplayTargetJson, asdict(t)) for t in targets],
    }
