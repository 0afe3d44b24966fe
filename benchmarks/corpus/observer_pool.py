"""The observer check's standing per script: the runs the evidence's `pools` name, pooled.

    python benchmarks/corpus/observer_pool.py [EVIDENCE]

(EVIDENCE: docs/evidence/observer_inprocess_h200.json unless named.) Its last lines are each
corpus script's standing: `within` where one pool of runs of one setting reads within the bar
(the GPU pools, or the CPU host's runs for a CPU script), with where from.
A script's runs are read together only when they ran under the same conditions (the same
block, the same pinning): each entry of `pools` names a script's calls and says why they
belong together, so every pooled reading in docs/benchmarks.md comes from the committed
rounds by one rule (observer_concurrent.pooled: the geometric mean, its 95 % t interval,
`within` when it lies inside 0.97-1.03) with its choice of runs stated beside it. A pool that
mixes conditions must say so (`mixed`), and is printed as such.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from observer_concurrent import pooled  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EVIDENCE = ROOT / "docs" / "evidence" / "observer_inprocess_h200.json"
CPU_EVIDENCE = ROOT / "docs" / "evidence" / "observer_inprocess_cpu.json"
MANIFEST = ROOT / "benchmarks" / "corpus" / "manifest.json"


def run_rounds(run: dict[str, Any]) -> list[float]:
    """A run's rounds with each block's first value left out: re-read for the runs made
    before that rule (`rounds_without_first`), as made for the runs after it."""
    return run["rounds_without_first"] if "rounds_without_first" in run else run["rounds"]


#: the card of the runs recorded before runs named theirs (sessions 46-50 ran on one H200 host)
EARLIER_DEVICE = "NVIDIA H200"


def conditions(run: dict[str, Any]) -> tuple[Any, ...]:
    """What must match for two runs' rounds to be pooled: the block, where it may end, the
    pinning, the card (another card comes with another host: its CPUs pace the loop) and
    where a block's reading began (from session 51: at the `settled` mark, after the loader's
    stock and an `on` block's set-up, `read_from`)."""
    return (run["block_s"], run.get("align", ""), tuple(run.get("cpus") or ()),
            run.get("device", EARLIER_DEVICE), run.get("settle", 0),
            run.get("read_from", "switch"))


def pool(runs: list[dict[str, Any]], spec: dict[str, Any]) -> dict[str, Any]:
    """One pool's reading: the rounds of the named script's named calls, together."""
    chosen = [r for r in runs if r["id"] == spec["id"] and str(r.get("call")) in spec["calls"]]
    found = {str(r["call"]) for r in chosen}
    if missing := [c for c in spec["calls"] if c not in found]:
        raise ValueError(f"pool {spec['id']}: no run of call(s) {', '.join(missing)}")
    if len({conditions(r) for r in chosen}) > 1 and not spec.get("mixed"):
        raise ValueError(f"pool {spec['id']} {'+'.join(spec['calls'])}: its runs differ in block, "
                         "pinning or card; pool runs of one setting, or say why in `mixed`")
    rounds = [x for r in chosen for x in run_rounds(r)]
    return {**spec, "reading": pooled(rounds)}


def readings(evidence: dict[str, Any]) -> list[dict[str, Any]]:
    """Every pool of the evidence, read."""
    return [pool(evidence["runs"], spec) for spec in evidence.get("pools", [])]


def line(p: dict[str, Any]) -> str:
    """One pool as a line: script, calls, the reading and its verdict."""
    r = p["reading"]
    lo, hi = r.get("ci95", [float("nan")] * 2)
    mixed = " (mixed: " + p["mixed"] + ")" if p.get("mixed") else ""
    return (f"{p['id']:<20} {'+'.join(p['calls']):<16} {r['pairs']:>4} rounds  "
            f"x{r.get('ratio', float('nan')):.4f} ({lo:.4f}-{hi:.4f})  {r['verdict']}{mixed}")


def cpu_readings(cpu: dict[str, Any]) -> list[dict[str, Any]]:
    """The CPU host's runs, one reading each (a session's runs sit under `session_*` keys)."""
    sessions = [("", cpu)] + [(k, v) for k, v in cpu.items() if k.startswith("session_")]
    return [{"id": sid, "calls": [name or "first"], "reading": pooled(run_rounds(run))}
            for name, block in sessions for sid, run in block.items()
            if isinstance(run, dict) and "rounds" in run]


def standing(scripts: list[str], read: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each script's standing: within where a pool of one setting reads within (a `mixed` pool
    is a disclosure, never the claim), with the pool it rests on; else not shown."""
    out: dict[str, dict[str, Any]] = {s: {"verdict": "not shown", "calls": []} for s in scripts}
    for p in read:
        if p["id"] in out and not p.get("mixed") and p["reading"]["verdict"] == "within":
            out[p["id"]] = {"verdict": "within", "calls": p["calls"]}
    return out


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else EVIDENCE
    read = readings(json.loads(path.read_text()))
    for p in read:
        print(line(p))
    scripts = [s["id"] for s in json.loads(MANIFEST.read_text())["scripts"]]
    stand = standing(scripts, read + cpu_readings(json.loads(CPU_EVIDENCE.read_text())))
    print()
    for sid, st in stand.items():
        print(f"{sid:<24} {st['verdict']:<10} {'+'.join(st['calls'])}")
    within = sum(st["verdict"] == "within" for st in stand.values())
    print(f"{within} of {len(stand)} scripts within")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
