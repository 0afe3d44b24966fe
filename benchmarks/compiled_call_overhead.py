"""What a compiled model costs the host per training step, beside the kernels it launches.

The what-if prices `torch.compile(model, mode="reduce-overhead")` on a launch-bound step: the
graphed launches vanish, but each call into the compiled model still runs Dynamo's guards,
AOTAutograd's wrappers and the CUDA-graph tree's bookkeeping, forward and backward. This
script measures that floor on the GPU at hand: a step so small that the GPU is idle most of it
(an MLP of `--layers` tiny Linear layers, forward + backward, no optimizer), timed eager, with
`torch.compile` and with `mode="reduce-overhead"`, each as the median of interleaved blocks;
it prints each mode's step at each depth and, fitted over the depths, its step at zero layers:
the floor the what-if adds per compiled call (advice/thresholds.py COMPILED_GRAPHS_CALL_US).

    python benchmarks/compiled_call_overhead.py [--layers 8 16 32] [--steps 200] [--json F]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time


def _model(torch, layers: int):  # noqa: ANN001, ANN202 - torch is imported by main()
    blocks = []
    for _ in range(layers):
        blocks += [torch.nn.Linear(64, 64), torch.nn.ReLU()]
    return torch.nn.Sequential(*blocks).cuda()


def _step_ms(torch, model, x, steps: int) -> float:  # noqa: ANN001
    """Median ms per step over `steps` (forward + backward, grads dropped each step)."""
    times = []
    torch.cuda.synchronize()
    for _ in range(steps):
        t0 = time.perf_counter()
        for p in model.parameters():
            p.grad = None
        model(x).sum().backward()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def measure(layers: int, steps: int) -> dict[str, float]:
    """Eager, compiled and reduce-overhead steps of one MLP depth, in paired rounds."""
    import torch

    torch.manual_seed(0)
    x = torch.randn(32, 64, device="cuda", requires_grad=False)
    eager = _model(torch, layers)
    default = torch.compile(_model(torch, layers))
    graphs = torch.compile(_model(torch, layers), mode="reduce-overhead")
    for m in (eager, default, graphs):  # compile and record the graphs
        _step_ms(torch, m, x, 10)
    rounds: dict[str, list[float]] = {"eager": [], "compile": [], "reduce-overhead": []}
    for _ in range(5):
        for name, m in (("eager", eager), ("compile", default), ("reduce-overhead", graphs)):
            rounds[name].append(_step_ms(torch, m, x, steps // 5))
    return {"layers": layers,
            **{name: round(statistics.median(v), 4) for name, v in rounds.items()}}


def floor_ms(rows: list[dict[str, float]], mode: str) -> float:
    """A mode's step time at zero layers: the intercept of a least-squares line over depths
    (what a call costs whatever the model launches)."""
    xs, ys = [r["layers"] for r in rows], [r[mode] for r in rows]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = (sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
             / sum((x - mx) ** 2 for x in xs))
    return my - slope * mx


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", type=int, nargs="+", default=[8, 16, 32])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--json", default=None)
    a = p.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print("compiled_call_overhead: needs a CUDA GPU")
        return 2
    rows = [measure(n, a.steps) for n in a.layers]
    print(f"{'layers':>6} {'eager ms':>9} {'compile ms':>11} {'graphs ms':>10}")
    for r in rows:
        print(f"{r['layers']:>6} {r['eager']:>9.3f} {r['compile']:>11.3f} "
              f"{r['reduce-overhead']:>10.3f}")
    floors = {m: round(floor_ms(rows, m), 3) for m in ("eager", "compile", "reduce-overhead")}
    print("at zero layers (ms): " + ", ".join(f"{m} {v:.3f}" for m, v in floors.items()))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
                       "rows": rows, "floor_ms": floors}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
