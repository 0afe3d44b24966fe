"""Run the corpus on one GPU: each script alone, under `jupyter gpuprof run`, and with its fixes.

    [CORPUS_TOOL_ONLY=ID,...] python benchmarks/corpus/run_gpu.py CORPUS OUT [ID ...]

For each manifest entry laid out under CORPUS (benchmarks/corpus/layout.py): the command alone,
its own log parsed into iteration times (the independent clock); the same command under
`jupyter gpuprof run --stop-after-capture` (exit status, seconds to the report, the report as
text and JSON, and the run folder's trace kept as data); and each by-hand fix (the script's own
options) alone, timed by its own log. Writes OUT/corpus.json; prints one line per run.
CORPUS_FIXES=0 leaves the by-hand fixes out (an observer check: the script alone against the
script under the tool, both by its own log); CORPUS_FIX_NAMES=NAME,... runs only those fixes;
CORPUS_VARIANTS=0 leaves the entries' tool variants out; CORPUS_NO_TOOL=ID,... leaves the tool
out for those scripts (a fix measured again beside the script alone). CORPUS_PAIRS=N is the
observer check alone: N pairs of (the script alone, the script under the tool with no tries),
interleaved, each side timed by the script's own log (benchmarks/corpus/observer.py scores them);
CORPUS_PAIR_FLAGS adds capture options to their tool side. CORPUS_FIX_ROUNDS=N measures the
fixes alone in N interleaved rounds (the script alone and each fix a round, the order turned
each round; OBSERVER_CPUS pins them all; read by benchmarks/corpus/fix_rounds.py).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
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
#: the tool's own measured fixes (`--try`), as a user runs it: $CORPUS_TRY ("" for none)
TRY = os.environ.get("CORPUS_TRY", "auto")
#: capture options the observer pairs' tool side runs with ($CORPUS_PAIR_FLAGS, space-separated)
PAIR_FLAGS = os.environ.get("CORPUS_PAIR_FLAGS", "").split()


#: milliseconds in one unit of a script's own log (manifest `own_log.unit`)
UNIT_MS = {"ms": 1.0, "s": 1e3}


#: machine paths in what a run printed or wrote, and what stands for them in committed data
NEUTRAL = [(re.compile(rb"/[^\"\s]*/site-packages"), b"<site-packages>"),
           (re.compile(rb"/[^\"\s]*/bin/python3?"), b"python"),
           (re.compile(rb"/[^\"\s]*/\.corpus/[^/\"\s]+/"), b""),
           (re.compile(rb"/[^\"\s]*/runs-[^/\"\s]+/[^/\"\s]+"), b"<run folder>"),
           (re.compile(rb"/[^\"\s]*/(jupyter_gpuprof|benchmarks)/"), rb"\1/"),
           (re.compile(rb"/[^\"\s]*/lib/python3\.\d+/"), b"<stdlib>/"),
           (re.compile(rb"/(?:usr/)?lib/x86_64-linux-gnu/"), b"<system lib>/")]


def neutral(raw: bytes) -> bytes:
    """No machine paths: site-packages, the interpreter, the corpus folder, a run folder, the
    checkout, the standard library, the system's libraries."""
    for pattern, repl in NEUTRAL:
        raw = pattern.sub(repl, raw)
    return raw


def neutral_text(text: str) -> str:
    """`neutral` for what a script printed."""
    return neutral(text.encode("utf-8", "surrogateescape")).decode("utf-8", "surrogateescape")


def cpu_list(spec: str) -> set[int]:
    """The CPUs a Linux CPU list names ("2-5", "2,3,4", "0,4-7": sysfs's and taskset's form)."""
    cpus: set[int] = set()
    for part in spec.strip().split(","):
        if part:
            lo, _, hi = part.partition("-")
            cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def pin_from_env() -> list[int] | None:
    """Pin to $OBSERVER_CPUS ("2-5" or "2,3,4"), inherited by every process started after."""
    spec = os.environ.get("OBSERVER_CPUS", "")
    if not spec:
        return None
    cpus = cpu_list(spec)
    os.sched_setaffinity(0, cpus)
    return sorted(cpus)


