"""The facade the magics, CLI and server share: a trace or run folder -> a `Report`.

A `Report` bundles the analysis DataFrames and the advice, and serialises to the JSON object
that `jupyter gpuprof analyze --json` prints and that a run folder caches as summary.json.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from .advice.cost import whatif_blocks
from .advice.distributed_rules import merge_advice, rank_table
from .advice.verdict import Advice, advise
from .analysis.distributed import Distributed, analyze_ranks, load_ranks
from .analysis.summary import Analysis, analyze
from .analysis.timeline import build_timeline
from .analysis.trace import Trace, TraceError, load_trace
from .analysis.tracefile import Prefetch
from .analysis.transfers import transfer_summary
from .store.run import META_FILE, Run, RunMeta, open_run
from .store.runs import RunInProgress

SCHEMA_VERSION = 1
TOP_ROWS = 15
OP_ROWS = 200  # the widget's operator table sorts and filters these rows
MAX_SERIES = 2000  # step times shipped per series (the chart needs each step, but bounded)


def _clean(x: Any) -> Any:
    """JSON-safe copy: NaN/inf -> None, numpy scalars -> Python."""
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if hasattr(x, "item") and not isinstance(x, (str, bytes)):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _records(df: pd.DataFrame, n: int = TOP_ROWS) -> list[dict[str, Any]]:
    return _clean(df.head(n).to_dict(orient="records"))


class Report:
    """One analysed run: `.verdict`, `.findings` and the tables as DataFrames."""

    def __init__(self, analysis: Analysis, advice: Advice, meta: RunMeta | None = None,
                 path: str | None = None, ranks: list[Analysis] | None = None,
                 distributed: Distributed | None = None,
                 timeline: dict[str, Any] | None = None) -> None:
        self.analysis = analysis
        self.advice = advice
        self.meta = meta
        self.path = path
        self.ranks = ranks or []
        self.distributed = distributed  # cross-rank tables when the run has >= 2 ranks
        self.timeline = timeline  # bounded LOD timeline (analysis/timeline.py); None: no trace
        self.baseline_ms: list[float] | None = None  # baseline of a bare trace (no meta)

    verdict = property(lambda self: self.advice.verdict, doc="The Verdict (category, summary…).")
    steps = property(lambda self: self.analysis.steps, doc="Profiled steps (steps.STEP_COLUMNS).")
    ops = property(lambda self: self.analysis.ops, doc="Operator table (ops.OP_COLUMNS).")
    kernels = property(lambda self: self.analysis.kernels, doc="Kernels (kernels.KERNEL_COLUMNS).")
    gaps = property(lambda self: self.analysis.gaps, doc="GPU idle gaps (idle.GAP_COLUMNS).")
    transfers = property(lambda self: self.analysis.transfers, doc="Copies (TRANSFER_COLUMNS).")
    syncs = property(lambda self: self.analysis.syncs, doc="Sync calls (sync.SYNC_COLUMNS).")

    @property
    def baseline(self) -> pd.DataFrame:
        """Unprofiled baseline step times (ms), one row per timed step."""
        ms = self.meta.baseline.get("step_ms", []) if self.meta else []
        return pd.DataFrame({"step": range(len(ms)), "step_ms": ms})

    @property
    def findings(self) -> pd.DataFrame:
        """Ranked findings as a table (id, category, evidence, fix, expected_gain_pct…)."""
        cols = ["id", "category", "title", "expected_gain_pct", "cost_ms", "evidence", "fix"]
        return pd.DataFrame([f.to_json() for f in self.advice.findings], columns=cols)

    def to_json(self) -> dict[str, Any]:
        """The summary object (same as `jupyter gpuprof analyze --json`)."""
        a, m = self.analysis, self.meta
        stats = a.baseline if a.baseline["n"] else a.profiled
        syncs = a.syncs
        n = max(a.n_steps, 1)
        top_sync = (syncs.assign(by=syncs["caller"].where(syncs["caller"] != "", syncs["api"]))
                    .groupby("by")["gpu_idle_after_us"].agg(["size", "sum"])
                    .sort_values("sum", ascending=False).head(5)) if len(syncs) else None
        out = {
            "schema_version": SCHEMA_VERSION,
            "source": {
                "path": self.path, "gpu": a.info.gpu_name, "rank": a.info.rank,
                "world_size": a.info.world_size, "run_id": m.id if m else None,
                "name": m.name if m else None, "status": m.status if m else None,
                "error": m.error if m else None, "created": m.created if m else None,
            },
            "steps": {**stats, "source": a.real.source,
                      "timing": m.baseline.get("timing") if m else None,
                      "baseline": a.baseline, "profiled": a.profiled,
                      "profiler_inflation": a.real.inflation,
                      **_step_series(a, m, self.baseline_ms)},
            "gpu": {
                "available": a.gpu_available, "busy_pct": a.busy_pct,
                "idle_pct": 100.0 - a.busy_pct if a.gpu_available else None,
                "busy_pct_real": 100.0 * a.real.busy_frac, "busy_ms_per_step": a.real.gpu_busy_ms,
                "idle_ms_per_step": a.real.idle_ms, "idle_by_cause_ms": a.real.idle_by_cause_ms,
                "streams": _records(a.streams, 50),
            },
            "verdict": self.advice.verdict.to_json(),
            "findings": [f.to_json() for f in self.advice.findings],
            "ops": _records(a.ops, OP_ROWS), "kernels": _records(a.kernels),
            "kernel_kinds": _records(a.kinds, 50),
            "transfers": _records(transfer_summary(a.transfers), 20),
            "syncs": {"count": len(syncs), "per_step": len(syncs) / n,
                      "top": [{"caller": k, "calls": int(r["size"]), "gpu_idle_after_us": r["sum"]}
                              for k, r in top_sync.iterrows()] if top_sync is not None else []},
            "launch": a.launch, "comm": a.comm,
            "memory": {"peaks": _records(a.memory, 16),
                       "max_memory_allocated_bytes": m.max_memory_allocated_bytes if m else None},
            "flops": a.flops,
            "input": {"host_share_pct": a.input_host_pct, "ms_per_step": a.input_ms_per_step},
            "ranks": [{"rank": r.info.rank if r.info.rank is not None else i,
                       "step_median_ms": r.profiled["median_ms"], "busy_pct": r.busy_pct}
                      for i, r in enumerate(self.ranks)],
            "distributed": _distributed_json(self.distributed),
            "timeline": self.timeline,
            **whatif_blocks(a, self.advice, m),
        }
        return _clean(out)

    def to_text(self) -> str:
        """Plain-text report."""
        from .views.text import render_text
        return render_text(self.to_json())

    def _repr_html_(self) -> str:
        from .views.html import render_html
        return render_html(self.to_json())

    def widget(self) -> Any:
        """The interactive report (anywidget) built from this report's summary."""
        from .views.widget import ReportWidget
        return ReportWidget(self.to_json())

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        """Display as the report widget, which also carries static HTML and text fallbacks."""
        return self.widget()._repr_mimebundle_(include=include, exclude=exclude)

    def __repr__(self) -> str:
        return self.to_text()


