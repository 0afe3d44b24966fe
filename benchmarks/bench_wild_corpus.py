"""Corpus benchmark: `gpuprof analyze --json` on third-party traces, beside an independent count.

It exists to show, trace by trace, what the reader makes of traces other people wrote (old
torch, AMD, MTIA, other tools' folder layouts, many ranks): whether it exits cleanly, how long
it takes, its peak memory, and whether its steps and GPU busy % agree with
``benchmarks/wild_truth.py`` (stdlib only, no code of ours). The package is used only through
its command line, one subprocess per trace, so a crash or a slow trace costs one row.

A *unit* is every trace file under the roots, plus every folder holding two or more traces
(analysed as one multi-rank job, the way a user would point the command at it).

    python benchmarks/bench_wild_corpus.py tests/data/wild FETCHED_DIR --json OUT.json

Columns: ``rc`` exit code; ``s`` wall seconds; ``MB`` peak RSS of the analyze process (GNU time);
``steps`` ours / independent (with the independent step source); ``busy %`` ours /
independent (ProfilerStep window when the trace has steps, else first-to-last GPU event);
``verdict`` our category; ``top`` the category of our largest priced finding (a verdict that
differs from it contradicts its own numbers unless it says why); ``note`` the first line of
stderr when the command failed, else the independent count's remarks.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wild_truth  # noqa: E402  (a sibling script, not a package)

TIMEOUT_S = 300
TIME_BIN = "/usr/bin/time"  # GNU time, for the peak RSS of the analyze process alone
# the independent figures a row is judged on (the full counts are in tests/data/wild/truth.json)
RECORDED_TRUTH = {
    "steps", "step_source", "step_ms", "busy_pct", "gpu_busy_pct", "busy_in_steps_pct",
    "kernels", "vendor", "device_properties", "rank", "world_size", "form", "files", "ranks",
    "world_sizes", "one_job", "busy_pct_per_file", "device_names", "one_time_calls_ms",
}  # fmt: skip
ANALYZE = [sys.executable, "-m", "jupyter_gpuprof", "analyze", "--json"]


def units(root: str) -> list[str]:
    """Every trace file under root, then every folder that holds two or more of them."""
    files = wild_truth.trace_files(root)
    by_dir: dict[str, int] = {}
    for f in files:
        by_dir[os.path.dirname(f)] = by_dir.get(os.path.dirname(f), 0) + 1
    return files + sorted(d for d, n in by_dir.items() if n > 1)


def run_analyze(path: str, timeout_s: int = TIMEOUT_S) -> dict:
    """One analyze subprocess: exit code, wall time, its own peak RSS, parsed JSON or stderr."""
    start = time.perf_counter()
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.NamedTemporaryFile("r") as rss,
    ):
        # GNU time measures its own child. A child's ru_maxrss straight from wait4 would carry
        # this process's footprint: Linux keeps the pre-exec high-water mark of the fork.
        wrapper = [TIME_BIN, "-f", "%M", "-o", rss.name] if os.path.exists(TIME_BIN) else []
        proc = subprocess.Popen(
            [*wrapper, *ANALYZE, path], stdin=subprocess.DEVNULL, stdout=out, stderr=err
        )
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
        peak_kb = rss.read().strip().splitlines()[-1:] if wrapper else []
    lines = stderr.decode(errors="replace").strip().splitlines()
    rc = proc.returncode
    if wrapper and lines and lines[-1].startswith("Command exited with non-zero status"):
        lines.pop()  # GNU time's own line; the exit code is already in rc
    result = {
        "rc": rc,
        "wall_s": round(time.perf_counter() - start, 2),
        "peak_rss_mb": round(int(peak_kb[0]) / 1024, 1)
        if peak_kb and peak_kb[0].isdigit()
        else None,
        "stderr": lines[:3],
    }
    if rc == 0:
        try:
            result["report"] = json.loads(stdout)
        except json.JSONDecodeError as exc:
            result["stderr"].insert(0, f"stdout is not JSON: {exc}")
    return result


def _largest_priced(findings: list[dict]) -> str | None:
    """Category of the finding worth the most (expected gain, then cost)."""
    priced = [f for f in findings if f.get("expected_gain_pct") or f.get("cost_ms")]
    if not priced:
        return None
    best = max(priced, key=lambda f: (f.get("expected_gain_pct") or 0, f.get("cost_ms") or 0))
    return best.get("category")


def ours(run: dict) -> dict:
    """The figures of our report that the table compares."""
    rep = run.get("report") or {}
    steps, gpu, verdict = rep.get("steps") or {}, rep.get("gpu") or {}, rep.get("verdict") or {}
    busy = gpu.get("busy_pct")
    return {
        "steps": steps.get("n"),
        "step_source": steps.get("step_source"),
        "step_median_ms": steps.get("median_ms"),
        "busy_pct": round(busy, 2) if isinstance(busy, (int, float)) else None,
        "verdict": verdict.get("category"),
        "verdict_summary": verdict.get("summary"),
        "verdict_reasons": verdict.get("reasons") or [],
        "top_finding": _largest_priced(rep.get("findings") or []),
        "ranks": len(rep.get("ranks") or []),
        "warnings": rep.get("warnings"),
    }


def truth_of(path: str) -> dict:
    """The independent figures for a file, or for a folder taken as one job."""
    if os.path.isdir(path):
        per_file = {f: wild_truth.measure_file(f) for f in wild_truth.trace_files(path)}
        summary = wild_truth.folder_summary(per_file)
        busy = [_busy(r) for r in per_file.values()]
        return {**summary, "busy_pct_per_file": busy, "steps": None, "step_source": "per rank"}
    t = wild_truth.measure_file(path)
    return {**t, "busy_pct": _busy(t)}


def _busy(t: dict):
    """Independent busy %: over the ProfilerStep window when there is one, else the GPU span."""
    return (
        t["busy_in_steps_pct"] if t.get("busy_in_steps_pct") is not None else t.get("gpu_busy_pct")
    )


def _fmt(x) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.1f}"
    return str(x)


def row(label: str, run: dict, mine: dict, truth: dict) -> str:
    """One markdown table row."""
    if truth.get("step_source") == "per rank":
        t_steps = f"{truth.get('files')} files, ranks {truth.get('ranks') or '–'}"
        t_busy = "/".join(_fmt(b) for b in truth.get("busy_pct_per_file", []))
    else:
        t_steps = f"{_fmt(truth.get('steps'))} ({truth.get('step_source') or 'none'})"
        t_busy = _fmt(truth.get("busy_pct"))
    note = "; ".join(run.get("stderr") or [])[:120] if run["rc"] else ""
    if mine["verdict"] and mine["top_finding"] and mine["verdict"] != mine["top_finding"]:
        said = any("not the largest priced finding" in r or "no finding is worth" in r
                   for r in mine.get("verdict_reasons") or [])
        note = (note + " verdict is not the largest priced finding"
                + (" (the report says why)" if said else "")).strip()
    if mine.get("warnings") and not run["rc"]:
        note = (note + " " + str(mine["warnings"][0])[:100]).strip()
    cells = [
        f"`{label}`",
        str(run["rc"]),
        _fmt(run["wall_s"]),
        _fmt(run["peak_rss_mb"]),
        f"{_fmt(mine['steps'])} ({mine.get('step_source') or '–'}) / {t_steps}",
        f"{_fmt(mine['busy_pct'])} / {t_busy}",
        _fmt(mine["verdict"]),
        _fmt(mine["top_finding"]),
        note.replace("|", "\\|"),
    ]
    return "| " + " | ".join(cells) + " |"


HEADER = (
    "| trace | rc | s | MB | steps ours / indep. | busy % ours / indep. | verdict | top | note |\n"
    "|---|---|---|---|---|---|---|---|---|"
)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("roots", nargs="+", help="corpus folders (committed set, fetched set)")
    ap.add_argument("--json", dest="json_out", help="write every row's figures here")
    ap.add_argument("--timeout", type=int, default=TIMEOUT_S, help="seconds per unit")
    a = ap.parse_args(argv)
    rows, records = [], []
    for root in a.roots:
        if not os.path.isdir(root):
            sys.exit(f"{root}: no such folder; fetch it with benchmarks/fetch_wild_corpus.py")
        base = os.path.dirname(os.path.abspath(root).rstrip("/"))
        for unit in units(root):
            label = os.path.relpath(unit, base) + ("/" if os.path.isdir(unit) else "")
            run = run_analyze(unit, a.timeout)
            run["stderr"] = [
                line.replace(unit.rstrip("/"), label.rstrip("/")) for line in run["stderr"]
            ]
            mine, truth = ours(run), truth_of(unit)
            rows.append(row(label, run, mine, truth))
            print(rows[-1], file=sys.stderr, flush=True)
            run.pop("report", None)
            kept = {k: v for k, v in truth.items() if k in RECORDED_TRUTH}
            records.append({"unit": label, "run": run, "ours": mine, "independent": kept})
    print(HEADER)
    print("\n".join(rows))
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(records, f, indent=1, sort_keys=True, default=str)
            f.write("\n")


if __name__ == "__main__":
    main()