def own_times(entry: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """The script's own clock: its logged iteration times, or, for a log that only counts
    iterations, the spacing of those lines as they arrived (wall time per iteration, epoch
    boundaries included); the first lines hold start-up and are left out."""
    log = entry["own_log"]
    skip = log.get("skip", 2)
    if log["group"] == 0:
        stamps = [t for t, line in run["lines"] if re.search(log["regex"], line)]
        per = log.get("per", 1)  # iterations one matching line stands for
        ms = [1e3 * (b - a) / per for a, b in zip(stamps, stamps[1:], strict=False)][skip:]
        basis = "the spacing of the script's log lines"
    else:
        found = re.findall(log["regex"], run["out"], flags=re.M)
        values = [float(m[log["group"] - 1] if isinstance(m, tuple) else m) for m in found]
        scale = UNIT_MS[log["unit"]]
        ms = [v * scale for v in values][skip:]
        basis = "the script's log"
        per = 1
    return {"n": len(ms), "skip": skip, "per": per,  # the iterations a value was divided by
            "median_ms": statistics.median(ms) if ms else None,
            "mean_ms": statistics.fmean(ms) if ms else None, "basis": basis,
            "series_ms": [round(v, 4) for v in ms]}


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float) -> dict[str, Any]:
    """Runs `cmd` with its output lines stamped as they arrive (stderr merged into stdout)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, bufsize=1)
    lines: list[tuple[float, str]] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append((time.perf_counter(), line))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        code: Any = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)  # a long script ends as a user would end it
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        code = "timeout"
    reader.join(timeout=10)
    out = "".join(line for _, line in lines)
    return {"code": code, "wall_s": time.perf_counter() - t0, "out": out, "err": "",
            "lines": lines}


def _variant(folder: Path, name: str, fix: Any) -> tuple[Path, list[str]]:
    """A fix's folder and extra arguments: the script's own options, or a copy of its folder
    with the fix's edits made (`patch`: file and [old, new] pairs, each found exactly once)."""
    if isinstance(fix, list):
        return folder, fix
    if not fix.get("patch"):
        return folder, list(fix.get("args", []))
    copy = folder.with_name(f"{folder.name}--{name}")
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(folder, copy, symlinks=True)
    for rel, pairs in fix["patch"].items():
        path = copy / rel
        text = path.read_text()
        for old, new in pairs:
            if text.count(old) != 1:
                raise ValueError(f"{name}: {rel} holds {text.count(old)} copies of {old!r}")
            text = text.replace(old, new)
        path.write_text(text)
    return copy, list(fix.get("args", []))


def script_env(entry: dict[str, Any]) -> dict[str, str]:
    """The environment a corpus script runs in: ours with its manifest's `env`, a PYTHONPATH of
    its own put before ours (minGPT's `.`: the tool must still import)."""
    own = {k: str(v) for k, v in entry.get("env", {}).items()}
    env = dict(os.environ, **own)
    paths = (own.get("PYTHONPATH", ""), os.environ.get("PYTHONPATH", ""))
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    return env


