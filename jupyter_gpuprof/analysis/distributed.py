"""Cross-rank analysis of a distributed run: step spread, comm vs compute, collectives, stragglers.

Each rank's trace is reduced on its own (in a worker process when traces are big) to a compact
`RankSummary`: per-step figures, its collective kernels and the union of its compute. Only
those cross the process boundary, so analysing N ranks needs about one trace's memory per
worker, not N. `analyze_ranks` then lines the ranks up:

- clocks: every rank of a collective finishes it at nearly the same instant, so each rank's
  clock offset is the median difference of its collective end times from the first rank's
  (robust across hosts whose clocks disagree);
- the k-th collective a rank launches in step s is matched with the k-th of every other rank;
  its *wait* on a rank is the time until the last rank arrives (starts its kernel), its
  *transfer* the duration of the last-arriving rank's kernel;
- a rank's *own time* per step is GPU compute plus GPU idle (the host not feeding it); its
  excess over the other ranks' median, split into more GPU work vs more host delay, is what
  the others spend waiting in collectives.

Tables (columns documented in the `*_COLUMNS` dicts): `Distributed.ranks`, `.rank_steps`,
`.collectives`, `.imbalance`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import pandas as pd

from .hostwork import is_input_range
from .intervals import Coverage, union
from .kernels import kind_of
from .steps import assign_steps, gpu_activity
from .summary import Analysis, analyze
from .timeline_ranks import RankLanes, rank_lanes
from .trace import Trace, load_trace, names_where

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
COLLECTIVE_COLUMNS = {
    "step": "step this rank launched it in (-1: launch not recorded, e.g. queued before)",
    "seq": "its order among the collectives matched on every rank",
    "op": "collective (AllReduce, Broadcast, …)", "rank": "rank",
    "start_us": "kernel start on the aligned clock (µs from the earliest matched start)",
    "dur_us": "kernel duration on this rank",
    "wait_us": "time until the last rank arrived (0 on the last rank)",
    "transfer_us": "duration of the last-arriving rank's kernel",
    "exposed_us": "kernel time on this rank with no compute running",
    "exposed_transfer_us": "transfer part of this rank's kernel with no compute running",
    "last_rank": "the rank that arrived last", "op_match": "every rank ran the same op here",
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
#: traces smaller than this in total (bytes on disk) are parsed in-process: a pool costs more
PARALLEL_MIN_BYTES = 32 * 1024 * 1024
#: a worker needs about this many times its gzipped trace in memory (decode + event table)
WORKER_MEM_PER_GZ_BYTE = 40
#: the most collectives by which two ranks' captures may start apart in the sequence
MAX_SHIFT = 1024
#: pairings whose end-time spread is this close to the steadiest one count as equally steady
ALIGN_TOL_US = 100.0
_OP = re.compile(r"nccl(?:Dev)?Kernel_([A-Za-z]+)")


def is_collective(name: str) -> bool:
    """Whether a GPU kernel is a NCCL collective (`ncclKernel_*` and `ncclDevKernel_*`)."""
    return kind_of(name) == "nccl"


def collective_op(name: str) -> str:
    """The collective a NCCL kernel runs, e.g. AllReduce ('' when the name says nothing)."""
    m = _OP.search(name)
    return m.group(1) if m else ""


@dataclass
class RankSummary:
    """What one rank's trace contributes to the cross-rank analysis (small and picklable)."""

    rank: int
    world_size: int | None
    path: str
    t0_us: float  # absolute time of the trace's first event (its events are relative to it)
    steps: pd.DataFrame  # RANK_STEP_COLUMNS without rank, in µs: step, step_us, compute_us…
    collectives: pd.DataFrame  # step (-1: not launched in a step), op, ts_us, dur_us, by time
    compute: Coverage  # union of non-collective GPU activity (trace-relative time)
    span_us: float = 0.0  # from the first event to the last one's end
    lanes: RankLanes | None = None  # its lane group of the run's timeline (timeline_ranks.py)


