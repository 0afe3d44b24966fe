"""How noisy each way of reading the observer check is, on the committed blocks' values.

    python benchmarks/corpus/observer_noise.py [EVIDENCE]

(EVIDENCE: docs/evidence/observer_inprocess_h200.json unless named.) Two questions, answered
without looking at any `on` block against an `off` one, so the choice cannot lean toward a
verdict:

1. *Which statistic stands for a block?* For each statistic, the spread (σ of the log
   ratio) between blocks of the same kind two apart, an A/A comparison, pooled over the runs
   of one block alignment (time blocks; blocks of whole epochs, `align: epoch`). The smaller
   it is, the fewer rounds the 3 % bar needs.
2. *Would blocks of whole epochs read steadier, for a script whose epochs start with a stall?*
   Its values cut into epochs at each stall (a value over `STALL_X` times the run's median),
   the σ of the log ratio of the means of consecutive whole epochs in one block, beside the σ
   of its rounds as made.
3. *Would longer blocks read steadier?* Each run's blocks joined `k` at a time (k even, so a
   joined block holds as many `on` blocks as `off` ones, whichever the first), consecutive
   joined blocks compared by their median: an A/A spread for blocks k times as long, and the
   seconds of rounds the 3 % bar would need at it. Where the step's pace wanders slowly (a
   loader worker's pace between two levels), joining does not narrow the spread, and the bar
   is reached by more rounds of short blocks instead.
4. *Would each `on` block read against the `off` blocks on both sides narrow the interval?*
   The round as made is an `on` block over the `off` block before it; an `on` block over the
   geometric mean of the `off` blocks before and after it takes a slow drift out. Its rounds
   share an `off` block with their neighbours, so its standard error counts their lag-1
   covariance (Newey-West). Printed: each run's standard error of the mean log ratio both
   ways and their ratio; a spread, not a verdict, so the choice does not lean toward one.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from observer_inprocess import rounds  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EVIDENCE = ROOT / "docs" / "evidence" / "observer_inprocess_h200.json"
#: a value this many times the run's median is an epoch's stall (DCGAN: 115-175 ms over 13 ms)
STALL_X = 4.0


def interquartile_mean(v: Sequence[float]) -> float:
    """The mean of the middle half."""
    s = sorted(v)
    k = len(s) // 4
    return statistics.fmean(s[k:len(s) - k])


def hodges_lehmann(v: Sequence[float]) -> float:
    """The median of all pairwise means (Walsh averages)."""
    return statistics.median([(v[i] + v[j]) / 2 for i in range(len(v)) for j in range(i, len(v))])


STATS: dict[str, Callable[[Sequence[float]], float]] = {
    "median": statistics.median, "mean": statistics.fmean,
    "interquartile mean": interquartile_mean, "Hodges-Lehmann": hodges_lehmann}


def block_values(run: dict[str, Any]) -> list[tuple[str, list[float]]]:
    """Each block's state and values as the rounds read them (first value left out where the
    run was re-read by that rule)."""
    cut = 1 if "rounds_without_first" in run else 0
    return [(b["state"], b["values"][cut:]) for b in run["blocks"]]


def aa_logs(blocks: list[tuple[str, list[float]]], stat: Callable[[Sequence[float]], float],
            least: int = 3) -> list[float]:
    """log(stat(b[k+2]) / stat(b[k])) for blocks of one kind two apart, both with `least`."""
    pairs = zip(blocks, blocks[2:], strict=False)
    return [math.log(stat(b2) / stat(b0)) for (s0, b0), (s2, b2) in pairs
            if s0 == s2 and len(b0) >= least and len(b2) >= least]


def pooled_sd(groups: list[list[float]]) -> float:
    """The σ pooled over groups (each about its own mean), weighted by degrees of freedom."""
    used = [g for g in groups if len(g) > 2]
    dof = sum(len(g) - 1 for g in used)
    return math.sqrt(sum((len(g) - 1) * statistics.variance(g) for g in used) / dof)


def epochs(blocks: list[tuple[str, list[float]]]) -> list[list[list[float]]]:
    """Each block's whole epochs, each from a stall to the value before the next."""
    every = [v for _, vals in blocks for v in vals]
    if not every:
        return []
    bar = STALL_X * statistics.median(every)
    out: list[list[list[float]]] = []
    for _, vals in blocks:
        starts = [i for i, v in enumerate(vals) if v > bar and (i == 0 or vals[i - 1] <= bar)]
        out.append([vals[a:b] for a, b in zip(starts, starts[1:], strict=False)])
    return out


def epoch_sd(blocks: list[tuple[str, list[float]]]) -> tuple[int, float] | None:
    """How many pairs of consecutive whole epochs of the modal length lie in one block, and
    the σ of their log ratio (an A/A comparison: both epochs of one kind)."""
    per_block = epochs(blocks)
    lengths = [len(e) for eps in per_block for e in eps]
    if len(lengths) < 4:
        return None
    n = statistics.mode(lengths)
    logs = [math.log(statistics.fmean(b) / statistics.fmean(a)) for eps in per_block
            for a, b in zip(eps, eps[1:], strict=False) if len(a) == len(b) == n]
    return (len(logs), statistics.stdev(logs)) if len(logs) >= 2 else None


