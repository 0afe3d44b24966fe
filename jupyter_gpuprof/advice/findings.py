"""Advice as data: a Finding per bottleneck and the Verdict that names the main one."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TypedDict, cast

from ..categories import CATEGORIES, NO_VERDICT
from ..store.meta_blocks import CallSiteMeta

__all__ = ["CATEGORIES", "CallSiteMeta", "Finding", "FindingData", "FindingJson", "Verdict",
           "VerdictJson"]


class FindingData(TypedDict, total=False):
    """The figures a rule measured for its finding (each rule fills its own few)."""

    # any rule
    requires: str  # the category whose fix must come first (the what-if replay's)
    fusion_gain_pct: float  # of the gain, the fusion of chains no memory finding prices
    stall_ms_per_step: float
    after_input_fix_gain_pct: float  # the gain once the loader keeps up (it paces the step now)
    always: bool  # rules.py's own: report even below the gain threshold (never in a finding)
    try_fixes: list[str]  # the `--try` fixes that measure it, where not its category's
    # input, transfer, sync, launch
    host_share_pct: float
    data_ms_per_step: float
    mb_per_step: float
    pageable: int
    blocking: int
    syncs_per_step: float
    upload_wait_pct: float  # of the syncs' idle, what copies to the GPU waiting for themselves hold
    top_callers: list[str]
    item_per_step: float
    norm_per_step: float
    kernels_per_step: float
    # precision, memory, comm, one-time
    fp32_matmul_ms_per_step: float
    tf32_matmul_ms_per_step: float
    fp32_attention_ms_per_step: float
    memory_bound_ms_per_step: float
    comm_ms: float
    exposed_ms: float
    exposed_transfer_ms: float
    one_time_ms_per_step: float
    kinds: list[str]
    # straggler (distributed_rules.py)
    rank: int
    phase: str
    extra_ms: float
    gpu_work_ms: float
    host_delay_ms: float
    input_ms: float
    others_wait_ms: float
    what: str
    own_finding: str | None
    # Nsight Compute (ncu/rules.py)
    kernel: str
    source: str


class FindingJson(TypedDict):
    """A `Finding` as JSON (`Finding.to_json`)."""

    id: str
    category: str
    title: str
    evidence: str
    fix: str
    cost_ms: float
    expected_gain_pct: float
    data: FindingData
    predicted_step_ms: float | None
    driver: str
    where: CallSiteMeta | None
    measured_gain_pct: float | None
    step_gain_pct: float | None
    predicted_wall_ms: float | None


class VerdictJson(TypedDict):
    """A `Verdict` as JSON (`Verdict.to_json`)."""

    category: str | None
    summary: str
    confidence: str
    reasons: list[str]


@dataclass
class Finding:
    """One measured bottleneck: what was seen, what to change, and what it should gain."""

    id: str
    category: str
    title: str
    evidence: str
    fix: str
    cost_ms: float  # real time per step this bottleneck costs
    expected_gain_pct: float  # of the wall time per step (median + stalls), after the fix
    data: FindingData = field(default_factory=FindingData)
    predicted_step_ms: float | None = None  # the what-if replay's step with the fix applied
    driver: str = ""  # which change to the step's graph produced the prediction
    where: CallSiteMeta | None = None  # the user's line behind it (advice.patterns.where_for)
    measured_gain_pct: float | None = None  # what a significant try of its fix measured
    #: of the median step, where the baseline has stalls (the wall time differs from it)
    step_gain_pct: float | None = None
    predicted_wall_ms: float | None = None  # a step over the long run with the fix, likewise

    def to_json(self) -> FindingJson:
        """JSON-ready dict."""
        return cast(FindingJson, asdict(self))


@dataclass
class Verdict:
    """The primary reason the step is not faster, how sure we are, and why."""

    category: str | None
    summary: str
    confidence: str  # high | medium | low
    reasons: list[str] = field(default_factory=list)

    def to_json(self) -> VerdictJson:
        """JSON-ready dict."""
        return cast(VerdictJson, asdict(self))

    def __str__(self) -> str:
        return self.category or NO_VERDICT
