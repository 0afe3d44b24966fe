"""`jupyter_gpuprof.compare(a, b)`: before/after comparison of two runs, traces or reports."""

from __future__ import annotations

import os
from html import escape
from pathlib import Path
from typing import Any

from .. import units
from ..analysis.compare import PredictionCheck, SummaryComparison, compare_summaries
from ..store import Run, RunStore, open_run
from ..store.layout import is_run_folder
from .build import Report, analyze_path, run_summary


class Comparison:
    """The result of `compare`: `.to_json()`, `.to_text()`, and rich display in notebooks."""

    def __init__(self, data: SummaryComparison) -> None:
        self.data = data

    @property
    def significant(self) -> bool:
        """Whether the step-time change is real (not run-to-run noise)."""
        return bool(self.data["steps"]["significant"])

    def to_json(self) -> SummaryComparison:
        """The comparison object (same as `jupyter gpuprof compare --json` and the REST route)."""
        return self.data

    def to_text(self) -> str:
        """Plain-text summary of the comparison."""
        return render_text(self.data)

    def _repr_html_(self) -> str:
        return f"<pre class='gpuprof-compare'>{escape(self.to_text())}</pre>"

    def __repr__(self) -> str:
        return self.to_text()


def _ms(v: float | None) -> str:
    return units.ms(v)


def _signed_ms(value: float) -> str:
    """A change of time with its sign, written like every other duration: '-28.16 ms'."""
    return ("+" if value >= 0 else "-") + units.ms(abs(value))


def render_text(c: SummaryComparison) -> str:
    """The comparison as a few lines of text."""
    st, a, b = c["steps"], c["before"], c["after"]
    lines = [c["headline"],
             f"Before: {a['label']}  ({a['step_source']} steps, n={st['n_before']})",
             f"After:  {b['label']}  ({b['step_source']} steps, n={st['n_after']})",
             f"Median step: {_ms(st['median_before_ms'])} -> {_ms(st['median_after_ms'])}"]
    if st["delta_ms"] is not None:
        lines.append(
            f"Change: {st['delta_ms']:+.2f} ms ({st['delta_pct']:+.1f}%), "
            f"{units.pct(100 * st['confidence'])} CI "
            f"[{st['ci_low_ms']:+.2f}, {st['ci_high_ms']:+.2f}] ms, "
            f"Mann-Whitney p={st['p_value']:.2g}: {st['verdict'].upper()}")
    else:
        lines.append(f"Change: {st['verdict']}")
    if st.get("unreliable_reasons"):  # different GPU conditions: not a fair comparison
        lines.append(f"Unreliable: {'; '.join(st['unreliable_reasons'])}")
    lines.append(f"Verdict before: {a['verdict']['category']} — {a['verdict']['summary']}")
    lines.append(f"Verdict after:  {b['verdict']['category']} — {b['verdict']['summary']}")
    f = c["findings"]
    lines.append(f"Findings resolved: {', '.join(f['resolved']) or 'none'}; "
                 f"new: {', '.join(f['new']) or 'none'}")
    if line := prediction_line(c["prediction"]):
        lines.append(line)
    for title, block in (("ops (CUDA total)", c["ops"]),
                         ("kernel kinds (GPU time)", c["kernel_kinds"])):
        for label in ("improvements", "regressions"):
            rows = block[label][:5]
            if rows:
                lines.append(f"Top {title} {label} (per step):")
                lines += [f"  {_signed_ms(r['delta_ms']):>12}  {r['name'][:90]}"
                          for r in rows]
    return "\n".join(lines)


def prediction_line(p: PredictionCheck) -> str | None:
    """'Predicted by the before run: [input] ≈62% (its try measured 70%); measured here: 68.4%
    faster [65.0, 71.2]' where the after run resolved a finding with a prediction."""
    priced = [f for f in p["resolved"] if f["expected_gain_pct"] is not None]
    if not priced:
        return None
    said = "; ".join(
        f"[{f['category']}] ≈{units.pct(f['expected_gain_pct'])}"
        + (f" (its try measured {units.pct(f['measured_gain_pct'])})"
           if f["measured_gain_pct"] is not None else "") for f in priced)
    gain, low, high = p["measured_gain_pct"], p["ci_low_gain_pct"], p["ci_high_gain_pct"]
    if gain is None:
        return f"Predicted by the before run: {said}; measured here: {p['verdict']}"
    ci = (f" 95% CI [{units.signed_pct(low)}, {units.signed_pct(high)}]"
          if low is not None and high is not None else "")
    return (f"Predicted by the before run: {said}; measured here: gain "
            f"{units.signed_pct(gain)}{ci} ({p['verdict']})")


def _resolve(x: Any, store: RunStore) -> tuple[dict[str, Any], list[float] | None]:
    """A summary dict and the full baseline step list, from whatever the caller passed."""
    if isinstance(x, Report):
        return x.to_json(), None
    if isinstance(x, dict):
        return x, None
    if isinstance(x, Run):
        return run_summary(x), list(x.meta.baseline.get("step_ms") or []) or None
    if isinstance(x, (str, os.PathLike)):
        p = Path(x)
        if not p.exists():  # a run id in the runs folder
            run = store.get(str(x))
            return run_summary(run), list(run.meta.baseline.get("step_ms") or []) or None
        if p.is_dir() and is_run_folder(p):
            run = open_run(p)
            return run_summary(run), list(run.meta.baseline.get("step_ms") or []) or None
        return analyze_path(p).to_json(), None
    raise TypeError(f"cannot compare a {type(x).__name__}: pass a run, run id, path or Report")


def compare(before: Any, after: Any, runs_root: str | os.PathLike[str] | None = None) -> Comparison:
    """Compare two runs (run ids, run folders, trace files, `Report`s or summary dicts)."""
    store = RunStore(runs_root)
    sa, steps_a = _resolve(before, store)
    sb, steps_b = _resolve(after, store)
    return Comparison(compare_summaries(sa, sb, steps_a, steps_b))