def spreads(runs: list[dict[str, Any]], align: str = "") -> dict[str, float]:
    """Each statistic's pooled A/A spread over the runs of one block alignment: a run of blocks
    of whole epochs is read by its own statistic and must not vote on a time block's."""
    mine = [r for r in runs if r.get("align", "") == align]
    return {name: pooled_sd([aa_logs(block_values(r), stat) for r in mine])
            for name, stat in STATS.items()}


def joined_sd(blocks: list[tuple[str, list[float]]], k: int,
              least: int = 3) -> tuple[int, float] | None:
    """The A/A spread of blocks joined k at a time (k even): how many pairs of consecutive
    joined blocks, each with `least` values, and the σ of their medians' log ratio."""
    if k % 2:
        raise ValueError(f"join an even number of blocks (got {k}): a joined block must hold "
                         "as many of each kind")
    joined = [[v for _, vals in blocks[i:i + k] for v in vals]
              for i in range(0, len(blocks) - k + 1, k)]
    logs = [math.log(statistics.median(b) / statistics.median(a))
            for a, b in zip(joined[::2], joined[1::2], strict=False)
            if len(a) >= least and len(b) >= least]
    return (len(logs), statistics.stdev(logs)) if len(logs) >= 3 else None


def seconds_for_bar(sd: float, block_s: float, margin: float = 0.03) -> float:
    """The seconds of rounds (two blocks each) a centre of 1 needs for its 95 % interval to
    lie inside the bar: (1.96 σ / margin)² rounds."""
    return (1.96 * sd / margin) ** 2 * 2 * block_s


def medians(blocks: list[tuple[str, list[float]]], least: int = 3) -> list[tuple[str, float]]:
    """Each block's state and median, 0.0 where it holds fewer than `least` values."""
    return [(state, statistics.median(v) if len(v) >= least else 0.0) for state, v in blocks]


def pair_logs(blocks: list[tuple[str, list[float]]]) -> list[float]:
    """The rounds as the check makes them (observer_inprocess.rounds), as logs."""
    return [math.log(r) for r in rounds(blocks)]


def both_sides_logs(meds: list[tuple[str, float]]) -> list[float]:
    """log(on / the geometric mean of the off blocks on both sides)."""
    return [math.log(on) - (math.log(a) + math.log(b)) / 2
            for (_, a), (s1, on), (_, b) in zip(meds, meds[1:], meds[2:], strict=False)
            if s1 == "on" and a and b and on]


def newey_west_se(x: list[float], lags: int = 1) -> float:
    """The standard error of the mean of a series whose neighbours covary (Bartlett weights)."""
    n, m = len(x), statistics.fmean(x)
    cov = [sum((x[i] - m) * (x[i + k] - m) for i in range(n - k)) / n for k in range(lags + 1)]
    var = cov[0] + 2 * sum((1 - k / (lags + 1)) * cov[k] for k in range(1, lags + 1))
    return math.sqrt(max(var, 0.0) / n)


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else EVIDENCE
    runs = json.loads(path.read_text())["runs"]
    for align, what in (("", "time blocks"), ("epoch", "blocks of whole epochs")):
        print(f"1. A/A spread of each statistic over {what}, blocks of one kind two apart:")
        for name, sd in spreads(runs, align).items():
            print(f"   {name:<20} σ {sd:.4f}")
    print("2. Whole epochs against the rounds as made, scripts whose epochs start with a stall:")
    for r in runs:
        got = epoch_sd(block_values(r))
        rounds = r.get("rounds_without_first") or r["rounds"]
        if got and len(rounds) > 2:
            sd = statistics.stdev(math.log(x) for x in rounds)
            print(f"   {r['id']:<24} call {r['call']!s:<5} block {r['block_s']} s: rounds "
                  f"σ {sd:.3f} ({len(rounds)}), whole epochs σ {got[1]:.3f} ({got[0]} pairs)")
    print("3. Blocks joined k at a time (A/A): σ, and the seconds of rounds the bar needs:")
    for r in runs:
        if r.get("align") or len(r["blocks"]) < 40:
            continue
        cells = []
        for k in (2, 4, 8):
            got = joined_sd(block_values(r), k)
            if got:
                cells.append(f"{k * r['block_s']:g} s σ {got[1]:.3f} "
                             f"({seconds_for_bar(got[1], k * r['block_s']):.0f} s)")
        print(f"   {r['id']:<24} call {r['call']!s:<5} " + "; ".join(cells))
    print("4. Standard error of the mean log ratio: on over the off before / over both sides:")
    ratios = []
    for r in runs:
        blocks = block_values(r)
        one, two = pair_logs(blocks), both_sides_logs(medians(blocks))
        if r.get("align") or min(len(one), len(two)) < 15:
            continue
        se1 = statistics.stdev(one) / math.sqrt(len(one))
        se2 = newey_west_se(two)
        ratios.append(se2 / se1)
        print(f"   {r['id']:<24} call {r['call']!s:<5} {se1:.4f} ({len(one)}) / "
              f"{se2:.4f} ({len(two)}): x{se2 / se1:.2f}")
    if ratios:
        print(f"   median x{statistics.median(ratios):.2f} over {len(ratios)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
