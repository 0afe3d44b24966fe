"""Does the what-if model predict what the fix really saves? One table over known workloads.

For each workload (workloads.py, whatif_workloads.py), in its own subprocess:
1. build it, warm up, time an unprofiled baseline (CUDA events at step boundaries);
2. profile 8 steps (wait 1, warm-up 2, active 5), analyse the trace reconciled with the
   baseline: the verdict, and the predicted gain of the finding of the workload's true category;
3. where the fix needs no code change, `--try` it (tries/notebook.py) on the same step;
4. build the hand-fixed variant beside the original, warm both up, and time them in
   alternation (A B A B A B A B, 12 steps each, then B try B try B, then A B A B A B A B
   again; GPU conditions sampled by NVML): the measured gain is 1 - the median over the 8 rounds of
   median(fixed block) / median(original block beside it), and the report is reconciled with
   the original's median over all its blocks (the host of these machines drifts by tens of
   percent between minutes, and can switch speed within one; pairing cancels it).

    python benchmarks/bench_whatif.py --json OUT.json            # all, about 4-6 minutes
    python benchmarks/bench_whatif.py --only sync_launch,hf_gpt2
"""

from __future__ import annotations

import argparse
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
    "precision": ("precision", None),
    "compute": ("compute", None), "memory": ("memory", None), "transfer": ("transfer", None),
    "host": ("host", None), "sync_launch": ("sync", None), "hf_gpt2": ("precision", "amp"),
    "hf_bert": ("precision", "tf32"), "llama": ("launch", "graphs"),
}
WARMUP, STEPS = 5, 12
ROUNDS = 4  # alternations of original and fixed, twice (before and after the try)
TRY_ROUNDS = 2  # tries, each between two blocks of the hand fix


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


def _keep(keep: str, out: dict, trace: str, base: list[float]) -> None:
    """The workload's trace and step times as a run folder (the shape capture_workloads.py
    writes), so the model can be re-checked offline: whatif_offline.py --dir KEEP."""
    from capture_workloads import env_info, write_meta, write_trace_gz

    folder = os.path.join(keep, out["name"])
    os.makedirs(folder, exist_ok=True)
    write_trace_gz(trace, os.path.join(folder, "trace.json.gz"), f"{out['name']}.pt.trace.json")
    write_meta(folder, {
        "name": out["name"], "true_category": out["category"], **env_info(),
        "step_ms_median_unprofiled": out["baseline_ms"], "step_ms_all": base,
        "host_probe_ms": out.get("host_probe_ms"),
        "step_timing": f"cuda_event, interleaved with the fixed variant ({ROUNDS} rounds)",
        "capture_script": "benchmarks/bench_whatif.py",
        "fixed_variant": {"fix": out.get("fix"), "step_ms_median_unprofiled": out.get("fixed_ms")},
        "try": out.get("try"), "conditions": out.get("conditions")})


def _ab(step_a, step_b, probes: list[float], ratios: list[float],
        rounds: int = ROUNDS) -> tuple[list[float], list[float]]:
    """Both variants timed in alternation (A B A B …, STEPS each after two warm steps), so a
    drift of the host's or the GPU's speed over the run falls on both sides alike. Each round
    also probes A's host time: one step issued from an empty GPU queue (as the magic does in
    its warm-up), appended to `probes`."""
    import statistics

    import torch
    from capture_workloads import baseline_ms

    a: list[float] = []
    b: list[float] = []
    for _ in range(rounds):
        for fn, into in ((step_a, a), (step_b, b)):
            fn()
            torch.cuda.synchronize()
            if fn is step_a:
                t0 = time.perf_counter()
                fn()
                probes.append((time.perf_counter() - t0) * 1e3)
            else:
                fn()
            torch.cuda.synchronize()
            into += baseline_ms(fn, STEPS, True)[0]
        ratios.append(statistics.median(b[-STEPS:]) / statistics.median(a[-STEPS:]))
    return a, b