def _step_series(a: Analysis, m: RunMeta | None,
                 loose_baseline: list[float] | None) -> dict[str, list[float]]:
    """Each step's time (ms) for the step-time chart: unprofiled baseline, profiled window."""
    base = list(m.baseline.get("step_ms") or []) if m else list(loose_baseline or [])
    prof = list(m.profiled_step_ms) if m and m.profiled_step_ms else []
    if not prof and len(a.steps) and int(a.steps["step"].iloc[0]) >= 0:
        prof = (a.steps["step_us"] / 1e3).tolist()
    warm = list(m.baseline.get("warmup_ms") or []) if m else []
    return {"warmup_ms": [round(float(v), 4) for v in warm[:MAX_SERIES]],
            "baseline_ms": [round(float(v), 4) for v in base[:MAX_SERIES]],
            "profiled_ms": [round(float(v), 4) for v in prof[:MAX_SERIES]]}


def _timeline(trace: Trace, a: Analysis) -> dict[str, Any]:
    """The bounded timeline the views draw (never the raw events)."""
    return build_timeline(trace, a.window, a.gaps, a.steps)


def _distributed_json(d: Distributed | None) -> dict[str, Any] | None:
    """Cross-rank block of the summary: per-rank figures, imbalance, collective counts."""
    if d is None:
        return None
    return {"ranks": _records(rank_table(d), 256), "imbalance": _records(d.imbalance, 256),
            "collectives_matched": d.n_matched, "collectives_unmatched": d.n_unmatched}


