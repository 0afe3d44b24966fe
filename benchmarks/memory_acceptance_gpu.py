"""Issue 26's acceptance on one GPU: the peak explained, the fixes priced and measured, the OOM.

    python benchmarks/memory_acceptance_gpu.py OUTDIR [--parts A,B,C] [--corpus .corpus]
        [--fixes checkpointing,autocast] [--scripts nanogpt-fp32]   (part C: only these)
    python benchmarks/memory_acceptance_gpu.py OUTDIR --quick      (CPU: tiny models, no CUDA)

A (GPT-2 and a Llama-style model, random tokens, AdamW): the step under the real capture path
(the report's kinds at the peak and its priced fixes) against the same step's
`max_memory_allocated` in a plain run (the bar: within 5 %); the allocator history's cost on the
steps it runs in (interleaved blocks, medians: under 10 %) and the report's baseline step
with the history on and off; each priced fix applied by hand in a plain run: predicted against
measured saving (the bar: within 10 %) and time. B: a batch too large for a memory cap under the
capture: the post-mortem (top 3 allocations, lines, the recommended fix), then that fix by hand
under the same cap. C (`memory_acceptance_corpus.py`): two scripts of the real-script corpus.
Each measurement runs in its own process (`memory_acceptance_workers.py`). Writes
OUTDIR/memory_acceptance.json (raw; `--parts A`: memory_acceptance_A.json…) and prints the tables.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_analyze_vs_hta import write_json  # noqa: E402 - the benchmarks' one JSON writer

#: the bars of the acceptance (percent)
PEAK_BAR_PCT, SAVING_BAR_PCT, OVERHEAD_BAR_PCT = 5.0, 10.0, 10.0
#: the models of part A: their batch, and whether the step zeroes its gradients (set_to_none
#: False: the gradients stay alive through the next forward, the set_to_none fix's case)
MODELS = {"gpt2": {"batch": 8, "set_to_none": True},
          "llama": {"batch": 8, "set_to_none": False}}
QUICK_SPEC = {"batch": 2, "seq": 32, "quick": True}
#: part B: the cap (bytes) and a batch the GPT-2 cannot fit under it
OOM_CAP_BYTES, OOM_BATCH = 8 * 1024**3, 16
FIX_IDS = ("checkpointing", "autocast", "micro_batches", "set_to_none", "expandable_segments")
#: measured whether the report offers them or not (the others only when offered: time budget)
ALWAYS = ("checkpointing", "autocast", "micro_batches")
WORKER_TIMEOUT_S = 180
GB = 1e9


def error_pct(predicted: float | None, measured: float | None) -> float | None:
    """(predicted − measured) / measured, in percent; None without both or a measured 0."""
    if predicted is None or measured is None or measured == 0:
        return None
    return (predicted - measured) / abs(measured) * 100


def split_k(fix: dict[str, Any]) -> int:
    """The micro-batches a micro-batch fix names ("4 micro-batches with …")."""
    m = re.match(r"(\d+) micro-batches", fix.get("title", ""))
    if not m:
        raise ValueError(f"no micro-batch count in {fix.get('title')!r}")
    return int(m.group(1))


def variant_spec(base: dict[str, Any], fix_id: str, k: int = 2) -> tuple[dict[str, Any], str]:
    """The plain step's spec and PYTORCH_CUDA_ALLOC_CONF with one fix applied by hand."""
    spec = dict(base)
    if fix_id == "checkpointing":
        spec["checkpointing"] = True
    elif fix_id == "autocast":
        spec["autocast"] = True
    elif fix_id == "micro_batches":
        spec["micro_batches"] = k
    elif fix_id == "set_to_none":
        spec["set_to_none"] = True
    elif fix_id != "expandable_segments":
        raise ValueError(f"unknown fix {fix_id}")
    return spec, "expandable_segments:True" if fix_id == "expandable_segments" else ""


def kinds_at_peak(memory: dict[str, Any] | None) -> dict[str, int]:
    over = (memory or {}).get("over_step") or {}
    return {k["kind"]: k["bytes_at_peak"] for k in over.get("kinds") or []}


