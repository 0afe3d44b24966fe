"""A/A check of the notebook's tries: how often a fix that changes nothing reads "significant".

Each round is what `%%gpuprofile --try` does for one fix, in this process: `run_tries`
(tries/notebook.py) measures the control (the step again, no fix) and then one try whose
"fix" is the identity (defined here, not in the package: the step is handed back as it is),
both from the same restored state with the same warm-up and step count, and `judge_tries`
(advice/tries.py) judges the try against the control, exactly as a real try is. Every
"significant" verdict is a false one. Rounds are independent (each has its own control).

    PYTHONPATH=. python benchmarks/bench_aa.py --out aa.json [--tries 100] [--device cuda]

Prints one line per ten rounds on stderr, then the count and rate of false "significant"
verdicts, the distribution of measured gains, and one JSON object (also written to --out).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterator

import numpy as np
import torch

from jupyter_gpuprof.advice.tries import judge_tries
from jupyter_gpuprof.analysis.compare import step_change
from jupyter_gpuprof.capture import options
from jupyter_gpuprof.tries.notebook import run_tries

PERCENTILES = (0, 1, 5, 25, 50, 75, 95, 99, 100)


@contextlib.contextmanager
def identity(fix: str, ns: dict[str, object], step: Callable[[], object],
             cuda: bool) -> Iterator[Callable[[], object]]:
    """The no-op fix: the step exactly as it is (nothing rebound, no flag flipped)."""
    yield step


def kernel(device: str, width: int, batch: int) -> tuple[dict[str, object], Callable[[], object]]:
    """A small training step as a notebook cell would hold it: MLP, Adam, a fresh batch."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.GELU(),
                                torch.nn.Linear(4 * width, width), torch.nn.GELU(),
                                torch.nn.Linear(width, 10)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    ns: dict[str, object] = {"torch": torch, "model": model, "opt": opt}
    code = compile(
        f"x = torch.randn({batch}, {width}, device='{device}')\n"
        f"y = torch.randint(0, 10, ({batch},), device='{device}')\n"
        "loss = torch.nn.functional.cross_entropy(model(x), y)\n"
        "loss.backward()\nopt.step()\nopt.zero_grad(set_to_none=True)\n", "<cell>", "exec")

    def step() -> None:
        exec(code, ns)

    for _ in range(5):  # the baseline ran before the tries: optimizer state exists
        step()
    return ns, step


def binomial_upper(k: int, n: int, confidence: float = 0.95) -> float:
    """Clopper-Pearson one-sided upper bound of a rate seen k times in n (by bisection)."""
    from math import comb

    def cdf(p: float) -> float:
        return sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))

    lo, hi = k / n, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) > 1 - confidence else (lo, mid)
    return hi


def main() -> int:
    """The rounds, the count, the JSON."""
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="where the JSON goes")
    ap.add_argument("--tries", type=int, default=100, help="no-op tries, each with its control")
    ap.add_argument("--steps", type=int, default=options.STEPS, help="timed steps per try")
    ap.add_argument("--warmup", type=int, default=options.WARMUP, help="warm-up steps per try")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()
    if args.device == "cuda":
        torch.cuda.init()  # the tries time by CUDA events once this process uses CUDA
    ns, step = kernel(args.device, args.width, args.batch)
    rounds = []
    t0 = time.perf_counter()
    for i in range(args.tries):
        control, raw = run_tries(step, ns, ["noop"], warmup=args.warmup, steps=args.steps,
                                 apply=identity)
        (t,) = judge_tries(raw, [], None, [], control)
        ch = t.get("change") or {}
        rounds.append({"control_median_ms": (control or {}).get("median_ms"),
                       "try_median_ms": t.get("median_ms"), "timing": t.get("timing"),
                       "error": t.get("error") or (control or {}).get("error"),
                       "reference": t.get("reference"),
                       "gain_pct": t.get("measured_gain_pct"),
                       "ci_low_pct": ch.get("ci_low_pct"), "ci_high_pct": ch.get("ci_high_pct"),
                       "p_value": ch.get("p_value"), "rounds_p_value": ch.get("rounds_p_value"),
                       "verdict": ch.get("verdict"), "significant": bool(ch.get("significant")),
                       # the same samples by the step-level tests alone (the rule before rounds)
                       "significant_steps_only": bool(step_change(
                           (control or {}).get("step_ms"), t.get("step_ms"))["significant"])})
        if (i + 1) % 10 == 0:
            done = rounds[-10:]
            print(f"{i + 1}/{args.tries}: {sum(r['significant'] for r in rounds)} significant; "
                  f"last ten gains " + " ".join(f"{r['gain_pct']:+.1f}" for r in done
                                                if r["gain_pct"] is not None),
                  file=sys.stderr, flush=True)
    judged = [r for r in rounds if r["gain_pct"] is not None and r["reference"] == "none"]
    k = sum(r["significant"] for r in judged)
    gains = np.array([r["gain_pct"] for r in judged], dtype=float)
    widths = [r["ci_high_pct"] - r["ci_low_pct"] for r in judged
              if r["ci_high_pct"] is not None and r["ci_low_pct"] is not None]
    summary = {
        "tries": args.tries, "judged": len(judged), "significant": k,
        "significant_steps_only": sum(r["significant_steps_only"] for r in judged),
        "rate": k / len(judged) if judged else None,
        "rate_upper_95": binomial_upper(k, len(judged)) if judged else None,
        "verdicts": {v: sum(r["verdict"] == v for r in judged)
                     for v in sorted({str(r["verdict"]) for r in judged})},
        "gain_pct_percentiles": ({str(q): float(np.percentile(gains, q)) for q in PERCENTILES}
                                 if len(gains) else {}),
        "gain_pct_abs_mean": float(np.abs(gains).mean()) if len(gains) else None,
        "ci_width_pct_median": statistics.median(widths) if widths else None,
        "step_ms_median": statistics.median(r["control_median_ms"] for r in judged)
        if judged else None,
    }
    out = {"bench": "aa", "device": args.device,
           "gpu": torch.cuda.get_device_name() if args.device == "cuda" else None,
           "host": platform.processor() or platform.machine(), "torch": torch.__version__,
           "threads": torch.get_num_threads(), "steps": args.steps, "warmup": args.warmup,
           "width": args.width, "batch": args.batch,
           "seconds": round(time.perf_counter() - t0, 1), "summary": summary, "rounds": rounds}
    pct = summary["gain_pct_percentiles"]
    print(f"A/A on {args.device}: {k} of {len(judged)} no-op tries read significant "
          f"({summary['significant_steps_only']} by the step-level tests alone) "
          f"(rate {summary['rate']}, 95 % upper bound {summary['rate_upper_95']:.3f}); "
          f"gains % min {pct.get('0', 0):+.2f} p5 {pct.get('5', 0):+.2f} "
          f"median {pct.get('50', 0):+.2f} p95 {pct.get('95', 0):+.2f} "
          f"max {pct.get('100', 0):+.2f}", file=sys.stderr)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