def run_entry(entry: dict[str, Any], corpus: Path, out: Path,
              tool_only: bool = False, no_tool: bool = False) -> dict[str, Any]:
    """One script alone, under the tool (and its `tool_variants`: capture options whose
    observer effect is measured), and with each fix; `tool_only`: the tool runs alone."""
    folder = corpus / entry["id"]
    env = script_env(entry)
    make_data(entry, folder)
    for prep in entry.get("prepare", []):
        _run([PY, prep], folder, env, 120)
    base = [PY, *entry.get("launcher", []), *entry["command"]]
    stop = entry.get("stop_after_s", PLAIN_TIMEOUT_S)
    result: dict[str, Any] = {"id": entry["id"], "structure": entry.get("structure")}
    kept = out / "kept" / entry["id"]
    if pairs := int(os.environ.get("CORPUS_PAIRS", "0")):
        result["pairs"] = []
        # the observer check's own command line and capture (a log fine enough, a baseline
        # long enough to hold several of its lines): benchmarks/corpus/observer.py
        obs = entry.get("observer", {})
        pair_base = [PY, *entry.get("launcher", []), *obs.get("command", entry["command"])]
        pair_entry = {**entry, "capture": obs.get("capture", entry.get("capture", CAPTURE))}
        result["observer"] = {"capture": pair_entry["capture"],
                              "iters_per_value": obs.get("iters_per_value", 1),
                              "first_iter": obs.get("first_iter", 0)}
        for i in range(pairs):  # alone, then under the tool: the same GPU, back to back
            alone = timed(entry, pair_base, folder, env, stop)
            tool = _tool(pair_entry, pair_base, folder, env, out, PAIR_FLAGS, f"pair{i}", kept)
            result["pairs"].append({"plain": alone, "tool": tool})
            print(f"{entry['id']} pair {i}: alone {alone['median_ms']} ms, tool baseline "
                  f"{tool['steps'].get('median_ms')} ms", flush=True)
        _pack(kept, out, entry["id"])
        return result
    if rounds := int(os.environ.get("CORPUS_FIX_ROUNDS", "0")):
        result["cpus"] = pin_from_env()
        result["rounds"] = fix_rounds(entry, folder, base, env, stop, _fix_names(entry), rounds)
        return result
    if not tool_only:
        result["plain"] = timed(entry, base, folder, env, stop, tail=800)
        print(f"{entry['id']} plain: {result['plain']['median_ms']} ms "
              f"({result['plain']['code']})", flush=True)
    if not no_tool:
        result["tool"] = _tool(entry, base, folder, env, out, [], "tool", kept)
        result["tool_variants"] = {
            name: _tool(entry, base, folder, env, out, flags, name, kept)
            for name, flags in entry.get("tool_variants", {}).items()
            if os.environ.get("CORPUS_VARIANTS") != "0"}
    result["fixes"] = {}
    fixes = {} if tool_only or os.environ.get("CORPUS_FIXES") == "0" else _fix_names(entry)
    for name, fix in fixes.items():
        where, extra = _variant(folder, name, fix)
        result["fixes"][name] = timed(entry, [*base, *extra], where, env, stop, tail=300)
        print(f"{entry['id']} fix {name}: {result['fixes'][name]['median_ms']} ms", flush=True)
    _pack(kept, out, entry["id"])
    return result


def timed(entry: dict[str, Any], cmd: list[str], where: Path, env: dict[str, str],
          stop: float, tail: int = 0) -> dict[str, Any]:
    """One run of the script (alone or with a fix) timed by its own log; `tail`: the last
    characters of its output kept beside the times."""
    ran = _run(cmd, where, env, stop)
    got = {"code": ran["code"], "wall_s": ran["wall_s"], **own_times(entry, ran)}
    if tail:
        got["tail"] = neutral_text(ran["out"][-tail:])
    return got


def _fix_names(entry: dict[str, Any]) -> dict[str, Any]:
    """The entry's by-hand fixes, only those CORPUS_FIX_NAMES names where it names some."""
    fixes: dict[str, Any] = entry.get("fixes", {})
    if only := set(filter(None, os.environ.get("CORPUS_FIX_NAMES", "").split(","))):
        fixes = {k: v for k, v in fixes.items() if k in only}
    return fixes


