"""The report summary as a typed schema: the one object every layer after analysis exchanges.

`Report.to_json()`, `summary.json`, `analyze --json`, the REST route and the views all carry
this model as JSON; the checked-in JSON Schema and the front end's TypeScript types are generated
from it. `float | None` marks a figure the analysis can leave undefined (non-finite -> null).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from .model_base import Model
from .model_cost import (
    CalibrationRow,
    CaptureCost,
    Conditions,
    Cost,
    OneTimeCost,
    StackResult,
    TryResult,
)
from .model_memory import MemoryOverStep, OomPostMortem
from .model_ranks import Distributed, DistributedRank, Imbalance, RankBrief
from .model_tables import KernelKindRow, KernelRow, KernelTable, OpKernel, OpRow, OpShape
from .timeline_model import Timeline as Timeline  # re-exported: summarize and views use it

__all__ = ["Distributed", "DistributedRank", "Imbalance", "KernelKindRow", "KernelRow",
           "KernelTable", "Model", "OpKernel", "OpRow", "OpShape", "RankBrief", "Timeline"]

#: summary version (meta.json's is the store's): bump when an older cache would decode yet lack data
SUMMARY_SCHEMA_VERSION = 8


class Source(Model):
    """Where the report comes from: the trace or run folder, its GPU, rank and run metadata."""

    path: str | None
    gpu: str | None
    rank: int | None
    world_size: int | None
    run_id: str | None
    name: str | None
    status: str | None
    error: str | None
    created: str | None
    arch: str | None = None  # vendor and family, deciding precisions/peaks ("AMD CDNA3")


class StepStats(Model):
    """Robust statistics of a series of step times (ms): `jupyter_gpuprof.stats.describe_steps`."""

    n: int
    median_ms: float | None
    p95_ms: float | None
    mean_ms: float | None
    min_ms: float | None
    max_ms: float | None
    q1_ms: float | None
    q3_ms: float | None
    iqr_ms: float | None
    outliers: list[int]


class Stall(Model):
    """Adjacent spike steps of the baseline (`analysis.spikes.Stall`) and what ran in them."""

    first: int
    last: int
    excess_ms: float
    cause: str | None
    category: str | None  # the fix category that removes it (input, host), if any
    parts_ms: dict[str, float]  # its excess by cause ("unexplained": nothing recorded ran)
    period_steps: int | None


class Spikes(Model):
    """The baseline's stalls and the wall time they cost (`analysis.spikes.Spikes`)."""

    wall_ms: float  # a step over the long run: the median plus the stalls' share
    mean_ms: float  # the baseline's own mean
    share_pct: float
    stalls: list[Stall]
    epoch_steps: int | None
    saw_epoch: bool
    summary: str | None  # the sentence every view shows
    note: str | None  # what the baseline could not see (an epoch longer than it)


class Steps(StepStats):
    """The headline step time (baseline when measured, else profiled) and both series."""

    source: Literal["baseline", "trace"]
    timing: str | None
    baseline: StepStats
    profiled: StepStats
    profiler_inflation: float | None
    warmup_ms: list[float]
    baseline_ms: list[float]
    profiled_ms: list[float]
    step_source: str = "ProfilerStep"  # or Optimizer.step, gpu_user_annotation, none
    #: what one step is and how the capture found it (`advice.step_definition`)
    definition: str | None = None
    spikes: Spikes | None = None  # long steps of the baseline, priced on the wall time
    capture_cost: CaptureCost | None = None  # the observer's measured share of the baseline
    #: the profiler's own id of each `profiled_ms` step (ProfilerStep#N), for the timeline's
    #: mapping: every view numbers the steps 1..n, as `outlier_steps` does
    profiled_step_ids: list[int] = msgspec.field(default_factory=list)
    outlier_steps: list[int] = msgspec.field(default_factory=list)  # `outliers` numbered 1..n


