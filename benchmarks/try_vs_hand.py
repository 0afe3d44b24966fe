"""Does `--try` measure what the hand-applied fix gives? The same fix timed four ways, in turn.

For one workload of bench_whatif.py whose fix `--try` applies (hf_bert: tf32, hf_gpt2: amp), in
rounds (each block WARMUP then STEPS steps, CUDA events at the step boundaries):
  hand     the hand-fixed variant (whatif_workloads.py)
  flags    the original step with the fix applied once around the block, no try machinery
  try      `run_tries` (tries/notebook.py) with its NVML condition sampler
  try-nos  `run_tries` with a sampler that samples nothing
and a block of the original. Prints each way's median per round and over all rounds, and
the ratios to the hand fix: where they differ, the rows say which part of the try causes it.

    python benchmarks/try_vs_hand.py --name hf_bert [--rounds 5] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

WARMUP, STEPS = 5, 12


class _NoSampler:
    """A condition sampler that samples nothing (isolates the sampler thread's cost)."""

    def start(self) -> _NoSampler:
        """Nothing to start."""
        return self

    def stop(self) -> dict:
        """No samples."""
        return {"available": False}


def _block(step) -> list[float]:
    """Warm-up, then STEPS steps timed by CUDA events."""
    import torch
    from capture_workloads import baseline_ms

    for _ in range(WARMUP):
        step()
    torch.cuda.synchronize()
    return baseline_ms(step, STEPS, True)[0]


@contextlib.contextmanager
def _flags(fix: str, ns: dict, step):
    """The fix applied by the try's own `applied()`, without its state copies or sampler."""
    from jupyter_gpuprof.tries.notebook import KernelState, applied

    state = KernelState.capture(ns)
    try:
        with applied(fix, ns, step, True) as fixed:
            yield fixed
    finally:
        state.restore()


def main() -> int:
    """The rounds, then the table."""
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--name", default="hf_bert")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    from bench_whatif import CASES, _build

    from jupyter_gpuprof.tries.notebook import run_tries

    fix = CASES[args.name][1]
    if not fix:
        raise SystemExit(f"{args.name}: no fix --try applies automatically")
    w, ns = _build(args.name, False)
    hand, _ = _build(args.name, True)
    ways: dict[str, list[list[float]]] = {k: [] for k in
                                         ("original", "hand", "flags", "try", "try-nos")}
    for r in range(args.rounds):
        ways["original"].append(_block(w.step))
        ways["hand"].append(_block(hand.step))
        with _flags(fix, ns, w.step) as fixed:
            ways["flags"].append(_block(fixed))
        (t,) = run_tries(w.step, ns, [fix], warmup=WARMUP, steps=STEPS,
                         control=False).tries
        ways["try"].append(t.get("step_ms") or [float("nan")])
        (t,) = run_tries(w.step, ns, [fix], warmup=WARMUP, steps=STEPS, sampler=_NoSampler,
                         control=False).tries
        ways["try-nos"].append(t.get("step_ms") or [float("nan")])
        print(f"round {r}: " + ", ".join(f"{k} {statistics.median(v[-1]):.2f}"
                                         for k, v in ways.items()), flush=True)
    med = {k: statistics.median([x for b in v for x in b]) for k, v in ways.items()}
    print(f"\n{args.name} ({fix}), medians over {args.rounds} rounds of {STEPS} steps")
    for k, m in med.items():
        print(f"  {k:8s} {m:8.2f} ms  {100 * (m / med['hand'] - 1):+6.1f} % vs hand")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"name": args.name, "fix": fix, "ways": ways, "median_ms": med}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