def _multi_rank(paths: list[Path], meta: RunMeta | None, path: str) -> Report:
    """Report over every rank's trace: ranks analysed in parallel, advice across ranks."""
    baseline = (meta.baseline.get("step_ms") or None) if meta else None
    done = load_ranks(paths, baseline, meta.flops_per_step if meta else None)
    analyses = [a for a, _ in done if a is not None]
    dist = analyze_ranks([s for _, s in done])
    advice = merge_advice(advise(analyses[0]), analyses[0], dist, analyses)
    return Report(analyses[0], advice, meta, path, analyses, dist)


def _sibling_meta(trace: Path) -> dict[str, Any]:
    """Baseline data stored beside a bare trace (`X.meta.json` or `meta.json`), if any."""
    stem = trace.name.split(".")[0]
    for cand in (trace.with_name(f"{stem}.meta.json"), trace.with_name(META_FILE)):
        if cand.is_file():
            try:
                data = json.loads(cand.read_text())
            except (OSError, ValueError):
                continue
            if isinstance(data, dict):
                return data
    return {}


def analyze_trace(path: str | Path, baseline_step_ms: list[float] | None = None,
                  flops_per_step: float | None = None, meta: RunMeta | None = None,
                  data: Prefetch | None = None) -> Report:
    """Report for one trace file (baseline from the arguments or a sibling meta file)."""
    path = Path(path)
    if baseline_step_ms is None and meta is None:
        side = _sibling_meta(path)
        baseline_step_ms = side.get("step_ms_all") or side.get("baseline", {}).get("step_ms")
        flops_per_step = flops_per_step or side.get("flops_per_step")
    trace = load_trace(path, data=data)
    a = analyze(trace, baseline_step_ms, flops_per_step)
    report = Report(a, advise(a), meta, str(path), timeline=_timeline(trace, a))
    report.baseline_ms = list(baseline_step_ms or [])
    return report


def analyze_run(run: Run) -> Report:
    """Report for a run folder; caches it as the run's summary.json."""
    traces = run.trace_paths()
    if not traces:
        raise TraceError(f"{run.path}: the run has no trace file (status {run.meta.status})")
    m = run.meta
    if len(traces) > 1:
        report = _multi_rank(traces, m, str(run.path))
    else:
        trace = load_trace(traces[0])
        a = analyze(trace, m.baseline.get("step_ms") or None, m.flops_per_step)
        report = Report(a, advise(a), m, str(run.path), timeline=_timeline(trace, a))
    run.write_summary(report.to_json())
    return report


def _is_run_folder(p: Path) -> bool:
    """A run folder has a meta.json written by the store (it carries schema_version)."""
    try:
        data = json.loads((p / META_FILE).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "schema_version" in data


def _trace_files(p: Path) -> list[Path]:
    names = (".pt.trace.json", ".pt.trace.json.gz", "trace.json.gz", "trace.json")
    return sorted(x for x in p.iterdir()
                  if x.is_file() and (x.name.endswith(names) or _is_rank_trace(x)))


def analyze_path(path: str | Path, data: Prefetch | None = None) -> Report:
    """Report for a trace file, a run folder, or a folder of per-rank traces.

    `data`: a trace file already being read in the background.
    """
    p = Path(path)
    if p.is_file():
        return analyze_trace(p, data=data)
    if not p.is_dir():
        raise TraceError(f"{p}: no such file or folder")
    if _is_run_folder(p):
        return analyze_run(open_run(p))
    traces = _trace_files(p)
    if not traces:
        raise TraceError(f"{p}: no trace files (*.pt.trace.json[.gz] or trace*.json.gz) here")
    if len(traces) == 1:
        return analyze_trace(traces[0])
    return _multi_rank(traces, None, str(p))


def _is_rank_trace(p: Path) -> bool:
    return p.name.startswith("trace.rank") and p.name.endswith(".json.gz")


def run_summary(run: Run) -> dict[str, Any]:
    """The run's summary: the cached summary.json, else analysed now (and cached)."""
    cached = run.read_summary()
    if cached is not None:
        return cached
    if run.meta.status == "running":
        raise RunInProgress(f"run {run.id!r} is still being written; no report yet")
    return analyze_run(run).to_json()
