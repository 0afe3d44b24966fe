"""A trace, a run folder or a folder of rank traces -> a `Report` (analysis + advice).

The magics, the CLI and the server share these entry points. The run-folder format is the
store's: this module asks `store.layout` which files are traces and reads meta through `Run`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import msgspec
import pandas as pd

from ..advice.findings import Verdict
from ..advice.passes import Context, finish
from ..advice.verdict import Advice
from ..analysis.baseline_check import check_baseline
from ..analysis.distributed import Distributed, analyze_ranks
from ..analysis.one_job import job_warning, not_one_job
from ..analysis.piece_share import PieceShare
from ..analysis.rank_loading import load_ranks
from ..analysis.summary import Analysis, analyze
from ..analysis.timeline import build_timeline
from ..analysis.timeline_ranks import merge_rank_lanes
from ..analysis.trace import Trace, TraceError, load_trace
from ..analysis.tracefile import Prefetch
from ..oneline import first_line
from ..store.layout import folder_traces, is_run_folder, rank_in_name, sibling_meta
from ..store.run import Run, RunMeta, open_run
from ..store.runs import RunInProgress
from .baseline_side import baseline_side, gpu_spread
from .calibration import with_calibration
from .model import SUMMARY_SCHEMA_VERSION, Summary, Timeline, from_builtins, to_builtins
from .summarize import summarize

if TYPE_CHECKING:
    from ..views.summary_doc import SummaryDoc


class Report:
    """One analysed run: `.verdict`, `.findings` and the tables as DataFrames."""

    analysis: Analysis
    advice: Advice
    meta: RunMeta | None
    path: str | None
    ranks: list[Analysis]  # one per rank when the run has several
    distributed: Distributed | None  # cross-rank tables when the run has >= 2 ranks
    timeline: Timeline | None  # bounded LOD timeline (analysis/timeline.py); None: no trace
    baseline_ms: list[float] | None  # baseline of a bare trace (no meta)
    job_warnings: list[str]  # the traces of a folder are not one job's ranks
    ncu: pd.DataFrame | None  # Nsight Compute's kernels, once `%ncu` profiled this run
    ncu_results: Any  # the ncu session behind `.ncu` (ncu.results.NcuResults)

    def __init__(self, analysis: Analysis, advice: Advice, meta: RunMeta | None = None,
                 path: str | None = None, ranks: list[Analysis] | None = None,
                 distributed: Distributed | None = None,
                 timeline: Timeline | None = None) -> None:
        self.analysis = analysis
        self.advice = advice
        self.meta = meta
        self.path = path
        self.ranks = ranks or []
        self.distributed = distributed
        self.timeline = timeline
        self.baseline_ms = None
        self.job_warnings = []
        self.ncu = None
        self.ncu_results = None
        self._summary: Summary | None = None
        self._summary_key: tuple[Any, ...] = ()
        self.shown: Any = None  # the widget IPython displayed it as (views/widget.py)

    @property
    def warnings(self) -> list[str]:
        """What the reader dropped, ignored or cut differently, per rank when there are several,
        and what the profiler printed while capturing (never red output under the cell)."""
        said = [f"the profiler printed: {m}"
                for m in (self.meta.profiler_messages if self.meta else [])]
        said += self.meta.problems if self.meta else []  # what the run's reader dropped
        said += _cupti_warning(self.meta.cupti_kept if self.meta else None)
        if not self.ranks:
            return list(self.analysis.info.warnings) + self.analysis.window.notes() + said
        return self.job_warnings + [f"rank {r.info.rank if r.info.rank is not None else i}: {w}"
                for i, r in enumerate(self.ranks) for w in r.info.warnings + r.window.notes()
                ] + said

    @property
    def verdict(self) -> Verdict:
        """The Verdict (category, summary, confidence, reasons)."""
        return self.advice.verdict

    @property
    def step_table(self) -> pd.DataFrame:
        """One row per profiled step (steps.STEP_COLUMNS)."""
        return self.analysis.steps

    @property
    def ops(self) -> pd.DataFrame:
        """Operator table (ops.OP_COLUMNS)."""
        return self.analysis.ops

    @property
    def kernels(self) -> pd.DataFrame:
        """Kernels (kernels.KERNEL_COLUMNS)."""
        return self.analysis.kernels

    @property
    def gaps(self) -> pd.DataFrame:
        """GPU idle gaps (idle.GAP_COLUMNS)."""
        return self.analysis.gaps

    @property
    def transfers(self) -> pd.DataFrame:
        """Copies (transfers.TRANSFER_COLUMNS)."""
        return self.analysis.transfers

    @property
    def syncs(self) -> pd.DataFrame:
        """Sync calls (sync.SYNC_COLUMNS)."""
        return self.analysis.syncs

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

    def _inputs(self) -> tuple[Any, ...]:
        """What the summary is built from that can change after the analysis: the findings
        (`%ncu` merges its own), the verdict, the warnings, the meta's tries and name."""
        m = self.meta
        return (tuple(map(id, self.advice.findings)), id(self.advice.verdict),
                tuple(self.warnings),
                None if m is None else (id(m.tries), len(m.tries), m.name, m.status))

    def summary(self) -> Summary:
        """The typed summary (report/model.py) of this report, built once for as long as what
        it is built from stays the same (a display no longer builds it again)."""
        key = self._inputs()
        if self._summary is None or key != self._summary_key:
            self._summary = summarize(self.analysis, self.advice, self.meta, self.path,
                                      self.ranks, self.distributed, self.timeline,
                                      self.baseline_ms, self.warnings)
            self._summary_key = key
        return self._summary

    def to_json(self) -> dict[str, Any]:
        """The summary object (same as `jupyter gpuprof analyze --json`): the model, encoded."""
        return to_builtins(self.summary())

    def summary_doc(self) -> SummaryDoc:
        """The summary's JSON object as the views read it (`views.summary_doc`)."""
        return cast("SummaryDoc", self.to_json())  # to_builtins encodes exactly that schema

    def to_text(self) -> str:
        """Plain-text report."""
        from ..views.text import render_text
        return render_text(self.summary_doc())

    def headline(self) -> str:
        """The first screen: verdict, top fix as code, what it is worth, how to measure it."""
        from ..views.text import render_headline
        return render_headline(self.summary_doc())

    def _repr_html_(self) -> str:
        from ..views.html import render_html
        return render_html(self.summary_doc())

    def widget(self) -> Any:
        """The interactive report (anywidget) built from this report's summary."""
        from ..views.widget import ReportWidget
        return ReportWidget(self.summary_doc())

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        """Display as the report widget, which also carries static HTML and text fallbacks."""
        return self.widget()._repr_mimebundle_(include=include, exclude=exclude)

    def _ipython_display_(self) -> None:
        """In IPython: the static copy as its own output, then the widget (views/widget.py)."""
        from ..views.widget import display_report
        self.shown = display_report(self.summary_doc())  # the magic may offer tries on it

    def __repr__(self) -> str:
        return self.to_text()


