"""A script's by-hand fixes read over interleaved rounds, each fix against the script alone of
its own round: one process per variant cannot judge a fix on a host whose per-process speed
spreads more than the fix saves.

    python benchmarks/corpus/fix_rounds.py EVIDENCE

EVIDENCE holds `rounds`, each with `plain` and `fixes` as benchmarks/corpus/run_gpu.py writes
them (the script's own log), or is the corpus.json of `CORPUS_FIX_ROUNDS=N run_gpu.py`: one
such entry a script. Per fix: the rounds' ratios (fix over alone, medians of the log's
values), their geometric mean and 95 % t interval (observer_concurrent.pooled), and what that
says: `faster` or `slower` when the whole interval lies on one side of 1, else `not shown`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from observer_concurrent import pooled  # noqa: E402


def ratios(rounds: list[dict[str, Any]], fix: str, key: str = "median_ms") -> list[float]:
    """Each round's fix over the script alone of the same round (rounds lacking either skipped)."""
    out = []
    for r in rounds:
        alone = (r.get("plain") or {}).get(key)
        fixed = ((r.get("fixes") or {}).get(fix) or {}).get(key)
        if alone and fixed:
            out.append(fixed / alone)
    return out


def reading(rounds: list[dict[str, Any]], fix: str) -> dict[str, Any]:
    """One fix over the rounds: ratio, interval, the measured gain and whether it is shown."""
    got = pooled(ratios(rounds, fix))
    lo, hi = got.get("ci95", [None, None])
    said = ("not shown" if lo is None or lo <= 1 <= hi else "faster" if hi < 1 else "slower")
    gain = 100 * (1 - got["ratio"]) if "ratio" in got else None
    return {"fix": fix, "rounds": got["pairs"], "ratio": got.get("ratio"), "ci95": got.get("ci95"),
            "gain_pct": gain, "said": said}


def main(argv: list[str]) -> int:
    loaded = json.loads(Path(argv[0]).read_text())
    for doc in loaded if isinstance(loaded, list) else [loaded]:
        if not doc.get("rounds"):
            continue
        fixes = sorted({f for r in doc["rounds"] for f in r.get("fixes") or {}})
        print(f"{doc.get('id', '')} on {doc.get('device', '?')}: {len(doc['rounds'])} rounds")
        for f in fixes:
            r = reading(doc["rounds"], f)
            if r["ratio"] is None:
                print(f"{f:<36} {r['rounds']:>2} rounds: too few to read")
                continue
            lo, hi = r["ci95"]
            print(f"{f:<36} {r['rounds']:>2} rounds  x{r['ratio']:.3f} ({lo:.3f}-{hi:.3f})  "
                  f"gain {r['gain_pct']:+.1f} %  {r['said']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
