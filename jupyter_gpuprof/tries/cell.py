"""The `--try` part of `%%gpuprofile`: after the report, try the fixes on the cell's step.

Kept out of magics.py so the magic stays parsing and delegation: this runs the tries
(tries/notebook.py), judges them against their control, the cell's step again without a
fix (advice/tries.py), stores them in the run's meta and prints them under the report.
`record_tries` and `next_step_line` serve `jupyter gpuprof run --try` too (tries/script.py),
so both store and rank alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from ..advice.fix_table import fixes_help
from ..store import Run
from ..store.meta_blocks import TryMeta
from ..terminal import say
from ..views.summary_doc import StackDoc, TryDoc


def try_after_report(shell: Any, run: Run, code: Any, args: Any) -> list[TryMeta]:
    """Run, judge, save and print the tries; a problem is printed, never raised."""
    if code is None:
        say("gpuprofile --try: a whole-loop cell cannot be re-run per step; "
              "put one step in the cell (--body) to try fixes")
        return []
    from ..report import run_summary
    from ..views.whatif_text import stack_lines, try_lines
    from .notebook import parse_fixes, run_tries
    from .stacking import in_kernel, record_stack, stack_fixes

    summary = run_summary(run)
    findings = summary.get("findings") or []
    try:
        fixes = parse_fixes(args.try_fixes, findings)
    except ValueError as e:
        say(f"gpuprofile: {e}")
        return []
    if not fixes:
        say("gpuprofile --try: none of the recommended fixes can be applied without editing "
              f"code; name them: --try {fixes_help()}")
        return []
    ns = shell.user_ns
    step = lambda: exec(code, ns)  # noqa: E731 - the cell's step, as the baseline ran it
    control, raw = run_tries(step, ns, fixes, warmup=args.warmup, steps=args.steps)
    tries = record_tries(run, summary, raw, control)
    say("\n".join(try_lines(cast("list[TryDoc]", tries))))  # the summary's tries, judged
    stack = stack_fixes(tries, control, in_kernel(step, ns, args.warmup, args.steps),
                        run.meta.training)
    if stack is not None:
        record_stack(run, {**summary, "tries": tries}, stack)
        say("\n".join(stack_lines(cast("StackDoc", stack))))
    if (line := next_step_line(findings, tries)) is not None:
        say(line)
    return tries


def judged(run: Run, summary: Mapping[str, object], raw: list[TryMeta],
           control: TryMeta | None = None) -> list[TryMeta]:
    """The run's measured tries judged against the control (the run's baseline when the
    control failed), beside the findings' predictions; nothing is kept."""
    from ..advice.tries import judge_tries, memory_offers

    findings = summary.get("findings")
    return judge_tries(raw, list(run.meta.baseline.get("step_ms") or []),
                       (run.meta.conditions or {}).get("baseline"),
                       findings if isinstance(findings, list) else [], control,
                       memory_offers(summary.get("memory")))


def record_tries(run: Run, summary: Mapping[str, object], raw: list[TryMeta],
                 control: TryMeta | None = None) -> list[TryMeta]:
    """Judge measured tries against the control (the step or command again, no fix; the run's
    baseline when it failed); keep them in its meta and summary. `summary`: the report's
    summary JSON (report.run_summary)."""
    tries = judged(run, summary, raw, control)
    run.meta.tries = tries
    run.write_meta()
    append_to_record(run, summary, tries)
    run.write_summary({**summary, "tries": tries})  # the cached report shows them too
    return tries


def append_to_record(run: Run, summary: Mapping[str, object], tries: list[TryMeta]) -> None:
    """Append the judged tries to the runs root's calibration record; a record that cannot be
    written is said on stderr and never fails the tries."""
    import time

    from ..advice.calibration import entries_of_tries, workload_fingerprint
    from ..store.calibration import append_entries

    kernels = summary.get("kernels")
    names = [str(k.get("name")) for k in kernels if isinstance(k, Mapping)] \
        if isinstance(kernels, list) else []
    entries = entries_of_tries(
        tries, gpu_name=run.meta.env.get("gpu_name"),
        workload=workload_fingerprint(run.meta.code, names), run_id=run.id,
        source="script" if any(t.get("source") == "script" for t in tries) else "notebook",
        created=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    try:
        append_entries(run.path.parent, entries)
    except OSError as e:
        say(f"gpuprof: the tries were not added to the calibration record: {e}",
              err=True)


def next_step_line(findings: Sequence[Mapping[str, object]],
                   tries: list[TryMeta]) -> str | None:
    """'Next step by measured gain: …' when a try measured a significant gain."""
    from ..advice.tries import rerank_findings

    ranked = rerank_findings(findings, tries)
    if not ranked or ranked[0].get("measured_gain_pct") is None:
        return None
    return (f"Next step by measured gain: [{ranked[0]['category']}] {ranked[0]['title']} "
            f"({ranked[0]['measured_gain_pct']:.0f}% measured)")
