"""The cross-rank blocks of the report summary: each rank's figures, imbalance, collectives."""

from __future__ import annotations

from .model_base import Model


class RankBrief(Model):
    """One rank's headline figures (multi-rank reports)."""

    rank: int
    step_median_ms: float | None
    busy_pct: float


class DistributedRank(Model):
    """One rank's cross-rank figures (`analysis.distributed.RANK_COLUMNS` + imbalance)."""

    rank: int
    n_steps: int
    step_ms: float | None
    step_spread_pct: float | None
    compute_ms: float
    comm_ms: float
    comm_pct_of_step: float | None
    exposed_comm_ms: float
    hidden_comm_ms: float
    idle_ms: float
    input_ms: float
    wait_ms: float
    transfer_ms: float
    exposed_transfer_ms: float
    last_arrival_pct: float | None
    clock_offset_us: float
    extra_ms: float | None
    phase: str | None
    #: the advice's decision (`advice.distributed_rules.straggler_rank`); views never re-decide
    straggler: bool


class Imbalance(Model):
    """How much longer one rank needs than the others (`IMBALANCE_COLUMNS`)."""

    rank: int
    own_ms: float
    extra_ms: float
    gpu_work_ms: float
    host_delay_ms: float
    input_ms: float
    others_wait_ms: float
    phase: str


class Distributed(Model):
    """Cross-rank block: per-rank figures, imbalance, matched collective counts."""

    ranks: list[DistributedRank]
    imbalance: list[Imbalance]
    collectives_matched: int
    collectives_unmatched: int
