"""The observer check with both sides of a pair running at once, on two GPUs of one host (or one).

    python benchmarks/corpus/observer_concurrent.py CORPUS OUT [ID ...]     (a 2-GPU host)
    OBSERVER_GPUS=0,0 python benchmarks/corpus/observer_concurrent.py ...  (a 1-GPU host)

Interleaved pairs could not judge the 3 % bar on a host-bound script: the word LM's own step
time moves 10 % between processes run one after the other (docs/benchmarks.md §21), with the
host's state over time. Here each pair is the script alone on one GPU and under
`jupyter gpuprof run --stop-after-capture` on the other, started together, the sides swapped
every pair (a GPU's own speed cancels over two pairs), so both sides meet the same host
moments. Each side is timed by the script's own log at the same positions inside the tool's
baseline window (observer.py). $OBSERVER_PAIRS pairs (default 12); $OBSERVER_AA=1 runs the
script alone on both GPUs instead (the A/A control: the pairs' spread with no tool at all).
Prints each pair's ratio (tool / alone, ratio of medians), their geometric mean with a 95 % t
interval, and whether the interval lies within the bar. Writes OUT/observer_concurrent.json.

$OBSERVER_GPUS names the two GPUs the sides alternate on (default `0,1`). With `0,0` both sides
share one GPU: each also meets the other's kernels there, which a host-bound script (the GPU
idle most of its step) barely feels and which falls on both sides alike; the A/A run on the same
placement measures what that sharing spreads, and it is the control the pairs are read against.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import observer  # noqa: E402
import run_gpu  # noqa: E402

#: two-sided 95 % t quantiles by degrees of freedom (past 30: 2.0)
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26,
       10: 2.23, 11: 2.20, 12: 2.18, 13: 2.16, 14: 2.14, 15: 2.13, 16: 2.12, 17: 2.11,
       18: 2.10, 19: 2.09, 20: 2.09, 25: 2.06, 30: 2.04}


def t95(df: int) -> float:
    """The 95 % two-sided t quantile for `df` degrees of freedom (the nearest tabled below)."""
    return T95[max(k for k in T95 if k <= df)] if df < 31 else 2.0


def pooled(ratios: list[float], bar: float = observer.BAR) -> dict[str, Any]:
    """Geometric mean of the pair ratios, its 95 % t interval, and the verdict on the bar:
    `within` when the whole interval lies inside [1 - bar, 1 + bar], `outside` when it lies
    wholly beyond one side, else `not shown` (more pairs needed: `pairs_for_bar`)."""
    logs = [math.log(r) for r in ratios if r > 0]
    if len(logs) < 2:
        return {"pairs": len(logs), "verdict": "not shown"}
    mean, sd = statistics.fmean(logs), statistics.stdev(logs)
    half = t95(len(logs) - 1) * sd / math.sqrt(len(logs))
    lo, hi = math.exp(mean - half), math.exp(mean + half)
    verdict = ("within" if lo >= 1 - bar and hi <= 1 + bar else
               "outside" if lo > 1 + bar or hi < 1 - bar else "not shown")
    room = math.log(1 + bar) - abs(mean)
    need = math.ceil((1.96 * sd / room) ** 2) if room > 0 and sd > 0 else None
    return {"pairs": len(logs), "ratio": math.exp(mean), "ci95": [lo, hi], "sd_log": sd,
            "verdict": verdict, "pairs_for_bar": need}


def _side(entry: dict[str, Any], cmd: list[str], folder: Path, env: dict[str, str],
          gpu: int, tool: bool, out: Path, tag: str) -> dict[str, Any]:
    """One side of a pair on one GPU: the script's own log, alone or under the tool."""
    env = dict(env, CUDA_VISIBLE_DEVICES=str(gpu))
    if tool:
        runs = out / "runs" / entry["id"] / tag
        capture = entry.get("observer", {}).get("capture", entry.get("capture", run_gpu.CAPTURE))
        cmd = [run_gpu.PY, "-m", "jupyter_gpuprof", "run", "--runs-root", str(runs),
               "--stop-after-capture", *capture, "--", *cmd]
    ran = run_gpu._run(cmd, folder, env, run_gpu.TOOL_TIMEOUT_S if tool
                       else entry.get("stop_after_s", run_gpu.PLAIN_TIMEOUT_S))
    return {"code": ran["code"], "gpu": gpu, "tool": tool, "own": run_gpu.own_times(entry, ran)}