def _context(a: Analysis, meta: RunMeta | None, ranks: list[Analysis] | None = None,
             distributed: Distributed | None = None) -> Context:
    """What the advice passes read of a run: its analyses and what its capture recorded."""
    return Context(a, ranks or [], distributed,
                   framework=meta.framework if meta else None,
                   training=meta.training if meta else None,
                   callsites=list(meta.callsites) if meta else [],
                   tries=list(meta.tries) if meta else [])


def _timeline(trace: Trace, a: Analysis) -> Timeline:
    """The bounded timeline the views draw (never the raw events)."""
    return msgspec.convert(build_timeline(
        trace, a.window, a.gaps, a.steps,
        profiled_scale=a.real.inflation if a.real.source == "baseline" else None), Timeline)


def _multi_rank(paths: list[Path], meta: RunMeta | None, path: str) -> Report:
    """Report over every rank's trace: ranks analysed in parallel, advice across ranks."""
    baseline = (meta.baseline.get("step_ms") or None) if meta else None
    done = load_ranks(paths, baseline, meta.flops_per_step if meta else None,
                      named_ranks=[rank_in_name(p.name) for p in paths], timeline=True,
                      side=_side(meta) if meta else None)
    analyses = [a for a, _ in done if a is not None]
    summaries = [s for _, s in done]
    problems = not_one_job(summaries)
    if problems:  # unrelated runs: lining them up as ranks would invent stragglers
        report = Report(analyses[0], finish(_context(analyses[0], meta)), meta, path, analyses)
        report.job_warnings = [job_warning(problems, len(summaries))]
        return report
    dist = analyze_ranks(summaries)
    advice = finish(_context(analyses[0], meta, analyses, dist))
    offsets = dict(zip(dist.ranks["rank"], dist.ranks["clock_offset_us"], strict=True)) \
        if dist.n_matched else None
    waited = dist.slowest()
    merged = merge_rank_lanes([s.lanes for s in summaries if s.lanes is not None], offsets,
                              None if waited is None else int(waited["rank"]))
    timeline = msgspec.convert(merged, Timeline) if merged is not None else None
    return Report(analyses[0], advice, meta, path, analyses, dist, timeline)