class IdleByCause(Model):
    """Real GPU idle per step (ms) split by the cause of each gap."""

    input: float
    transfer: float
    sync: float
    launch: float
    host: float


class StreamRow(Model):
    """One CUDA stream's activity in the profiled window (`analysis.idle.STREAM_COLUMNS`)."""

    device: int
    stream: int
    busy_us: float
    busy_pct: float | None
    kernel_us: float
    memcpy_us: float
    n_events: int


class Gpu(Model):
    """How busy the GPU is, in the trace and reconciled with the unprofiled step."""

    available: bool
    busy_pct: float
    idle_pct: float | None
    busy_pct_real: float
    busy_ms_per_step: float
    idle_ms_per_step: float
    idle_by_cause_ms: IdleByCause
    streams: list[StreamRow]


class Verdict(Model):
    """The primary reason the step is not faster, how sure the advice is, and why."""

    category: str | None
    label: str  # the category as a reader names it ("memory bandwidth")
    summary: str
    confidence: Literal["high", "medium", "low"]
    reasons: list[str]


class Where(Model):
    """The user's line behind a finding (`capture.callsites`): a file or notebook cell."""

    file: str  # a path, or the cell ("In[3]") for notebook code
    line: int
    code: str
    call: str  # the torch call made there (item, linear, DataLoader.__next__…)
    calls: int  # calls seen from that line in the recorded step
    cell: bool


class Finding(Model):
    """One ranked finding of the advice, priced in real ms per step (`advice.findings`);
    `where` is the user's line behind it when the capture recorded call sites."""

    id: str
    category: str
    title: str
    evidence: str
    fix: str
    expected_gain_pct: float
    cost_ms: float
    #: each rule's own evidence figures (free-form; msgspec's schema has no `object` type)
    data: dict[str, Any]
    predicted_step_ms: float | None = None  # the what-if replay's step with the fix applied
    driver: str = ""  # which change to the step's graph produced the prediction
    where: Where | None = None
    try_fixes: list[str] = msgspec.field(default_factory=list)  # `--try` names that measure it
    measured_gain_pct: float | None = None  # what a significant try of its fix measured
    #: of the median step where the baseline has stalls (`expected_gain_pct` is of the wall time)
    step_gain_pct: float | None = None
    predicted_wall_ms: float | None = None  # a step over the long run with the fix applied
    #: its cost and gain reconciled in one line every view shows (`report.finding_line`)
    cost_line: str = ""


class TransferRow(Model):
    """Copies of one direction and host memory kind (`analysis.transfers.transfer_summary`)."""

    kind: str
    pageable: bool
    count: int
    bytes: int
    dur_us: float
    blocking: int
    gbps: float | None
    count_per_step: float
    ms_per_step: float


class SyncCaller(Model):
    """A caller of synchronising calls and the GPU idle time that follows them."""

    caller: str
    calls: int  # over the profiled steps
    gpu_idle_after_us: float
    cost_ms_per_step: float
    calls_per_step: float = 0.0  # what every view shows beside the per-step cost


class Syncs(Model):
    """Host-device synchronisations: how many per step, and the callers costing most."""

    count: int
    per_step: float
    cost_ms_per_step: float
    top: list[SyncCaller]


class Launch(Model):
    """Kernel launch figures (`analysis.launch.launch_stats`)."""

    kernels_per_step: float
    median_kernel_us: float | None
    median_launch_us: float | None
    median_launch_delay_us: float | None
    short_kernel_pct: float | None
    launch_cpu_us_per_step: float
    kernel_gpu_us_per_step: float
    graph_launches: int


class Comm(Model):
    """Collective time per step and the part of it no compute hides."""

    comm_ms: float
    exposed_ms: float
    overlap_pct: float | None


class MemoryPeak(Model):
    """Peak allocated memory of one GPU (`analysis.memory.MEMORY_COLUMNS`)."""

    device: int
    peak_allocated_bytes: int
    total_bytes: int
    peak_pct: float | None


