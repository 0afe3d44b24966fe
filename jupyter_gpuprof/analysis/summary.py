"""The analysis facade: run every analysis once over a trace and reconcile it with real time.

`analyze()` returns an `Analysis` holding documented DataFrames (columns described in each
module's `*_COLUMNS`) plus the reconciled figures the advice works from. The profiler
inflates host-side costs, so idle time seen in the trace is rescaled to the idle time the
unprofiled baseline really has (GPU kernel durations barely change under the profiler).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypedDict

import numpy as np
import pandas as pd

from ..categories import GAP_CAUSES
from ..stats import StepStats, describe_steps
from .allocator import give_back_freed
from .hardware import GpuArch, gpu_arch, mfu_dtype, peak_tflops
from .hostwork import classify_host
from .idle import gap_table, gpu_coverage, stream_table
from .intervals import Coverage, union
from .kernels import MATMUL_KINDS, kernel_rows, kernel_table, kind_summary
from .kineto_json import GPU_CATEGORIES
from .launch import launch_stats
from .loader_pace import LoaderPace
from .memory import memory_table
from .one_time import ONE_TIME_COLUMNS, one_time_table
from .op_links import OP_KERNEL_COLUMNS, OP_SHAPE_COLUMNS, op_kernels, op_shapes
from .ops import op_rows, op_table, per_step
from .spikes import Spikes, run_spikes
from .step_graph import StepGraph, build_graph
from .steps import Window, assign_steps, gpu_activity, optimizer_classes, step_table
from .sync import sync_table
from .trace import Trace, TraceInfo
from .transfers import transfer_table

IDLE_CAUSES = GAP_CAUSES


class FlopsFigures(TypedDict):
    """FLOPs per step, the matmuls' dtype, its peak and what the step achieves of it."""

    per_step: float | None
    dtype: str
    peak_tflops: float | None
    achieved_tflops: float | None
    mfu_pct: float | None


def step_stats(step_ms: Sequence[float | None]) -> StepStats:
    """`stats.describe_steps` (the step statistics every view reads)."""
    return describe_steps(step_ms)


@dataclass
class RealTime:
    """The trace's per-step figures reconciled with the unprofiled baseline."""

    step_ms: float
    source: str  # "baseline" (unprofiled, measured) or "trace" (profiled steps only)
    profiled_step_ms: float
    gpu_busy_ms: float  # GPU busy per step (kernels, copies: barely inflated by profiling)
    idle_ms: float  # real GPU idle per step
    trace_idle_ms: float
    idle_scale: float  # idle_ms / trace_idle_ms
    idle_by_cause_ms: dict[str, float] = field(default_factory=dict)
    #: how many times longer the baseline's GPU work may have run than the trace's kernels
    #: (analysis/conditions.py `gpu_time_spread`: a GPU at its power cap clocks down)
    gpu_spread: float = 1.0

    @property
    def gpu_busy_max_ms(self) -> float:
        """The most GPU time an unprofiled step may hold: the trace's at the slowest clock
        the baseline ran at."""
        return self.gpu_busy_ms * self.gpu_spread

    @property
    def busy_frac(self) -> float:
        """Share of the real step the GPU is busy."""
        return min(1.0, self.gpu_busy_ms / self.step_ms) if self.step_ms > 0 else 0.0

    @property
    def inflation(self) -> float:
        """Profiled step over real step (how much the profiler slowed the host)."""
        return self.profiled_step_ms / self.step_ms if self.step_ms > 0 else float("nan")


#: a host-paced baseline this much longer than its host probe (beyond the syncs' hold and the
#: wait for data) ran on a slower host than the probe saw (`Analysis.baseline_probe_ms`)
PROBE_DRIFT = 0.05


