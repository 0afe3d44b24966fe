"""Independent ground truth for a Kineto trace: stdlib only, shares no code with jupyter_gpuprof.

It exists so that each benchmark workload's label is a *measurement*: the figures here are
computed straight from the raw events, with simple definitions written down below, and
stored in the workload's ``meta.json`` under ``ground_truth``.

Definitions (all times from the trace's own ``ts``/``dur``, microseconds):

* steps: host events named ``ProfilerStep#N`` (not ``gpu_user_annotation``); the CPU window
  is [first step start, last step end].
* a GPU op (kernel / gpu_memcpy / gpu_memset) belongs to step N when the runtime call that
  launched it (same ``correlation``) starts inside step N on the host.
* window = hull of the CPU window and the GPU ops that belong to the steps (the GPU can run
  long after the CPU); ``gpu_busy_pct`` = union of *all* GPU op intervals clipped to the
  window, over the window.
* ``kernel_ms_per_step`` = sum of kernel durations belonging to the steps / steps (not a union).
* sync calls are counted inside the CPU window: ``cudaStreamSynchronize``,
  ``cudaDeviceSynchronize``, ``cudaEventSynchronize`` and the blocking ``cudaMemcpy``;
  ``idle_after_sync_pct``: GPU idle time in the gaps where a sync call returned (its end
  within [gap start - 20 us, gap end]), over the window.
* ``dataloader_pct``: union of ``...DataLoader...__next__`` intervals / CPU step time.
* ``host_uncovered_pct``: CPU step time covered by no host event on any thread (pure Python
  that calls into nothing torch records), over CPU step time.
* ``launch_api_pct``: union of kernel-launch API intervals over CPU step time.

    python benchmarks/ground_truth.py TRACE.json[.gz] [--workload NAME]
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
from collections import defaultdict

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}
RUNTIME_CATS = {"cuda_runtime", "cuda_driver"}
SYNC_NAMES = (
    "cudaStreamSynchronize",
    "cudaDeviceSynchronize",
    "cudaEventSynchronize",
    "cudaMemcpy",
)
LAUNCH_NAMES = (
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "cuLaunchKernel",
    "cuLaunchKernelEx",
    "cudaLaunchCooperativeKernel",
    "cudaGraphLaunch",
)
HOST_CATS = {"cpu_op", "user_annotation", "cuda_runtime", "cuda_driver", "python_function"}


def _open(path: str):
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


def _union(iv):
    """Merge [(start, end)] into disjoint sorted intervals."""
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([s, e])
    return out


def _clip_total(merged, lo, hi):
    t = 0.0
    for s, e in merged:
        s, e = max(s, lo), min(e, hi)
        if e > s:
            t += e - s
    return t


def measure(path: str) -> dict:
    with _open(path) as f:
        doc = json.load(f)
    ev = [e for e in doc.get("traceEvents", []) if e.get("ph") == "X"]

    steps = sorted(
        (
            e
            for e in ev
            if str(e.get("name", "")).startswith("ProfilerStep#")
            and e.get("cat") != "gpu_user_annotation"
        ),
        key=lambda e: e["ts"],
    )
    if not steps:
        raise SystemExit(f"{path}: no ProfilerStep# events")
    step_iv = [(e["ts"], e["ts"] + e["dur"]) for e in steps]
    cpu_lo, cpu_hi = step_iv[0][0], step_iv[-1][1]
    cpu_step_total = sum(b - a for a, b in step_iv)
    n_steps = len(steps)

    def step_of(t):
        for i, (a, b) in enumerate(step_iv):
            if a <= t <= b:
                return i
        return None

    # launching runtime call per correlation id
    launch_ts = {}
    for e in ev:
        if e.get("cat") in RUNTIME_CATS:
            c = (e.get("args") or {}).get("correlation")
            if c is not None:
                launch_ts[c] = e["ts"]

    gpu = [e for e in ev if e.get("cat") in GPU_CATS]
    mine = []
    for e in gpu:
        c = (e.get("args") or {}).get("correlation")
        t = launch_ts.get(c)
        if t is not None and step_of(t) is not None:
            mine.append(e)
    lo = min([cpu_lo] + [e["ts"] for e in mine])
    hi = max([cpu_hi] + [e["ts"] + e["dur"] for e in mine])
    window = hi - lo
    busy = _union([(e["ts"], e["ts"] + e["dur"]) for e in gpu])
    busy_us = _clip_total(busy, lo, hi)

    # GPU-side step spans, when the trace has them
    gsteps = [
        e
        for e in ev
        if e.get("cat") == "gpu_user_annotation"
        and str(e.get("name", "")).startswith("ProfilerStep#")
    ]
    gpu_step_ms = [round(e["dur"] / 1e3, 3) for e in sorted(gsteps, key=lambda e: e["ts"])]

    # kernels
    kernels = [e for e in mine if e.get("cat") == "kernel"]
    kt = defaultdict(lambda: [0.0, 0])
    for e in kernels:
        kt[e["name"]][0] += e["dur"]
        kt[e["name"]][1] += 1
    ktotal = sum(v[0] for v in kt.values())
    top = sorted(kt.items(), key=lambda kv: -kv[1][0])[:5]
    kdurs = sorted(e["dur"] for e in kernels)

    # memcpy / memset
    mc = defaultdict(lambda: {"ms": 0.0, "bytes": 0, "count": 0})
    for e in mine:
        if e.get("cat") in ("gpu_memcpy", "gpu_memset"):
            m = mc[e["name"]]
            m["ms"] += e["dur"] / 1e3
            m["bytes"] += int((e.get("args") or {}).get("bytes", 0) or 0)
            m["count"] += 1
    memcpy_ms = sum(v["ms"] for k, v in mc.items() if k.startswith("Memcpy"))
    memcpy_bytes = sum(v["bytes"] for k, v in mc.items() if k.startswith("Memcpy"))

    # host side, inside the CPU window
    host = [e for e in ev if e.get("cat") in HOST_CATS and cpu_lo <= e["ts"] <= cpu_hi]
    syncs = [e for e in host if e.get("name") in SYNC_NAMES]
    sync_counts = defaultdict(int)
    for e in syncs:
        sync_counts[e["name"]] += 1
    memcpy_async = sum(1 for e in host if e.get("name") == "cudaMemcpyAsync")
    sync_time = _clip_total(_union([(e["ts"], e["ts"] + e["dur"]) for e in syncs]), cpu_lo, cpu_hi)
    launches = [e for e in host if e.get("name") in LAUNCH_NAMES]
    launch_time = _clip_total(
        _union([(e["ts"], e["ts"] + e["dur"]) for e in launches]), cpu_lo, cpu_hi
    )

    dl = [
        e for e in host if "DataLoader" in str(e.get("name")) and "__next__" in str(e.get("name"))
    ]
    dl_time = sum(
        _clip_total(_union([(e["ts"], e["ts"] + e["dur"]) for e in dl]), a, b) for a, b in step_iv
    )

    not_steps = [e for e in host if not str(e.get("name", "")).startswith("ProfilerStep#")]
    covered = _union([(e["ts"], e["ts"] + e["dur"]) for e in not_steps])
    covered_time = sum(_clip_total(covered, a, b) for a, b in step_iv)

    # idle gaps on the GPU that start where a sync returned
    gaps = []
    prev = lo
    for s, e in busy:
        if e <= lo or s >= hi:
            continue
        s = max(s, lo)
        if s > prev:
            gaps.append((prev, s))
        prev = max(prev, min(e, hi))
    if prev < hi:
        gaps.append((prev, hi))
    sync_ends = sorted(e["ts"] + e["dur"] for e in syncs)
    idle_after_sync = 0.0
    j = 0
    for gs, ge in gaps:
        while j < len(sync_ends) and sync_ends[j] < gs - 20:
            j += 1
        if j < len(sync_ends) and sync_ends[j] <= ge:
            idle_after_sync += ge - gs

    def pct(a, b):
        return round(100.0 * a / b, 2) if b else 0.0

    return {
        "definitions": "benchmarks/ground_truth.py docstring",
        "n_events": len(doc.get("traceEvents", [])),
        "profiled_steps": n_steps,
        "cpu_step_ms": [round((b - a) / 1e3, 3) for a, b in step_iv],
        "gpu_step_ms": gpu_step_ms,
        "window_ms": round(window / 1e3, 3),
        "gpu_busy_pct": pct(busy_us, window),
        "gpu_idle_ms_per_step": round((window - busy_us) / 1e3 / n_steps, 3),
        "kernel_ms_per_step": round(ktotal / 1e3 / n_steps, 3),
        "kernels_per_step": round(len(kernels) / n_steps, 1),
        "kernel_us_median": round(statistics.median(kdurs), 2) if kdurs else None,
        "kernels_under_10us_pct": pct(sum(1 for d in kdurs if d < 10), len(kdurs)),
        "top_kernels": [
            {
                "name": n[:200],
                "ms": round(v[0] / 1e3, 3),
                "count": v[1],
                "pct_of_kernel_time": pct(v[0], ktotal),
            }
            for n, v in top
        ],
        "memcpy_ms_per_step": round(memcpy_ms / n_steps, 3),
        "memcpy_bytes_per_step": int(memcpy_bytes / n_steps),
        "memcpy_pct_of_window": pct(memcpy_ms * 1e3, window),
        "memcpy_by_kind": {
            k: {"ms": round(v["ms"], 3), "bytes": v["bytes"], "count": v["count"]}
            for k, v in sorted(mc.items())
        },
        "sync_calls": dict(sorted(sync_counts.items())),
        "sync_calls_per_step": round(len(syncs) / n_steps, 1),
        "cudaMemcpyAsync_calls": memcpy_async,
        "sync_wait_pct_of_cpu": pct(sync_time, cpu_step_total),
        "idle_after_sync_pct": pct(idle_after_sync, window),
        "launch_calls_per_step": round(len(launches) / n_steps, 1),
        "launch_api_pct_of_cpu": pct(launch_time, cpu_step_total),
        "dataloader_pct": pct(dl_time, cpu_step_total),
        "host_uncovered_pct": pct(cpu_step_total - covered_time, cpu_step_total),
    }


def _has(names, *subs):
    return any(any(s in n for s in subs) for n in names)


# What each workload's label means, as a test on the measurement.
CHECKS = {
    "input": lambda g: g["dataloader_pct"] >= 50 and g["gpu_busy_pct"] < 30,
    "sync": lambda g: (
        g["sync_calls_per_step"] >= 10
        and g["sync_wait_pct_of_cpu"] >= 25
        and g["idle_after_sync_pct"] >= 20
    ),
    "launch": lambda g: (
        g["kernels_per_step"] >= 200 and g["kernel_us_median"] < 10 and g["gpu_busy_pct"] < 60
    ),
    "precision": lambda g: (
        g["gpu_busy_pct"] >= 90
        and _has([k["name"] for k in g["top_kernels"][:2]], "sgemm", "ffma", "f32f32")
    ),
    "compute": lambda g: (
        g["gpu_busy_pct"] >= 90
        and not _has([k["name"] for k in g["top_kernels"][:2]], "sgemm", "ffma", "f32f32")
    ),
    "memory": lambda g: (
        g["gpu_busy_pct"] >= 80
        and not _has([k["name"] for k in g["top_kernels"]], "gemm", "nvjet", "xmma")
    ),
    "transfer": lambda g: g["memcpy_pct_of_window"] >= 50,
    "host": lambda g: (
        g["gpu_busy_pct"] < 60
        and g["host_uncovered_pct"] >= 30
        and g["dataloader_pct"] < 5
        and g["sync_calls_per_step"] <= 1
    ),
}


def check(workload: str, gt: dict) -> bool | None:
    f = CHECKS.get(workload)
    return None if f is None else bool(f(gt))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("trace")
    ap.add_argument("--workload")
    a = ap.parse_args(argv)
    gt = measure(a.trace)
    if a.workload:
        gt["label_holds"] = check(a.workload, gt)
    json.dump(gt, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
