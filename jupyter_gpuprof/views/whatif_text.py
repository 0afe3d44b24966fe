"""Text lines for the what-if parts of a summary: cost headline, conditions, predictions, tries."""

from __future__ import annotations

from collections.abc import Sequence

from .. import units
from .memory_text import tried_memory
from .summary_doc import (
    CalibrationDoc,
    ConditionsDoc,
    FindingDoc,
    StackDoc,
    SummaryDoc,
    TryDoc,
)


def whatif_header(s: SummaryDoc) -> list[str]:
    """What the idle share costs, and the GPU conditions of the baseline."""
    out = []
    if (cost := s["cost"]) is not None and (h := cost["headline"]) is not None:
        out.append(h)
    if conditions := s["conditions"]:
        out.append(f"Conditions (baseline): {describe(conditions)}")
    return out


def one_time_lines(s: SummaryDoc) -> list[str]:
    """The one-time costs the trace holds (start-up, module loading, graph capture, allocator
    growth): named, and kept out of the step's figures."""
    rows = s.get("one_time") or []
    if not rows:
        return []
    return ["One-time costs in the trace (kept out of the step): " + "; ".join(
        f"{r['kind']} {r['name']} {units.us(r['dur_us'])}" for r in rows[:5])
        + (f"; {len(rows) - 5} more" if len(rows) > 5 else "")]


def try_hint(f: FindingDoc) -> str | None:
    """How to measure a finding's fix before editing any code, when `--try` can apply it."""
    names = ",".join(f.get("try_fixes") or [])
    if not names:
        return None
    return (f"Measure it first: %%gpuprofile --try {names} (a cell) or "
            f"jupyter gpuprof run --try {names} -- python train.py (a script)")


def tries_of(f: FindingDoc, tries: Sequence[TryDoc] | None) -> list[TryDoc]:
    """The tries of a finding's fix (the `--try` fixes that apply it), in the tries' order."""
    return [t for t in tries or [] if t.get("fix") in (f.get("try_fixes") or [])]


def measured_for(f: FindingDoc, tries: Sequence[TryDoc] | None) -> str | None:
    """What the tries of a finding's fix measured, beside its prediction, and which crashed."""
    mine = tries_of(f, tries)
    done = [t for t in mine if isinstance(t.get("measured_gain_pct"), (int, float))]
    failed = [t for t in mine if t.get("error")]
    if not done and not failed:
        return None
    return ("Measured: " if done else "Tried: ") + "; ".join(
        [f"--try {t['fix']} {units.signed_pct(t['measured_gain_pct'])} "
         f"({ch['verdict'] if (ch := t.get('change')) else 'not judged'})" for t in done]
        + [f"--try {t['fix']} crashed: {t['error']}"
           + (f" (remedy: {t['remedy']})" if t.get("remedy") else "") for t in failed])


def try_line(t: TryDoc) -> list[str]:
    """One try as the report writes it: measured against its prediction, or why it failed."""
    if t.get("error"):
        out = [f"  {t['fix']:<8} failed: {t['error']}"]
        if t.get("cause"):
            out.append(f"           why: {t['cause']}")
        if t.get("remedy"):
            out.append(f"           remedy: {t['remedy']}")
        return out
    ch = t.get("change")
    low, high = (ch["ci_low_pct"], ch["ci_high_pct"]) if ch else (None, None)
    ci = (f"95% CI [{units.signed_pct(-high)}, {units.signed_pct(-low)}]"
          if low is not None and high is not None else "")
    pred, loss = t.get("predicted_gain_pct"), t.get("loss_rel_diff")
    line = (f"  {t['fix']:<8} {units.ms(t.get('median_ms'))}, measured gain "
            f"{units.signed_pct(t.get('measured_gain_pct'))} {ci} "
            f"{(ch['verdict'] if ch else '').upper()}"
            + (f"; predicted {units.pct(pred)}" if isinstance(pred, (int, float)) else "")
            + (f"; {tried_memory(m)}" if (m := t.get("memory"))
               else f"; peak memory {units.gb(t['peak_memory_bytes'])}"
               if t.get("peak_memory_bytes") else "")
            + (f"; loss differs {units.pct(100 * loss, 2)} over the first steps"
               if isinstance(loss, (int, float)) else ""))
    out = [line]
    if ch and ch["unreliable_reasons"]:
        out.append(f"           unreliable: {'; '.join(ch['unreliable_reasons'])}")
    return out


def try_lines(tries: Sequence[TryDoc] | None) -> list[str]:
    """The fixes tried in the live kernel, with what they measured against the prediction."""
    if not tries:
        return []
    out = ["", "Fixes tried (measured like the baseline; ranked by measured gain):"]
    for t in tries:
        out += try_line(t)
    blind = [t["fix"] for t in tries if t.get("source") == "script" and not t.get("error")
             and not isinstance(t.get("loss_rel_diff"), (int, float))]
    if blind:
        # the loss is what the script calls .backward() on; where none was seen, never guess
        out.append(f"  Loss not compared for {', '.join(blind)}: no scalar .backward() in the "
                   "script's first steps; each try's own output is in the run's "
                   "tries/<fix>.log")
    return out


