"""Cross-rank tables of a distributed run: per-rank figures, comm vs compute, imbalance.

Each rank's trace is reduced on its own to a `RankSummary` (`rank_summary`, loaded by
`rank_loading`); `analyze_ranks` lines the summaries up. Their collectives are matched one to one
(`collective_match`: clock offsets, wait vs transfer). A rank's *own time* per step is GPU compute
plus GPU idle (the host not feeding it); its excess over the other ranks' median, split into
more GPU work vs more host delay, is what the others spend waiting in collectives.

Tables (columns documented in the `*_COLUMNS` dicts, the collectives' in `collective_match`):
`Distributed.ranks`, `.rank_steps`, `.collectives`, `.imbalance`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .collective_match import match_collectives
from .rank_summary import RankSummary

RANK_COLUMNS = {
    "rank": "rank number (distributedInfo.rank, else file order)",
    "n_steps": "profiled steps",
    "step_ms": "median profiled step time",
    "step_spread_pct": "(step_ms - fastest rank's step_ms) / fastest, in %",
    "compute_ms": "non-collective GPU activity per step (union of kernels, copies, memsets)",
    "comm_ms": "collective (NCCL) kernel time per step (union)",
    "comm_pct_of_step": "comm_ms as % of step_ms",
    "exposed_comm_ms": "collective time per step with no compute running beside it",
    "hidden_comm_ms": "collective time per step overlapped by compute",
    "idle_ms": "GPU fully idle per step (the host did not feed it)",
    "input_ms": "host time per step in the data pipeline",
    "wait_ms": "per step: time this rank's collectives waited for the last rank to arrive",
    "transfer_ms": "per step: duration of the last-arriving rank's kernel (matched collectives)",
    "exposed_transfer_ms": "per step: the transfer part of this rank's collectives not hidden by "
                           "compute (what bucketing/overlap tuning can remove)",
    "last_arrival_pct": "% of matched collectives where this rank arrived last",
    "clock_offset_us": "this rank's clock minus the first rank's (from collective end times)",
}
RANK_STEP_COLUMNS = {
    "rank": "rank", "step": "step number",
    "step_ms": "step duration on this rank", "compute_ms": "non-collective GPU activity (union)",
    "comm_ms": "collective kernel time (union)",
    "exposed_comm_ms": "comm not overlapped by compute",
    "idle_ms": "GPU idle inside the step's span", "input_ms": "host data-pipeline time",
}
IMBALANCE_COLUMNS = {
    "rank": "rank",
    "own_ms": "compute_ms + idle_ms per step: the time this rank needs before it can sync",
    "extra_ms": "own_ms minus the other ranks' median: the time it makes them wait per step",
    "gpu_work_ms": "of which more GPU compute than the others' median",
    "host_delay_ms": "of which more GPU idle (host delay) than the others' median",
    "input_ms": "its data-pipeline time per step minus the others' median",
    "others_wait_ms": "median per-step collective wait of the other ranks",
    "phase": "gpu_work | host_delay: the larger part of a positive extra_ms ('' otherwise)",
}


@dataclass
class Distributed:
    """Cross-rank tables of one run (see the module docstring and the `*_COLUMNS` dicts)."""

    ranks: pd.DataFrame
    rank_steps: pd.DataFrame
    collectives: pd.DataFrame
    imbalance: pd.DataFrame
    n_matched: int  # collectives matched on every rank
    n_unmatched: int  # collectives seen on some ranks only (dropped)

    def slowest(self) -> pd.Series | None:
        """The imbalance row of the rank the others wait for (None if < 2 ranks).

        With matched collectives that is the rank arriving last most often (its excess own
        time breaks ties): the rank with the most own time need not be the one others wait for.
        """
        if len(self.imbalance) < 2:
            return None
        extra = self.imbalance["extra_ms"].to_numpy(dtype=float)
        last = self.imbalance["rank"].map(self.ranks.set_index("rank")["last_arrival_pct"])
        last_pct = last.to_numpy(dtype=float, na_value=0.0)
        if self.n_matched and np.nanmax(last_pct) > 0:
            at = int(np.lexsort((np.nan_to_num(extra, nan=-np.inf), last_pct))[-1])
        else:
            at = int(np.nanargmax(extra))
        row: pd.Series = self.imbalance.iloc[at]
        return row


def _rank_steps(summaries: Sequence[RankSummary]) -> pd.DataFrame:
    frames = [s.steps.assign(rank=s.rank) for s in summaries]
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["rank", "step", "step_us", "compute_us", "comm_us", "exposed_comm_us",
                 "idle_us", "input_us"])
    common = set.intersection(*(set(f["step"]) for f in frames)) if frames else set()
    df = df[df["step"].isin(common)]
    out = df[["rank", "step"]].copy()
    for col in ("step", "compute", "comm", "exposed_comm", "idle", "input"):
        out[f"{col}_ms"] = df[f"{col}_us"].to_numpy(dtype=np.float64) / 1e3
    return out[list(RANK_STEP_COLUMNS)].reset_index(drop=True)


def _imbalance(ranks: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for _, r in ranks.iterrows():
        o = ranks[ranks["rank"] != r["rank"]]
        if o.empty:
            continue
        med = o.median(numeric_only=True)
        gpu = r["compute_ms"] - med["compute_ms"]
        host = r["idle_ms"] - med["idle_ms"]
        rows.append({"rank": int(r["rank"]), "own_ms": r["compute_ms"] + r["idle_ms"],
                     "extra_ms": gpu + host, "gpu_work_ms": gpu, "host_delay_ms": host,
                     "input_ms": r["input_ms"] - med["input_ms"],
                     "others_wait_ms": float(med["wait_ms"]),
                     "phase": "" if gpu + host <= 0 else
                     ("gpu_work" if gpu >= host else "host_delay")})
    return pd.DataFrame(rows, columns=list(IMBALANCE_COLUMNS))


def analyze_ranks(summaries: Sequence[RankSummary]) -> Distributed:
    """Line up the ranks of one run: per-rank figures, matched collectives, imbalance."""
    summaries = sorted(summaries, key=lambda s: s.rank)
    steps = _rank_steps(summaries)
    colls, unmatched, offsets = match_collectives(summaries)
    n_matched = int(colls["seq"].nunique()) if len(colls) else 0
    per = steps.groupby("rank").agg(
        n_steps=("step", "size"), step_ms=("step_ms", "median"), compute_ms=("compute_ms", "mean"),
        comm_ms=("comm_ms", "mean"), exposed_comm_ms=("exposed_comm_ms", "mean"),
        idle_ms=("idle_ms", "mean"), input_ms=("input_ms", "mean"))
    per = per.reindex([s.rank for s in summaries]).rename_axis("rank").reset_index()
    n = per.set_index("rank")["n_steps"].clip(lower=1)
    by = colls[colls["step"] >= 0].groupby("rank")  # per step: what the steps launched
    for col in ("wait", "transfer", "exposed_transfer"):
        per[f"{col}_ms"] = per["rank"].map(by[f"{col}_us"].sum() / 1e3 / n).astype(
            np.float64).fillna(0.0)
    lasts = colls.drop_duplicates("seq")["last_rank"].value_counts()
    per["last_arrival_pct"] = per["rank"].map(100.0 * lasts / max(n_matched, 1)).astype(
        np.float64).fillna(0.0)
    per["hidden_comm_ms"] = per["comm_ms"] - per["exposed_comm_ms"]
    per["comm_pct_of_step"] = 100.0 * per["comm_ms"] / per["step_ms"].where(per["step_ms"] > 0)
    fastest = per["step_ms"].min()
    per["step_spread_pct"] = 100.0 * (per["step_ms"] - fastest) / fastest if fastest else np.nan
    per["clock_offset_us"] = per["rank"].map(offsets).fillna(0.0)
    per = per[list(RANK_COLUMNS)]
    return Distributed(per, steps, colls, _imbalance(per), n_matched, unmatched)
