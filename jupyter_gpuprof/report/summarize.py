"""Analysis + advice -> the typed `Summary`: which rows and figures a report ships, and how many."""

from __future__ import annotations

import math
from typing import Any, TypedDict, TypeVar

import msgspec
import pandas as pd

from .. import units
from ..advice.cost import whatif_blocks
from ..advice.distributed_rules import rank_table, straggler_of
from ..advice.fix_table import tries_measuring
from ..advice.thresholds import GPU_BOUND_BUSY_FRAC
from ..advice.verdict import Advice, verdict_label
from ..analysis.distributed import Distributed as DistributedAnalysis
from ..analysis.ops import sort_for, sort_key
from ..analysis.spikes import CATEGORY_OF
from ..analysis.summary import Analysis
from ..analysis.transfers import transfer_summary
from ..stats import describe_steps
from ..step_definition import step_definition
from ..store.run import RunMeta
from .basis import (
    TABLE_BASIS,
    caller_costs,
    kinds_per_step,
    sync_cost_ms,
    transfers_per_step,
)
from .calibration import run_calibration
from .finding_line import cost_line
from .memory_summary import forward_kernels, memory_blocks
from .model import (
    Basis,
    Comm,
    Distributed,
    Finding,
    Flops,
    Gpu,
    IdleByCause,
    Input,
    KernelKindRow,
    Launch,
    Memory,
    MemoryPeak,
    RankBrief,
    Source,
    Spikes,
    Steps,
    StreamRow,
    Summary,
    SyncCaller,
    Syncs,
    Timeline,
    TransferRow,
    Verdict,
)
from .model_cost import CaptureCost, Conditions, Cost, OneTimeCost, StackResult, TryResult
from .tables import kernel_rows, kernel_table, op_rows

TOP_ROWS = 15
MAX_SERIES = 2000  # step times shipped per series (the chart needs each step, but bounded)

T = TypeVar("T")


def rows(df: pd.DataFrame, row_type: type[T], n: int = TOP_ROWS) -> list[T]:
    """The first `n` rows of a documented table as typed rows (columns named as the fields)."""
    return [msgspec.convert(r, row_type) for r in df.head(n).to_dict(orient="records")]


def _series(values: Any) -> list[float]:
    """A bounded, rounded step-time series (ms)."""
    return [round(float(v), 4) for v in list(values or [])[:MAX_SERIES]]


def _steps(a: Analysis, m: RunMeta | None, loose_baseline: list[float] | None) -> Steps:
    """Headline step statistics, both series' statistics and each step's time for the chart.

    The profiled series is the one whose statistics the report states: the trace's steps where
    it has step marks (the timeline's step bands are the same steps), else the capture's own
    timing of the profiled steps, described here; either way one median for every view."""
    base = list(m.baseline.get("step_ms") or []) if m else list(loose_baseline or [])
    has_marks = bool(len(a.steps)) and int(a.steps["step"].iloc[0]) >= 0
    profiled = a.profiled
    if has_marks:
        prof = (a.steps["step_us"] / 1e3).tolist()
        ids = [int(v) for v in a.steps["step"]]
    else:
        prof = list(m.profiled_step_ms) if m and m.profiled_step_ms else []
        ids = list(range(1, len(prof) + 1))
        profiled = describe_steps(prof) if prof and not a.profiled["n"] else a.profiled
    stats = a.baseline if a.baseline["n"] else profiled
    warm = list(m.baseline.get("warmup_ms") or []) if m else []
    return msgspec.convert({**stats, "source": a.real.source,
                            "timing": m.baseline.get("timing") if m else None,
                            "baseline": a.baseline, "profiled": profiled,
                            "profiler_inflation": a.real.inflation, "warmup_ms": _series(warm),
                            "baseline_ms": _series(base), "profiled_ms": _series(prof),
                            "profiled_step_ids": ids[:MAX_SERIES],
                            "outlier_steps": [i + 1 for i in stats["outliers"]],
                            "step_source": a.window.step_source,
                            "definition": step_definition(m.training, m.settings.get("mode"))
                            if m else None, "spikes": _spikes(a),
                            "capture_cost": _capture_cost(m, a.baseline)}, Steps)


