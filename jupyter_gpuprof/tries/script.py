"""`jupyter gpuprof run --try FIXES -- python train.py`: the fixes measured on a script.

A script's step cannot be re-run in this process as the notebook's cell is, so each fix is one
more run of the same command in a fresh process, with the fix switched on at start-up
($JUPYTER_GPUPROF_TRY, tries/process.py). That process times only the unprofiled
baseline (the run's own warm-up and step counts, the same clock) and ends; its result lands
in the run's `tries/` folder, never as a run of its own. The tries are then judged against the
run's baseline and stored exactly as the magic's are (tries/cell.py `record_tries`).
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypedDict, cast

from ..advice.fix_table import FIX_NAMES, fixes_help, stack_name
from ..protocol import ENV_LOSSES, ENV_RANKS, ENV_SETTINGS, ENV_TRY, ENV_TRY_TIMEOUT
from ..terminal import say

if TYPE_CHECKING:  # the CLI imports this module for its option: numpy and the store can wait
    from ..store import Run
    from ..store.meta_blocks import TryMeta
    from ..views.summary_doc import SummaryDoc
    from .records import LossComparison
    from .stacking import Measure

#: a try may run this many times the run's own wall time, and never less than TRY_TIMEOUT_MIN_S
TRY_TIMEOUT_FACTOR = 3.0
TRY_TIMEOUT_MIN_S = 120.0

TRY_HELP = ("after the report, measure fixes by running the command again once per fix: "
            f"{fixes_help()} (default: the recommended ones)")


def add_try_option(add_argument: Callable[..., Any]) -> None:
    """Declare `--try [FIXES]` on `run` (an argparse-style `add_argument`)."""
    add_argument("--try", dest="try_fixes", nargs="?", const="auto", default=None,
                 metavar="FIXES", help=TRY_HELP)


def check_try(text: str | None, steps: int) -> None:
    """Refuse, before anything runs, a `--try` that cannot work (ValueError, one line)."""
    if text is None:
        return
    from .notebook import parse_fixes

    if steps < 1:
        raise ValueError("--try compares step times with the baseline: give --steps 1 or more")
    parse_fixes(text, [])  # an unknown name fails now, not after the run


def why_not(run: Run) -> str | None:
    """Why this run's fixes cannot be tried from the script, or None."""
    m = run.meta
    if m.status != "complete":
        return "the run did not complete: no baseline to compare the tries with"
    if (m.world_size or 1) > 1:
        return (f"the script ran {m.world_size} ranks; --try measures single-process scripts "
                "only")
    if m.settings.get("mode") != "script":
        return ("the script's own profile() block chose the steps; --try measures a script "
                "whose steps `run` finds (optimizer.step() or jupyter_gpuprof.step())")
    if not m.baseline.get("step_ms"):
        return "the run has no baseline steps to compare with"
    return None


class TrySettings(TypedDict):
    """The capture settings a try process starts with ($ENV_SETTINGS; CaptureSettings' fields)."""

    steps: int | None
    warmup: int | None
    wait: int
    prof_warmup: int
    active: int
    phases: bool
    count_flops: bool
    record_shapes: bool
    profile_memory: bool
    with_stack: bool
    memory_history: bool


def try_settings(run: Run) -> TrySettings:
    """The capture settings of a try: the run's warm-up and baseline, no profiler, and no
    allocator history (its stacks would slow the warm-up; the peak is max_memory_allocated)."""
    s = run.meta.settings
    return {"steps": s.get("steps"), "warmup": s.get("warmup"), "wait": 0, "prof_warmup": 0,
            "active": 1, "phases": bool(s.get("phases", True)), "count_flops": False,
            "record_shapes": False, "profile_memory": False, "with_stack": False,
            "memory_history": False}


