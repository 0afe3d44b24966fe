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
interval, and whether the interval lies within the bar. Writes OUT/observer_concurrent.json
(OUT/observer_concurrent_aa.json for the A/A control) after every pair, so a run cut short by
a time limit keeps the pairs it finished.

$OBSERVER_GPUS names the two GPUs the sides alternate on (default `0,1`). With `0,0` both sides
share one GPU: each also meets the other's kernels there, which a host-bound script (the GPU
idle most of its step) barely feels and which falls on both sides alike; the A/A run on the same
placement measures what that sharing spreads, and it is the control the pairs are read against.

$OBSERVER_SEQUENTIAL=1 runs a pair's sides one after the other (the first swapped every pair):
the interleaved design of §21, with this script's scoring and capture-cost record.

$OBSERVER_CORES=1 pins each side to a physical core of its own (the core's hyperthreads, from
the host's CPU topology; the same two cores every pair, swapped with the GPUs): a host-bound
step's speed depends on the core it lands on and on what runs on that core's other hyperthread,
which the scheduler decides per process.

$OBSERVER_WHOLE=1 lets the tool side's script run to its end (no `--stop-after-capture`) and
also scores each pair within its processes: each side's baseline window over its own later
iterations (from $OBSERVER_LATE iterations after the capture, default 100, once the trace is
written and analysed), tool over alone. A process's own speed divides out of that ratio (pinned
to a core, each word-LM process runs at one of two speeds, about 4.1 or 6.1 ms a batch, for its
whole life, which no pairing across processes cancels); unpinned, the speed also wanders within
a process, and this ratio read no tighter than the pairs (docs/benchmarks.md §21).
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
            "verdict": verdict, "pairs_for_bar": need, **median_reading(ratios)}


def median_reading(ratios: list[float]) -> dict[str, Any]:
    """A second reading, beside the verdict (which stays the geometric mean's): the pairs'
    median and its distribution-free 95 % interval (order statistics of the binomial sign
    test). A host that jumps between two speeds puts 0.75 or 1.33 in the pairs that meet a
    jump, which stretch the mean's t interval but move the median's little."""
    r = sorted(ratios)
    n = len(r)
    cdf, k = 0.0, 0
    while k < n and cdf + math.comb(n, k) / 2 ** n <= 0.025:
        cdf += math.comb(n, k) / 2 ** n
        k += 1
    if k == 0:  # too few pairs for a 95 % interval
        return {"median": statistics.median(r)} if r else {}
    return {"median": statistics.median(r), "median_ci95": [r[k - 1], r[n - k]]}


def physical_cores(root: Path = Path("/sys/devices/system/cpu")) -> list[list[int]]:
    """The host's physical cores, each as the sorted CPUs (hyperthreads) it holds, in order."""
    cores: set[tuple[int, ...]] = set()
    for top in root.glob("cpu[0-9]*/topology/thread_siblings_list"):
        cores.add(tuple(sorted(run_gpu.cpu_list(top.read_text()))))
    return [list(c) for c in sorted(cores)]


def side_cores(cores: list[list[int]]) -> tuple[list[int], list[int]] | None:
    """Two physical cores for the two sides, away from core 0 (the host's interrupts and
    daemons land there most): the last two. None with fewer than three cores."""
    return (cores[-2], cores[-1]) if len(cores) >= 3 else None


def pinned(cmd: list[str], cpus: list[int] | None) -> list[str]:
    """`cmd` started on `cpus` only (inherited by everything it starts), else unchanged."""
    if not cpus:
        return cmd
    cpu_set = ", ".join(map(str, cpus))
    pin = (f"import os, sys; os.sched_setaffinity(0, {{{cpu_set}}}); "
           "os.execvp(sys.argv[1], sys.argv[1:])")
    return [run_gpu.PY, "-c", pin, *cmd]


def capture_flags(entry: dict[str, Any]) -> list[str]:
    """The tool side's capture flags: the manifest's observer flags, with $OBSERVER_STEPS (when
    set) as the baseline's length; a longer window averages over the slow wander of a
    host-bound step inside one process (the word LM's 10-value windows move ±20 %)."""
    flags = list(entry.get("observer", {}).get("capture", entry.get("capture", run_gpu.CAPTURE)))
    if steps := os.environ.get("OBSERVER_STEPS"):
        if "--steps" in flags:
            flags[flags.index("--steps") + 1] = steps
        else:
            flags += ["--steps", steps]
    return flags


