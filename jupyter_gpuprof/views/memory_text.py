"""The text report's lines on memory over the step and on an out-of-memory error."""

from __future__ import annotations

from collections.abc import Sequence

from .. import units
from .memory_doc import MemoryFixDoc, MemoryOverStepDoc, OomDoc, TryMemoryDoc
from .summary_doc import TryDoc

#: what a try's peak memory reads as where it was not measured (max_memory_allocated is CUDA's)
NOT_MEASURED = "not measured on CPU"


def signed_gb(n_bytes: int) -> str:
    """A change of memory with its sign ("−1.20 GB", "+0.05 GB")."""
    return ("−" if n_bytes < 0 else "+") + units.gb(abs(n_bytes))


def tried_memory(m: TryMemoryDoc) -> str:
    """A memory fix's try: predicted and measured change of the peak, and of the step time."""
    said = ([f"predicted {signed_gb(p)}"] if (p := m["predicted_change_bytes"]) is not None
            else [])
    said.append(f"measured {signed_gb(c)}" if (c := m["change_bytes"]) is not None
                else NOT_MEASURED)
    return (f"peak memory {', '.join(said)}; step time "
            f"{units.signed_pct(m['step_time_change_pct'])}")


def _measured(f: MemoryFixDoc, tries: Sequence[TryDoc]) -> list[str]:
    """What `--try` measured for the fix, or how to measure it (its offer), or nothing."""
    name = f.get("try_fix")
    if not name:
        return []
    done = next((t for t in tries if t.get("fix") == name and (t.get("memory") or t.get("error"))),
                None)
    if done is None:
        return [f"      measure it: --try {name}"]
    if (m := done.get("memory")) is None:
        return [f"      --try {name} failed: {done.get('error')}"]
    return [f"      --try {name}: {tried_memory(m)}"]


def _fix_line(f: MemoryFixDoc) -> str:
    return f"  - {f['title']}: frees {units.gb(f['saves_bytes'])}; time per step: {fix_cost(f)}"


def kinds_at_peak(m: MemoryOverStepDoc) -> str:
    """The non-zero kinds at the peak in the model's order ("parameters 0.33 GB, …")."""
    return ", ".join(f"{k['label']} {units.gb(k['bytes_at_peak'])}" for k in m["kinds"]
                     if k["bytes_at_peak"] > 0)


def peak_head(m: MemoryOverStepDoc) -> str:
    """The memory lane's peak mark (the widget's `peakHead`): size, time from the lane's start,
    phase."""
    at = f" at {units.ms((m['peak_us'] - m['series_us'][0]) / 1e3)}" if m["series_us"] else ""
    phase = f" ({m['peak_phase']})" if m["peak_phase"] else ""
    return f"peak {units.gb(m['peak_bytes'])}{at}{phase}"


def peak_label(m: MemoryOverStepDoc) -> str:
    """The peak mark and what is held there (the widget's `peakLabel`)."""
    return f"{peak_head(m)}: {kinds_at_peak(m)}"


def fix_cost(f: MemoryFixDoc) -> str:
    """A fix's time per step and how it was priced (checkpointing: which kernels the recompute
    re-runs), or why it is not priced (the widget's `fixCost`)."""
    if f["time_ms"] is None:
        return f["time_note"]
    how = f" ({f['time_note']})" if f["time_note"] else ""
    return f"+{units.ms(f['time_ms'])}{how}"


def over_step_lines(m: MemoryOverStepDoc | None, tries: Sequence[TryDoc] | None = None
                    ) -> list[str]:
    """The peak, who holds it (kinds, lines, modules), the fixes priced and the headroom, each
    fix with what its `--try` measured (`tries`: the summary's)."""
    if not m:
        return []
    phase = f" (in {m['peak_phase']})" if m["peak_phase"] else ""
    lines = ["", f"Memory over the step: peak {units.gb(m['peak_bytes'])}{phase}, "
                 f"reserved {units.gb(m['reserved_bytes'])}"]
    lines.append("  At the peak: " + kinds_at_peak(m))
    if m["lines"]:
        lines.append("  Lines: " + ", ".join(f"{h['where']} {units.gb(h['bytes'])}"
                                             for h in m["lines"][:3]))
    if m["modules"]:
        lines.append("  Modules: " + ", ".join(f"{h['where']} {units.gb(h['bytes'])}"
                                               for h in m["modules"][:3]))
    if m["headroom_x"] is not None:
        lines.append(f"  Headroom: the batch could grow ×{m['headroom_x']:.1f} before the peak "
                     "reaches the GPU's memory")
    for f in m["fixes"]:
        lines += [_fix_line(f), *_measured(f, tries or [])]
    return lines


def oom_lines(o: OomDoc | None) -> list[str]:
    """What was allocated when an allocation failed, the largest blocks and the fixes."""
    if not o:
        return []
    limit = f" of {units.gb(o['limit_bytes'])} allowed" if o["limit_bytes"] else ""
    lines = ["", f"Out of memory: {units.gb(o['requested_bytes'])} requested with "
                 f"{units.gb(o['allocated_bytes'])} allocated{limit} "
                 f"(reserved {units.gb(o['reserved_bytes'])}, largest free block "
                 f"{units.gb(o['largest_free_bytes'])})"]
    lines += [f"  {i}. {units.gb(a['bytes'])} at {a['line']}" + (f" ({a['module']})" if a["module"]
                                                               else "")
              for i, a in enumerate(o["top"], 1)]
    lines += [_fix_line(f) for f in o["fixes"]]
    return lines