def try_timeout_s(run: Run) -> float:
    """How long one try may run: $ENV_TRY_TIMEOUT seconds where set, else TRY_TIMEOUT_FACTOR
    times the run's own wall time (a try stops after its baseline: it needs less), at least
    TRY_TIMEOUT_MIN_S."""
    if given := os.environ.get(ENV_TRY_TIMEOUT):
        return float(given)
    try:  # `created` is local time, as mktime reads it
        began = time.mktime(time.strptime(run.meta.created, "%Y-%m-%dT%H:%M:%S%z"))
    except (ValueError, OverflowError):
        return TRY_TIMEOUT_MIN_S
    return max(TRY_TIMEOUT_MIN_S, TRY_TIMEOUT_FACTOR * (time.time() - began))


def run_one_try(run: Run, cmd: list[str], env: dict[str, str],
                fix: str) -> tuple[TryMeta, bool]:
    """Run the command once with `fix` on; its raw result (as tries/notebook.py gives)."""
    from ..store.try_files import (
        clear_try,
        last_log_line,
        open_try_log,
        read_try_result,
        try_log_path,
        try_result_name,
    )
    from .records import add_headline
    from .supervise import leashed, wait_try

    clear_try(run, fix)
    child_env = {**env, ENV_TRY: fix, ENV_SETTINGS: json.dumps(try_settings(run)),
                 ENV_LOSSES: fix,  # its first losses, beside the run's own
                 ENV_RANKS: "none"}  # the script's own profile() blocks stay inert
    timeout_s = try_timeout_s(run)
    with open_try_log(run, fix) as log:
        try:
            # own group, output capped, Ctrl-C escalated, leftovers killed (tries/supervise.py)
            with leashed(cmd, child_env, log) as proc:
                code, interrupted = wait_try(proc, timeout_s)
        except OSError as e:
            return {"fix": fix, "error": f"could not start {cmd[0]}: {e.strerror or e}"}, False
    # as the try process wrote it (tries/process.py)
    result = read_try_result(run, fix)
    if interrupted:
        return {"fix": fix, "error": "interrupted (Ctrl-C)"}, True
    if code is None:
        return {"fix": fix, "error": f"stopped after {timeout_s:.0f} s without finishing its "
                f"baseline (output: {try_log_path(run, fix)}); ${ENV_TRY_TIMEOUT} sets how "
                "long a try may run"}, False
    if result is None:
        if code == 0:
            error = ("the command ended without a training step in the try "
                     "(no optimizer.step() seen)")
        else:
            last = last_log_line(run, fix)
            error = (f"the command exited with status {code} before the try measured its steps"
                     + (f": {last[:300]}" if last else ""))
        return {"error": error, "fix": fix, "source": "script"}, False
    if result.get("error"):
        return {**result, "fix": fix, "source": "script"}, False
    steps = result.get("step_ms") or []
    if not _usable(steps):
        return {"fix": fix, "source": "script", "error": (
            f"its result ({try_result_name(fix)}) holds no usable step times")}, False
    add_headline(result, steps)
    return {**result, **_losses(run, fix), "fix": fix, "source": "script"}, False


def _usable(step_ms: list[float]) -> bool:
    """Step times a try can be judged on: some, each a finite positive number of ms."""
    try:
        return bool(step_ms) and all(math.isfinite(float(ms)) and ms > 0 for ms in step_ms)
    except (TypeError, ValueError, OverflowError):
        return False


def _losses(run: Run, fix: str) -> LossComparison:
    """The try's first losses against the run's own (both seeded alike at start-up)."""
    from ..store.try_files import read_losses
    from .notebook import loss_rel_diff

    original, fixed = read_losses(run, "original"), read_losses(run, fix)
    return {"loss_original": original, "loss_fixed": fixed,
            "loss_rel_diff": loss_rel_diff(original, fixed)}


