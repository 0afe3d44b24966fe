"""Does the what-if model predict what the fix really saves? One table over known workloads.

For each workload (workloads.py, whatif_workloads.py), in its own subprocess:
1. build it, warm up, time an unprofiled baseline (CUDA events at step boundaries);
2. profile 8 steps (wait 1, warm-up 2, active 5), analyse the trace reconciled with the
   baseline: the verdict, and the predicted gain of the finding of the workload's true category;
3. where the fix needs no code change, `--try` it (capture/try_fixes.py) on the same step;
4. build the hand-fixed variant, warm up, time it the same way: the measured gain.

    python benchmarks/bench_whatif.py --json OUT.json            # all, about 4-6 minutes
    python benchmarks/bench_whatif.py --only sync_launch,hf_gpt2
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

# name -> (true category, fix `--try` applies automatically or None)
CASES = {
    "input": ("input", None), "sync": ("sync", None), "launch": ("launch", None),
    "launch_graph": ("launch", None), "precision": ("precision", None),
    "compute": ("compute", None), "memory": ("memory", None), "transfer": ("transfer", None),
    "host": ("host", None), "sync_launch": ("sync", None), "hf_gpt2": ("precision", "amp"),
    "hf_bert": ("precision", "tf32"),
}
WARMUP, STEPS = 5, 20


def _build(name: str, fixed: bool):
    """A workload and its namespace (model, optimizer) by name."""
    import workloads
    from whatif_workloads import EXTRA

    if name in EXTRA:
        return EXTRA[name]("cuda", fixed=fixed)
    w = workloads.build(name, "cuda", fixed=fixed)
    return w, {}


def _timed(step) -> list[float]:
    """Unprofiled step times after a warm-up, as capture_workloads.py measures them."""
    import torch
    from capture_workloads import baseline_ms

    for _ in range(WARMUP):
        step()
    torch.cuda.synchronize()
    return baseline_ms(step, STEPS, True)[0]


def _profile(step, out: str) -> None:
    """8 steps under torch.profiler (wait 1, warm-up 2, active 5), trace written to `out`."""
    from torch.profiler import ProfilerActivity, profile, schedule

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=1, warmup=2, active=5), record_shapes=True,
                 on_trace_ready=lambda p: p.export_chrome_trace(out)) as prof:
        for _ in range(8):
            step()
            prof.step()


def one(name: str) -> dict:
    """Every figure of one workload (runs in its own process)."""
    import statistics

    import torch

    from jupyter_gpuprof.advice.whatif import predictions
    from jupyter_gpuprof.capture.try_fixes import run_tries
    from jupyter_gpuprof.report import analyze_trace

    category, auto = CASES[name]
    t0 = time.perf_counter()
    w, ns = _build(name, False)
    base = _timed(w.step)
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        _profile(w.step, trace)
        report = analyze_trace(trace, base)
    a = report.analysis
    preds = {k: round(v.gain_pct, 1) for k, v in predictions(a.graph, a.real.step_ms).items()}
    top = report.advice.findings[0] if report.advice.findings else None
    out = {"name": name, "category": category, "verdict": report.verdict.category,
           "baseline_ms": statistics.median(base), "predicted": preds,
           "predicted_gain_pct": preds.get(category),
           "top_finding": top.category if top else None,
           "driver": next((f.driver for f in report.advice.findings
                           if f.category == category), "")}
    if auto:
        (t,) = run_tries(w.step, ns, [auto], warmup=WARMUP, steps=STEPS)
        out["try"] = {"fix": auto, "median_ms": t.get("median_ms"), "error": t.get("error"),
                      "loss_rel_diff": t.get("loss_rel_diff")}
    del w, ns
    gc.collect()
    torch.cuda.empty_cache()
    try:
        fw, _ = _build(name, True)
        fixed = _timed(fw.step)
        out["fix"] = fw.fix
        out["fixed_ms"] = statistics.median(fixed)
        out["measured_gain_pct"] = round(100 * (1 - out["fixed_ms"] / out["baseline_ms"]), 1)
    except NotImplementedError as e:
        out["fix"] = None
        out["reason"] = str(e)
    if out.get("try", {}).get("median_ms") and out.get("fixed_ms"):
        tg = 100 * (1 - out["try"]["median_ms"] / out["baseline_ms"])
        out["try"]["gain_pct"] = round(tg, 1)
    out["seconds"] = round(time.perf_counter() - t0, 1)
    return out


def table(rows: list[dict]) -> str:
    """The markdown table docs/benchmarks.md shows."""
    lines = ["| workload | verdict | predicted | measured | error | --try measured |",
             "|---|---|---|---|---|---|"]
    errs = []
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['name']} | failed: {r['error'][:60]} | | | | |")
            continue
        pred, meas = r.get("predicted_gain_pct"), r.get("measured_gain_pct")
        err = round(pred - meas, 1) if pred is not None and meas is not None else None
        if err is not None:
            errs.append(abs(err))
        t = r.get("try") or {}
        tr = (f"{t['fix']} {t['gain_pct']:.1f} %" if t.get("gain_pct") is not None
              else (f"{t['fix']}: {t['error']}" if t.get("error") else ""))
        lines.append(f"| {r['name']} ({r['category']}) | {r['verdict']} | "
                     f"{'' if pred is None else f'{pred:.1f} %'} | "
                     f"{'' if meas is None else f'{meas:.1f} %'} | "
                     f"{'' if err is None else f'{err:+.1f}'} | {tr} |")
    if errs:
        lines.append(f"\nmean |error| {sum(errs) / len(errs):.1f} points over {len(errs)} "
                     f"workloads, max {max(errs):.1f}")
    return "\n".join(lines)


def main() -> int:
    """Every workload in its own process, then the table."""
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default=",".join(CASES))
    ap.add_argument("--json", default=None)
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--budget-s", type=float, default=450.0)
    args = ap.parse_args()
    if args.one:
        print("RESULT " + json.dumps(one(args.one)), flush=True)
        return 0
    rows, t0 = [], time.perf_counter()
    for name in args.only.split(","):
        left = args.budget_s - (time.perf_counter() - t0)
        if left < 20:
            rows.append({"name": name, "error": "skipped: time budget spent"})
            continue
        try:
            p = subprocess.run([sys.executable, __file__, "--one", name], capture_output=True,
                               text=True, timeout=min(150.0, left))
            got = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
            rows.append(json.loads(got[-1][7:]) if got else
                        {"name": name, "error": (p.stderr.strip().splitlines() or ["?"])[-1]})
        except subprocess.TimeoutExpired:
            rows.append({"name": name, "error": "timed out"})
        print(json.dumps(rows[-1]), flush=True)
    print(table(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
