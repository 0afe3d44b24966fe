"""What a comparison says in words, decided once: its headline sentence and each side's label.

Every surface (the CLI's text, the compare view, the notebook's `Comparison`) prints these as
they are. A change whose interval excludes zero with a small p is real; conditions both sides
ran under (a power cap on both) are a caveat stated in the same sentence, never a reason to
call the change noise.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..store.meta_blocks import StepChangeMeta


def _pct(value: float) -> str:
    """A magnitude of percent as the headline writes it: '57.7%'."""
    return f"{abs(value):.1f}%"


def _noise_reason(s: StepChangeMeta) -> str:
    """Why a measured difference does not count as a change: the first rule it failed."""
    lo, hi, p, pct = s.get("ci_low_ms"), s.get("ci_high_ms"), s.get("p_value"), s.get("delta_pct")
    if lo is not None and hi is not None and lo <= 0 <= hi:
        return f"its {round(100 * s.get('confidence', 0.95))}% interval includes zero"
    if p is not None and p >= 0.05:
        return f"p = {p:.2g} is not below 0.05"
    if pct is not None and abs(pct) < 1.0:
        return "it is below 1% of the step"
    if s.get("rounds_p_value") is not None:
        return "the interleaved rounds do not agree on its direction"
    return "the tests do not agree"


def headline(s: StepChangeMeta, caveats: list[str]) -> str:
    """The one sentence every view leads with: real, noise, unfair or too few steps, with
    the conditions' caveat where there is one."""
    verdict, pct = s.get("verdict"), s.get("delta_pct")
    if verdict == "insufficient data" or pct is None:
        return (f"Too few steps to tell a change from noise (n = {s.get('n_before', 0)} before, "
                f"{s.get('n_after', 0)} after; at least 3 each).")
    reasons = s.get("unreliable_reasons") or []
    if verdict == "unreliable":
        return (f"Not a fair comparison: the GPU ran under different conditions "
                f"({'; '.join(reasons)}); measure again before trusting the {_pct(pct)} change.")
    if s.get("significant"):
        speedup = s.get("speedup")
        times = f" (×{speedup:.2f})" if speedup and s.get("direction") == "faster" else ""
        sentence = f"The change is real: after is {_pct(pct)} {s.get('direction')}{times}"
        if caveats:
            return (f"{sentence}; {' and '.join(caveats)}, so both step times are above the "
                    f"GPU's best, the change between them stands.")
        return sentence + "."
    return f"No real change: the {_pct(pct)} difference is run-to-run noise ({_noise_reason(s)})."


def _when(created: object) -> str:
    """'2026-11-29T19:13:22+00:00' -> '2026-11-29 19:13' (the run's own clock, as the list)."""
    text = created if isinstance(created, str) else ""
    return text[:16].replace("T", " ") if len(text) >= 16 else text


def side_labels(before: Mapping[str, object], after: Mapping[str, object]) -> tuple[str, str]:
    """Names that tell the two sides apart: the run names, with the date where the names are
    the same, and the run ids where those are too ('train · 2026-11-29 19:13')."""
    def name(src: Mapping[str, object]) -> str:
        return str(src.get("name") or src.get("run_id") or src.get("path") or "?")

    a, b = name(before), name(after)
    if a != b:
        return a, b
    wa, wb = _when(before.get("created")), _when(after.get("created"))
    if wa and wb and wa != wb:
        return f"{a} · {wa}", f"{b} · {wb}"
    ia, ib = before.get("run_id"), after.get("run_id")
    if ia and ib and ia != ib:
        return f"{a} ({ia})", f"{b} ({ib})"
    return f"{a} (before)", f"{b} (after)"
