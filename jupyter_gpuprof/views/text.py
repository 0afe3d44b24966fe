"""Plain-text report for terminals, `text/plain` outputs and logs."""

from __future__ import annotations

from .. import units
from ..terminal import visible
from .memory_text import oom_lines, over_step_lines
from .palette import NO_GPU_BANNER, PARTIAL_BANNER
from .summary_doc import DistributedDoc, FindingDoc, StepsDoc, SummaryDoc, VerdictDoc
from .whatif_text import (
    measured_for,
    one_time_lines,
    record_for,
    stack_lines,
    try_hint,
    try_lines,
    whatif_header,
)

#: a duration as every surface writes it (units.py)
ms_text = units.ms


def finding_line(f: FindingDoc) -> str:
    """A finding's cost and gain: the model's one line (`report.finding_line`); a summary saved
    before it had one says its cost and gain alone, as the widget does."""
    return f["cost_line"] or (f"costs {units.ms(f['cost_ms'])}, "
                              f"gain ≈{units.pct(f['expected_gain_pct'])}")


def short_name(name: str, width: int = 70) -> str:
    """A kernel/op name cut to fit a table cell."""
    name = str(name).removeprefix("void ")
    return name if len(name) <= width else name[: width - 1] + "…"


def banner(summary: SummaryDoc) -> str | None:
    """The one-line warning shown above a report, if any."""
    src = summary["source"]
    if src["status"] == "failed":
        return PARTIAL_BANNER.format(error=src["error"])
    if not summary["gpu"]["available"]:
        said = summary["verdict"]["summary"] or ""
        if said and "CPU-only" not in said:  # an MTIA or range-profiler trace: what it holds
            return "GPU metrics unavailable: " + said.split(". ")[0] + "."
        return NO_GPU_BANNER
    return None


def _n(v: float | None, width: int) -> str:
    return f"{'n/a':>{width}}" if v is None else f"{v:>{width}.1f}"


def rank_lines(d: DistributedDoc | None) -> list[str]:
    """The ranks section: step time, compute vs comm and imbalance per rank (ms per step)."""
    if not d or not d.get("ranks"):
        return []
    out = ["", f"Ranks ({len(d['ranks'])}; {d['collectives_matched']} collectives "
               f"matched across ranks), ms per step:",
           f"{'rank':>6}{'step':>9}{'compute':>9}{'comm':>8}{'exposed':>9}{'wait':>8}"
           f"{'idle':>8}{'extra':>8}  phase"]
    for r in d["ranks"]:
        out.append(f"{r['rank']:>6}{_n(r['step_ms'], 9)}{_n(r['compute_ms'], 9)}"
                   f"{_n(r['comm_ms'], 8)}{_n(r['exposed_comm_ms'], 9)}{_n(r['wait_ms'], 8)}"
                   f"{_n(r['idle_ms'], 8)}{_n(r['extra_ms'], 8)}  {r['phase'] or ''}"
                   + ("  <- straggler" if r["straggler"] else ""))
    return out


def throughput(s: SummaryDoc) -> str | None:
    """Achieved TFLOP/s and MFU, when FLOPs were counted (achieved needs FLOPs per step)."""
    f = s["flops"]
    if not f["achieved_tflops"] or f["per_step"] is None:
        return None
    text = f"Achieved {_flop(f['achieved_tflops'] * 1e12)}/s"
    if f["dtype"]:
        text += f" ({f['dtype']} matmuls)"
    if f["mfu_pct"] is not None:
        text += f", MFU {units.pct(f['mfu_pct'], 1)} of the {f['peak_tflops']:.0f} TFLOP/s peak"
    return text + f"; {_flop(f['per_step'])} per step"


def _flop(n: float) -> str:
    """FLOP in the unit that keeps a CPU run's figure from reading "0.0 TFLOP"."""
    for scale, unit in ((1e12, "TFLOP"), (1e9, "GFLOP"), (1e6, "MFLOP")):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n:.0f} FLOP"


def peak_memory(s: SummaryDoc) -> str | None:
    """The summary's one peak GPU memory (`memory.peak_bytes`) and its share of the GPU's."""
    nbytes, total = s["memory"]["peak_bytes"], s["memory"]["gpu_total_bytes"]
    if not nbytes:
        return None
    share = f" of {total / 1e9:.0f} GB ({units.pct(100 * nbytes / total)})" if total else ""
    return f"Peak memory {units.gb(nbytes)}{share}"