def _side(meta: RunMeta) -> dict[str, object]:
    """`analyze`'s keywords beside the baseline from a run's meta (its rank 0's side)."""
    names = ("stalls", "epoch_steps", "loader", "probe_neighbour_ms", "after")
    return {"host_probe_ms": meta.baseline.get("host_probe_ms"),
            **dict(zip(names, baseline_side(meta.baseline), strict=True)),
            "gpu_spread": gpu_spread(meta.conditions)}


def analyze_trace(path: str | Path, baseline_step_ms: list[float] | None = None,
                  flops_per_step: float | None = None, meta: RunMeta | None = None,
                  data: Prefetch | PieceShare | None = None,
                  host_probe_ms: float | None = None) -> Report:
    """Report for one trace file (baseline from the arguments or a sibling meta file); a
    baseline given as an argument must be plausible for the trace's steps (`BaselineError`)."""
    path = Path(path)
    held: Any = meta.baseline if meta else None
    conditions: object = meta.conditions if meta else None
    given = baseline_step_ms  # typed by a person: checked against the trace's steps below
    if baseline_step_ms is None and meta is None:
        side = sibling_meta(path)
        baseline_step_ms = side.get("step_ms_all") or side.get("baseline", {}).get("step_ms")
        flops_per_step = flops_per_step or side.get("flops_per_step")
        host_probe_ms = host_probe_ms or side.get("host_probe_ms") or side.get(
            "baseline", {}).get("host_probe_ms")
        held, conditions = side.get("baseline"), side.get("conditions")
    trace = load_trace(path, data=data)
    a = analyze(trace, baseline_step_ms, flops_per_step, host_probe_ms, *baseline_side(held),
                gpu_spread=gpu_spread(conditions))
    if given is not None:
        check_baseline(given, a.real.profiled_step_ms)
    report = Report(a, finish(_context(a, meta)), meta, str(path), timeline=_timeline(trace, a))
    report.baseline_ms = list(baseline_step_ms or [])
    return report


def _cupti_warning(why: str | None) -> list[str]:
    """The report's line when CUPTI stayed attached after the trace (capture/cupti_release.py)
    for a reason the user can act on: the training after the capture pays its callbacks."""
    if not why or why == "no CUDA build":
        return []
    return [f"CUPTI stays attached after the capture ({why}): steps after it may run slower "
            f"than before it (the word-level LM: 14 % on the H200) until the process restarts"]


