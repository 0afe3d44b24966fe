"""Independent count for third-party Kineto/Chrome traces: stdlib only, no code of jupyter_gpuprof.

It exists so that the corpus under ``tests/data/wild`` (traces written by other people, other
torch versions and other vendors) has expected numbers that were *counted*, not produced by the
reader they are meant to check. ``benchmarks/ground_truth.py`` does the same for our own
captures but assumes current torch (lower-case categories, ``ProfilerStep#``); this one assumes
nothing about the producer.

Definitions (times from the trace's own ``ts``/``dur``, microseconds):

* A file holds either a JSON object with ``traceEvents`` or a bare JSON array of events (Chrome
  trace format; a missing closing bracket is allowed there). Only complete events (``ph == "X"``)
  with a numeric ``ts``/``dur`` are counted.
* Categories compare case-insensitively (torch <= 1.9 writes ``Kernel``, ``Memcpy``, ``Runtime``).
  GPU work = ``kernel``, ``gpu_memcpy``, ``gpu_memset``, ``memcpy``, ``memset``; kernels =
  ``kernel``. A GPU event's device is ``args.device``, else its ``pid``.
* ``gpu_busy_pct`` per device: union of that device's GPU-work intervals over the span from its
  first GPU event start to its last GPU event end. The headline figure is the device with the
  most GPU-work time.
* steps: host (not ``gpu_user_annotation``) events named ``ProfilerStep#N``; else host events
  named ``Optimizer.step#...`` (one step each); else the most frequent ``gpu_user_annotation``
  name that repeats (>= 2 times). ``step_source`` says which was used.
* ``busy_in_steps_pct`` (ProfilerStep only): window = hull of the host steps and of the GPU work
  whose launching runtime call (same ``args.correlation``) starts inside a step; GPU-work union
  clipped to the window, over the window, on the headline device.
* runtime calls = categories ``cuda_runtime``, ``cuda_driver``, ``runtime`` (old torch),
  ``mtia_runtime``; launches and syncs are counted by name, CUDA and HIP alike.
* ``device`` comes from ``deviceProperties`` (name, compute capability, ``gcnArchName``);
  ``rank``/``world_size`` from ``distributedInfo``.

    python benchmarks/wild_truth.py TRACE_OR_FOLDER [...]          # JSON to stdout
    python benchmarks/wild_truth.py --write tests/data/wild          # refresh truth.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import sys
from collections import Counter, defaultdict

GPU_WORK_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"}
RUNTIME_CATS = {"cuda_runtime", "cuda_driver", "runtime", "mtia_runtime"}
LAUNCH_RE = re.compile(
    r"^(cuda|cu|hip)(LaunchKernel|LaunchKernelExC|LaunchKernelEx|LaunchCooperativeKernel"
    r"|ExtModuleLaunchKernel|ModuleLaunchKernel|ExtLaunchKernel|GraphLaunch)$"
)
SYNC_RE = re.compile(r"^(cuda|hip)(Stream|Device|Event)Synchronize$|^(cuda|hip)Memcpy$")
TRACE_SUFFIXES = (".json", ".json.gz")
ONE_TIME_CALL_MS = 50.0  # a single runtime call this long is start-up, module loading or capture


def load_events(path: str) -> tuple[dict, list, str]:
    """Read a trace file into (top-level metadata, events, form) whatever its producer wrote."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        text = f.read()
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        stripped = text.rstrip().rstrip(",")
        if not stripped.lstrip().startswith("["):
            raise
        doc = json.loads(stripped + "]")  # Chrome format lets a JSON array lose its last ']'
    if isinstance(doc, list):
        return {}, doc, "array"
    if isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list):
        meta = {k: v for k, v in doc.items() if k != "traceEvents"}
        return meta, doc["traceEvents"], "object"
    return (doc if isinstance(doc, dict) else {}), [], "not-a-trace"


def _union(intervals):
    """Merge (start, end) pairs into disjoint sorted [start, end] lists."""
    merged: list[list[float]] = []
    for s, e in sorted(intervals):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return merged


def _clipped(merged, lo, hi) -> float:
    """Length of the merged intervals inside [lo, hi]."""
    return sum(max(0.0, min(e, hi) - max(s, lo)) for s, e in merged)


def _complete(events):
    """Complete events with numeric times, as (event, lower-case cat, ts, dur)."""
    out = []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        try:
            ts, dur = float(e["ts"]), float(e.get("dur", 0) or 0)
        except (KeyError, TypeError, ValueError):
            continue
        out.append((e, str(e.get("cat", "")).lower(), ts, dur))
    return out


def _pct(part: float, whole: float):
    return round(100.0 * part / whole, 2) if whole > 0 else None