def peak_row(model: dict[str, Any]) -> dict[str, Any]:
    """The report's kinds at the peak (summed) against the plain run's max_memory_allocated."""
    kinds = kinds_at_peak(model["capture"].get("memory"))
    total = sum(kinds.values()) if kinds else None
    truth = model["plain"].get("max_memory_allocated")
    err = error_pct(total, truth)
    return {"kinds": kinds, "kinds_sum": total, "plain_max_allocated": truth,
            "capture_max_allocated": model["capture"].get("meta_max_memory_allocated"),
            "error_pct": err, "ok": err is not None and abs(err) <= PEAK_BAR_PCT}


def fix_rows(model: dict[str, Any]) -> list[dict[str, Any]]:
    """Each fix: the report's predicted saving and time against the plain runs' measured ones
    (expandable segments frees reserved memory: measured on max_memory_reserved)."""
    base = model["plain"]
    fixes = {f["id"]: f for f in ((model["capture"].get("memory") or {}).get("over_step")
                                  or {}).get("fixes") or []}
    rows = []
    for fix_id, run in model["fixes"].items():
        f = fixes.get(fix_id)
        key = "max_memory_reserved" if fix_id == "expandable_segments" else "max_memory_allocated"
        measured = (base[key] - run[key]) if run.get(key) is not None and base.get(key) else None
        predicted = f["saves_bytes"] if f else None
        err = error_pct(predicted, measured)
        dt = (run["median_ms"] - base["median_ms"]
              if "median_ms" in run and "median_ms" in base else None)
        rows.append({"fix": fix_id, "title": f["title"] if f else "(not offered)",
                     "predicted_bytes": predicted, "measured_bytes": measured,
                     "error_pct": err, "ok": err is not None and abs(err) <= SAVING_BAR_PCT,
                     "predicted_ms": f["time_ms"] if f else None, "measured_ms": dt,
                     "oom": run.get("oom") or run.get("failed")})
    return rows


def overhead_row(model: dict[str, Any]) -> dict[str, Any]:
    """The history's cost on the steps it runs in, and the report's baseline with it on/off."""
    h = model["plain"].get("history") or {}
    import statistics

    on = statistics.median(h["on_ms"]) if h.get("on_ms") else None
    off = statistics.median(h["off_ms"]) if h.get("off_ms") else None
    pct = error_pct(on, off)
    steps = [((model.get(k) or {}).get("steps") or {}).get("median_ms")
             for k in ("capture", "capture_off")]
    return {"on_ms": on, "off_ms": off, "overhead_pct": pct,
            "ok": bool(h.get("recorded")) and pct is not None and pct < OVERHEAD_BAR_PCT,
            "recorded": h.get("recorded"),
            "baseline_with_ms": steps[0], "baseline_without_ms": steps[1],
            "baseline_pct": error_pct(steps[0], steps[1])}


def _overhead_word(o: dict[str, Any]) -> str:
    if not o["recorded"]:
        return "no history recorded: no CUDA"
    return "ok" if o["ok"] else "OVER 10 %"


def _gb(b: float | None) -> str:
    return "—" if b is None else f"{b / GB:.3f}"


def _pct(p: float | None) -> str:
    return "—" if p is None else f"{p:+.1f} %"


def _ms(v: float | None) -> str:
    return "—" if v is None else f"{v:+.1f}"


def table(results: dict[str, Any]) -> str:
    """The printed tables: per model the peak, the history's cost and each fix; the OOM."""
    out = []
    for name, model in (results.get("models") or {}).items():
        p = peak_row(model)
        out.append(f"== {name}: kinds at the peak {_gb(p['kinds_sum'])} GB vs plain "
                   f"max_memory_allocated {_gb(p['plain_max_allocated'])} GB: "
                   f"{_pct(p['error_pct'])} ({'ok' if p['ok'] else 'OVER 5 %'}); the run's own "
                   f"peak {_gb(p['capture_max_allocated'])} GB")
        out.extend(f"   {k}: {model[k]['failed']}" for k in ("capture", "capture_off", "plain")
                   if "failed" in model.get(k, {}))
        out.append("   " + ", ".join(f"{k} {_gb(v)}" for k, v in p["kinds"].items()))
        o = overhead_row(model)
        out.append(f"   history on {o['on_ms'] or 0:.1f} ms vs off {o['off_ms'] or 0:.1f} ms: "
                   f"{_pct(o['overhead_pct'])} ({_overhead_word(o)}); "
                   f"report baseline with/without the feature {o['baseline_with_ms']} / "
                   f"{o['baseline_without_ms']} ms ({_pct(o['baseline_pct'])})")
        out.append(f"   {'fix':20} {'pred GB':>8} {'meas GB':>8} {'error':>9} "
                   f"{'pred ms':>8} {'meas ms':>8}  offered as")
        for r in fix_rows(model):
            out.append(f"   {r['fix']:20} {_gb(r['predicted_bytes']):>8} "
                       f"{_gb(r['measured_bytes']):>8} {_pct(r['error_pct']):>9} "
                       f"{_ms(r['predicted_ms']):>8} {_ms(r['measured_ms']):>8}  {r['title']}"
                       + (f"  [{r['oom']}]" if r["oom"] else ""))
    if oom := results.get("oom"):
        out.append(oom_lines(oom))
    if corpus := results.get("corpus"):
        from memory_acceptance_corpus import corpus_lines

        out.extend(corpus_lines(corpus))
    return "\n".join(out)