def _capture_cost(m: RunMeta | None, baseline: Any) -> CaptureCost | None:
    """The capture's measured cost per baseline step, and the sentence that states it (None
    without a recorded cost or baseline: older runs and traces alone)."""
    cost = m.baseline.get("capture_cost") if m else None
    n, median = baseline.get("n") or 0, baseline.get("median_ms")
    if not isinstance(cost, dict) or not n:
        return None
    parts = [cost.get("hooks_ms"), cost.get("sampler_cpu_ms") or 0.0]
    if not all(isinstance(v, int | float) and math.isfinite(v) and v >= 0 for v in parts):
        return None  # a hand-edited or foreign meta: say nothing rather than nonsense
    hooks, sampler = parts[0] / n, parts[1] / n
    total = hooks + sampler
    if total > (baseline.get("max_ms") or 0.0):
        return None  # more than the longest step it is part of: not a measurement of ours
    pct = 100.0 * total / median if median else None
    share = f" ({units.pct(pct, 1)} of the median)" if pct is not None else ""
    calls = ""
    median_us, max_us = cost.get("median_call_us"), cost.get("max_call_us")
    if (isinstance(median_us, int | float) and isinstance(max_us, int | float)
            and math.isfinite(median_us) and math.isfinite(max_us) and 0 <= median_us <= max_us):
        calls = (f" (one call: {units.ms(median_us / 1e3)} the median, "
                 f"{units.ms(max_us / 1e3)} the longest)")
    sentence = (f"The capture's own cost in the baseline, measured: {units.ms(total)} a step"
                f"{share}: its hooks {units.ms(hooks)}{calls}, the GPU-conditions sampler at "
                f"most {units.ms(sampler)} of CPU")
    return CaptureCost(ms_per_step=round(total, 5), hooks_ms_per_step=round(hooks, 5),
                       sampler_ms_per_step=round(sampler, 5),
                       pct_of_median=round(pct, 3) if pct is not None else None,
                       sentence=sentence)


def _spikes(a: Analysis) -> Spikes | None:
    """The stalls as the model holds them; None where it has none to price and no steps after
    the capture to speak for."""
    s = a.spikes
    if s is None or a.real.source != "baseline" or (
            not s.stalls and not s.unseen_epoch_note() and not s.after_steps):
        return None
    return msgspec.convert({"wall_ms": a.wall_ms, "mean_ms": s.mean_ms, "share_pct": s.share_pct,
            "stalls": [{"first": st.first, "last": st.last, "excess_ms": st.excess_ms,
                        "cause": st.cause, "category": CATEGORY_OF.get(st.cause or "") or None,
                        "parts_ms": {k or "unexplained": v for k, v in st.parts.items()},
                        "period_steps": st.period_steps} for st in s.stalls],
            "epoch_steps": s.epoch_steps, "saw_epoch": s.saw_epoch, "summary": s.summary(),
            "note": s.unseen_epoch_note()}, Spikes)


def _memory(a: Analysis, m: RunMeta | None, path: str | None = None,
            warnings: list[str] | None = None, timeline: Timeline | None = None) -> Memory:
    """The trace's allocator peaks and the one peak every view shows: the capture's
    max_memory_allocated, else the largest allocator peak of the trace; with the run's saved
    allocator history, the peak explained and the out-of-memory post-mortem."""
    peaks = rows(a.memory, MemoryPeak, 16)
    top = max(peaks, key=lambda p: p.peak_allocated_bytes or 0) if peaks else None
    captured = m.max_memory_allocated_bytes if m else None
    total = (top.total_bytes if top else None) or None
    gpu_bound = a.real.busy_frac >= GPU_BOUND_BUSY_FRAC
    over, oom, problem = memory_blocks(path, total, m.error if m else None,
                                       forward_kernels(timeline, gpu_bound))
    if problem and warnings is not None:
        warnings.append(problem)
    return Memory(peaks=peaks, max_memory_allocated_bytes=captured,
                  peak_bytes=captured or (top.peak_allocated_bytes if top else None) or None,
                  gpu_total_bytes=total, over_step=over, oom=oom)


def _try_fixes(f: Any) -> list[str]:
    """The `--try` fixes that measure a finding (`fix_table.tries_measuring`)."""
    return list(tries_measuring(f.category, f.data.get("try_fixes")
                                if isinstance(f.data, dict) else None))


def _syncs(a: Analysis) -> Syncs:
    """Sync calls per step and the five callers after which the GPU idles longest."""
    syncs = a.syncs
    top: list[SyncCaller] = []
    if len(syncs):
        by = syncs.assign(by=syncs["caller"].where(syncs["caller"] != "", syncs["api"]))
        agg = (by.groupby("by")["gpu_idle_after_us"].agg(["size", "sum"])
               .sort_values("sum", ascending=False))
        agg["cost"] = caller_costs(agg["sum"], a)
        top = [SyncCaller(caller=str(k), calls=int(r["size"]), gpu_idle_after_us=float(r["sum"]),
                          cost_ms_per_step=float(r["cost"]),
                          calls_per_step=int(r["size"]) / max(a.n_steps, 1))
               for k, r in agg.head(5).iterrows()]
    return Syncs(count=len(syncs), per_step=len(syncs) / max(a.n_steps, 1),
                 cost_ms_per_step=sync_cost_ms(a), top=top)


def _basis(a: Analysis, category: str | None) -> Basis:
    """The summary's statement of what its numbers are per, and the order of its op rows."""
    scale = a.real.inflation if a.real.source == "baseline" else None
    return Basis(default="real_step", n_profiled_steps=a.n_steps, real_step_ms=a.real.step_ms,
                 real_source=a.real.source, profiled_step_ms=a.real.profiled_step_ms,
                 profiled_scale=scale, tables=dict(TABLE_BASIS), ops_sorted_by=sort_key(category))