def header_facts(s: SummaryDoc) -> list[str]:
    """The header's one-line facts beside the step time: GPU busy once, MFU, peak memory."""
    facts = []
    gpu = s["gpu"]
    if gpu["available"]:
        facts.append(f"GPU busy {units.pct(gpu['busy_pct_real'])} real / "
                     f"{units.pct(gpu['busy_pct'])} under profiler")
    if (mfu := s["flops"]["mfu_pct"]) is not None:
        facts.append(f"MFU {units.pct(mfu, 1)}")
    if (mem := peak_memory(s)) is not None:
        facts.append(mem)
    return facts


def verdict_name(v: VerdictDoc) -> str:
    """The verdict as a reader names it ("memory bandwidth", not "memory")."""
    return v.get("label") or v.get("category") or "unavailable"


def profiled_sentence(st: StepsDoc) -> str | None:
    """The profiled steps' median beside the baseline's (the one profiled median every view
    shows: the median of `steps.profiled_ms`), when a baseline was measured."""
    prof = st["profiled"]
    if st.get("source") != "baseline" or not prof.get("n"):
        return None
    ratio = st.get("profiler_inflation") or 0.0
    why = ("the profiler's own cost" if ratio > 1.05 else
           "steps overlap less without per-step syncs" if ratio < 0.95 else "no visible cost")
    return (f"Profiled steps: median {ms_text(prof.get('median_ms'))} "
            f"({ratio:.2f}× the baseline: {why})")


def step_sentence(steps: StepsDoc) -> str | None:
    """What one step is (the summary's `steps.definition`), as a sentence."""
    what = steps["definition"]
    return f"{what[0].upper()}{what[1:]}." if what else None


def spikes_sentence(steps: StepsDoc) -> str | None:
    """The baseline's stalls and what they cost over the long run (the summary's
    `steps.spikes`), and what it could not see, as one line."""
    sp = steps["spikes"]
    said = [x for x in ((sp["summary"], sp["note"]) if sp else ()) if x]
    return "Stalls: " + "; ".join(said) + "." if said else None


def render_headline(s: SummaryDoc) -> str:
    """A report's first screen: the verdict, the top fix as code, what it is worth, and how to
    measure it before editing anything (control characters made visible)."""
    v = s["verdict"]
    lines = [f"!! {b}"] if (b := banner(s)) is not None else []
    lines.append(f"Verdict: {verdict_name(v)} ({v.get('confidence')} confidence)")
    lines.append(f"  {v.get('summary')}")
    findings = s.get("findings") or []
    if not findings:
        if v.get("category"):
            lines.append("No fix found worth making; the full report has the step's tables.")
        return visible("\n".join(lines))
    f = findings[0]
    lines.append(f"Top fix: {f['title']} — {finding_line(f)}")
    if w := f.get("where"):
        lines.append(f"  Your code: {w['file']}:{w['line']}  {w['code']}")
    lines += [f"    {ln}" for ln in f["fix"].splitlines()]
    lines += [x for x in (measured_for(f, s.get("tries")), try_hint(f)) if x]
    if len(findings) > 1:
        lines.append(f"{len(findings) - 1} more finding(s) in the full report.")
    return visible("\n".join(lines))


