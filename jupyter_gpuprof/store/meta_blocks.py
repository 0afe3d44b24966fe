"""The typed blocks of meta.json (settings, env, baseline, training…), as plain JSON dicts.

TypedDicts, so a block stays the dict json.dumps writes (meta.json unchanged) while every
layer that fills or reads it sees its keys; `total=False` where the capture fills a block
key by key or older runs lack keys. `meta_schema.MetaSchema` checks a meta.json against them.
"""

from __future__ import annotations

from typing import NotRequired, Required, TypedDict

from ..step_definition import StepCounts

#: a setting's value as a framework block keeps it (`capture/frameworks.py` makes it plain)
PlainValue = bool | int | float | str | None


class ScheduleMeta(TypedDict):
    """The profiler's schedule: steps skipped, warmed up and recorded."""

    wait: int
    warmup: int
    active: int


class NcuSettingsMeta(TypedDict):
    """`run --ncu-rank`: which rank ran under Nsight Compute, with what options."""

    rank: int
    args: str
    command: str


class SettingsMeta(TypedDict, total=False):
    """meta.json's `settings`: what the capture was asked to do (`CaptureSettings.to_meta`)."""

    steps: int
    warmup: int
    record_shapes: bool
    profile_memory: bool
    with_stack: bool
    phases: bool
    count_flops: bool
    memory_history: bool
    mode: str
    ranks: list[int] | None
    schedule: ScheduleMeta
    ncu: NcuSettingsMeta


class EnvMeta(TypedDict, total=False):
    """meta.json's `env`: versions and the GPU of the capturing process."""

    python: str
    torch: str
    cuda: str | None
    cuda_available: bool
    platform: str
    gpu_count: int
    gpu_name: str | None
    driver: str | None
    gpu_device: int
    gpu_capability: str
    gpu_total_memory_bytes: int
    gpu_sm_count: int


class StallMeta(TypedDict, total=False):
    """One event that may stall a step (capture/stalls.py), by the baseline step it ran in."""

    step: Required[int]
    what: Required[str]
    ms: float
    workers: int | None
    persistent: bool | None
    generation: int | None
    batches: int | None  # a loader's batches per epoch
    epoch: int  # how many times the loader was iterated before (0: its first epoch)
    last_batch: int  # the size of its epoch's last batch when smaller than the others


class CaptureCostMeta(TypedDict):
    """meta.json's `baseline.capture_cost`: the capture's own time during the baseline."""

    hooks_ms: float  # host time inside the capture's hooks, all baseline steps together
    hook_calls: int
    sampler_cpu_ms: float  # CPU time of the GPU-conditions sampler thread in the baseline
    median_call_us: NotRequired[float]  # one hook call's time, the median (runs before: none)
    max_call_us: NotRequired[float]  # and the longest


class AfterCaptureMeta(TypedDict):
    """meta.json's `baseline.after`: the steps after the capture, to the script's end
    (capture/after_capture.py), on the host clock."""

    first_step: int  # the index of the first step timed, counted like the stall events' steps
    steps: int  # steps timed after the capture
    wall_ms: float  # their time together
    #: steps per entry of `step_ms` (1, or 2^k for a run longer than `after_capture.MAX_BLOCKS`)
    block_steps: NotRequired[int]
    step_ms: list[float]  # each step's time, or each block's mean step (a last part-block out)


class BaselineMeta(TypedDict, total=False):
    """meta.json's `baseline`: the unprofiled step times and what ran during them."""

    step_ms: list[float]  # RunMeta.from_json fills in step_ms and timing when missing
    timing: str | None
    warmup_ms: list[float]  # the settling steps (settle_steps) last among them
    host_probe_ms: float | None  # one step's host time from an empty GPU queue
    #: untimed steps after the baseline's set-up and the profiler's start, for the batches the
    #: loop's DataLoader made ready meanwhile (capture/driver.Schedule.settle); runs before: none
    settle_steps: int
    stalls: list[StallMeta]  # loader epochs, saves, GC passes, evals
    epoch_steps: int | None  # batches per epoch of the training DataLoader
    loader_ms: list[float]  # each baseline step's wait in DataLoader __next__
    loader_workers: int  # worker processes of the loader waited on
    capture_cost: CaptureCostMeta | None  # what the capture's own code took of the baseline
    after: AfterCaptureMeta  # the steps after the capture (a script or loop that went on)


class OwnerMeta(TypedDict, total=False):
    """meta.json's `owner`: the process writing the run (store/owner.py)."""

    pid: Required[int]
    host: Required[str]
    started: int | None  # its start time in clock ticks, to tell a reused pid


class TrainingMeta(StepCounts, total=False):
    """meta.json's `training`: what the capture counted of the training loop."""

    optimizer_steps: int
    backward_steps: int
    cuda_graph_replays: int
    compiled_graphs: int  # torch.compile in use in the process
    mode: str
    schedule_fitted: str  # how the schedule was shrunk to a short training


class FrameworkMeta(TypedDict, total=False):
    """meta.json's `framework`: the Trainer that ran the steps and its settings that matter."""

    name: str  # transformers | lightning
    version: str | None
    args: dict[str, PlainValue]  # its arguments, by their names in that framework
    max_steps: int
    global_step: int


