"""The capture's cost on a host-bound step, measured inside one process (its own state held).

    python benchmarks/bench_observer_within.py [--processes 4] [--steps 300] [--json OUT]

Between processes a host-bound step's speed moves by more than the 3 % observer bar (the word
LM's processes run at about 4.1 or 6.1 ms a batch on the H200, 0.62 or 0.93 ms for this loop on
a CPU: docs/benchmarks.md §21), so pairs of processes cannot judge 3 % without ~70 of them. Here
each process times the same loop (an LSTM language model updated by hand, like the word LM, on
the GPU when there is one) before and inside `jupyter_gpuprof.profile()`: its steps before the
capture (A) against the capture's baseline steps (B), the same process's speed on both sides.
Control processes run the same blocks with no capture; the capture's cost is B/A under the
capture over B/A in the controls (medians of per-step times, processes alternating). Prints each
process's ratio and the geometric mean with its 95 % t interval.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "corpus"))
from observer_concurrent import pooled  # noqa: E402 - the pairs' geometric mean and interval


def _loop(device: str) -> Any:
    """One step of the loop (returns its wall time in ms): forward, backward, update, `.item()`."""
    import torch
    from torch import nn

    torch.manual_seed(0)
    if device == "cuda":  # the word LM's shape: 2 layers, 35 tokens x 20 sequences
        width, vocab, layers, (seq, batch) = 256, 10000, 2, (35, 20)
    else:  # small and on one thread: a CPU step of ~0.6 ms that is steady within a process
        torch.set_num_threads(1)
        width, vocab, layers, (seq, batch) = 32, 1000, 1, (8, 4)
    emb, rnn = nn.Embedding(vocab, width).to(device), nn.LSTM(width, width, layers).to(device)
    dec = nn.Linear(width, vocab).to(device)
    params = [*emb.parameters(), *rnn.parameters(), *dec.parameters()]
    x = torch.randint(0, vocab, (seq, batch), device=device)
    y = torch.randint(0, vocab, (seq * batch,), device=device)

    def step() -> float:
        t0 = time.perf_counter()
        for p in params:
            p.grad = None
        out, _ = rnn(emb(x))
        loss = nn.functional.cross_entropy(dec(out).view(-1, vocab), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 0.25)
        with torch.no_grad():
            for p in params:
                p.add_(p.grad, alpha=-0.1)
        loss.item()
        return (time.perf_counter() - t0) * 1e3

    return step


def child(tool: bool, steps: int, runs_root: str) -> dict[str, float]:
    """One process: warm up, block A, then block B (the capture's baseline steps, or as many
    plain steps); the medians of its per-step times."""
    import torch

    step = _loop("cuda" if torch.cuda.is_available() else "cpu")
    for _ in range(200):
        step()
    before = [step() for _ in range(steps)]
    if tool:
        import jupyter_gpuprof

        timed: list[tuple[str, float]] = []
        with jupyter_gpuprof.profile(steps=steps, warmup=3, runs_root=runs_root) as session:
            while not session.driver.done and len(timed) < steps + 50:
                phase = str(session.driver.phase)
                timed.append((phase, step()))
        inside = [ms for phase, ms in timed if phase.endswith("BASELINE")][2:]
        from jupyter_gpuprof.capture.capture_cost import COST

        cost = COST.to_meta(None)  # the capture's own account of its hooks in this baseline
    else:
        inside, cost = [step() for _ in range(steps)], None
    a, b = statistics.median(before), statistics.median(inside)
    return {"before_ms": a, "inside_ms": b, "ratio": b / a, "n": len(inside),
            **({"capture_cost": dict(cost)} if cost else {})}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--processes", type=int, default=4, help="processes of each kind")
    ap.add_argument("--steps", type=int, default=300, help="steps in each block")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--child", choices=["tool", "plain"], help=argparse.SUPPRESS)
    ap.add_argument("--runs-root", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child == "tool", args.steps, args.runs_root)))
        return 0
    if args.processes < 2:
        ap.error("--processes: at least 2 of each kind (an interval needs two)")
    rows: dict[str, list[dict[str, float]]] = {"tool": [], "plain": []}
    with tempfile.TemporaryDirectory() as runs:
        for i in range(args.processes):
            for kind in ("tool", "plain") if i % 2 == 0 else ("plain", "tool"):
                out = subprocess.run(
                    [sys.executable, __file__, "--child", kind, "--steps", str(args.steps),
                     "--runs-root", runs], capture_output=True, text=True, check=True)
                row = json.loads(out.stdout.strip().splitlines()[-1])
                rows[kind].append(row)
                print(f"{kind:5} process {i}: before {row['before_ms']:.4f} ms, inside "
                      f"{row['inside_ms']:.4f} ms, inside/before {row['ratio']:.4f}", flush=True)
    tool = pooled([r["ratio"] for r in rows["tool"]])
    plain = pooled([r["ratio"] for r in rows["plain"]])
    cost = tool["ratio"] / plain["ratio"]
    print(f"inside/before: under the capture x{tool['ratio']:.4f} {tool.get('ci95')}, "
          f"controls x{plain['ratio']:.4f} {plain.get('ci95')}; the capture's cost "
          f"x{cost:.4f} (bar: within 3 %)")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "tool": tool, "plain": plain,
                                         "cost": cost}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