def summarize_rank(trace: Trace, a: Analysis, default_rank: int = 0) -> RankSummary:
    """Reduce one rank's parsed trace and analysis to its `RankSummary`."""
    gpu = gpu_activity(trace)
    if len(gpu):
        gpu = gpu[gpu["device"] == int(gpu["device"].mode().iloc[0])]
    coll = names_where(gpu, is_collective) & (gpu["cat"] == "kernel").to_numpy()
    steps = a.steps
    has_marks = bool(len(steps)) and int(steps["step"].iloc[0]) >= 0
    step_of = assign_steps(gpu, steps) if has_marks else np.full(len(gpu), -1)
    # per-step work is what the step launched: rows whose launch went unrecorded were queued
    # earlier (the GPU can run a whole step behind the host) and would land in the wrong step
    step_of = np.where(np.isnan(gpu["launch_us"].to_numpy()) & has_marks, -1, step_of)
    comp, comm = gpu[~coll], gpu[coll]
    compute = Coverage.of(comp["ts_us"].to_numpy(), comp["end_us"].to_numpy())
    busy = Coverage.of(gpu["ts_us"].to_numpy(), gpu["end_us"].to_numpy())
    ann = trace.of("user_annotation", "cpu_op")
    inp = ann[names_where(ann, is_input_range)]
    input_cov = Coverage.of(inp["ts_us"].to_numpy(), inp["end_us"].to_numpy())
    rows = []
    prev_end = float(steps["cpu_start_us"].iloc[0]) if len(steps) else 0.0
    for s, cs, ce, end in zip(steps["step"], steps["cpu_start_us"], steps["cpu_end_us"],
                              steps["end_us"], strict=True):
        mine = step_of == s if has_marks else np.ones(len(gpu), dtype=bool)
        c = gpu[mine & ~coll]
        n = gpu[mine & coll]
        cu = Coverage.of(c["ts_us"].to_numpy(), c["end_us"].to_numpy()).total
        ns, ne = union(n["ts_us"].to_numpy(), n["end_us"].to_numpy())
        comm_us = float((ne - ns).sum())
        hidden = float(compute.overlap(ns, ne).sum())
        span = float(end) - prev_end
        idle = span - float(busy.overlap(np.array([prev_end]), np.array([float(end)]))[0])
        rows.append({"step": int(s), "step_us": span, "compute_us": cu, "comm_us": comm_us,
                     "exposed_comm_us": comm_us - hidden, "idle_us": max(0.0, idle),
                     "input_us": float(input_cov.overlap(np.array([cs]), np.array([ce]))[0])})
        prev_end = float(end)
    # every collective kernel in time order, also those queued before the capture began:
    # ranks are lined up on the sequence, not on step numbers that queue depth can skew
    colls = pd.DataFrame({
        "step": step_of[coll], "op": [collective_op(str(x)) for x in comm["name"].to_numpy()],
        "ts_us": comm["ts_us"].to_numpy(), "dur_us": comm["dur_us"].to_numpy(),
    }).sort_values("ts_us", kind="stable")
    rank = trace.info.rank if trace.info.rank is not None else default_rank
    return RankSummary(rank, trace.info.world_size, trace.info.path, trace.info.t0_us,
                       pd.DataFrame(rows, columns=["step", "step_us", "compute_us", "comm_us",
                                                   "exposed_comm_us", "idle_us", "input_us"]),
                       colls.reset_index(drop=True), compute,
                       float(trace.events["end_us"].max()) if len(trace.events) else 0.0)


def load_rank(path: str | Path, baseline_step_ms: Sequence[float] | None = None,
              flops_per_step: float | None = None, default_rank: int = 0,
              keep_analysis: bool = True, n_ranks: int = 0) -> tuple[Analysis | None, RankSummary]:
    """Parse and analyse one rank's trace (and its lanes, one of `n_ranks`); drop the trace."""
    trace = load_trace(path)
    a = analyze(trace, list(baseline_step_ms) if baseline_step_ms else None, flops_per_step)
    summary = summarize_rank(trace, a, default_rank)
    summary.lanes = rank_lanes(trace, a, summary.rank, n_ranks) if n_ranks else None
    return (a if keep_analysis else None), summary


def _available_bytes() -> int | None:
    """Memory available to new workers (None where the system does not say), to size the pool."""
    try:
        with open("/proc/meminfo") as f:
            return next((int(line.split()[1]) * 1024 for line in f
                         if line.startswith("MemAvailable:")), None)
    except OSError:
        return None