def _device_info(meta: dict) -> list[dict]:
    """Each GPU of deviceProperties; AMD reuses computeMajor 9 (gfx90a, gfx94x): keep warp size."""
    out = []
    for d in meta.get("deviceProperties") or []:
        if not isinstance(d, dict):
            continue
        cc = (
            f"{d['computeMajor']}.{d['computeMinor']}"
            if "computeMajor" in d and "computeMinor" in d
            else None
        )
        out.append(
            {
                "name": d.get("name"),
                "compute_capability": cc,
                "warp_size": d.get("warpSize"),
                "sms": d.get("numSms"),
                "memory_gb": round(d["totalGlobalMem"] / 2**30, 1)
                if d.get("totalGlobalMem")
                else None,
            }
        )
    return out


def _vendor(meta: dict, runtime_names: Counter, categories: Counter) -> str | None:
    """Who wrote the runtime side: the producer's version keys first, then the API names."""
    if "hip_runtime_version" in meta or "roctracer_version" in meta:
        return "AMD"
    if any(str(n).startswith("hip") for n in runtime_names):
        return "AMD"
    if "mtia_runtime" in categories:
        return "MTIA"
    if any(str(n).startswith("cu") for n in runtime_names) or "cupti_version" in meta:
        return "NVIDIA"
    return None


def _steps(complete):
    """Step list and its source: ProfilerStep, else Optimizer.step, else a repeating GPU range."""
    host = [(e, c, ts, dur) for e, c, ts, dur in complete if c != "gpu_user_annotation"]
    prof = sorted(
        (ts, dur, e["name"])
        for e, c, ts, dur in host
        if str(e.get("name", "")).startswith("ProfilerStep#")
    )
    if prof:
        return "ProfilerStep", prof
    opt = sorted(
        (ts, dur, e["name"])
        for e, c, ts, dur in host
        if str(e.get("name", "")).startswith("Optimizer.step#")
    )
    if opt:
        return "Optimizer.step", opt
    gpu_ranges = Counter(
        str(e.get("name")) for e, c, ts, dur in complete if c == "gpu_user_annotation"
    )
    repeated = [(n, k) for n, k in gpu_ranges.most_common() if k >= 2]
    if repeated:
        name = repeated[0][0]
        return "gpu_user_annotation", sorted(
            (ts, dur, name)
            for e, c, ts, dur in complete
            if c == "gpu_user_annotation" and str(e.get("name")) == name
        )
    return None, []


def measure_file(path: str) -> dict:
    """Count one trace file; a file that is not a trace says so instead of raising."""
    try:
        meta, events, form = load_events(path)
    except (OSError, ValueError, EOFError) as exc:
        return {"form": "unreadable", "error": f"{type(exc).__name__}: {exc}"[:200]}
    complete = _complete(events)
    cats = Counter(str(e.get("cat")) for e in events if isinstance(e, dict) and "cat" in e)

    work_by_dev: dict[str, list] = defaultdict(list)
    kernels = 0
    min_kernel_us = None
    for e, c, ts, dur in complete:
        if c in GPU_WORK_CATS:
            args = e.get("args") or {}
            work_by_dev[str(args.get("device", e.get("pid")))].append((ts, ts + dur))
            if c == "kernel":
                kernels += 1
                min_kernel_us = dur if min_kernel_us is None else min(min_kernel_us, dur)
    per_device = {}
    for dev, iv in work_by_dev.items():
        merged = _union(iv)
        lo, hi = merged[0][0], merged[-1][1]
        busy = _clipped(merged, lo, hi)
        per_device[dev] = {
            "gpu_events": len(iv),
            "span_ms": round((hi - lo) / 1e3, 3),
            "busy_ms": round(busy / 1e3, 3),
            "gpu_busy_pct": _pct(busy, hi - lo),
        }
    headline = max(per_device, key=lambda d: per_device[d]["busy_ms"], default=None)

    runtime = [(e, ts, dur) for e, c, ts, dur in complete if c in RUNTIME_CATS]
    runtime_names = Counter(str(e.get("name")) for e, _, _ in runtime)
    launch_names = Counter(e["name"] for e, _, _ in runtime if LAUNCH_RE.match(str(e.get("name"))))
    sync_names = Counter(e["name"] for e, _, _ in runtime if SYNC_RE.match(str(e.get("name"))))
    long_calls = sorted(
        (
            (round(dur / 1e3, 3), str(e.get("name")))
            for e, _, dur in runtime
            if dur / 1e3 >= ONE_TIME_CALL_MS
        ),
        reverse=True,
    )

    source, steps = _steps(complete)
    result = {
        "form": form,
        "n_events": len(events),
        "categories": dict(sorted(cats.items())),
        "kernels": kernels,
        "min_kernel_us": min_kernel_us,
        "gpu_work_events": sum(len(v) for v in work_by_dev.values()),
        "devices": per_device,
        "gpu_busy_pct": per_device[headline]["gpu_busy_pct"] if headline else None,
        "gpu_span_ms": per_device[headline]["span_ms"] if headline else None,
        "step_source": source,
        "steps": len(steps),
        "step_ms": [round(d / 1e3, 3) for _, d, _ in steps][:64],
        "busy_in_steps_pct": None,
        "device_properties": _device_info(meta),
        "vendor": _vendor(meta, runtime_names, cats),
        "rank": (meta.get("distributedInfo") or {}).get("rank"),
        "world_size": (meta.get("distributedInfo") or {}).get("world_size"),
        "launch_calls": dict(sorted(launch_names.items())),
        "sync_calls": dict(sorted(sync_names.items())),
        "runtime_calls": len(runtime),
        "one_time_calls_ms": [[ms, n] for ms, n in long_calls[:5]],
        "time_span_ms": (
            round(
                (max(ts + d for _, _, ts, d in complete) - min(ts for _, _, ts, _ in complete))
                / 1e3,
                3,
            )
            if complete
            else None
        ),
    }
    if source == "ProfilerStep" and headline:
        result["busy_in_steps_pct"] = _busy_in_steps(
            complete, steps, work_by_dev[headline], headline
        )
    return result