def fix_rounds(entry: dict[str, Any], folder: Path, base: list[str], env: dict[str, str],
               stop: float, fixes: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """`n` rounds of the script alone and with each fix, each a fresh process timed by its own
    log, the order turned by one each round so that no variant always runs first: one
    process a variant cannot judge a fix where a process's speed spreads more than the fix
    saves (benchmarks/corpus/fix_rounds.py reads them)."""
    variants = ["plain", *fixes]
    out = []
    for i in range(n):
        k = i % len(variants)
        r: dict[str, Any] = {"round": i + 1, "order": variants[k:] + variants[:k],
                             "plain": {}, "fixes": {}}
        for name in r["order"]:
            where, extra = (folder, []) if name == "plain" else _variant(folder, name,
                                                                         fixes[name])
            got = timed(entry, [*base, *extra], where, env, stop, tail=600)
            if name == "plain":
                r["plain"] = got
            else:
                r["fixes"][name] = got
            print(f"{entry['id']} round {i + 1} {name}: {got['median_ms']} ms "
                  f"(exit {got['code']})", flush=True)
            if got["code"]:  # a fix that fails says why, once a round
                print(got["tail"], flush=True)
        out.append(r)
    return out


def _pack(kept: Path, out: Path, name: str) -> None:
    """One file per script comes back: its reports and run folders."""
    if kept.is_dir():
        subprocess.run(["tar", "-czf", str(out / "kept" / f"{name}.tar.gz"), "-C",
                        str(kept), "."], check=False)
        shutil.rmtree(kept, ignore_errors=True)


def _tool(entry: dict[str, Any], base: list[str], folder: Path, env: dict[str, str], out: Path,
          flags: list[str], name: str, kept: Path, stop: bool = True) -> dict[str, Any]:
    """The command under `jupyter gpuprof run` (with `flags`): its report, kept under `kept`;
    `stop`: the script ends once the capture is written, else it runs to its own end."""
    runs = out / "runs" / entry["id"] / name
    tool = _run([PY, "-m", "jupyter_gpuprof", "run", "--runs-root", str(runs), "--name",
                 entry["id"], *(["--stop-after-capture"] if stop else []),
                 *entry.get("capture", CAPTURE), *flags,
                 *(["--try", TRY] if TRY and name == "tool" else []),
                 "--", *base], folder, env, TOOL_TIMEOUT_S)
    # run folders only: the runs root also holds the calibration record (calibration.jsonl)
    folders = sorted(p for p in runs.glob("*") if p.is_dir()) if runs.is_dir() else []
    report: dict[str, Any] = {}
    if folders:
        js = subprocess.run([PY, "-m", "jupyter_gpuprof", "analyze", "--json", str(folders[-1])],
                            cwd=folder, env=env, capture_output=True, text=True, timeout=300)
        try:
            report = json.loads(js.stdout)
        except ValueError:
            report = {"error": js.stderr[-500:]}
    kept.mkdir(parents=True, exist_ok=True)
    (kept / f"{name}.report.txt").write_text(neutral_text(tool["out"]))
    if folders:  # the run folder as data: meta, summary and trace
        shutil.copytree(folders[-1], kept / name, ignore=shutil.ignore_patterns("listing.json"),
                        dirs_exist_ok=True)
    meta = _meta(folders[-1]) if folders else {}
    done = {"code": tool["code"], "wall_s": tool["wall_s"],
            # the script's own clock while the tool ran it: the observer check's other side
            "own": own_times(entry, tool),
            "verdict": (report.get("verdict") or {}).get("category"),
            "steps": {k: (report.get("steps") or {}).get(k)
                      for k in ("median_ms", "p95_ms", "mean_ms", "n", "definition",
                                "capture_cost", "baseline_ms")},
            "findings": [{k: f.get(k) for k in ("id", "category", "expected_gain_pct",
                                                 "step_gain_pct", "predicted_step_ms",
                                                 "predicted_wall_ms", "driver", "fix", "tries")}
                         for f in report.get("findings") or []],
            "tries": report.get("tries"),
            "stack": report.get("stack"),
            "spikes": (report.get("steps") or {}).get("spikes"),
            "training": meta.get("training"), "status": meta.get("status"),
            "error": meta.get("error")}
    print(f"{entry['id']} {name}: {done['verdict']} {done['steps'].get('median_ms')} ms "
          f"({tool['code']})", flush=True)
    return done


def _meta(folder: Path) -> dict[str, Any]:
    try:
        return json.loads((folder / "meta.json").read_text())
    except (OSError, ValueError):
        return {}


if __name__ == "__main__":
    corpus, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    wanted = set(sys.argv[3:])
    tool_only = set(filter(None, os.environ.get("CORPUS_TOOL_ONLY", "").split(",")))
    no_tool = set(filter(None, os.environ.get("CORPUS_NO_TOOL", "").split(",")))
    entries = [e for e in json.loads(MANIFEST.read_text())["scripts"]
               if not wanted or e["id"] in wanted]
    results = []
    for e in entries:
        try:
            results.append(run_entry(e, corpus.resolve(), out.resolve(), e["id"] in tool_only,
                                     e["id"] in no_tool))
        except Exception as exc:  # noqa: BLE001 - one broken entry must not lose the others
            results.append({"id": e["id"], "error": f"{type(exc).__name__}: {exc}"})
        (out / "corpus.json").write_text(json.dumps(results, indent=1))
