"""Run the corpus on one GPU: each script alone, under `jupyter gpuprof run`, and with its fixes.

    python benchmarks/corpus/run_gpu.py CORPUS OUT [ID ...]

For each manifest entry laid out under CORPUS (benchmarks/corpus/layout.py): the command alone,
its own log parsed into iteration times (the independent clock); the same command under
`jupyter gpuprof run --stop-after-capture` (exit status, seconds to the report, the report as
text and JSON, and the run folder's trace kept as data); and each by-hand fix (the script's own
options) alone, timed by its own log. Writes OUT/corpus.json; prints one line per run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from layout import make_data  # noqa: E402 - the corpus folder's own helper

MANIFEST = Path(__file__).with_name("manifest.json")
PY = sys.executable
#: capture settings for every script that has no schedule of its own in the manifest
CAPTURE = ["--steps", "20", "--warmup", "3", "--wait", "1", "--prof-warmup", "1", "--active", "3"]
PLAIN_TIMEOUT_S, TOOL_TIMEOUT_S = 240, 300


def own_times(entry: dict[str, Any], out: str, wall_s: float) -> dict[str, Any]:
    """The script's own clock: its logged iteration times, or wall time over its iterations."""
    log = entry["own_log"]
    found = re.findall(log["regex"], out, flags=re.M)
    if log["group"] == 0:  # the log counts iterations: wall time per iteration
        n = len(found)
        return {"n": n, "median_ms": 1e3 * wall_s / n if n else None, "basis": "wall / iterations"}
    values = [float(m[log["group"] - 1] if isinstance(m, tuple) else m) for m in found]
    scale = {"ms": 1.0, "s": 1e3}[log["unit"]]
    ms = [v * scale for v in values][2:]  # the first iterations include start-up
    return {"n": len(ms), "median_ms": statistics.median(ms) if ms else None,
            "mean_ms": statistics.fmean(ms) if ms else None, "basis": "the script's log"}


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float) -> dict[str, Any]:
    t0 = time.perf_counter()
    try:
        done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout)
        code, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as e:
        code = "timeout"
        out = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = (e.stderr or b"").decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
    return {"code": code, "wall_s": time.perf_counter() - t0, "out": out, "err": err}


def run_entry(entry: dict[str, Any], corpus: Path, out: Path) -> dict[str, Any]:
    folder = corpus / entry["id"]
    env = dict(os.environ, **{k: str(v) for k, v in entry.get("env", {}).items()})
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH", ""),
                                                    os.environ.get("PYTHONPATH", "")) if p)
    make_data(entry, folder)
    for prep in entry.get("prepare", []):
        _run([PY, prep], folder, env, 120)
    base = [PY, *entry.get("launcher", []), *entry["command"]]
    stop = entry.get("stop_after_s", PLAIN_TIMEOUT_S)
    result: dict[str, Any] = {"id": entry["id"], "structure": entry.get("structure")}
    plain = _run(base, folder, env, stop)
    result["plain"] = {"code": plain["code"], "wall_s": plain["wall_s"],
                       **own_times(entry, plain["out"] + plain["err"], plain["wall_s"]),
                       "tail": (plain["out"] + plain["err"])[-800:]}
    print(f"{entry['id']} plain: {result['plain']['median_ms']} ms ({plain['code']})", flush=True)
    runs = out / "runs" / entry["id"]
    tool = _run([PY, "-m", "jupyter_gpuprof", "run", "--runs-root", str(runs), "--name",
                 entry["id"], "--stop-after-capture", *entry.get("capture", CAPTURE), "--", *base],
                folder, env, TOOL_TIMEOUT_S)
    folders = sorted(runs.glob("*")) if runs.is_dir() else []
    report: dict[str, Any] = {}
    if folders:
        js = _run([PY, "-m", "jupyter_gpuprof", "analyze", "--json", str(folders[-1])], folder,
                  env, 300)
        try:
            report = json.loads(js["out"])
        except ValueError:
            report = {"error": js["err"][-500:]}
    (out / f"{entry['id']}.report.txt").write_text(tool["out"] + "\n--- stderr\n" + tool["err"])
    result["tool"] = {"code": tool["code"], "wall_s": tool["wall_s"],
                      "verdict": (report.get("verdict") or {}).get("category"),
                      "steps": {k: (report.get("steps") or {}).get(k)
                                for k in ("median_ms", "p95_ms", "mean_ms", "n", "definition")},
                      "findings": [{k: f.get(k) for k in ("category", "expected_gain_pct",
                                                           "predicted_step_ms", "fix")}
                                   for f in report.get("findings") or []],
                      "training": _meta(folders[-1]).get("training") if folders else None,
                      "status": _meta(folders[-1]).get("status") if folders else None,
                      "error": _meta(folders[-1]).get("error") if folders else None}
    print(f"{entry['id']} tool: {result['tool']['verdict']} "
          f"{result['tool']['steps'].get('median_ms')} ms ({tool['code']})", flush=True)
    result["fixes"] = {}
    for name, extra in entry.get("fixes", {}).items():
        fixed = _run([*base, *extra], folder, env, stop)
        result["fixes"][name] = {"code": fixed["code"], "wall_s": fixed["wall_s"],
                                 **own_times(entry, fixed["out"] + fixed["err"], fixed["wall_s"])}
        print(f"{entry['id']} fix {name}: {result['fixes'][name]['median_ms']} ms", flush=True)
    if folders:  # the run folder as data: meta and trace (the tries would go beside them)
        keep = out / "runs_kept" / entry["id"]
        shutil.copytree(folders[-1], keep, ignore=shutil.ignore_patterns("listing.json"))
    return result


def _meta(folder: Path) -> dict[str, Any]:
    try:
        return json.loads((folder / "meta.json").read_text())
    except (OSError, ValueError):
        return {}


if __name__ == "__main__":
    corpus, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    wanted = set(sys.argv[3:])
    entries = [e for e in json.loads(MANIFEST.read_text())["scripts"]
               if not wanted or e["id"] in wanted]
    results = []
    for e in entries:
        try:
            results.append(run_entry(e, corpus.resolve(), out.resolve()))
        except Exception as exc:  # noqa: BLE001 - one broken entry must not lose the others
            results.append({"id": e["id"], "error": f"{type(exc).__name__}: {exc}"})
        (out / "corpus.json").write_text(json.dumps(results, indent=1))
