"""The report summary's JSON object as the views read it: one TypedDict per block, its keys read.

The views take the JSON form (`Report.to_json()`, a run's summary.json, the REST route) and stay
plain dicts at run time; these types name the keys each renderer reads, as `report/model.py`
encodes them (views import no part of report: report imports the views to display itself).
`tests/views/test_summary_doc.py` holds every key and type here to the model's fields.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from .memory_doc import MemoryDoc, TryMemoryDoc


class SourceDoc(TypedDict):
    """`source`: where the report comes from (`model.Source`)."""

    path: str | None
    gpu: str | None
    name: str | None
    status: str | None
    error: str | None
    arch: str | None


class StepStatsDoc(TypedDict):
    """Statistics of one series of step times (`model.StepStats`)."""

    n: int
    median_ms: float | None
    p95_ms: float | None
    q1_ms: float | None
    q3_ms: float | None
    iqr_ms: float | None
    outliers: list[int]


class SpikesDoc(TypedDict):
    """`steps.spikes`: the baseline's stalls (`model.Spikes`)."""

    wall_ms: float
    summary: str | None
    note: str | None


class CaptureCostDoc(TypedDict):
    """`steps.capture_cost`: the capture's own measured share of the baseline."""

    ms_per_step: float
    pct_of_median: float | None
    sentence: str


class StepsDoc(StepStatsDoc):
    """`steps`: the headline step time and each series (`model.Steps`)."""

    source: Literal["baseline", "trace"]
    baseline: StepStatsDoc
    profiled: StepStatsDoc
    profiler_inflation: float | None
    warmup_ms: list[float]
    baseline_ms: list[float]
    profiled_ms: list[float]
    step_source: str
    definition: str | None
    spikes: SpikesDoc | None
    capture_cost: CaptureCostDoc | None
    profiled_step_ids: list[int]
    outlier_steps: list[int]


class GpuDoc(TypedDict):
    """`gpu`: busy and idle, in the trace and per real step (`model.Gpu`)."""

    available: bool
    busy_pct: float
    busy_pct_real: float
    busy_ms_per_step: float
    idle_by_cause_ms: dict[str, float]  # ms per real step by gap cause, in the model's order


class VerdictDoc(TypedDict):
    """`verdict` (`model.Verdict`)."""

    category: str | None
    label: str
    summary: str
    confidence: Literal["high", "medium", "low"]
    reasons: list[str]


class WhereDoc(TypedDict):
    """The user's line behind a finding (`model.Where`)."""

    file: str
    line: int
    code: str


class FindingDoc(TypedDict):
    """One ranked finding (`model.Finding`)."""

    category: str
    title: str
    evidence: str
    fix: str
    expected_gain_pct: float
    predicted_step_ms: float | None
    driver: str
    where: WhereDoc | None
    try_fixes: list[str]
    predicted_wall_ms: float | None
    cost_line: str
    cost_ms: float


class OpDoc(TypedDict):
    """One operator row (`model.OpRow`)."""

    name: str
    autograd: str
    calls_per_step: float
    cuda_self_ms_per_step: float
    cpu_self_ms_per_step: float
    gpu_pct_of_step: float | None
    cpu_pct_of_step: float | None
    pct_of_gpu: float | None


class KernelDoc(TypedDict):
    """One kernel row (`model.KernelRow`)."""

    name: str
    kind: str
    tensor_core: bool
    calls: int
    ms_per_step: float
    pct_of_step: float | None
    short_name: str
    calls_per_step: float
    pct_of_gpu: float | None


class KernelTableDoc(TypedDict):
    """How many kernels `kernels` holds of how many (`model.KernelTable`)."""

    label: str


class KernelKindDoc(TypedDict):
    """GPU time of one kernel kind (`model.KernelKindRow`)."""

    kind: str
    tensor_core: bool
    ms_per_step: float
    calls_per_step: float


class TransferDoc(TypedDict):
    """Copies of one direction and memory kind (`model.TransferRow`)."""

    kind: str
    pageable: bool
    count: int
    bytes: int
    blocking: int
    gbps: float | None
    count_per_step: float
    ms_per_step: float


class SyncCallerDoc(TypedDict):
    """A caller of synchronising calls (`model.SyncCaller`)."""

    caller: str
    calls: int
    cost_ms_per_step: float
    calls_per_step: float


class SyncsDoc(TypedDict):
    """`syncs` (`model.Syncs`)."""

    per_step: float
    cost_ms_per_step: float
    top: list[SyncCallerDoc]


class FlopsDoc(TypedDict):
    """`flops` (`model.Flops`)."""

    per_step: float | None
    dtype: str
    peak_tflops: float | None
    achieved_tflops: float | None
    mfu_pct: float | None


class InputDoc(TypedDict):
    """`input`: the data pipeline's share (`model.Input`)."""

    host_share_pct: float
    ms_per_step: float


class BasisDoc(TypedDict):
    """`basis` (`model.Basis`)."""

    n_profiled_steps: int


