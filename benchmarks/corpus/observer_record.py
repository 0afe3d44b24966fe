"""Add one device call's observer runs to the committed evidence, each with its call and card.

    python benchmarks/corpus/observer_record.py CALL DEVICE FOLDER [FOLDER ...] [--evidence E]

Each FOLDER is what observer_gpu.sh left for one script (observer_inprocess.json, and the
gpu.csv nvidia-smi sampled beside it where there is one). Every run gets the call's number
(`call`), the card it ran on (`device`: runs of one pool must share it, see
observer_pool.conditions), the check's own settings (`settle_s`, `cpus`) and the GPU's clock
and load through the run (`gpu_sampled`), so the evidence keeps every value a reading rests
on, and a call recorded twice is refused rather than counted twice.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EVIDENCE = ROOT / "docs" / "evidence" / "observer_inprocess_h200.json"
#: nvidia-smi's sampling period in observer_gpu.sh (-lms 500)
SAMPLE_S = 0.5


def gpu_sampled(csv: Path) -> dict[str, Any] | None:
    """nvidia-smi's samples through a run: how often each SM clock was seen and the mean load
    (lines `timestamp, clocks.sm, utilization.gpu, power.draw`; a line cut short is skipped)."""
    if not csv.is_file():
        return None
    clocks: Counter[str] = Counter()
    load = []
    for line in csv.read_text().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 4 or not parts[2].endswith("%"):
            continue
        clocks[parts[1]] += 1
        load.append(float(parts[2].rstrip(" %")))
    if not load:
        return None
    return {"every_s": SAMPLE_S, "sm_clock": dict(clocks.most_common()),
            "utilization_mean_pct": round(statistics.fmean(load), 1)}


def runs_of(folder: Path, call: str, device: str) -> list[dict[str, Any]]:
    """The runs one script's folder holds, each stamped with the call, its card and settings."""
    got = json.loads((folder / "observer_inprocess.json").read_text())
    sampled = gpu_sampled(folder / "gpu.csv")
    out = []
    for run in got.values():
        if not (isinstance(run, dict) and "rounds" in run):
            continue
        row = {**run, "call": call, "device": device, "settle_s": got.get("settle_s"),
               "cpus": got.get("cpus")}
        if sampled:
            row["gpu_sampled"] = sampled
        out.append(row)
    return out


def record(evidence: dict[str, Any], new: list[dict[str, Any]]) -> dict[str, Any]:
    """The evidence with the new runs appended; a script's call already there is an error."""
    have = {(r["id"], str(r.get("call"))) for r in evidence["runs"]}
    if twice := sorted(f"{r['id']} {r['call']}" for r in new if (r["id"], r["call"]) in have):
        raise ValueError(f"already recorded: {', '.join(twice)}")
    return {**evidence, "runs": [*evidence["runs"], *new]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("call")
    ap.add_argument("device", help="the card, as nvidia-smi names it")
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--evidence", type=Path, default=EVIDENCE)
    a = ap.parse_args(argv)
    new = [r for f in a.folders for r in runs_of(f, a.call, a.device)]
    ev = record(json.loads(a.evidence.read_text()), new)
    a.evidence.write_text(json.dumps(ev, indent=1) + "\n")
    for r in new:
        p = r["pooled"]
        ratio = p.get("ratio", float("nan"))
        print(f"{r['id']:<24} {a.call:<6} {p['pairs']:>4} rounds x{ratio:.4f} {p['verdict']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
