"""Is the precision fix priced right on TinyGPT? bf16 autocast alone, measured against the
price the report puts on it (the committed fixture and a fresh capture of the same script).

    python benchmarks/tinygpt/precision_check.py OUT.json      # on a CUDA host

Runs train_tinygpt.py in paired blocks (fp32, bf16, fp32, bf16), synchronized per step as the
fixture's baseline was timed and unsynchronized as a user runs it, each timed by its own log
(steps after the 5th); then `jupyter gpuprof run --try amp` on the fp32 script. Prints the
measured gains beside the predictions, and writes everything to OUT.json.
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
SCRIPT = HERE / "train_tinygpt.py"
FIXTURE = HERE.parent.parent / "tests" / "data" / "real" / "tinygpt_before"
STEPS, SKIP, BLOCKS = 40, 5, 2


def own_log(args: list[str]) -> dict[str, float]:
    """One run of the script: median and mean of its own per-step times after warm-up."""
    out = subprocess.run([sys.executable, str(SCRIPT), "--steps", str(STEPS), *args],
                         capture_output=True, text=True, check=True).stdout
    ms = [float(m) for m in re.findall(r"^step \d+: ([\d.]+) ms", out, flags=re.M)][SKIP:]
    return {"median_ms": statistics.median(ms), "mean_ms": statistics.fmean(ms), "n": len(ms)}


def precision_finding(summary: dict) -> dict | None:
    """The report's precision finding (its predicted gain) and the verdict."""
    for f in summary.get("findings") or []:
        if f.get("category") == "precision":
            return {"expected_gain_pct": f.get("expected_gain_pct"),
                    "step_gain_pct": f.get("step_gain_pct"), "id": f.get("id"),
                    "tries": f.get("tries")}
    return None


def analyze(path: Path) -> dict:
    js = subprocess.run([sys.executable, "-m", "jupyter_gpuprof", "analyze", "--json", str(path)],
                        capture_output=True, text=True, check=True).stdout
    return json.loads(js)


def main(out: Path) -> None:
    result: dict = {"blocks": []}
    for _ in range(BLOCKS):
        block = {}
        for mode, extra in (("sync", ["--sync"]), ("free", [])):
            for dtype in ("fp32", "bf16"):
                block[f"{dtype}_{mode}"] = own_log(["--dtype", dtype, *extra])
        result["blocks"].append(block)
        print(json.dumps(block), flush=True)
    gains = {}
    for mode in ("sync", "free"):
        for stat in ("median_ms", "mean_ms"):
            fp = statistics.median(b[f"fp32_{mode}"][stat] for b in result["blocks"])
            bf = statistics.median(b[f"bf16_{mode}"][stat] for b in result["blocks"])
            gains[f"{mode}_{stat}"] = {"fp32": fp, "bf16": bf, "gain_pct": 100 * (1 - bf / fp)}
    result["measured"] = gains
    fixture = analyze(FIXTURE)
    result["fixture"] = {"verdict": fixture["verdict"]["category"],
                         "precision": precision_finding(fixture)}
    with tempfile.TemporaryDirectory() as root:
        tool = subprocess.run([sys.executable, "-m", "jupyter_gpuprof", "run", "--runs-root", root,
                               "--stop-after-capture", "--try", "amp", "--", sys.executable,
                               str(SCRIPT), "--steps", "80"], capture_output=True, text=True)
        runs = sorted(p for p in Path(root).iterdir() if p.is_dir())
        fresh = analyze(runs[-1]) if runs else {}
        result["fresh"] = {"code": tool.returncode,
                           "tail": tool.stdout[-3000:] + tool.stderr[-1500:],
                           "verdict": (fresh.get("verdict") or {}).get("category"),
                           "steps": {k: (fresh.get("steps") or {}).get(k)
                                     for k in ("median_ms", "mean_ms", "capture_cost")},
                           "precision": precision_finding(fresh) if fresh else None,
                           "tries": fresh.get("tries")}
    out.write_text(json.dumps(result, indent=1))
    g = gains["sync_median_ms"]
    print(f"bf16 alone, synchronized (the fixture's clock): {g['fp32']:.2f} -> {g['bf16']:.2f} ms "
          f"({g['gain_pct']:.1f} %)")
    g2 = gains["free_mean_ms"]
    print(f"bf16 alone, unsynchronized mean: {g2['fp32']:.2f} -> {g2['bf16']:.2f} ms "
          f"({g2['gain_pct']:.1f} %)")
    fx = result["fixture"]
    print(f"fixture: verdict {fx['verdict']}, precision {fx['precision']}")
    print(f"fresh capture: verdict {result['fresh']['verdict']}, precision "
          f"{result['fresh']['precision']}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