def analyze_run(run: Run, data: Prefetch | PieceShare | None = None) -> Report:
    """Report for a run folder; caches it as the run's summary.json.

    `data`: its trace already being read ahead (`tracefile.Prefetch`). A trace that cannot
    be read is recorded in the run (listed `broken` with the reason);
    failing to write either cache (a read-only runs folder) never fails the analysis.
    """
    traces = run.trace_paths()  # refuses symlinked traces before anything opens them
    if not traces:
        raise TraceError(f"{run.path}: the run has no trace file (status {run.status})")
    m = run.meta
    try:
        if len(traces) > 1:
            report = _multi_rank(traces, m, str(run.path))
        else:
            ahead = data if data is not None and data.path == traces[0] else None
            trace = load_trace(traces[0], data=ahead)
            a = analyze(trace, m.baseline.get("step_ms") or None, m.flops_per_step,
                        **_side(m))  # type: ignore[arg-type]
            report = Report(a, finish(_context(a, m)), m, str(run.path),
                            timeline=_timeline(trace, a))
    except TraceError as e:
        reason = first_line(str(e)) or "unreadable trace"
        _quietly(lambda: run.write_trace_error(reason))
        raise
    summary = report.to_json()
    _quietly(lambda: run.write_summary(summary))
    _quietly(run.clear_trace_error)
    return report


def _quietly(write: Callable[[], None]) -> None:
    """Write a cache; a read-only or vanished run folder only means no cache."""
    try:
        write()
    except (OSError, ValueError):
        pass


def analyze_path(path: str | Path, data: Prefetch | PieceShare | None = None) -> Report:
    """Report for a trace file, a run folder, or a folder of per-rank traces.

    `data`: a trace file already being read in the background.
    """
    p = Path(path)
    if p.is_file():
        return analyze_trace(p, data=data)
    if not p.is_dir():
        raise TraceError(f"{p}: no such file or folder")
    if is_run_folder(p):
        return analyze_run(open_run(p), data)
    traces = folder_traces(p)
    if not traces:
        raise TraceError(f"{p}: no trace files (*.json or *.json.gz) here")
    if len(traces) == 1:
        return analyze_trace(traces[0])
    return _multi_rank(traces, None, str(p))


def cached_summary(run: Run) -> dict[str, Any] | None:
    """The run's summary.json when this version wrote it and it decodes, else None.

    The version is read from the file itself (the model's default would pass a summary that
    lacks it): an older summary can decode yet miss figures (a multi-rank timeline) that only
    re-analysis adds.
    """
    cached = run.read_summary()
    if cached is None or cached.get("schema_version") != SUMMARY_SCHEMA_VERSION:
        return None
    try:
        from_builtins(cached)
    except msgspec.ValidationError:
        return None
    return cached


def run_summary_doc(run: Run) -> SummaryDoc:
    """`run_summary` as the views read it (the model decoded it before it was cached)."""
    return cast("SummaryDoc", run_summary(run))


def run_summary(run: Run) -> dict[str, Any]:
    """The run's summary: the cached summary.json when valid, else analysed now (and cached)."""
    cached = cached_summary(run)
    if cached is not None:  # the record moves on: today's name (a rename) and calibration
        source = cached.get("source")
        if isinstance(source, dict) and run.meta.name:
            cached = {**cached, "source": {**source, "name": run.meta.name}}
        said = cached.get("warnings")
        if isinstance(said, list) and run.meta.problems:  # a meta.json damaged since
            cached = {**cached, "warnings": said + [p for p in run.meta.problems
                                                    if p not in said]}
        return with_calibration(str(run.path), run.meta, cached)
    if run.status == "running":
        raise RunInProgress(f"run {run.id!r} is still being written; no report yet")
    if run.status == "interrupted" and not run.trace_paths():
        raise RunInProgress(f"run {run.id!r} was interrupted (its process is gone) before it "
                            "saved a trace: nothing to analyse; profile the cell again")
    return analyze_run(run).to_json()