class RankDoc(TypedDict):
    """One rank's cross-rank figures (`model_ranks.DistributedRank`)."""

    rank: int
    step_ms: float | None
    compute_ms: float
    comm_ms: float
    exposed_comm_ms: float
    idle_ms: float
    wait_ms: float
    extra_ms: float | None
    phase: str | None
    straggler: bool


class DistributedDoc(TypedDict):
    """`distributed` (`model_ranks.Distributed`)."""

    ranks: list[RankDoc]
    collectives_matched: int


class LaneDoc(TypedDict):
    """One timeline lane as parallel arrays (`timeline_model.Lane`)."""

    id: str
    label: str
    kind: str
    start: list[float]
    dur: list[float]
    count: list[int]
    name: list[int]
    op: NotRequired[list[int]]  # GPU lanes only (left out when unset)
    shape: NotRequired[list[int]]


class GapsDoc(TypedDict):
    """The timeline's longest idle gaps (`timeline_model.TimelineGaps`)."""

    start: list[float]
    dur: list[float]
    cause: list[str]


class StepMarkDoc(TypedDict):
    """One profiled step's span on the timeline (`timeline_model.TimelineStep`)."""

    start: float


class TimelineDoc(TypedDict):
    """`timeline`: the bounded level-of-detail timeline (`timeline_model.Timeline`)."""

    dur_us: float
    names: list[str]
    lanes: list[LaneDoc]
    gaps: GapsDoc
    steps: list[StepMarkDoc]
    profiled_scale: float | None


class CostDoc(TypedDict):
    """`cost` (`model_cost.Cost`)."""

    headline: str | None


class SpreadDoc(TypedDict):
    """Minimum, median and maximum of one NVML reading (`model_cost.Spread`)."""

    min: float
    median: float
    max: float


class ConditionsDoc(TypedDict):
    """GPU conditions of one phase (`model_cost.Conditions`); a capture records only
    `available` and `reason` when it sampled nothing."""

    available: bool
    reason: NotRequired[str | None]
    sm_clock_mhz: NotRequired[SpreadDoc | None]
    power_w: NotRequired[SpreadDoc | None]
    temp_c: NotRequired[SpreadDoc | None]
    throttle: NotRequired[list[str]]
    other_pids: NotRequired[list[int]]


class StepChangeDoc(TypedDict):
    """A try's judged change of step time (`model_cost.StepChange`)."""

    verdict: str
    ci_low_pct: float | None
    ci_high_pct: float | None
    unreliable_reasons: list[str]


class TryDoc(TypedDict):
    """One fix tried by `--try` (`model_cost.TryResult`); a failed try holds its error."""

    fix: str
    error: NotRequired[str | None]
    cause: NotRequired[str | None]
    remedy: NotRequired[str | None]
    source: NotRequired[str | None]
    median_ms: NotRequired[float | None]
    peak_memory_bytes: NotRequired[int | None]
    loss_rel_diff: NotRequired[float | None]
    change: NotRequired[StepChangeDoc | None]
    predicted_gain_pct: NotRequired[float | None]
    measured_gain_pct: NotRequired[float | None]
    memory: NotRequired[TryMemoryDoc | None]
    added: NotRequired[str | None]
    kept: NotRequired[bool | None]
    why: NotRequired[str | None]


class StackDoc(TypedDict):
    """The measured fixes stacked (`model_cost.StackResult`)."""

    fixes: list[str]
    steps: list[TryDoc]
    skipped: list[str]
    why_none: str | None
    loss_tolerance: float
    code: str | None
    median_ms: float | None
    control_median_ms: float | None
    gain_pct: float | None
    change: StepChangeDoc | None


class CalibrationDoc(TypedDict):
    """One fix as the runs root's record has it on this GPU (`model_cost.CalibrationRow`)."""

    fix: str
    gpu_name: str | None
    n_tries: int
    n_significant: int
    n_errors: int
    mean_abs_error_pts: float | None
    worst_error_pts: float | None
    mean_bias_pts: float | None
    predicted_gain_pct: float | None
    corrected_gain_pct: float | None


class OneTimeDoc(TypedDict):
    """A one-time cost kept out of the step (`model_cost.OneTimeCost`)."""

    kind: str
    name: str
    dur_us: float


class SummaryDoc(TypedDict):
    """The whole summary as the views read it (`model.Summary`, encoded)."""

    source: SourceDoc
    steps: StepsDoc
    gpu: GpuDoc
    verdict: VerdictDoc
    findings: list[FindingDoc]
    ops: list[OpDoc]
    kernels: list[KernelDoc]
    kernel_table: KernelTableDoc | None
    kernel_kinds: list[KernelKindDoc]
    transfers: list[TransferDoc]
    syncs: SyncsDoc
    memory: MemoryDoc
    flops: FlopsDoc
    input: InputDoc
    distributed: DistributedDoc | None
    timeline: TimelineDoc | None
    basis: BasisDoc
    warnings: list[str]
    cost: CostDoc | None
    conditions: ConditionsDoc | None
    tries: list[TryDoc] | None
    stack: StackDoc | None
    one_time: list[OneTimeDoc]
    calibration: NotRequired[list[CalibrationDoc] | None]
