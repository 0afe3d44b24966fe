"""The what-if model against fixes measured on an H200, offline: the committed real traces.

Each workload under tests/data/real was captured on an H200 by capture_workloads.py together
with the unprofiled step time of its hand-fixed variant (`fixed_variant` in its meta.json).
This prints, per workload, the verdict, the gain the finding of its true category predicts and
the gain the fix measured.

    python benchmarks/whatif_offline.py [--json OUT.json]
    python benchmarks/whatif_offline.py --dir KEEP     # folders bench_whatif.py --keep wrote
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
WORKLOADS = ["input", "sync", "launch", "precision", "compute", "memory", "transfer", "host"]


def rows(folders: list[Path] | None = None) -> list[dict]:
    """One row per workload: verdict, predicted and measured gain of its true category."""
    from jupyter_gpuprof.advice.whatif import predictions_for
    from jupyter_gpuprof.report import analyze_path

    out = []
    for folder in folders or [ROOT / "tests" / "data" / "real" / n for n in WORKLOADS]:
        name = folder.name
        meta = json.loads((folder / "meta.json").read_text())
        category = meta.get("true_category", name)
        report = analyze_path(folder)
        a = report.analysis
        pred = predictions_for(a).get(category)
        fx = meta.get("fixed_variant")
        fixed_ms = fx.get("step_ms_median_unprofiled") if isinstance(fx, dict) else None
        base = meta["step_ms_median_unprofiled"]
        out.append({
            "name": name, "category": category, "verdict": report.verdict.category,
            "baseline_ms": round(base, 3),
            "predicted_step_ms": round(pred.predicted_step_ms, 3) if pred else None,
            "predicted_gain_pct": round(pred.gain_pct, 1) if pred else None,
            "fix": fx.get("fix") if isinstance(fx, dict) else None,
            "fixed_ms": round(fixed_ms, 3) if fixed_ms else None,
            "measured_gain_pct": round(100 * (1 - fixed_ms / base), 1) if fixed_ms else None,
            "driver": pred.driver if pred else "",
        })
    return out


def main() -> int:
    """Print the table (and write the JSON when asked)."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--json", default=None)
    ap.add_argument("--dir", default=None, help="a folder of run folders (bench_whatif --keep)")
    args = ap.parse_args()
    folders = (sorted(p.parent for p in Path(args.dir).glob("*/meta.json")) if args.dir
               else None)
    got = rows(folders)
    print("| workload | verdict | step ms | predicted | measured (hand fix) | error |")
    print("|---|---|---|---|---|---|")
    errs = []
    for r in got:
        p, m = r["predicted_gain_pct"], r["measured_gain_pct"]
        err = round(p - m, 1) if p is not None and m is not None else None
        if err is not None:
            errs.append(abs(err))
        measured = "no fix" if m is None else f"{m:.1f} % ({r['fix']})"
        predicted = "" if p is None else f"{p:.1f} %"
        print(f"| {r['name']} | {r['verdict']} | {r['baseline_ms']:.2f} → "
              f"{r['predicted_step_ms'] or 0:.2f} | {predicted} | {measured} | "
              f"{'' if err is None else f'{err:+.1f}'} |")
    print(f"\nmean |error| {sum(errs) / len(errs):.1f} points over {len(errs)} workloads, "
          f"max {max(errs):.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps(got, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
