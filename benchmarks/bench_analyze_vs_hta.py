"""Side by side on one trace: `python -m jupyter_gpuprof analyze PATH --json` vs HTA.

Each measurement runs in a fresh wrapper process that starts the tool as its only child and
reports the child's wall time and peak RSS: the summed RSS of the child and every process it
started (sampled every 50 ms), so a tool that forks workers is measured by their sum, and at
least ``getrusage(RUSAGE_CHILDREN).ru_maxrss`` (the largest single process); also the summed
PSS (shared pages split between their sharers). Each side is repeated ``--repeat`` times and the
median is reported.

* ours: ``OURS_PYTHON -m jupyter_gpuprof analyze TRACE --json`` (run from the repository root);
* HTA: ``HTA_PYTHON this_script --hta-worker DIR``: ``TraceAnalysis(trace_dir=DIR)`` (load),
  then ``get_temporal_breakdown``, ``get_idle_time_breakdown`` and ``get_gpu_kernel_breakdown``
  (``visualize=False``), each timed, exceptions caught and reported as results. HTA pins its
  own dependencies, so it lives in its own virtual environment::

      python3.12 -m venv .venv-hta && .venv-hta/bin/pip install HolisticTraceAnalysis==0.5.0

  HTA treats every ``.json``/``.gz`` file in the folder as a trace and reads the rank from
  ``distributedInfo.rank``; so its input folder is prepared (untimed) with one copy of the
  trace that has ``"distributedInfo": {"rank": 0, ...}`` added when missing.

    python benchmarks/bench_analyze_vs_hta.py .bigtrace/gpt2_40steps.pt.trace.json.gz
    python benchmarks/bench_analyze_vs_hta.py TRACE --skip-ours        # HTA alone
    python benchmarks/bench_analyze_vs_hta.py TRACE --json-out results.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def write_json(path: str, result: dict) -> None:
    """A benchmark's results as indented JSON (figures other than numbers as their text)."""
    with open(path, "w") as f:
        json.dump(result, f, indent=1, default=str)
        f.write("\n")


# ----------------------------------------------------------------------- measuring wrapper
def _tree_mb(root: int) -> tuple[float, float]:
    """Summed resident memory of `root` and its descendants (decoding workers), in MB: RSS
    (pages a forked worker shares with its parent counted in both) and PSS (shared pages
    split between the processes that share them: the memory the run really takes)."""
    from bench_multirank import _tree_rss  # Linux /proc walk

    rss = _tree_rss(root)
    pss = 0
    for pid in rss:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                pss += next(int(x.split()[1]) for x in f if x.startswith("Pss:")) * 1024
        except (OSError, StopIteration):
            pss += rss[pid]
    return sum(rss.values()) / 2**20, pss / 2**20


def measure_main(cmd: list[str], stdout_path: str) -> int:
    """Run cmd as the only child; print one JSON line with wall time, the largest process's
    peak RSS and the peak of the process tree's summed RSS (sampled every 50 ms)."""
    tree_peak = tree_pss = 0.0
    with open(stdout_path, "wb") as out:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, cwd=REPO)
        err: list[bytes] = []
        drain = threading.Thread(target=lambda: err.append(p.stderr.read()), daemon=True)
        drain.start()
        while p.poll() is None:
            if sys.platform == "linux":
                rss_mb, pss_mb = _tree_mb(p.pid)
                tree_peak, tree_pss = max(tree_peak, rss_mb), max(tree_pss, pss_mb)
            time.sleep(0.05)
        wall = time.perf_counter() - t0
        drain.join()
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    # ru_maxrss is KiB on Linux, bytes on macOS
    peak_mb = ru.ru_maxrss / 1024 if sys.platform != "darwin" else ru.ru_maxrss / 2**20
    print(
        json.dumps(
            {
                "rc": p.returncode,
                "wall_s": wall,
                # every process of the run together (the reader's decoding workers included)
                "peak_rss_mb": max(tree_peak, peak_mb),
                "largest_process_peak_rss_mb": peak_mb,
                "pss_peak_mb": tree_pss,
                "user_s": ru.ru_utime,
                "sys_s": ru.ru_stime,
                "stderr_tail": b"".join(err).decode(errors="replace")[-1500:],
            }
        )
    )
    return 0