def one(name: str, keep: str | None = None) -> dict:
    """Every figure of one workload (runs in its own process)."""
    import statistics

    from jupyter_gpuprof.advice.whatif import predictions_for
    from jupyter_gpuprof.capture.conditions import ConditionSampler
    from jupyter_gpuprof.report import analyze_trace
    from jupyter_gpuprof.tries.notebook import run_tries

    category, auto = CASES[name]
    t0 = time.perf_counter()
    w, ns = _build(name, False)
    first = _timed(w.step)
    out: dict = {"name": name, "category": category, "first_baseline_ms": statistics.median(first)}
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        _profile(w.step, trace)
        try:
            fw, _ = _build(name, True)
            for _ in range(WARMUP):
                fw.step()
        except NotImplementedError as e:
            fw = None
            out.update(fix=None, reason=str(e))
        sampler = ConditionSampler().start()
        # original and fix in alternation; the try (where automatic) in the middle of them
        probes: list[float] = []
        ratios: list[float] = []  # fixed / original, block beside block
        base, fixed = _ab(w.step, fw.step, probes, ratios) if fw else (_timed(w.step), [])
        if auto:
            # the try twice, the hand fix right before, between and after: the same host speed
            # on both sides (these hosts switch between two speeds from one block to the next)
            adjacent = _timed(fw.step) if fw else []
            tried: list[float] = []
            for _ in range(TRY_ROUNDS):
                (t,) = run_tries(w.step, ns, [auto], warmup=WARMUP, steps=STEPS,
                                 control=False).tries
                tried += t.get("step_ms") or []
                adjacent += _timed(fw.step) if fw else []
            out["try"] = {"fix": auto, "median_ms": statistics.median(tried) if tried else None,
                          "error": t.get("error"), "loss_rel_diff": t.get("loss_rel_diff"),
                          "hand_adjacent_ms": statistics.median(adjacent) if adjacent else None}
        if fw:
            b2, f2 = _ab(w.step, fw.step, probes, ratios)
            base, fixed = base + b2, fixed + f2
        out["conditions"] = sampler.stop()
        out["baseline_ms"] = statistics.median(base)
        # the report reconciled with the baseline measured beside the fix
        out["host_probe_ms"] = statistics.median(probes) if probes else None
        report = analyze_trace(trace, base, host_probe_ms=out["host_probe_ms"])
        if fw:
            out["fix"] = fw.fix
            out["fixed_ms"] = statistics.median(fixed)
            # paired: each fixed block against the original block beside it, so a change of
            # host speed between rounds (these hosts switch between two speeds) cancels out
            out["measured_gain_pct"] = round(100 * (1 - statistics.median(ratios)), 1)
            out["pooled_gain_pct"] = round(100 * (1 - out["fixed_ms"] / out["baseline_ms"]), 1)
            out["block_ratios"] = [round(x, 4) for x in ratios]
        a = report.analysis
        preds = predictions_for(a)
        out.update(
            verdict=report.verdict.category,
            predicted={k: round(v.gain_pct, 1) for k, v in preds.items()},
            predicted_gain_pct=round(preds[category].gain_pct, 1) if category in preds else None,
            top_finding=report.advice.findings[0].category if report.advice.findings else None,
            driver=next((f.driver for f in report.advice.findings if f.category == category), ""))
        tm = (out.get("try") or {}).get("median_ms")
        if tm:
            out["try"]["gain_pct"] = round(100 * (1 - tm / out["baseline_ms"]), 1)
            if out.get("fixed_ms"):
                out["try"]["vs_hand_pct"] = round(100 * (tm / out["fixed_ms"] - 1), 1)
            if (adj := out["try"].get("hand_adjacent_ms")):
                out["try"]["vs_adjacent_hand_pct"] = round(100 * (tm / adj - 1), 1)
                hand_gain = 100 * (1 - adj / out["baseline_ms"])
                out["try"]["hand_adjacent_gain_pct"] = round(hand_gain, 1)
                # the measure: the try's gain against the hand fix's, relative
                out["try"]["gain_vs_hand_pct"] = round(
                    100 * (out["try"]["gain_pct"] / hand_gain - 1), 1)
        out["seconds"] = round(time.perf_counter() - t0, 1)
        if keep:
            _keep(keep, out, trace, base)
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
        hand = t.get("hand_adjacent_gain_pct")
        tr = (f"{t['fix']} {t['gain_pct']:.1f} %"
              + (f" (the hand fix beside it: {hand:.1f} %, {t['gain_vs_hand_pct']:+.1f} %)"
                 if hand is not None else "")
              if t.get("gain_pct") is not None
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
    ap.add_argument("--keep", default=None,
                    help="write each workload's trace and step times under KEEP/<name>/")
    args = ap.parse_args()
    if args.one:
        print("RESULT " + json.dumps(one(args.one, args.keep)), flush=True)
        return 0
    rows, t0 = [], time.perf_counter()
    for name in args.only.split(","):
        left = args.budget_s - (time.perf_counter() - t0)
        if left < 20:
            rows.append({"name": name, "error": "skipped: time budget spent"})
            continue
        try:
            keep = ["--keep", args.keep] if args.keep else []
            p = subprocess.run([sys.executable, __file__, "--one", name, *keep],
                               capture_output=True, text=True, timeout=min(200.0, left))
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