def _side(entry: dict[str, Any], cmd: list[str], folder: Path, env: dict[str, str],
          gpu: int, tool: bool, out: Path, tag: str, cpus: list[int] | None = None
          ) -> dict[str, Any]:
    """One side of a pair on one GPU (and `cpus`): the script's own log, alone or under the
    tool."""
    env = dict(env, CUDA_VISIBLE_DEVICES=str(gpu))
    if tool:
        runs = out / "runs" / entry["id"] / tag
        stop = [] if os.environ.get("OBSERVER_WHOLE") == "1" else ["--stop-after-capture"]
        cmd = [run_gpu.PY, "-m", "jupyter_gpuprof", "run", "--runs-root", str(runs),
               *stop, *capture_flags(entry), "--", *cmd]
    ran = run_gpu._run(pinned(cmd, cpus), folder, env, run_gpu.TOOL_TIMEOUT_S if tool
                       else entry.get("stop_after_s", run_gpu.PLAIN_TIMEOUT_S))
    side = {"code": ran["code"], "gpu": gpu, "cpus": cpus, "tool": tool,
            "own": run_gpu.own_times(entry, ran)}
    if tool:
        side["capture_cost"] = capture_cost(out / "runs" / entry["id"] / tag)
    return side


def capture_cost(runs: Path) -> dict[str, Any] | None:
    """The capture's own measured cost in its baseline (meta's `baseline.capture_cost`), so a
    pair's ratio reads beside what the tool's hooks and sampler took in that very process."""
    for meta in sorted(runs.glob("**/meta.json")):
        try:
            cost = json.loads(meta.read_text()).get("baseline", {}).get("capture_cost")
        except (OSError, ValueError):
            continue
        if cost:
            return dict(cost)
    return None


def placement(i: int, gpus: tuple[int, int] = (0, 1)) -> tuple[int, int]:
    """The GPUs of pair `i`'s tool side and alone side: swapped every pair (over two pairs
    each side has had each GPU); `gpus` from $OBSERVER_GPUS, `(0, 0)` on a one-GPU host."""
    return (gpus[i % 2], gpus[1 - i % 2])


def sequential() -> bool:
    """$OBSERVER_SEQUENTIAL=1: the two sides of a pair one after the other, not at once. On one
    shared GPU a short script's two sides do not meet the same moments: the tool side's script
    starts later (the launcher, then the probed warm-up step), so its baseline window meets the
    other side's load while the alone side's window ran before it (minGPT's adder, 3.6 s in all,
    read x1.32 at once; docs/benchmarks.md §21, session 45)."""
    return os.environ.get("OBSERVER_SEQUENTIAL") == "1"


def gpus_from_env() -> tuple[int, int]:
    """$OBSERVER_GPUS as two GPU indices (`0,1` when unset)."""
    first, second = (int(x) for x in os.environ.get("OBSERVER_GPUS", "0,1").split(","))
    return first, second


def late_start(capture: list[str]) -> int:
    """First iteration of a process's own control: $OBSERVER_LATE iterations after the capture
    and its trace write, when the tool no longer observes and its analysis is done."""
    return observer.after_capture(capture) + int(os.environ.get("OBSERVER_LATE", "100"))


def within_ratio(own: dict[str, Any], capture: list[str], per: int, first: int
                 ) -> float | None:
    """One process's baseline window over its own later iterations (None without both)."""
    lo, hi = observer.window(capture)
    inside = [ms for _, ms in observer.in_window(own, lo, hi, per, first)]
    later = observer.after(own, late_start(capture), per, first)
    if not inside or len(later) < 3:
        return None
    return statistics.median(inside) / statistics.median(later)