def render_text(s: SummaryDoc) -> str:
    """The whole report as text (control characters made visible: it may reach a terminal)."""
    lines: list[str] = []
    src, st, gpu, v = s["source"], s["steps"], s["gpu"], s["verdict"]
    title = f"jupyter_gpuprof report — {src.get('name') or src.get('path')}"
    lines += [title, "=" * len(title)]
    if (b := banner(s)) is not None:
        lines.append(f"!! {b}")
    lines += [f"!! Trace: {w}" for w in s.get("warnings") or []]
    arch = f" ({src['arch']})" if src.get("arch") else ""
    lines.append(f"GPU: {src.get('gpu') or 'none'}{arch}")
    lines += whatif_header(s)
    label = "unprofiled baseline" if st.get("source") == "baseline" else "profiled steps"
    if st.get("step_source") not in (None, "ProfilerStep"):  # say what the steps were read from
        label += (" from " + st["step_source"] if st["step_source"] != "none"
                  else ": no step markers, the whole trace is one window")
    lines.append(
        f"Step time ({label}, n={st.get('n')}): median {ms_text(st.get('median_ms'))}, "
        f"p95 {ms_text(st.get('p95_ms'))}, IQR {ms_text(st.get('iqr_ms'))}, "
        f"{len(st.get('outliers') or [])} outlier(s)")
    if what := step_sentence(st):
        lines.append(f"  {what}")
    if stalls := spikes_sentence(st):
        lines.append(f"  {stalls}")
    if profiled := profiled_sentence(st):
        lines.append(profiled)
    if cost := st.get("capture_cost"):
        lines.append(f"{cost['sentence']}.")
    if facts := header_facts(s):
        lines.append(" · ".join(facts))
    if gpu.get("available"):
        lines.append(f"GPU busy {ms_text(gpu['busy_ms_per_step'])} per real step")
        causes = ", ".join(f"{k} {units.ms(val)}" for k, val in gpu["idle_by_cause_ms"].items()
                           if val and val >= 0.005)
        if causes:
            lines.append(f"GPU idle per real step by cause: {causes}")
    if (flops := throughput(s)) is not None:
        lines.append(flops)
    lines += ["", f"VERDICT: {verdict_name(v)} ({v.get('confidence')} "
                  f"confidence)", f"  {v.get('summary')}"]
    lines += [f"  - {r}" for r in v.get("reasons", [])]
    if s.get("findings"):
        tried = any(f.get("measured_gain_pct") is not None for f in s["findings"])
        lines += ["", "Next steps (ranked by measured gain where a try measured one, else by "
                      "expected gain):" if tried else "Next steps (ranked by expected gain):"]
        for i, f in enumerate(s["findings"], 1):
            lines.append(f"{i}. [{f['category']}] {f['title']} — {finding_line(f)}")
            if f.get("driver"):
                lines.append(f"   Model: {f['driver']}")
            lines.append(f"   Evidence: {f['evidence']}")
            if w := f.get("where"):
                lines.append(f"   Your code: {w['file']}:{w['line']}  {w['code']}")
            lines += ["   Fix:"] + [f"     {ln}" for ln in f["fix"].splitlines()]
            lines += [f"   {x}" for x in (measured_for(f, s.get("tries")),
                                          record_for(f, s.get("calibration")), try_hint(f)) if x]
    lines += try_lines(s.get("tries"))
    lines += stack_lines(s.get("stack"))
    if one := one_time_lines(s):
        lines += ["", *one]
    lines += rank_lines(s.get("distributed"))
    lines += oom_lines(s["memory"].get("oom")) + over_step_lines(s["memory"].get("over_step"),
                                                                s.get("tries"))
    if s.get("ops"):
        lines += ["", f"{'Top ops (per real step)':<46}{'calls/step':>11}{'GPU self ms':>12}"
                      f"{'CPU self ms':>12}{'% GPU time':>11}{'% of step':>10}"]
        for o in s["ops"][:10]:
            lines.append(f"{short_name(o['name'], 44):<46}{o['calls_per_step']:>11.1f}"
                         f"{o['cuda_self_ms_per_step']:>12.3f}{o['cpu_self_ms_per_step']:>12.3f}"
                         f"{units.pct(o.get('pct_of_gpu'), 1):>11}"
                         f"{units.pct(o.get('gpu_pct_of_step'), 1):>10}")
    if s.get("kernels"):
        table = s.get("kernel_table")
        lines += ["", f"Top kernels (per real step; the report holds "
                      f"{table['label'] if table else str(len(s['kernels'])) + ' kernels'})",
                  f"{'kernel':<42}{'kind':>12}{'TC':>4}{'calls/step':>11}{'ms':>9}"
                  f"{'% GPU time':>11}{'% of step':>10}"]
        for k in s["kernels"][:8]:
            lines.append(f"{short_name(k.get('short_name') or k['name'], 40):<42}{k['kind']:>12}"
                         f"{'yes' if k['tensor_core'] else 'no':>4}{k['calls_per_step']:>11.1f}"
                         f"{k['ms_per_step']:>9.3f}{units.pct(k.get('pct_of_gpu'), 1):>11}"
                         f"{units.pct(k.get('pct_of_step'), 1):>10}")
    return visible("\n".join(lines))