class Memory(Model):
    """Memory peaks seen in the trace and the capture's own `max_memory_allocated`."""

    peaks: list[MemoryPeak]
    max_memory_allocated_bytes: int | None
    #: the one peak every view shows: the capture's max_memory_allocated, else the trace's
    #: allocator peak (`report.summarize.peak_memory`)
    peak_bytes: int | None = None
    #: the GPU's memory, when the trace says it
    gpu_total_bytes: int | None = None
    #: the allocator's history over the profiled steps (`report.memory_summary`), when recorded
    over_step: MemoryOverStep | None = None
    #: what was allocated when an allocation failed, when the capture ended out of memory
    oom: OomPostMortem | None = None


class Flops(Model):
    """Achieved throughput and model FLOPs utilisation, when FLOPs per step are known."""

    per_step: float | None
    dtype: str
    peak_tflops: float | None
    achieved_tflops: float | None
    mfu_pct: float | None


class Input(Model):
    """The data pipeline's share of the host timeline and its time per step."""

    host_share_pct: float
    ms_per_step: float


class Basis(Model):
    """What the numbers are per: real steps by default, profiled totals beside them."""

    default: Literal["real_step"]
    n_profiled_steps: int
    real_step_ms: float
    real_source: str
    profiled_step_ms: float
    profiled_scale: float | None
    tables: dict[str, str]
    #: the column the `ops` rows are ordered by (`analysis.ops.sort_key`): views keep the order
    ops_sorted_by: str = "cuda_self_us"


class Summary(Model, kw_only=True):
    """The whole report summary (what summary.json holds)."""

    schema_version: int = SUMMARY_SCHEMA_VERSION
    source: Source
    steps: Steps
    gpu: Gpu
    verdict: Verdict
    findings: list[Finding]
    ops: list[OpRow]
    kernels: list[KernelRow]
    kernel_table: KernelTable | None = None  # how many kernels `kernels` holds, and their share
    kernel_kinds: list[KernelKindRow]
    transfers: list[TransferRow]
    syncs: Syncs
    launch: Launch
    comm: Comm
    memory: Memory
    flops: Flops
    input: Input
    ranks: list[RankBrief]
    distributed: Distributed | None
    timeline: Timeline | None
    basis: Basis
    warnings: list[str] = msgspec.field(default_factory=list)
    cost: Cost | None = None
    conditions: Conditions | None = None  # during the baseline
    conditions_by_phase: dict[str, Conditions] | None = None
    tries: list[TryResult] | None = None
    stack: StackResult | None = None  # the measured fixes stacked, all kept ones together
    one_time: list[OneTimeCost] = msgspec.field(default_factory=list)  # named, not advised on
    # the runs root's record of earlier tries of the findings' fixes on this GPU (None: a run
    # outside a runs root, or no try of them recorded); read when the summary is handed out
    calibration: list[CalibrationRow] | None = None


def _plain(value: Any) -> Any:
    """numpy scalars (which finding data and table cells can hold) as Python numbers."""
    if hasattr(value, "item"):
        return value.item()
    raise NotImplementedError(f"cannot encode a {type(value).__name__} in a summary")


def encode(summary: Summary) -> bytes:
    """The summary as JSON bytes (non-finite floats become null)."""
    return msgspec.json.encode(summary, enc_hook=_plain)


def to_builtins(summary: Summary) -> dict[str, Any]:
    """The summary as plain JSON-ready Python objects (what `Report.to_json()` returns)."""
    return dict(msgspec.json.decode(encode(summary)))


def decode(data: bytes | str) -> Summary:
    """A summary.json's bytes as the model; `msgspec.ValidationError` when they do not fit."""
    return msgspec.json.decode(data, type=Summary)


def from_builtins(data: Any) -> Summary:
    """A decoded summary object (a dict) as the model; `msgspec.ValidationError` if invalid."""
    return msgspec.convert(data, Summary)