def default_workers(paths: Sequence[str | Path]) -> int:
    """Worker processes for these traces: 1 for small runs, else bounded by CPUs and memory."""
    sizes = [Path(p).stat().st_size for p in paths]
    if len(paths) < 2 or sum(sizes) < PARALLEL_MIN_BYTES:
        return 1
    n = min(len(paths), os.cpu_count() or 1)
    avail = _available_bytes()
    if avail:
        n = min(n, max(1, avail // max(1, WORKER_MEM_PER_GZ_BYTE * max(sizes))))
    return max(1, n)


def load_ranks(paths: Sequence[str | Path], baseline_step_ms: Sequence[float] | None = None,
               flops_per_step: float | None = None, workers: int | None = None,
               keep_analysis: bool = True, named_ranks: Sequence[int | None] = (),
               timeline: bool = False) -> list[tuple[Analysis | None, RankSummary]]:
    """Analyse every rank's trace, in parallel worker processes when it pays; in path order.

    A trace without distributedInfo takes the rank its file name states (`named_ranks`), else
    its position. `timeline`: each rank also brings its lanes of the run's timeline.
    """
    workers = default_workers(paths) if workers is None else workers
    named = list(named_ranks) + [None] * (len(paths) - len(named_ranks))
    n = len(paths) if timeline else 0
    args = [(p, baseline_step_ms, flops_per_step, i if r is None else r, keep_analysis, n)
            for i, (p, r) in enumerate(zip(paths, named, strict=True))]
    if workers <= 1:
        return [load_rank(*a) for a in args]
    # spawn: forking a Jupyter kernel (threads, CUDA) is unsafe; workers import only the analysis
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        return list(pool.map(load_rank, *zip(*args, strict=True)))


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


def align_shift(ref_end: np.ndarray, ref_op: np.ndarray, end: np.ndarray, op: np.ndarray,
                max_shift: int = MAX_SHIFT) -> tuple[int, float]:
    """Index shift k pairing ref[i] with other[i + k], and the other rank's clock offset.

    Every rank leaves a collective at nearly the same instant, so under the right pairing the
    end-time differences are constant (the clock offset). Candidates are the shifts whose
    collective names agree over at least half the shorter list; of those whose spread of
    differences (median absolute deviation) is within `ALIGN_TOL_US` of the best, the one with
    the smallest clock offset wins: steps repeat the same collectives, so a shift by a whole
    step is nearly as steady, and clocks are trusted to agree to better than half a step.
    """
    cands = []  # (spread, |offset|, -overlap, k, offset)
    need = max(1, min(len(ref_end), len(end)) // 2)
    for k in range(-min(max_shift, len(ref_end) - 1), min(max_shift, len(end) - 1) + 1):
        i0, i1 = max(0, -k), min(len(ref_end), len(end) - k)
        if i1 - i0 < need or (op[i0 + k:i1 + k] != ref_op[i0:i1]).any():
            continue
        d = end[i0 + k:i1 + k] - ref_end[i0:i1]
        mid = float(np.median(d))
        cands.append((float(np.median(np.abs(d - mid))), abs(mid), -(i1 - i0), k, mid))
    if not cands:
        return 0, 0.0
    best = min(c[0] for c in cands)
    pick = min(c[1:] for c in cands if c[0] <= best + ALIGN_TOL_US)
    return pick[2], pick[3]


def _match(summaries: Sequence[RankSummary]) -> tuple[pd.DataFrame, int, dict[int, float]]:
    """Collectives present on every rank, with wait/transfer split; unmatched count; offsets."""
    cols = list(COLLECTIVE_COLUMNS)
    empty = pd.DataFrame(columns=cols), 0, {s.rank: 0.0 for s in summaries}
    if not summaries or any(s.collectives.empty for s in summaries):
        return empty[0], sum(len(s.collectives) for s in summaries), empty[2]
    ref = summaries[0].collectives
    ref_end = (ref["ts_us"] + ref["dur_us"]).to_numpy() + summaries[0].t0_us
    ref_op = ref["op"].to_numpy()
    frames, offsets = [], {}
    common = np.ones(len(ref), dtype=bool)
    for s in summaries:
        c = s.collectives
        end = (c["ts_us"] + c["dur_us"]).to_numpy() + s.t0_us
        k, off = align_shift(ref_end, ref_op, end, c["op"].to_numpy())
        offsets[s.rank] = off
        idx = np.arange(len(ref)) + k  # this rank's row for each ref collective
        ok = (idx >= 0) & (idx < len(c))
        common &= ok
        frames.append((s, c, idx, ok))
    rows = []
    keep = np.flatnonzero(common)
    for s, c, idx, _ in frames:
        g = c.iloc[idx[keep]]
        rows.append(pd.DataFrame({
            "key": keep, "step": g["step"].to_numpy(), "op": g["op"].to_numpy(),
            "rank": s.rank, "ts_us": g["ts_us"].to_numpy(), "dur_us": g["dur_us"].to_numpy(),
            "abs_start": g["ts_us"].to_numpy() + s.t0_us}))
    m = pd.concat(rows, ignore_index=True)
    unmatched = sum(len(s.collectives) for s in summaries) - len(m)
    if m.empty:
        return empty[0], unmatched, offsets
    m["seq"] = m["key"].rank(method="dense").astype(np.int64) - 1
    m["start_us"] = m["abs_start"] - m["rank"].map(offsets)
    m["start_us"] -= m["start_us"].min() if len(m) else 0.0
    last = m.loc[m.groupby("seq")["start_us"].idxmax(), ["seq", "rank", "dur_us", "start_us"]]
    last = last.rename(columns={"rank": "last_rank", "dur_us": "transfer_us",
                                "start_us": "arrival_us"})
    m = m.merge(last, on="seq")
    m["wait_us"] = m["arrival_us"] - m["start_us"]
    m["op_match"] = m.groupby("seq")["op"].transform("nunique").eq(1)
    cover = {s.rank: s.compute for s in summaries}
    exp = np.zeros(len(m))
    exp_t = np.zeros(len(m))
    for r, at in m.groupby("rank").indices.items():
        g = m.iloc[at]
        ts, d, w = g["ts_us"].to_numpy(), g["dur_us"].to_numpy(), g["wait_us"].to_numpy()
        t0 = ts + np.minimum(w, d)
        rank_cover = cover[int(str(r))]
        exp[at] = d - rank_cover.overlap(ts, ts + d)
        exp_t[at] = (ts + d - t0) - rank_cover.overlap(t0, ts + d)
    m["exposed_us"], m["exposed_transfer_us"] = exp, exp_t
    m = m.sort_values(["seq", "rank"], ignore_index=True)
    return m[cols], unmatched, offsets


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
    colls, unmatched, offsets = _match(summaries)
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