def placement(i: int, gpus: tuple[int, int] = (0, 1)) -> tuple[int, int]:
    """The GPUs of pair `i`'s tool side and alone side: swapped every pair (over two pairs
    each side has had each GPU); `gpus` from $OBSERVER_GPUS, `(0, 0)` on a one-GPU host."""
    return (gpus[i % 2], gpus[1 - i % 2])


def gpus_from_env() -> tuple[int, int]:
    """$OBSERVER_GPUS as two GPU indices (`0,1` when unset)."""
    first, second = (int(x) for x in os.environ.get("OBSERVER_GPUS", "0,1").split(","))
    return first, second


def pair(entry: dict[str, Any], folder: Path, env: dict[str, str], i: int, out: Path,
         aa: bool, gpus: tuple[int, int] = (0, 1)) -> dict[str, Any]:
    """Both sides at once; the tool (or, A/A, the second alone) on `placement(i, gpus)[0]`."""
    obs = entry.get("observer", {})
    cmd = [run_gpu.PY, *obs.get("command", entry["command"])]
    tool_gpu, alone_gpu = placement(i, gpus)
    sides: dict[str, dict[str, Any]] = {}

    def go(name: str, gpu: int, tool: bool) -> None:
        sides[name] = _side(entry, cmd, folder, env, gpu, tool, out, f"{name}{i}")

    threads = [threading.Thread(target=go, args=("tool", tool_gpu, not aa)),
               threading.Thread(target=go, args=("alone", alone_gpu, False))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    capture = obs.get("capture", entry.get("capture", run_gpu.CAPTURE))
    lo, hi = observer.window(capture)
    per, first = obs.get("iters_per_value", 1), obs.get("first_iter", 0)
    got = {k: dict(observer.in_window(s["own"], lo, hi, per, first)) for k, s in sides.items()}
    both = sorted(set(got["tool"]) & set(got["alone"]))
    row: dict[str, Any] = {"pair": i, "tool_gpu": tool_gpu, "values": len(both),
                           "codes": {k: s["code"] for k, s in sides.items()}}
    if both:
        t = statistics.median(got["tool"][j] for j in both)
        a = statistics.median(got["alone"][j] for j in both)
        row.update(tool_ms=t, alone_ms=a, ratio=t / a)
    return row


def main() -> int:
    corpus, out = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    wanted = set(sys.argv[3:]) or {"word-lm"}
    n = int(os.environ.get("OBSERVER_PAIRS", "12"))
    aa = os.environ.get("OBSERVER_AA") == "1"
    gpus = gpus_from_env()
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"aa": aa, "gpus": list(gpus)}
    for entry in json.loads(run_gpu.MANIFEST.read_text())["scripts"]:
        if entry["id"] not in wanted:
            continue
        folder = corpus / entry["id"]
        env = run_gpu.script_env(entry)
        run_gpu.make_data(entry, folder)
        rows = []
        for i in range(n):
            rows.append(pair(entry, folder, env, i, out, aa, gpus))
            r = rows[-1]
            print(f"{entry['id']} pair {i} (tool on GPU {r['tool_gpu']}): "
                  f"{r.get('tool_ms')} / {r.get('alone_ms')} ms = {r.get('ratio')}", flush=True)
        summary = pooled([r["ratio"] for r in rows if r.get("ratio")])
        results[entry["id"]] = {"pairs": rows, "pooled": summary}
        print(f"{entry['id']}: {'alone/alone' if aa else 'tool/alone'} "
              f"×{summary.get('ratio', float('nan')):.3f} (95 % CI {summary.get('ci95')}), "
              f"{summary['pairs']} pairs: {summary['verdict']}", flush=True)
        (out / "observer_concurrent.json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
