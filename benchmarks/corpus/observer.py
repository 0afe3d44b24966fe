"""Score the observer check: each script's iterations in the tool's baseline window, by its own
log, against the same iterations of the script run alone just before.

    python benchmarks/corpus/observer.py CORPUS_JSON [--json OUT]

CORPUS_JSON is what `CORPUS_PAIRS=N bash benchmarks/corpus/run_gpu.sh OUT IDS` wrote. For
each pair, the baseline window is the tool's baseline steps (after its warm-up, from the
capture flags the pair ran with; one step = one iteration of the script's loop), less its
first step; the log values lying wholly inside it are compared with the alone run's values
at the same positions (ratio of medians, and of means), beside the tool's own baseline
median (CUDA events) and the capture's measured cost. Bar: within 3 %.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

#: the observer bar of the real-script issue: the baseline under the tool within 3 % of alone
BAR = 0.03


def _flag(capture: list[str], name: str, default: int) -> int:
    return int(capture[capture.index(name) + 1]) if name in capture else default


def window(capture: list[str]) -> tuple[int, int]:
    """First and last iteration (0-based) of the baseline steps, its first step left out."""
    warmup, steps = _flag(capture, "--warmup", 3), _flag(capture, "--steps", 20)
    return warmup + 2, warmup + steps


#: iterations left out after the capture ends (its trace is written in the process then)
AFTER_MARGIN = 5


def after_capture(capture: list[str]) -> int:
    """First iteration (0-based) after the capture and its trace write: the process's own
    control, where the tool no longer observes (its hooks idle, the profiler gone)."""
    end = (_flag(capture, "--warmup", 3) + _flag(capture, "--steps", 20)
           + _flag(capture, "--wait", 1) + _flag(capture, "--prof-warmup", 1)
           + _flag(capture, "--active", 3))
    return end + AFTER_MARGIN


def after(own: dict[str, Any], start: int, per: int, first: int) -> list[float]:
    """The log values whose iterations all come at or after `start`."""
    skip = own.get("skip", 2)
    return [ms for i, ms in enumerate(own.get("series_ms") or [])
            if first + (i + skip) * per >= start]


def within_process(own: dict[str, Any], capture: list[str], per: int,
                   first: int) -> float | None:
    """The baseline window's median over the same process's median after the capture: a
    ratio free of the process's own speed (the word LM's per-process medians spread 10 %,
    alone against alone), so tool and alone compare on it with a few pairs."""
    lo, hi = window(capture)
    inside = [ms for _, ms in in_window(own, lo, hi, per, first)]
    later = after(own, after_capture(capture), per, first)
    if not inside or len(later) < 3:
        return None
    return statistics.median(inside) / statistics.median(later)


def in_window(own: dict[str, Any], lo: int, hi: int, per: int,
              first: int) -> list[tuple[int, float]]:
    """(value index, ms) of the log values whose iterations lie wholly inside [lo, hi]."""
    skip = own.get("skip", 2)
    out = []
    for i, ms in enumerate(own.get("series_ms") or []):
        idx = i + skip
        start = first + idx * per
        if start >= lo and start + per - 1 <= hi:
            out.append((idx, ms))
    return out


def score_pair(pair: dict[str, Any], obs: dict[str, Any]) -> dict[str, Any]:
    """One pair's figures: the same log positions on both sides."""
    lo, hi = window(obs["capture"])
    per, first = obs.get("iters_per_value", 1), obs.get("first_iter", 0)
    tool = dict(in_window(pair["tool"]["own"], lo, hi, per, first))
    alone = dict(in_window(pair["plain"], lo, hi, per, first))
    both = sorted(set(tool) & set(alone))
    t, a = [tool[i] for i in both], [alone[i] for i in both]
    steps = pair["tool"].get("steps") or {}
    cost = steps.get("capture_cost") or {}
    row: dict[str, Any] = {"values": len(both), "window": [lo, hi],
                           "tool_ms": t, "alone_ms": a,
                           "tool_baseline_median_ms": steps.get("median_ms"),
                           "capture_cost_ms_per_step": cost.get("ms_per_step")}
    if both:
        row["median_ratio"] = statistics.median(t) / statistics.median(a)
        row["mean_ratio"] = statistics.fmean(t) / statistics.fmean(a)
        row["within_bar"] = abs(row["median_ratio"] - 1) <= BAR
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus_json", type=Path)
    ap.add_argument("--json", type=Path, help="write the scored pairs here")
    args = ap.parse_args(argv)
    results = json.loads(args.corpus_json.read_text())
    results = results.get("results", results) if isinstance(results, dict) else results
    scored = []
    print(f"{'script':24} {'pair':>4} {'values':>6} {'tool/alone (median)':>20} "
          f"{'(mean)':>8} {'cost ms/step':>12}")
    for r in results:
        if "pairs" not in r or "observer" not in r:
            continue
        rows = [score_pair(p, r["observer"]) for p in r["pairs"]]
        scored.append({"id": r["id"], "pairs": rows})
        for i, row in enumerate(rows):
            ratio = f"{row['median_ratio']:.3f}" if "median_ratio" in row else "-"
            mean = f"{row['mean_ratio']:.3f}" if "mean_ratio" in row else "-"
            cost = row["capture_cost_ms_per_step"]
            print(f"{r['id']:24} {i:>4} {row['values']:>6} {ratio:>20} {mean:>8} "
                  f"{cost if cost is not None else '-':>12}")
    if args.json:
        args.json.write_text(json.dumps(scored, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
