"""The ranks' collectives matched one to one: clock offsets, waits and transfers.

- clocks: every rank of a collective finishes it at nearly the same instant, so each rank's
  clock offset is the median difference of its collective end times from the first rank's
  (robust across hosts whose clocks disagree);
- the k-th collective a rank launches is matched with the k-th of every other rank (after the
  shift that lines their sequences up); its *wait* on a rank is the time until the last rank
  arrives (starts its kernel), its *transfer* the duration of the last-arriving rank's kernel.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .rank_summary import RankSummary

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
#: the most collectives by which two ranks' captures may start apart in the sequence
MAX_SHIFT = 1024
#: pairings whose end-time spread is this close to the steadiest one count as equally steady
ALIGN_TOL_US = 100.0


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


def match_collectives(summaries: Sequence[RankSummary]
                      ) -> tuple[pd.DataFrame, int, dict[int, float]]:
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