def measured(cmd: list[str], stdout_path: str) -> dict:
    w = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--measure", stdout_path, "--", *cmd],
        capture_output=True,
        text=True,
    )
    if w.returncode != 0:
        raise RuntimeError(f"wrapper failed: {w.stderr[-2000:]}")
    return json.loads(w.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------ HTA worker
def hta_worker(trace_dir: str) -> int:
    """Runs under the HTA virtualenv: load + three analyses, each timed; prints one JSON line."""
    import logging
    import traceback

    logging.disable(logging.WARNING)
    res: dict = {"phases": {}}
    t0 = time.perf_counter()
    try:
        import hta
        from hta.trace_analysis import TraceAnalysis

        res["hta_version"] = getattr(hta, "__version__", None) or _dist_version(
            "HolisticTraceAnalysis"
        )
        res["phases"]["import"] = {"s": time.perf_counter() - t0, "ok": True}
        t0 = time.perf_counter()
        analyzer = TraceAnalysis(trace_dir=trace_dir)
        res["phases"]["load"] = {"s": time.perf_counter() - t0, "ok": True}
    except Exception as e:
        res["phases"]["load"] = {
            "s": time.perf_counter() - t0,
            "ok": False,
            "error": _err(e, traceback),
        }
        print(json.dumps(res))
        return 0

    calls = {
        "temporal_breakdown": lambda: analyzer.get_temporal_breakdown(visualize=False),
        "idle_time_breakdown": lambda: analyzer.get_idle_time_breakdown(visualize=False),
        "gpu_kernel_breakdown": lambda: analyzer.get_gpu_kernel_breakdown(visualize=False),
    }
    for name, fn in calls.items():
        t0 = time.perf_counter()
        try:
            out = fn()
            res["phases"][name] = {
                "s": time.perf_counter() - t0,
                "ok": True,
                "result": _describe(out),
            }
        except Exception as e:  # HTA failing is a result, not a harness error
            res["phases"][name] = {
                "s": time.perf_counter() - t0,
                "ok": False,
                "error": _err(e, traceback),
            }
    print(json.dumps(res, default=str))
    return 0


def _dist_version(name: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:
        return None


def _err(e: BaseException, tb) -> str:
    last = tb.extract_tb(e.__traceback__)[-1] if e.__traceback__ else None
    where = f" at {os.path.basename(last.filename)}:{last.lineno} ({last.line})" if last else ""
    return f"{type(e).__name__}: {str(e)[:300]}{where}"


def _describe(out) -> str:
    items = out if isinstance(out, tuple) else (out,)
    parts = []
    for o in items:
        if o is None:
            parts.append("None")
        elif hasattr(o, "shape"):
            head = o.head(3).to_dict(orient="records") if hasattr(o, "head") else ""
            parts.append(f"DataFrame{tuple(o.shape)} {json.dumps(head, default=str)[:400]}")
        else:
            parts.append(type(o).__name__)
    return "; ".join(parts)


# ----------------------------------------------------------------------- preparing HTA input
def prepare_hta_dir(trace: str, work: str) -> str:
    """One-trace folder for HTA, with distributedInfo.rank added if the trace lacks it (untimed)."""
    d = os.path.join(work, "hta_input")
    os.makedirs(d, exist_ok=True)
    dst = os.path.join(d, "rank0.pt.trace.json.gz")
    if os.path.exists(dst):
        return d
    opener = gzip.open if trace.endswith(".gz") else open
    with opener(trace, "rb") as f:
        raw = f.read()
    head = raw[:65536]
    if b'"distributedInfo"' not in head:
        i = raw.index(b"{") + 1
        # HTA finds the rank with the regex '"rank":\\s+(\\d+)': keep the space after the colon
        raw = (
            raw[:i]
            + b'\n  "distributedInfo": {"rank": 0, "world_size": 1, "backend": "none"},'
            + raw[i:]
        )
    with gzip.open(dst, "wb", compresslevel=6) as g:
        g.write(raw)
    return d


# ---------------------------------------------------------------------------------- driver
def _summ(runs: list[dict]) -> dict:
    ok = [r for r in runs if r.get("rc") == 0]
    use = ok or runs
    return {
        "n": len(runs),
        "n_ok": len(ok),
        "wall_s_median": statistics.median(r["wall_s"] for r in use),
        "wall_s_all": [round(r["wall_s"], 2) for r in runs],
        "peak_rss_mb_median": statistics.median(r["peak_rss_mb"] for r in use),
        "peak_rss_mb_all": [round(r["peak_rss_mb"]) for r in runs],
        # CPU seconds (user + sys) are less sensitive than wall time to other load on the host
        "cpu_s_median": statistics.median(r["user_s"] + r["sys_s"] for r in use),
    }


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--measure"]:  # internal: --measure STDOUT_PATH -- CMD...
        return measure_main(argv[3:] if argv[2:3] == ["--"] else argv[2:], argv[1])
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("trace", nargs="?")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--work", help="scratch folder (default: a new temporary one, removed after)")
    ap.add_argument("--ours-python", default=sys.executable)
    ap.add_argument("--hta-python", default=os.path.join(REPO, ".venv-hta", "bin", "python"))
    ap.add_argument("--skip-ours", action="store_true")
    ap.add_argument("--skip-hta", action="store_true")
    ap.add_argument("--json-out")
    ap.add_argument("--hta-worker", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)

    if a.hta_worker:
        return hta_worker(a.hta_worker)
    if not a.trace:
        ap.error("TRACE is required")

    trace = os.path.abspath(a.trace)
    work = a.work or tempfile.mkdtemp(prefix="bench_hta_")
    os.makedirs(work, exist_ok=True)
    result: dict = {
        "trace": a.trace,
        "trace_bytes": os.path.getsize(trace),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.python_version()}",
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "repeat": a.repeat,
    }
    try:
        if not a.skip_ours:
            cmd = [a.ours_python, "-m", "jupyter_gpuprof", "analyze", trace, "--json"]
            runs = []
            for i in range(a.repeat):
                out = os.path.join(work, f"ours_{i}.json")
                r = measured(cmd, out)
                try:
                    with open(out) as f:
                        rep = json.load(f)
                    r["verdict"] = (rep.get("verdict") or {}) if isinstance(rep, dict) else None
                    r["output_bytes"] = os.path.getsize(out)
                except Exception as e:
                    r["output_error"] = f"{type(e).__name__}: {e}"
                runs.append(r)
                print(
                    f"ours  run {i + 1}: rc={r['rc']} "
                    f"{r['wall_s']:.2f} s, {r['peak_rss_mb']:.0f} MB",
                    flush=True,
                )
            result["ours"] = {
                "cmd": "python -m jupyter_gpuprof analyze TRACE --json",
                **_summ(runs),
                "verdict": runs[-1].get("verdict"),
                "stderr_tail": runs[-1]["stderr_tail"][-500:],
            }

        if not a.skip_hta:
            if not os.path.exists(a.hta_python):
                raise SystemExit(f"no HTA python at {a.hta_python} (see this script's docstring)")
            t0 = time.perf_counter()
            hdir = prepare_hta_dir(trace, work)
            result["hta_prepare_s_untimed"] = round(time.perf_counter() - t0, 1)
            cmd = [a.hta_python, os.path.abspath(__file__), "--hta-worker", hdir]
            runs = []
            for i in range(a.repeat):
                out = os.path.join(work, f"hta_{i}.json")
                r = measured(cmd, out)
                with open(out) as f:
                    lines = [ln for ln in f.read().splitlines() if ln.startswith("{")]
                r["detail"] = json.loads(lines[-1]) if lines else {"error": "no result line"}
                runs.append(r)
                ph = r["detail"].get("phases", {})
                print(
                    f"HTA   run {i + 1}: rc={r['rc']} "
                    f"{r['wall_s']:.2f} s, {r['peak_rss_mb']:.0f} MB; "
                    + ", ".join(
                        f"{k} {v['s']:.1f}s{'' if v['ok'] else ' FAILED'}" for k, v in ph.items()
                    ),
                    flush=True,
                )
            phases = {}
            for k in runs[0]["detail"].get("phases", {}):
                vals = [
                    r["detail"]["phases"][k] for r in runs if k in r["detail"].get("phases", {})
                ]
                phases[k] = {
                    "s_median": statistics.median(v["s"] for v in vals),
                    "ok": all(v["ok"] for v in vals),
                    "error": next((v.get("error") for v in vals if not v["ok"]), None),
                    "result": vals[-1].get("result"),
                }
            result["hta"] = {
                "version": runs[-1]["detail"].get("hta_version"),
                **_summ(runs),
                "phases": phases,
            }
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)

    # table
    print()
    print(
        f"trace: {a.trace} ({result['trace_bytes'] / 2**20:.1f} MiB); machine: {result['machine']}"
    )
    print(f"{'tool':<34}{'wall s (median)':>16}{'CPU s':>8}{'peak RSS MB':>14}   runs")
    for key, label in (
        ("ours", "jupyter_gpuprof analyze --json"),
        ("hta", "HTA 0.5.0 load + 3 analyses"),
    ):
        if key in result:
            s = result[key]
            print(
                f"{label:<34}{s['wall_s_median']:>16.2f}{s['cpu_s_median']:>8.2f}"
                f"{s['peak_rss_mb_median']:>14.0f} "
                f"  {s['wall_s_all']}"
            )
    if "hta" in result:
        for k, v in result["hta"]["phases"].items():
            print(
                f"  HTA {k:<28}{v['s_median']:>16.2f}   "
                f"{'ok' if v['ok'] else 'FAILED: ' + str(v['error'])[:150]}"
            )
    if "ours" in result and "hta" in result:
        o, h = result["ours"], result["hta"]
        result["ratios"] = {
            "wall_hta_over_ours": h["wall_s_median"] / o["wall_s_median"],
            "peak_mb_hta_over_ours": h["peak_rss_mb_median"] / o["peak_rss_mb_median"],
            "cpu_hta_over_ours": h["cpu_s_median"] / o["cpu_s_median"],
        }
        print(
            f"ratios: HTA time / ours = {result['ratios']['wall_hta_over_ours']:.1f}x, "
            f"HTA peak MB / ours = {result['ratios']['peak_mb_hta_over_ours']:.2f}x, "
            f"HTA CPU s / ours = {result['ratios']['cpu_hta_over_ours']:.1f}x"
        )
    if a.json_out:
        write_json(a.json_out, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