class SpreadMeta(TypedDict):
    """min, median and max of one figure sampled through a phase."""

    min: float
    median: float
    max: float


class PhaseConditionsMeta(TypedDict, total=False):
    """GPU conditions sampled through NVML during one phase (capture/conditions.py)."""

    available: Required[bool]  # the capture always says; the report's `Conditions` needs it
    reason: str | None  # why none were recorded (no NVML, no samples)
    n_samples: int | None
    sm_clock_mhz: SpreadMeta | None
    mem_clock_mhz: SpreadMeta | None
    power_w: SpreadMeta | None
    temp_c: SpreadMeta | None
    throttle: list[str]
    other_pids: list[int]
    sampler_cpu_ms: float  # the sampler thread's own CPU time over the phase


class StepChangeMeta(TypedDict, total=False):
    """Is a change of step time real (`analysis.compare.step_change`), as a try keeps it.

    `Required`: the keys `step_change` always writes and the report's `StepChange` needs (a
    change lacking them is a wrongly shaped block, `meta_schema.salvage` drops it)."""

    n_before: Required[int]
    n_after: Required[int]
    median_before_ms: Required[float | None]
    median_after_ms: Required[float | None]
    delta_ms: float | None
    delta_pct: float | None
    ci_low_ms: float | None
    ci_high_ms: float | None
    ci_low_pct: float | None
    ci_high_pct: float | None
    p_value: float | None
    rounds_p_value: float | None  # the sign test over interleaved rounds, when there were any
    confidence: Required[float]
    verdict: Required[str]  # significant | noise | unreliable | insufficient data
    significant: Required[bool]
    speedup: float | None
    direction: Required[str]  # faster | slower | unchanged
    unreliable_reasons: list[str]


class TryMemoryMeta(TypedDict):
    """A try's peak memory against the control's, beside the saving the memory fix that
    offered it predicted (advice/tries.py); None where it was not measured (CPU)."""

    peak_bytes: int | None  # max_memory_allocated over the try's timed steps
    control_peak_bytes: int | None
    change_bytes: int | None  # peak_bytes - control_peak_bytes (negative: a saving)
    predicted_change_bytes: int | None  # minus the memory fix's predicted saving
    step_time_change_pct: float | None  # median step against the control's (+: slower)


class TryMeta(TypedDict, total=False):
    """One fix tried and measured (tries/<fix>.json), judged in meta.json's `tries`; the
    types of the report's `TryResult`, which summary.json's tries are checked against."""

    fix: Required[str]
    error: str | None  # why the try measured nothing (its first line)
    cause: str | None  # what that failure is, where it is a known one (advice/try_remedies.py)
    remedy: str | None  # what to do about it
    source: str | None  # "script" for `run --try`; the notebook's tries leave it out
    applied: list[str]  # what the fix changed
    step_ms: list[float]
    round_ms: list[float]  # the median of each interleaved round (a notebook's tries)
    warmup_ms: list[float]
    timing: str | None
    n: int | None
    median_ms: float | None
    p95_ms: float | None
    mean_ms: float | None
    min_ms: float | None
    max_ms: float | None
    peak_memory_bytes: int | None
    compiled_graphs: int | None
    loss_original: list[float] | None
    loss_fixed: list[float] | None
    loss_rel_diff: float | None
    conditions: PhaseConditionsMeta | None
    reference: str  # what the try was measured against, when not the run's baseline
    change: StepChangeMeta | None
    predicted_gain_pct: float | None
    measured_gain_pct: float | None
    memory: TryMemoryMeta | None  # a memory fix's try: its peak against the control's
    # a step of a stack (advice/stacking.py): the fix added on top of the kept ones, and
    # whether it was kept (why: its gain there, or why it was reverted)
    added: str
    stacked_on: list[str]
    kept: bool
    why: str


class StackMeta(TypedDict, total=False):
    """The measured fixes stacked (advice/stacking.py): the fixes kept, each one tried on top,
    and the step time of all kept fixes together against the control."""

    fixes: Required[list[str]]  # kept, in the order applied
    steps: list[TryMeta]  # each fix tried on top of the ones kept before it, judged
    skipped: list[str]  # fixes not tried on top, each with why
    why_none: str | None  # why nothing was kept
    loss_tolerance: Required[float]  # how far a kept fix may move the first losses (relative)
    code: str | None  # one block that applies every kept fix
    median_ms: float | None  # all kept fixes together
    control_median_ms: float | None
    gain_pct: float | None  # against the control
    change: StepChangeMeta | None


#: torch calls that read a tensor's value back to the host (a wait for the GPU when the tensor
#: is on it): the capture counts those of host tensors apart, advice/patterns.py matches syncs
READ_BACK_CALLS = ("item", "cpu", "tolist", "numpy", "__bool__", "__float__", "__int__",
                   "__index__", "nonzero", "synchronize", "__format__")


class CallSiteMeta(TypedDict, total=False):
    """One user call site of torch (capture/callsites.py)."""

    call: Required[str]
    file: Required[str]  # a path, or the cell ("In[3]") for notebook code
    line: Required[int]
    code: str
    calls: int
    cell: bool
    # of `calls`, read-backs of tensors in host memory while a GPU was in use (an optimizer's
    # step counts): they wait for nothing
    host_reads: int