def try_fixes_on_script(run: Run, cmd: list[str], env: dict[str, str],
                        text: str) -> dict[str, object]:
    """The run's summary (its JSON, report.run_summary), with the tries measured and stored
    when they can be."""
    from ..report import run_summary
    from ..store.try_files import try_log_path
    from .cell import record_tries
    from .notebook import parse_fixes

    summary = run_summary(run)
    findings = summary.get("findings") or []
    reason = why_not(run)
    fixes = [] if reason else parse_fixes(text, findings)
    if reason is None and not fixes:
        reason = ("none of the recommended fixes can be applied without editing code; name "
                  f"them: --try {','.join(FIX_NAMES)}")
    if reason:
        _say(f"--try: {reason}")
        return summary
    from ..advice.tries import CONTROL

    # the control first: the command once more without a fix, so a change no bigger than what
    # re-running alone makes (another process, minutes later) is never credited to a fix
    _say(f"control: the command runs again without a fix (output: "
         f"{try_log_path(run, CONTROL)})")
    control, interrupted = run_one_try(run, cmd, env, CONTROL)
    _say("control: " + (f"failed: {control['error']}" if control.get("error")
                        else f"{control['median_ms']:.3f} ms/step median"))
    raw: list[TryMeta] = []
    for i, fix in enumerate([] if interrupted else fixes, 1):
        _say(f"try {i}/{len(fixes)}: {fix} (the command runs again; its output goes to "
             f"{try_log_path(run, fix)})")
        result, interrupted = run_one_try(run, cmd, env, fix)
        _say(f"try {fix}: " + (f"failed: {result['error']}" if result.get("error")
                               else f"{result['median_ms']:.3f} ms/step median"))
        raw.append(result)
        if interrupted:
            break
    tries = record_tries(run, summary, raw, control)
    out: dict[str, object] = {**summary, "tries": tries}
    if not interrupted:
        from .stacking import record_stack, stack_fixes

        measure = stack_measure(run, cmd, env, {t["fix"]: t for t in raw})
        stack = stack_fixes(tries, control, measure, run.meta.training, say=_say)
        if stack is not None:
            out = record_stack(run, out, stack)
    from ..report.calibration import with_calibration

    # the record now holds these tries too
    return with_calibration(str(run.path), run.meta, out)


def stack_measure(run: Run, cmd: list[str], env: dict[str, str],
                  measured: Mapping[str, TryMeta]) -> Measure:
    """Measure a stack step of a script: the command once more with the kept fixes and the
    added one switched on at start-up, against the kept stack's own run (`measured`: the raw
    tries so far, by name; each new one is added)."""
    done = dict(measured)

    def measure(kept: list[str], added: str) -> tuple[TryMeta, TryMeta]:
        name = stack_name([*kept, added])
        stacked, interrupted = run_one_try(run, cmd, env, name)
        if interrupted:
            stacked = {"fix": name, "error": "interrupted (Ctrl-C)"}
        done[name] = stacked
        return done[stack_name(kept)], stacked

    return measure


def print_report_with_tries(run: Run, cmd: list[str], env: dict[str, str], text: str,
                            as_json: bool) -> None:
    """`run --try`'s output: the report with its tries, then the next step by measured gain."""
    try:
        summary = try_fixes_on_script(run, cmd, env, text)
    except Exception as e:  # noqa: BLE001 - a try gone wrong never costs the run's own report
        from ..oneline import error_line
        from ..report import run_summary

        _say(f"--try stopped: {error_line(e, with_type=True)}; the report without the tries "
             "follows")
        summary = run_summary(run)
    if as_json:
        say(json.dumps(summary))
        return
    from ..views.text import render_text
    from .cell import next_step_line

    say(render_text(cast("SummaryDoc", summary)))  # run_summary's, with the judged tries
    findings, tries = summary.get("findings"), summary.get("tries")
    if (line := next_step_line(findings if isinstance(findings, list) else [],
                               cast("list[TryMeta]", tries or []))):
        say(line)


def _say(line: str) -> None:
    """Progress and reasons go to stderr, like the rest of `run`'s own messages."""
    say(f"gpuprof: {line}", err=True)