def oom_lines(oom: dict[str, Any]) -> str:
    """Part B: the post-mortem as the cell printed it, and the recommended fix measured."""
    fixed = oom.get("fixed") or {}
    peak, cap = fixed.get("max_memory_allocated"), oom.get("cap_bytes")
    fits = peak is not None and cap is not None and peak < cap and not fixed.get("oom")
    return (f"== OOM (cap {_gb(cap)} GB, batch {oom.get('batch')}): the cell printed:\n"
            f"{(oom.get('capture') or {}).get('text') or '(nothing)'}\n"
            f"   recommended: {oom.get('fix_title') or '(none)'}; by hand under the same cap: "
            f"peak {_gb(peak)} GB, {'FITS' if fits else 'does NOT fit'}"
            + (f" ({fixed['oom']})" if fixed.get("oom") else "")
            + "".join(f"\n   {t['k']} micro-batches: "
                      + (f"peak {_gb(t['max_memory_allocated'])} GB, fits"
                         if t.get("max_memory_allocated") is not None else "does not fit")
                      for t in oom.get("larger_splits") or []))


def spawn(kind: str, args: dict[str, Any], alloc_conf: str = "") -> dict[str, Any]:
    """One worker in its own process; its JSON, or the one-line reason it gave none."""
    env = dict(os.environ)
    env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    if alloc_conf:
        env["PYTORCH_CUDA_ALLOC_CONF"] = alloc_conf
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        result = f.name
    try:
        proc = subprocess.run([sys.executable, str(HERE / "memory_acceptance_workers.py"), kind,
                               json.dumps(args), result], env=env, capture_output=True,
                              text=True, timeout=WORKER_TIMEOUT_S)
        if proc.returncode != 0:
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            return {"failed": f"{kind} exited {proc.returncode}: {tail}"}
        return json.loads(Path(result).read_text())
    except subprocess.TimeoutExpired:
        return {"failed": f"{kind} ran past {WORKER_TIMEOUT_S} s"}
    finally:
        Path(result).unlink(missing_ok=True)


def part_a(name: str, quick: bool, history_off: bool = True,
           runs: Path | None = None) -> dict[str, Any]:
    """One model: capture (history on; `history_off`: also off), the plain step with the
    history's cost, each fix (`ALWAYS`, and the others the report offers); the captures' run
    folders (their allocator histories: `memory_rescore.py` prices them again) under `runs`,
    the autocast variant's capture beside (the bf16 history, block by block against fp32)."""
    base = {"model": name, **MODELS[name], **(QUICK_SPEC if quick else {})}
    model: dict[str, Any] = {"spec": base}
    kept = {"runs_root": str(runs / name)} if runs else {}
    model["capture"] = spawn("capture", {"spec": base, **kept})
    if history_off:
        model["capture_off"] = spawn("capture", {"spec": base, "memory_history": False})
    model["plain"] = spawn("plain", {"spec": base, "overhead": True})
    offered = {f["id"]: f for f in ((model["capture"].get("memory") or {}).get("over_step")
                                    or {}).get("fixes") or []}
    model["fixes"] = {}
    for fix_id in (f for f in FIX_IDS if f in ALWAYS or f in offered):
        k = split_k(offered[fix_id]) if fix_id in offered and fix_id == "micro_batches" else 2
        spec, conf = variant_spec(base, fix_id, k)
        model["fixes"][fix_id] = {**spawn("plain", {"spec": spec}, conf), "spec": spec,
                                  "alloc_conf": conf}
    if runs:
        spec, _ = variant_spec(base, "autocast")
        model["autocast_capture"] = spawn("capture", {"spec": spec,
                                                      "runs_root": str(runs / f"{name}-autocast")})
    return model