def _busy_in_steps(complete, steps, device_work, device) -> float | None:
    """GPU busy % of one device over the window its ProfilerStep work spans (host + launched)."""
    launch_ts = {}
    for e, c, ts, _ in complete:
        if c in RUNTIME_CATS:
            corr = (e.get("args") or {}).get("correlation")
            if corr is not None:
                launch_ts[corr] = ts
    windows = [(ts, ts + d) for ts, d, _ in steps]
    lo, hi = windows[0][0], max(b for _, b in windows)
    for e, c, ts, dur in complete:
        if c not in GPU_WORK_CATS:
            continue
        args = e.get("args") or {}
        if str(args.get("device", e.get("pid"))) != device:
            continue
        t = launch_ts.get(args.get("correlation"))
        if t is not None and any(a <= t <= b for a, b in windows):
            lo, hi = min(lo, ts), max(hi, ts + dur)
    return _pct(_clipped(_union(device_work), lo, hi), hi - lo)


def trace_files(folder: str) -> list[str]:
    """Every JSON(.gz) file below a folder, sorted, skipping our own truth file."""
    out = []
    for root, _, files in os.walk(folder):
        for name in files:
            if name.endswith(TRACE_SUFFIXES) and name != "truth.json":
                out.append(os.path.join(root, name))
    return sorted(out)


def folder_summary(per_file: dict[str, dict]) -> dict:
    """Whether the traces of one folder can be one job: ranks, world sizes and time spans agree."""
    ranks = sorted(r["rank"] for r in per_file.values() if r.get("rank") is not None)
    worlds = sorted({r["world_size"] for r in per_file.values() if r.get("world_size") is not None})
    devices = sorted(
        {
            d["name"]
            for r in per_file.values()
            for d in r.get("device_properties", [])
            if d.get("name")
        }
    )
    return {
        "files": len(per_file),
        "ranks": ranks,
        "distinct_ranks": len(set(ranks)) == len(ranks),
        "world_sizes": worlds,
        "device_names": devices,
        "one_job": len(worlds) <= 1 and len(set(ranks)) == len(ranks) == len(per_file),
    }


def measure_corpus(root: str) -> dict:
    """Counts for every trace under root, keyed by relative path, plus per-folder summaries."""
    files = {os.path.relpath(p, root): measure_file(p) for p in trace_files(root)}
    folders: dict[str, dict] = defaultdict(dict)
    for rel, r in files.items():
        folders[os.path.dirname(rel)][rel] = r
    return {
        "definitions": "benchmarks/wild_truth.py docstring",
        "files": files,
        "folders": {f: folder_summary(v) for f, v in sorted(folders.items()) if len(v) > 1},
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("paths", nargs="*", help="trace files or folders")
    ap.add_argument("--write", metavar="CORPUS", help="write CORPUS/truth.json")
    a = ap.parse_args(argv)
    if a.write:
        out = os.path.join(a.write, "truth.json")
        with open(out, "w") as f:
            json.dump(measure_corpus(a.write), f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"wrote {out}")
        return
    if not a.paths:
        ap.error("give a trace, a folder, or --write CORPUS")
    result = {p: (measure_corpus(p) if os.path.isdir(p) else measure_file(p)) for p in a.paths}
    json.dump(result, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