def pair(entry: dict[str, Any], folder: Path, env: dict[str, str], i: int, out: Path,
         aa: bool, gpus: tuple[int, int] = (0, 1),
         cores: tuple[list[int], list[int]] | None = None) -> dict[str, Any]:
    """Both sides at once; the tool (or, A/A, the second alone) on `placement(i, gpus)[0]`
    and, with `cores`, on the core `placement` gives it the same way."""
    obs = entry.get("observer", {})
    cmd = [run_gpu.PY, *obs.get("command", entry["command"])]
    tool_gpu, alone_gpu = placement(i, gpus)
    sides: dict[str, dict[str, Any]] = {}

    tool_cpus, alone_cpus = ((cores[i % 2], cores[1 - i % 2]) if cores else (None, None))

    def go(name: str, gpu: int, tool: bool, cpus: list[int] | None) -> None:
        sides[name] = _side(entry, cmd, folder, env, gpu, tool, out, f"{name}{i}", cpus)

    both_sides = [("tool", tool_gpu, not aa, tool_cpus), ("alone", alone_gpu, False, alone_cpus)]
    if sequential():  # one side after the other, the first side swapped every pair
        for side in both_sides if i % 2 == 0 else both_sides[::-1]:
            go(*side)
    else:
        threads = [threading.Thread(target=go, args=side) for side in both_sides]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    capture = capture_flags(entry)
    lo, hi = observer.window(capture)
    per, first = obs.get("iters_per_value", 1), obs.get("first_iter", 0)
    got = {k: dict(observer.in_window(s["own"], lo, hi, per, first)) for k, s in sides.items()}
    both = sorted(set(got["tool"]) & set(got["alone"]))
    row: dict[str, Any] = {"pair": i, "tool_gpu": tool_gpu, "tool_cpus": tool_cpus,
                           "values": len(both),
                           "codes": {k: s["code"] for k, s in sides.items()},
                           "capture_cost": sides["tool"].get("capture_cost")}
    if both:
        t = statistics.median(got["tool"][j] for j in both)
        a = statistics.median(got["alone"][j] for j in both)
        row.update(tool_ms=t, alone_ms=a, ratio=t / a,
                   series={k: [got[k][j] for j in both] for k in got})
    if os.environ.get("OBSERVER_WHOLE") == "1":
        own = {k: within_ratio(s["own"], capture, per, first) for k, s in sides.items()}
        row.update(within=own, whole={k: s["own"]["series_ms"] for k, s in sides.items()})
        if own["tool"] and own["alone"]:
            row["within_ratio"] = own["tool"] / own["alone"]
    return row


def main() -> int:
    corpus, out = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    wanted = set(sys.argv[3:]) or {"word-lm"}
    n = int(os.environ.get("OBSERVER_PAIRS", "12"))
    aa = os.environ.get("OBSERVER_AA") == "1"
    gpus = gpus_from_env()
    cores = side_cores(physical_cores()) if os.environ.get("OBSERVER_CORES") == "1" else None
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"aa": aa, "gpus": list(gpus), "cores": cores,
                               "steps": os.environ.get("OBSERVER_STEPS"),
                               "sequential": sequential()}
    name = "observer_concurrent_aa.json" if aa else "observer_concurrent.json"
    for entry in json.loads(run_gpu.MANIFEST.read_text())["scripts"]:
        if entry["id"] not in wanted:
            continue
        folder = corpus / entry["id"]
        env = run_gpu.script_env(entry)
        run_gpu.make_data(entry, folder)
        rows: list[dict[str, Any]] = []
        for i in range(n):
            rows.append(pair(entry, folder, env, i, out, aa, gpus, cores))
            r = rows[-1]
            print(f"{entry['id']} pair {i} (tool on GPU {r['tool_gpu']}): "
                  f"{r.get('tool_ms')} / {r.get('alone_ms')} ms = {r.get('ratio')}"
                  f"; within its processes {r.get('within_ratio')}", flush=True)
            summary = pooled([r["ratio"] for r in rows if r.get("ratio")])
            results[entry["id"]] = {"pairs": rows, "pooled": summary}
            if any("within_ratio" in r for r in rows):
                results[entry["id"]]["pooled_within"] = pooled(
                    [r["within_ratio"] for r in rows if r.get("within_ratio")])
            (out / name).write_text(json.dumps(results, indent=1))
        print(f"{entry['id']}: {'alone/alone' if aa else 'tool/alone'} "
              f"×{summary.get('ratio', float('nan')):.3f} (95 % CI {summary.get('ci95')}), "
              f"{summary['pairs']} pairs: {summary['verdict']}", flush=True)
        if within := results[entry["id"]].get("pooled_within"):
            print(f"{entry['id']}: within its processes ×{within.get('ratio', float('nan')):.3f}"
                  f" (95 % CI {within.get('ci95')}), {within['pairs']} pairs: "
                  f"{within['verdict']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