def part_b(runs: Path | None = None) -> dict[str, Any]:
    """The GPT-2 with a batch too large for the cap; then the fix the post-mortem recommends
    (and, when it does not fit, the larger splits in turn: the smallest that fits, measured)."""
    spec = {"model": "gpt2", "batch": OOM_BATCH, "set_to_none": True}
    cap = {"cap_bytes": OOM_CAP_BYTES}
    out: dict[str, Any] = {"cap_bytes": OOM_CAP_BYTES, "batch": OOM_BATCH}
    kept = {"runs_root": str(runs / "oom")} if runs else {}
    out["capture"] = spawn("capture", {"spec": spec, **cap, **kept})
    fixes = ((out["capture"].get("memory") or {}).get("oom") or {}).get("fixes") or []
    out["fix_title"] = fixes[0]["title"] if fixes else None
    if not fixes:
        return out
    fix = fixes[0]
    k = split_k(fix) if fix["id"] == "micro_batches" else 2
    fixed, conf = variant_spec(spec, fix["id"], k)
    out["fixed"] = {**spawn("plain", {"spec": fixed, **cap}, conf), "spec": fixed}
    out["larger_splits"] = []
    if fix["id"] == "micro_batches" and out["fixed"].get("max_memory_allocated") is None:
        for more in (s for s in (2, 4, 8, 16) if k < s <= OOM_BATCH):
            tried = spawn("plain", {"spec": variant_spec(spec, "micro_batches", more)[0], **cap})
            out["larger_splits"].append({"k": more, **tried})
            if tried.get("max_memory_allocated") is not None:
                break
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--parts", default="A,B,C", help="which parts (A,B,C)")
    ap.add_argument("--models", default="gpt2,llama")
    ap.add_argument("--corpus", type=Path, default=Path(".corpus"), help="laid-out corpus")
    ap.add_argument("--quick", action="store_true", help="CPU check: tiny models, no CUDA parts")
    ap.add_argument("--fixes", default="", help="part C: only these offered fixes (comma list)")
    ap.add_argument("--scripts", default="", help="part C: only these corpus scripts (comma list)")
    a = ap.parse_args(argv)
    parts = set(a.parts.upper().split(","))
    cuda = _cuda()
    if not cuda and not a.quick:
        print("memory acceptance: no CUDA device here; skipped (--quick runs the CPU check)")
        return 0
    results: dict[str, Any] = {"quick": a.quick, "started": time.time(), "models": {}}
    t0 = time.perf_counter()
    if "A" in parts:
        for i, name in enumerate(a.models.split(",")):  # the baseline without the history:
            results["models"][name] = part_a(name, a.quick, history_off=i == 0,  # first only
                                             runs=a.out / "runs")
            print(f"A {name}: {time.perf_counter() - t0:.0f} s", flush=True)
    for part, what in (("B", "the OOM under a cap"), ("C", "the corpus scripts")):
        if part in parts and (a.quick or not cuda):
            print(f"{part} ({what}): needs CUDA; skipped")
    if "B" in parts and cuda and not a.quick:
        results["oom"] = part_b(a.out / "runs")
        print(f"B: {time.perf_counter() - t0:.0f} s", flush=True)
    if "C" in parts and cuda and not a.quick:
        from memory_acceptance_corpus import run_corpus

        only = set(a.fixes.split(",")) if a.fixes else None
        results["corpus"] = run_corpus(a.corpus, a.out, only=only,
                                       scripts=a.scripts.split(",") if a.scripts else None)
        print(f"C: {time.perf_counter() - t0:.0f} s", flush=True)
    results["wall_s"] = time.perf_counter() - t0
    a.out.mkdir(parents=True, exist_ok=True)
    part_tag = "" if parts >= {"A", "B", "C"} else "_" + "".join(sorted(parts))  # runs in turn
    path = a.out / f"memory_acceptance{part_tag}.json"
    write_json(str(path), results)
    print(table(results))
    print(f"wrote {path} ({results['wall_s']:.0f} s)")
    return 0


def _cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


if __name__ == "__main__":
    sys.exit(main())