@dataclass
class Analysis:
    """Every analysis of one trace (one rank), computed once."""

    info: TraceInfo
    window: Window
    steps: pd.DataFrame
    streams: pd.DataFrame
    gaps: pd.DataFrame
    ops: pd.DataFrame
    kernels: pd.DataFrame
    kinds: pd.DataFrame
    transfers: pd.DataFrame
    syncs: pd.DataFrame
    memory: pd.DataFrame
    launch: dict[str, float]
    baseline: StepStats
    profiled: StepStats
    real: RealTime
    gpu_available: bool
    busy_pct: float  # GPU busy share of the profiled window
    input_host_pct: float  # data pipeline's share of the host timeline
    input_ms_per_step: float
    matmul_dtype: str
    flops: FlopsFigures
    comm: dict[str, float]
    n_steps: int
    graph: StepGraph | None = None  # the steps' dependency graph, for what-if replays
    #: unprofiled host time of one step started with an empty GPU queue (capture/driver.py):
    #: the real host speed where the step's length cannot show it
    host_probe_ms: float | None = None
    #: the unprofiled warm-up step run just before the probe (`probe_neighbour_ms`), timed
    #: in the same seconds: what the step with its syncs took while the probe ran
    probe_neighbour_ms: float | None = None
    arch: GpuArch | None = None  # vendor and architecture: which precisions and peaks apply
    spikes: Spikes | None = None  # the long steps (of the baseline, or after the capture)
    loader: LoaderPace | None = None  # the baseline's wait for data: does the loader pace it
    optimizers: tuple[str, ...] = ()  # the optimizer classes that stepped (none: updated by hand)
    #: kernels per launching op (`op_links.op_kernels`) and every op's shapes (`op_shapes`)
    op_kernels: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(
        columns=list(OP_KERNEL_COLUMNS)))
    op_shapes: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(
        columns=list(OP_SHAPE_COLUMNS)))

    @property
    def wall_ms(self) -> float:
        """What a step costs over the long run (the median plus its stalls' share): the basis
        findings are priced on, the same as the median where the baseline has no stalls."""
        s = self.spikes
        if s is None or self.real.source != "baseline" or s.excess_ms_per_step <= 0:
            return self.real.step_ms
        return self.real.step_ms + s.excess_ms_per_step

    @property
    def data_wait_ms(self) -> float:
        """The baseline's median wait per step for data in DataLoader `__next__` (0: untimed)."""
        return self.loader.wait_ms if self.loader is not None else 0.0

    @property
    def beyond_probe_ms(self) -> float:
        """The real step beyond both the host's own work (the host probe, plus the step's wait
        for data) and the most GPU time the step may hold (`RealTime.gpu_spread`): 0 without
        a probe, a baseline or a sync per step."""
        r = self.real
        probe = self.host_probe_ms
        if probe is None or r.source != "baseline" or len(self.syncs) < max(self.n_steps, 1):
            return 0.0
        return max(0.0, r.step_ms - max(probe + self.data_wait_ms, r.gpu_busy_max_ms))

    @property
    def sync_held_ms(self) -> float:
        """What the step's read-backs hold unprofiled (of `beyond_probe_ms`), which host and
        GPU would overlap without them. The profiler slows the host until the GPU is always
        drained at a sync, so the trace alone shows almost none of it (the word-level LM: 10
        µs held per `.item()` in the trace, 0.6 ms per step unprofiled, 1.2 ms measured with
        it removed); a GPU-bound step at its power cap is longer than its captured kernels
        with no sync holding it (compiled nanoGPT: 5.7 ms at the captured clock, −0.3 %
        measured with its `.item()` gone). A waiting loader is no sync (MNIST's CNN: 8.3 ms of
        the 10.9 ms step in `__next__`), and where the host paces the step, the warm-up step
        beside the probe bounds the hold: a baseline longer than both is the host running
        slower later (the word-level LM on a noisy host: probe 5.67 ms, its neighbour
        5.83 ms, the baseline 7.38 ms; removing the `.item()` measured no faster, ×1.07 in
        eight rounds)."""
        held = self.beyond_probe_ms
        probe, beside = self.host_probe_ms, self.probe_neighbour_ms
        if held > 0 and probe is not None and beside is not None and (
                probe >= self.real.gpu_busy_max_ms):
            held = min(held, max(0.0, beside - probe))
        return held

    @property
    def baseline_probe_ms(self) -> float | None:
        """The host probe where it stands for the baseline's host. Where the host paces the
        step (the probe outlasts the GPU's work) and the baseline, less its syncs' hold and
        its wait for data, ran more than `PROBE_DRIFT` longer than the probe, the host ran
        slower while the baseline was timed than while it was probed (the word-level LM on a
        noisy H100: probe 5.67 ms, its neighbour 5.83 ms, the baseline 7.38 ms): None, and
        the host's speed is found from the real step (`step_replay.calibrate`)."""
        r, probe = self.real, self.host_probe_ms
        if probe is None or r.source != "baseline" or probe < r.gpu_busy_max_ms:
            return probe
        unseen = r.step_ms - self.sync_held_ms - self.data_wait_ms
        return None if unseen > probe * (1.0 + PROBE_DRIFT) else probe

    def stall_ms(self, category: str) -> float:
        """Long-run ms per step of the stalls a fix of `category` removes (0 without any)."""
        s = self.spikes
        if s is None or self.real.source != "baseline":
            return 0.0
        return s.excess_of(category)
    #: start-up, module loading, graph capture, allocator growth (one_time.ONE_TIME_COLUMNS)
    one_time: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(
        columns=list(ONE_TIME_COLUMNS)))

    def kind_ms_per_step(self, kinds: Sequence[str], tensor_core: bool | None = None) -> float:
        """GPU time per step in kernels of the given kinds (optionally by Tensor-Core use)."""
        k = self.kinds[self.kinds["kind"].isin(kinds)]
        if tensor_core is not None:
            k = k[k["tensor_core"] == tensor_core]
        return float(k["total_us"].sum()) / 1e3 / max(self.n_steps, 1)