def stack_lines(st: StackDoc | None) -> list[str]:
    """The fixes stacked: each step on top of the ones kept before it, all kept fixes together
    against the control, and the code that applies them."""
    if not st:
        return []
    out = ["", "Fixes stacked (each tried on top of the ones kept before it; a kept fix holds "
               f"the first losses within {units.pct(100 * st['loss_tolerance'])} of the "
               "original's):"]
    if st["fixes"]:
        out.append(f"  {st['fixes'][0]:<18} kept first: the best gain measured alone")
    for t in st["steps"]:
        ch = t.get("change")
        low, high = (ch["ci_low_pct"], ch["ci_high_pct"]) if ch else (None, None)
        ci = (f" 95% CI [{units.signed_pct(-high)}, {units.signed_pct(-low)}]"
              if low is not None and high is not None else "")
        gain = units.signed_pct(t.get("measured_gain_pct"))
        what = (f"failed: {t['error']}" if t.get("error")
                else f"{units.ms(t.get('median_ms'))}, gain {gain}{ci}")
        out.append(f"  {t['fix']:<18} {what}: {t.get('why') or ''}")
    if st["skipped"]:
        out.append(f"  not tried on top: {'; '.join(st['skipped'])}")
    if st["why_none"]:
        out.append(f"  {st['why_none']}")
    if st["fixes"] and st["median_ms"] is not None:
        out.append(f"All kept fixes together ({' + '.join(st['fixes'])}): "
                   f"{units.ms(st['median_ms'])} a step against "
                   f"{units.ms(st['control_median_ms'])} for the control, "
                   f"{units.pct(st['gain_pct'], 1)} faster")
    if st["code"]:
        out += ["Apply them:", *[f"  {line}" for line in st["code"].splitlines()]]
    return out


def describe(c: ConditionsDoc | None) -> str:
    """One line for the report: the conditions a measurement ran under."""
    if not c or not c.get("available"):
        why = c.get("reason") if c else None
        return f"GPU conditions not recorded ({why or 'NVML not installed'})"
    sm, temp, pw = c.get("sm_clock_mhz"), c.get("temp_c"), c.get("power_w")
    text = (f"SM clock {units.num(sm['min'] if sm else None)}–"
            f"{units.num(sm['max'] if sm else None)} MHz, "
            f"{units.num(temp['max'] if temp else None)} °C max, "
            f"{units.num(pw['median'] if pw else None)} W median")
    if c.get("throttle"):
        text += f", throttle: {', '.join(c['throttle'])}"
    if c.get("other_pids"):
        text += f", {len(c['other_pids'])} other process(es) on the GPU"
    return text


def _pts(x: float) -> str:
    """Points of the step, whole: '6 points', '1 point'."""
    n = round(abs(x))
    return f"{n} point{'' if n == 1 else 's'}"


def record_line(r: CalibrationDoc) -> str:
    """One fix's record on this GPU, and this report's prediction corrected by it (kept beside
    the uncorrected one) when the record backs a correction."""
    tries = f"{r['fix']}: {r['n_tries']} tr{'y' if r['n_tries'] == 1 else 'ies'} here"
    crashed = f", {r['n_errors']} crashed" if r["n_errors"] else ""
    mae, worst, bias = r["mean_abs_error_pts"], r["worst_error_pts"], r["mean_bias_pts"]
    if mae is None or worst is None or bias is None:
        return f"{tries}{crashed}, none measured a significant change yet"
    sign = "high" if bias > 0 else "low"
    line = (f"{tries}{crashed}, predictions off by {_pts(mae)} on average, worst "
            f"{round(worst)} ({r['n_significant']} significant; they ran {_pts(bias)} {sign})")
    if (fixed := r["corrected_gain_pct"]) is not None:
        line += (f"; corrected by the record: ≈{units.pct(fixed)} "
                 f"(predicted ≈{units.pct(r['predicted_gain_pct'])})")
    return line


def record_for(f: FindingDoc, rows: Sequence[CalibrationDoc] | None) -> str | None:
    """'Record: …' for the fixes of one finding that earlier tries on this GPU measured."""
    mine = [r for r in rows or [] if r["fix"] in (f.get("try_fixes") or [])]
    return "Record: " + "; ".join(record_line(r) for r in mine) if mine else None


def record_table(rows: Sequence[CalibrationDoc]) -> str:
    """The whole record as a table (`jupyter gpuprof calibration`); errors in points."""
    def num(x: float | None) -> str:
        return "-" if x is None else f"{x:.1f}"

    head = (f"{'fix':<10}{'GPU':<24}{'tries':>6}{'signif.':>8}{'crashed':>8}"
            f"{'mean |err|':>11}{'worst':>7}{'bias':>7}")
    out = [head, "-" * len(head)]
    out += [f"{r['fix']:<10}{(r['gpu_name'] or 'no GPU')[:23]:<24}{r['n_tries']:>6}"
            f"{r['n_significant']:>8}{r['n_errors']:>8}{num(r['mean_abs_error_pts']):>11}"
            f"{num(r['worst_error_pts']):>7}{num(r['mean_bias_pts']):>7}" for r in rows]
    return "\n".join(out + ["(err = predicted − measured gain, in points of the step, over "
                            "the significant tries; bias > 0: predictions ran high)"])
