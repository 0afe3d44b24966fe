"""The summary's cost blocks as typed schema: what the step is worth, one-time costs, tries.

Kept beside `model.py` (which imports these) so each module stays small; the same rules apply:
fields encode in declaration order and non-finite floats encode as null.
"""

from __future__ import annotations

import msgspec

from .model_base import Model


class Worth(msgspec.Struct):
    """GPU-hours (and money, when a GPU-hour price is set) of 1,000 steps of some duration."""

    gpu_hours_per_1k_steps: float | None
    money_per_1k_steps: float | None


class Saving(Worth):
    """What one finding's predicted fix saves per 1,000 steps (`advice.cost`)."""

    id: str | None = None
    category: str | None = None


class Cost(msgspec.Struct):
    """`cost`: the step and its idle share in GPU-hours per 1,000 steps, and each saving."""

    price_per_gpu_hour: float | None
    n_gpus: int
    step: Worth
    idle: Worth
    savings: list[Saving]
    headline: str | None = None  # what the idle share costs, in one sentence


class OneTimeCost(msgspec.Struct):
    """A one-time cost in the trace (analysis/one_time.py): named, kept out of the step."""

    kind: str
    name: str
    ts_us: float
    dur_us: float


class Spread(msgspec.Struct):
    """Minimum, median and maximum of one NVML reading over a phase."""

    min: float
    median: float
    max: float


class Conditions(msgspec.Struct, kw_only=True):
    """GPU conditions sampled through NVML during one phase (`capture/conditions.py`)."""

    available: bool
    reason: str | None = None  # why none were recorded (no NVML, no samples)
    n_samples: int | None = None
    sm_clock_mhz: Spread | None = None
    mem_clock_mhz: Spread | None = None
    power_w: Spread | None = None
    temp_c: Spread | None = None
    throttle: list[str] = msgspec.field(default_factory=list)
    other_pids: list[int] = msgspec.field(default_factory=list)


class StepChange(msgspec.Struct, kw_only=True):
    """Is a change of step time real (`analysis.compare.step_change`): the median change with
    its bootstrap interval, a Mann-Whitney p-value and the verdict."""

    n_before: int
    n_after: int
    median_before_ms: float | None
    median_after_ms: float | None
    delta_ms: float | None = None
    delta_pct: float | None = None
    ci_low_ms: float | None = None
    ci_high_ms: float | None = None
    ci_low_pct: float | None = None
    ci_high_pct: float | None = None
    p_value: float | None = None
    confidence: float
    verdict: str  # significant | noise | unreliable | insufficient data
    significant: bool
    speedup: float | None = None
    direction: str  # faster | slower | unchanged
    unreliable_reasons: list[str] = msgspec.field(default_factory=list)


class TryMemory(msgspec.Struct, kw_only=True):
    """A try's peak memory against the control's and the saving predicted (`advice.tries`)."""

    peak_bytes: int | None = None  # max_memory_allocated over the timed steps (None: CPU)
    control_peak_bytes: int | None = None
    change_bytes: int | None = None  # negative: the fix freed memory
    predicted_change_bytes: int | None = None  # minus the memory fix's predicted saving
    step_time_change_pct: float | None = None  # against the control (+: slower)


class TryResult(msgspec.Struct, kw_only=True):
    """One fix tried by `--try` and measured like the baseline, judged (`advice.tries`)."""

    fix: str
    error: str | None = None  # why the try measured nothing (its first line)
    cause: str | None = None  # what that failure is, where known (advice/try_remedies.py)
    remedy: str | None = None  # what to do about it
    source: str | None = None  # "script" for `run --try`; the notebook's tries leave it empty
    applied: list[str] = msgspec.field(default_factory=list)  # what the fix changed
    step_ms: list[float] = msgspec.field(default_factory=list)
    warmup_ms: list[float] = msgspec.field(default_factory=list)
    timing: str | None = None
    n: int | None = None
    median_ms: float | None = None
    p95_ms: float | None = None
    mean_ms: float | None = None
    min_ms: float | None = None
    max_ms: float | None = None
    peak_memory_bytes: int | None = None
    compiled_graphs: int | None = None
    loss_original: list[float] | None = None
    loss_fixed: list[float] | None = None
    loss_rel_diff: float | None = None
    conditions: Conditions | None = None
    change: StepChange | None = None
    predicted_gain_pct: float | None = None
    measured_gain_pct: float | None = None
    # a memory fix's try (checkpoint, amp): its peak against the control's; absent otherwise
    memory: TryMemory | msgspec.UnsetType = msgspec.UNSET
    reference: str | None = None  # what it was measured against: "none" (the control), a stack
    added: str | None = None  # a stack's step: the fix added on top of `stacked_on`
    stacked_on: list[str] | None = None
    kept: bool | None = None  # a stack's step: kept, or reverted
    why: str | None = None  # the stack's decision, in words


class StackResult(msgspec.Struct, kw_only=True):
    """The measured fixes stacked (`advice.stacking`): each tried on top of the ones kept so
    far, and all kept fixes together against the control, with one block of code."""

    fixes: list[str]  # kept, in the order applied
    steps: list[TryResult] = msgspec.field(default_factory=list)
    skipped: list[str] = msgspec.field(default_factory=list)
    why_none: str | None = None
    loss_tolerance: float
    code: str | None = None
    median_ms: float | None = None
    control_median_ms: float | None = None
    gain_pct: float | None = None
    change: StepChange | None = None


class CalibrationRow(msgspec.Struct, kw_only=True):
    """One fix of the report's findings as the runs root's calibration record has it on this
    GPU (`advice.calibration.FixRecord`), with this report's prediction for it and, when the
    record backs one, that prediction corrected (`advice.calibration.corrected_gain`)."""

    fix: str
    category: str | None = None
    gpu_name: str | None = None
    n_tries: int
    n_significant: int
    n_errors: int
    mean_abs_error_pts: float | None = None
    worst_error_pts: float | None = None
    mean_bias_pts: float | None = None
    predicted_gain_pct: float | None = None  # this report's, for the fix's finding
    corrected_gain_pct: float | None = None  # None: too few significant tries to correct


class CaptureCost(Model):
    """What the capture's own code took of the baseline it timed (capture/capture_cost.py)."""

    ms_per_step: float  # its hooks plus, at most, the GPU-conditions sampler's CPU
    hooks_ms_per_step: float
    sampler_ms_per_step: float
    pct_of_median: float | None
    sentence: str  # the sentence every view shows