def _matmul_dtype(rows: pd.DataFrame) -> str:
    """dtype carrying most matmul time (TF32 when fp32 GEMMs run on Tensor Cores)."""
    mm = rows[rows["kind"].isin(MATMUL_KINDS)]
    if mm.empty:
        return ""
    d = mm.assign(d=np.where((mm["dtype"] == "fp32") & mm["tensor_core"], "tf32", mm["dtype"]))
    by = d.groupby("d")["dur_us"].sum().drop("", errors="ignore")
    return str(by.idxmax()) if len(by) else ""


def _flops(flops_per_step: float | None, real: RealTime, gpu: str | None,
           dtype: str, arch: GpuArch | None) -> FlopsFigures:
    peak = peak_tflops(gpu, mfu_dtype(dtype, arch), arch)
    out: FlopsFigures = {"per_step": flops_per_step, "dtype": dtype, "peak_tflops": peak,
                         "achieved_tflops": None, "mfu_pct": None}
    if flops_per_step and real.step_ms > 0:
        achieved = flops_per_step / (real.step_ms * 1e-3) / 1e12
        out["achieved_tflops"] = achieved
        if peak:
            out["mfu_pct"] = 100.0 * achieved / peak
    return out


def _comm(rows: pd.DataFrame, n: int) -> dict[str, float]:
    """Collective time per step and the part of it no compute kernel overlaps (exposed)."""
    kern = rows[rows["cat"] == "kernel"]
    nccl = kern[kern["kind"] == "nccl"]
    if nccl.empty:
        return {"comm_ms": 0.0, "exposed_ms": 0.0, "overlap_pct": float("nan")}
    ns, ne = union(nccl["ts_us"].to_numpy(), nccl["end_us"].to_numpy())
    comp = kern[kern["kind"] != "nccl"]
    hidden = Coverage.of(comp["ts_us"].to_numpy(), comp["end_us"].to_numpy()).overlap(ns, ne)
    total = float((ne - ns).sum())
    return {"comm_ms": total / 1e3 / max(n, 1),
            "exposed_ms": (total - float(hidden.sum())) / 1e3 / max(n, 1),
            "overlap_pct": 100.0 * float(hidden.sum()) / total if total else float("nan")}


def _reconcile(baseline: StepStats, profiled: StepStats, busy_us: float, n: int,
               window: Window, gaps: pd.DataFrame, gpu_spread: float = 1.0) -> RealTime:
    """Real step, GPU busy per step (work the steps launched) and idle rescaled to real time."""
    prof_ms = profiled["median_ms"] or window.dur_us / 1e3 / max(n, 1)
    base_ms = baseline["median_ms"]
    real_ms, source = (base_ms, "baseline") if baseline["n"] and base_ms is not None else (
        prof_ms, "trace")
    busy_ms = busy_us / 1e3 / max(n, 1)
    trace_idle = float(gaps["dur_us"].sum()) / 1e3 / max(n, 1) if len(gaps) else 0.0
    idle = max(0.0, real_ms - busy_ms)
    scale = idle / trace_idle if trace_idle > 0 else 0.0
    by_cause = gaps.groupby("cause")["dur_us"].sum() if len(gaps) else pd.Series(dtype=float)
    causes = {c: float(by_cause.get(c, 0.0)) / 1e3 / max(n, 1) * scale for c in IDLE_CAUSES}
    return RealTime(real_ms, source, prof_ms, busy_ms, idle, trace_idle, scale, causes,
                    max(1.0, gpu_spread))


def _host_scale(real: RealTime) -> float:
    """Real step over profiled step: host times under the profiler, brought to real time."""
    if real.source != "baseline" or real.profiled_step_ms <= 0:
        return 1.0
    return real.step_ms / real.profiled_step_ms


def probe_neighbour_ms(warmup_ms: object) -> float | None:
    """The warm-up step run just before the host probe: the probe is the second-to-last
    warm-up step (capture/driver.py, before the FLOP-counted last one), so its neighbour is
    third from the end (None with fewer warm-up steps, where none ran before the probe)."""
    w = [float(x) for x in warmup_ms if isinstance(x, (int, float))] if isinstance(
        warmup_ms, list) else []
    return w[-3] if len(w) >= 3 and w[-3] > 0 else None