def _source(a: Analysis, m: RunMeta | None, path: str | None) -> Source:
    """Where the report comes from."""
    return Source(path=path, gpu=a.info.gpu_name, rank=a.info.rank,
                  world_size=a.info.world_size, run_id=m.id if m else None,
                  name=m.name if m else None, status=m.status if m else None,
                  error=m.error if m else None, created=m.created if m else None,
                  arch=f"{a.arch.vendor} {a.arch.family}" if a.arch else None)


def _gpu(a: Analysis) -> Gpu:
    """GPU busy/idle in the trace and in real time, by cause and by stream."""
    return Gpu(available=a.gpu_available, busy_pct=a.busy_pct,
               idle_pct=100.0 - a.busy_pct if a.gpu_available else None,
               busy_pct_real=100.0 * a.real.busy_frac, busy_ms_per_step=a.real.gpu_busy_ms,
               idle_ms_per_step=a.real.idle_ms,
               idle_by_cause_ms=msgspec.convert(a.real.idle_by_cause_ms, IdleByCause),
               streams=rows(a.streams, StreamRow, 50))


def _distributed(d: DistributedAnalysis | None, advice: Advice) -> Distributed | None:
    """Cross-rank block: per-rank figures (the advice's straggler flagged), imbalance, counts."""
    if d is None:
        return None
    table = rank_table(d, straggler_of(advice))
    return msgspec.convert({"ranks": table.head(256).to_dict(orient="records"),
                            "imbalance": d.imbalance.head(256).to_dict(orient="records"),
                            "collectives_matched": d.n_matched,
                            "collectives_unmatched": d.n_unmatched}, Distributed)


def summarize(a: Analysis, advice: Advice, meta: RunMeta | None, path: str | None,
              ranks: list[Analysis], distributed: DistributedAnalysis | None,
              timeline: Timeline | None, loose_baseline: list[float] | None,
              warnings: list[str]) -> Summary:
    """The typed summary of one analysed run (what `Report.to_json()` encodes)."""
    m = meta
    steps = _steps(a, m, loose_baseline)
    wall = steps.spikes.wall_ms if steps.spikes else None
    findings = [msgspec.convert({**f.to_json(), "try_fixes": _try_fixes(f),
                                 "cost_line": cost_line(f.to_json(), steps.median_ms, wall)},
                                Finding) for f in advice.findings]
    return Summary(
        source=_source(a, m, path), steps=steps, gpu=_gpu(a),
        verdict=msgspec.convert({**advice.verdict.to_json(),
                                 "label": verdict_label(advice.verdict.category)}, Verdict),
        findings=findings,
        ops=op_rows(a, sort_for(a.ops, advice.verdict.category)),
        kernels=kernel_rows(a), kernel_table=kernel_table(a),
        kernel_kinds=rows(kinds_per_step(a), KernelKindRow, 50),
        transfers=rows(transfers_per_step(transfer_summary(a.transfers), a), TransferRow, 20),
        syncs=_syncs(a), launch=msgspec.convert(a.launch, Launch),
        comm=msgspec.convert(a.comm, Comm),
        memory=_memory(a, m, path, warnings, timeline),
        flops=msgspec.convert(a.flops, Flops),
        input=Input(host_share_pct=a.input_host_pct, ms_per_step=a.input_ms_per_step),
        ranks=[RankBrief(rank=r.info.rank if r.info.rank is not None else i,
                         step_median_ms=r.profiled["median_ms"], busy_pct=r.busy_pct)
               for i, r in enumerate(ranks)],
        distributed=_distributed(distributed, advice),
        timeline=timeline,
        basis=_basis(a, advice.verdict.category),
        warnings=list(warnings),
        **_whatif(a, advice, meta),
        one_time=rows(a.one_time, OneTimeCost, 20),
        calibration=run_calibration(path, m, msgspec.to_builtins(findings)),
    )


class WhatIf(TypedDict):
    """The summary's what-if blocks; conditions and tries are passed on as the capture and the
    tries recorded them (encoded as they are: summary.json keeps their numbers' JSON form)."""

    cost: Cost | None
    conditions: Conditions | None
    conditions_by_phase: dict[str, Conditions] | None
    tries: list[TryResult] | None
    stack: StackResult | None


def _whatif(a: Analysis, advice: Advice, meta: RunMeta | None) -> WhatIf:
    """The cost, conditions and tries blocks (`advice.cost`), typed."""
    blocks = whatif_blocks(a, advice, meta)
    cost = msgspec.convert(blocks["cost"], Cost) if blocks["cost"] is not None else None
    # The meta's blocks, which MetaSchema checked (its Required keys are the models' required
    # fields), become the models: keys an older run lacks take the models' defaults, so no
    # renderer meets a try whose change has no interval
    return {"cost": cost,
            "conditions": _model(blocks["conditions"], Conditions | None),
            "conditions_by_phase": _model(blocks["conditions_by_phase"],
                                          dict[str, Conditions] | None),
            "tries": _model(blocks["tries"], list[TryResult] | None),
            "stack": _model(blocks["stack"], StackResult | None)}


def _model(block: object, kind: Any) -> Any:
    """A meta block as the report model's type (MetaSchema's keys guarantee it converts)."""
    return msgspec.convert(block, kind)
