"""Capture a small real Kineto trace + unprofiled step times for each benchmark workload.

For every workload of ``workloads.py`` (each in its own subprocess, so one failure or one
global flag cannot leak into the next):

1. build, warm up ``--warmup`` steps, synchronize;
2. unprofiled baseline: ``--baseline`` steps with a CUDA event recorded at every step
   boundary and one synchronize at the end; step i = elapsed time between consecutive
   boundary events (``time.perf_counter`` on a CPU-only machine);
3. ``torch.profiler.profile(activities=[CPU, CUDA], schedule=schedule(wait=1, warmup=2,
   active=5), record_shapes=True, profile_memory=True)`` with ``prof.step()`` after each step;
   the trace is written gzipped as ``<out>/<workload>/trace.json.gz`` (``traceName`` set to
   a neutral name, no machine path);
4. ``meta.json`` beside it (same shape as the shared fixtures' ``*.meta.json``) plus a
   ``ground_truth`` block measured from the trace by ``ground_truth.py`` (stdlib only, no
   code of the package under test) and ``label_holds`` (does the measurement support the
   intended bottleneck?).

    python benchmarks/capture_workloads.py --out tests/data/real            # all, on the GPU
    python benchmarks/capture_workloads.py --out OUTDIR --only launch,host  # a few
    python benchmarks/capture_workloads.py --out OUTDIR --only llama --no-fixed  # whatif_workloads
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gzip
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

SCHEDULE = {"wait": 1, "warmup": 2, "active": 5}
MAX_TRACE_BYTES = 1_500_000


def neutral_trace_name(raw: bytes, name: str) -> bytes:
    """Replace the exported ``traceName`` (an absolute path on the capturing machine)."""
    key = b'"traceName": "'
    i = raw.rfind(key)
    if i < 0:
        return raw
    j = raw.index(b'"', i + len(key))
    return raw[: i + len(key)] + name.encode() + raw[j:]


def write_trace_gz(json_path: str, gz_path: str, name: str, level: int = 9) -> int:
    with open(json_path, "rb") as f:
        raw = neutral_trace_name(f.read(), name)
    tmp = gz_path + ".tmp"
    with gzip.open(tmp, "wb", compresslevel=level) as g:
        g.write(raw)
    os.replace(tmp, gz_path)
    os.remove(json_path)
    return os.path.getsize(gz_path)


def env_info() -> dict:
    import torch

    gpu = (
        torch.cuda.get_device_name(0)
        if torch.cuda.is_available()
        else f"none ({platform.machine()} CPU)"
    )
    return {
        "gpu": gpu,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
    }


def baseline_ms(step, n: int, cuda: bool) -> tuple[list[float], str]:
    """Unprofiled step times: an event at every step boundary, one synchronize at the end."""
    import torch

    if cuda:
        evs = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
        evs[0].record()
        for i in range(n):
            step()
            evs[i + 1].record()
        torch.cuda.synchronize()
        return [evs[i].elapsed_time(evs[i + 1]) for i in range(n)], "cuda_event"
    ts = [time.perf_counter()]
    for _ in range(n):
        step()
        ts.append(time.perf_counter())
    return [1e3 * (b - a) for a, b in zip(ts, ts[1:], strict=False)], "perf_counter"


def _stats(step_ms: list[float]) -> tuple[float, float]:
    srt = sorted(step_ms)
    return statistics.median(step_ms), srt[int(0.95 * (len(srt) - 1))]


def build_any(name: str, device: str, shrink: bool = False, fixed: bool = False):
    """A workload of workloads.py, or one of whatif_workloads.py (third-party models)."""
    import workloads

    if name in workloads.BUILDERS:
        return workloads.build(name, device, shrink=shrink, fixed=fixed)
    from whatif_workloads import EXTRA

    return EXTRA[name](device, fixed=fixed)[0]


def measure_fixed(name: str, device: str, warmup: int, baseline: int, shrink: bool) -> dict | None:
    """Unprofiled baseline of the workload with its intended fix applied (the counterfactual)."""
    import torch

    cuda = device == "cuda"
    try:
        t0 = time.perf_counter()
        w = build_any(name, device, shrink=shrink, fixed=True)
        for _ in range(warmup):
            w.step()
        if cuda:
            torch.cuda.synchronize()
        warm_s = time.perf_counter() - t0
        step_ms, timing = baseline_ms(w.step, baseline, cuda)
    except NotImplementedError as e:
        return {"fix": None, "reason": str(e)}
    except Exception as e:  # a failed fix is a result too
        return {"fix": None, "error": f"{type(e).__name__}: {str(e)[:300]}"}
    med, p95 = _stats(step_ms)
    return {
        "fix": w.fix,
        "config": w.config,
        "build_and_warmup_s": round(warm_s, 1),
        "step_ms_median_unprofiled": med,
        "step_ms_p95_unprofiled": p95,
        "step_ms_all": step_ms,
        "step_timing": timing,
    }


def write_meta(wdir: str, meta: dict) -> None:
    tmp = os.path.join(wdir, "meta.json.tmp")
    with open(tmp, "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    os.replace(tmp, os.path.join(wdir, "meta.json"))


def run_one(
    name: str,
    out_dir: str,
    warmup: int,
    baseline: int,
    shrink: bool = False,
    fixed_too: bool = True,
) -> dict:
    import ground_truth
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule

    cuda = torch.cuda.is_available()
    device = "cuda" if cuda else "cpu"
    t0 = time.perf_counter()
    w = build_any(name, device, shrink=shrink)
    build_s = time.perf_counter() - t0

    sync = torch.cuda.synchronize if cuda else (lambda: None)
    for _ in range(warmup):
        w.step()
    sync()

    step_ms, timing = baseline_ms(w.step, baseline, cuda)

    # -- profiled capture
    wdir = os.path.join(out_dir, name)
    os.makedirs(wdir, exist_ok=True)
    raw_json = os.path.join(wdir, "trace.raw.json")
    gz = os.path.join(wdir, "trace.json.gz")

    def on_ready(p):
        p.export_chrome_trace(raw_json)

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    n_prof = SCHEDULE["wait"] + SCHEDULE["warmup"] + SCHEDULE["active"]
    t0 = time.perf_counter()
    with profile(
        activities=acts,
        schedule=schedule(**SCHEDULE),
        record_shapes=True,
        profile_memory=True,
        on_trace_ready=on_ready,
    ) as prof:
        for _ in range(n_prof):
            w.step()
            prof.step()
    prof_s = time.perf_counter() - t0
    size = write_trace_gz(raw_json, gz, f"{name}.pt.trace.json")

    gt = ground_truth.measure(gz)
    holds = ground_truth.check(name, gt)
    med, p95 = _stats(step_ms)
    meta = {
        "workload": w.description,
        "name": name,
        "intended_bottleneck": w.intended,
        "config": {**w.config, "shrunk_to_fit_size_budget": shrink},
        "fixed": False,
        **env_info(),
        "step_ms_median_unprofiled": med,
        "step_ms_p95_unprofiled": p95,
        "step_ms_all": step_ms,
        "step_timing": timing,
        "profiler_schedule": dict(SCHEDULE),
        "profiler_options": {
            "activities": [str(a).split(".")[-1] for a in acts],
            "record_shapes": True,
            "profile_memory": True,
            "with_stack": False,
        },
        "captured_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "capture_script": "benchmarks/capture_workloads.py",
        "trace_gz_bytes": size,
        "ground_truth": gt,
        "label_holds": holds,
        "fixed_variant": "not measured",
    }
    write_meta(wdir, meta)
    print(
        f"[{name}] build {build_s:.1f}s, unprofiled median "
        f"{meta['step_ms_median_unprofiled']:.2f} ms, "
        f"profiled {prof_s:.1f}s, trace {size / 1e6:.2f} "
        f"MB{' (TOO BIG)' if size > MAX_TRACE_BYTES else ''}; "
        f"busy {gt['gpu_busy_pct']}%, kernels/step "
        f"{gt['kernels_per_step']}, syncs/step {gt['sync_calls_per_step']}, "
        f"dataloader {gt['dataloader_pct']}%, memcpy {gt['memcpy_pct_of_window']}%, "
        f"host-uncovered {gt['host_uncovered_pct']}%, label_holds={holds}",
        flush=True,
    )
    for k in gt["top_kernels"]:
        print(
            f"[{name}]   {k['pct_of_kernel_time']:5.1f}%  "
            f"{k['ms']:9.3f} ms  x{k['count']:<5} {k['name'][:110]}",
            flush=True,
        )
    if fixed_too:
        del w
        fx = measure_fixed(name, device, warmup, baseline, shrink)
        if fx and fx.get("step_ms_median_unprofiled"):
            fx["speedup_median"] = round(med / fx["step_ms_median_unprofiled"], 3)
        meta["fixed_variant"] = fx
        write_meta(wdir, meta)
        print(
            f"[{name}] fixed variant: "
            f"{json.dumps({k: v for k, v in (fx or {}).items() if k != 'step_ms_all'})}",
            flush=True,
        )
    return meta


def main(argv=None) -> int:
    import workloads

    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", help="comma-separated workload names (default: all)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--baseline", type=int, default=30)
    ap.add_argument("--timeout", type=int, default=200, help="seconds per workload subprocess")
    ap.add_argument(
        "--no-fixed", action="store_true", help="skip the baseline of each fixed variant"
    )
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)

    if a.child:
        meta = run_one(a.child, a.out, a.warmup, a.baseline, fixed_too=not a.no_fixed)
        if meta["trace_gz_bytes"] > MAX_TRACE_BYTES and a.child in workloads.SHRINK:
            print(
                f"[{a.child}] trace over {MAX_TRACE_BYTES} bytes: capturing the smaller variant",
                flush=True,
            )
            run_one(a.child, a.out, a.warmup, a.baseline, shrink=True, fixed_too=not a.no_fixed)
        return 0

    names = a.only.split(",") if a.only else list(workloads.BUILDERS)
    os.makedirs(a.out, exist_ok=True)
    failed = []
    for n in names:
        t0 = time.perf_counter()
        cmd = [
            sys.executable,
            os.path.abspath(__file__),
            "--out",
            a.out,
            "--child",
            n,
            "--warmup",
            str(a.warmup),
            "--baseline",
            str(a.baseline),
        ] + (["--no-fixed"] if a.no_fixed else [])
        try:
            rc = subprocess.run(cmd, timeout=a.timeout).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        print(f"[{n}] rc={rc} in {time.perf_counter() - t0:.1f}s", flush=True)
        if rc != 0:
            failed.append(n)
    print("failed:", failed or "none", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