def analyze(trace: Trace, baseline_step_ms: Sequence[float] | None = None,
            flops_per_step: float | None = None,
            host_probe_ms: float | None = None,
            stalls: Sequence[Mapping[str, object]] | None = None,
            epoch_steps: int | None = None, loader: LoaderPace | None = None,
            probe_neighbour_ms: float | None = None,
            after: Mapping[str, object] | None = None, gpu_spread: float = 1.0) -> Analysis:
    """Run every analysis on a trace; `baseline_step_ms` are unprofiled step times (ms),
    `host_probe_ms` the host time of one unprofiled step (see `Analysis.host_probe_ms`),
    `stalls` the events the capture stamped with their baseline step (capture/stalls.py),
    `loader` the baseline's waits in DataLoader `__next__` (analysis/loader_pace.py),
    `probe_neighbour_ms` the warm-up step before the probe (`Analysis.probe_neighbour_ms`),
    `after` the steps timed after the capture (meta.json's `baseline.after`),
    `gpu_spread` how much slower the baseline's GPU may have run (`RealTime.gpu_spread`)."""
    steps, window = step_table(trace)
    has_marks = bool(len(steps)) and int(steps["step"].iloc[0]) >= 0
    n = len(steps) if has_marks else 1
    gpu_rows = trace.of(*GPU_CATEGORIES, columns=["device"])
    device = int(gpu_rows["device"].mode().iloc[0]) if len(gpu_rows) else None
    cov = gpu_coverage(trace, device)
    busy_us = float(cov.overlap(np.array([window.start_us]), np.array([window.end_us]))[0])
    host = classify_host(trace, window.pid)
    gaps = gap_table(trace, window, host, cov)
    give_back_freed()  # the passes' copies of host rows: a 4 GB trace's heap keeps GBs else
    calls = op_rows(trace, window.start_us, window.end_us)
    give_back_freed()
    every_kernel = kernel_rows(trace)  # the graph's GPU table is taken from it too
    krows = every_kernel
    if has_marks:  # per-step figures count the work the profiled steps launched
        krows = krows[assign_steps(gpu_activity(trace), steps) >= 0]
    else:
        krows = krows[(krows["ts_us"] < window.end_us) & (krows["end_us"] > window.start_us)]
    baseline = step_stats(baseline_step_ms or [])
    profiled = step_stats((steps["step_us"] / 1e3).tolist() if has_marks else [])
    step_busy_us = float(steps["gpu_busy_us"].sum()) if has_marks else busy_us
    real = _reconcile(baseline, profiled, step_busy_us, n, window, gaps, gpu_spread)
    # the op calls are the largest table of the analysis: the tables made from them first,
    # then the calls freed before the passes that follow copy rows of their own
    ops = per_step(op_table(calls), n, real.step_ms, _host_scale(real))
    syncs = sync_table(host, calls, gaps)
    links, shapes = op_kernels(calls, krows), op_shapes(calls)
    del calls
    give_back_freed()
    input_us = host.input.overlap(np.array([window.start_us]), np.array([window.end_us]))[0]
    dtype = _matmul_dtype(krows)
    arch = gpu_arch(trace.info.devices)
    return Analysis(
        info=trace.info, window=window, steps=steps, streams=stream_table(trace, window),
        gaps=gaps, ops=ops,
        kernels=kernel_table(krows), kinds=kind_summary(krows),
        transfers=transfer_table(trace), syncs=syncs,
        memory=memory_table(trace), launch=launch_stats(trace, n), baseline=baseline,
        profiled=profiled, real=real, gpu_available=bool(len(gpu_rows)),
        busy_pct=100.0 * busy_us / window.dur_us if window.dur_us > 0 else 0.0,
        input_host_pct=100.0 * float(input_us) / window.dur_us if window.dur_us > 0 else 0.0,
        input_ms_per_step=float(input_us) / 1e3 / n, matmul_dtype=dtype,
        flops=_flops(flops_per_step, real, trace.info.gpu_name, dtype, arch),
        comm=_comm(krows, n), n_steps=n, arch=arch, one_time=one_time_table(trace),
        graph=build_graph(trace, steps, window, host, every_kernel) if has_marks else None,
        host_probe_ms=host_probe_ms if host_probe_ms and host_probe_ms > 0 else None,
        probe_neighbour_ms=probe_neighbour_ms,
        spikes=run_spikes(list(baseline_step_ms or []), stalls, epoch_steps, after),
        loader=loader, optimizers=optimizer_classes(trace),
        op_kernels=links, op_shapes=shapes,
    )

