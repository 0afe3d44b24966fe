"""Part C of the memory acceptance: two real scripts of the corpus under `jupyter gpuprof run`.

Each script (laid out by `benchmarks/corpus/layout.py`) runs under `jupyter gpuprof run
--stop-after-capture`, as `benchmarks/corpus/run_gpu.py` builds its command; its run folder's
report gives the kinds at the peak and the priced fixes, its meta the run's own
`max_memory_allocated`. Then the (two largest) offered fixes the script has an option for
(`FIX_ARGS`) run the same way (history off) and their run's peak is the measured one:
nanoGPT's micro-batch split is `--batch_size` halved with `--gradient_accumulation_steps`
doubled, its autocast `--dtype=bfloat16`; the ResNet's `-b` halved stands for a 2-way split
(the peak of one micro-batch; the script has no accumulation option).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "corpus"))
from layout import make_data  # noqa: E402 - the corpus folder's own helper
from run_gpu import script_env  # noqa: E402 - one environment for every corpus run

MANIFEST = HERE / "corpus" / "manifest.json"
PY = sys.executable
#: the capture's schedule for these runs: short, the scripts must finish in about a minute
CAPTURE = ["--steps", "6", "--warmup", "2", "--wait", "1", "--prof-warmup", "1", "--active", "2"]
#: per script: the fixes it can apply through its own options (fix id -> extra arguments;
#: {b} is the manifest's batch over the split's k, {a} its accumulation steps times k)
FIX_ARGS: dict[str, dict[str, list[str]]] = {
    "nanogpt-fp32": {"micro_batches": ["--batch_size={b}", "--gradient_accumulation_steps={a}"],
                     "autocast": ["--dtype=bfloat16"]},
    "imagenet-resnet50-dummy": {"micro_batches": ["-b", "{b}"]},
}
#: the manifest command's batch and accumulation steps, per script
BATCH = {"nanogpt-fp32": (8, 4), "imagenet-resnet50-dummy": (64, 1)}
TOOL_TIMEOUT_S = 150
#: the expandable-segments fix as the report writes it (an environment variable)
EXPANDABLE_ENV = {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}


def _entry(script_id: str) -> dict[str, Any]:
    scripts = json.loads(MANIFEST.read_text())["scripts"]
    return next(s for s in scripts if s["id"] == script_id)


def _under_tool(entry: dict[str, Any], folder: Path, runs: Path, extra: list[str],
                flags: list[str]) -> dict[str, Any]:
    """The script (with `extra` arguments) under the tool; its run's memory part and peak."""
    from jupyter_gpuprof.report.build import analyze_path
    from jupyter_gpuprof.store import open_run

    env = script_env(entry)
    base = [PY, *entry.get("launcher", []), *entry["command"], *extra]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([PY, "-m", "jupyter_gpuprof", "run", "--runs-root", str(runs),
                               "--name", entry["id"], "--stop-after-capture", *CAPTURE, *flags,
                               "--", *base], cwd=folder, env=env, capture_output=True,
                              text=True, timeout=TOOL_TIMEOUT_S)
        code: Any = proc.returncode
        tail = (proc.stdout + proc.stderr)[-600:]
    except subprocess.TimeoutExpired:
        code, tail = "timeout", ""
    out: dict[str, Any] = {"code": code, "wall_s": time.perf_counter() - t0, "args": extra,
                           "tail": tail}
    folders = sorted(p for p in runs.glob("*") if p.is_dir()) if runs.is_dir() else []
    if not folders:
        return out
    out["max_memory_allocated"] = open_run(folders[-1]).meta.max_memory_allocated_bytes
    try:
        summary = analyze_path(folders[-1]).to_json()
        out["memory"] = summary.get("memory")
        out["median_ms"] = (summary.get("steps") or {}).get("median_ms")
    except Exception as e:  # noqa: BLE001 - one line in the results, the other runs go on
        out["analysis_error"] = f"{type(e).__name__}: {e}"
    return out


def fix_args(script_id: str, fix: dict[str, Any]) -> list[str]:
    """The script's own options for an offered fix (a split: the k the fix names)."""
    from memory_acceptance_gpu import split_k

    batch, accumulation = BATCH[script_id]
    k = split_k(fix) if fix["id"] == "micro_batches" else 1
    return [a.format(b=batch // k, a=accumulation * k) for a in FIX_ARGS[script_id][fix["id"]]]


def by_hand(entry: dict[str, Any]) -> dict[str, Any]:
    """The memory fixes the script has no option for, applied by hand: the manifest's
    `memory_fixes` (text patches of a copy of its folder, made as its speed fixes are:
    `run_gpu._variant`). The ResNet: its training forward and loss under bf16 autocast, its 16
    bottleneck blocks (the layers the report names) each under non-reentrant checkpointing;
    nanoGPT: its 12 blocks under non-reentrant checkpointing."""
    return dict(entry.get("memory_fixes") or {})


def edited(entry: dict[str, Any], folder: Path, fix_id: str) -> Path:
    """The folder with the fix made by hand (its copy, beside it)."""
    from run_gpu import _variant

    copy, _ = _variant(folder, f"memory-{fix_id}", by_hand(entry)[fix_id])
    return copy


#: runs a script as its own `__main__` and prints the process's max_memory_allocated and
#: max_memory_reserved at exit
PLAIN_RUNNER = ("import atexit, runpy, sys, torch\n"
                "atexit.register(lambda: print('MAX_MEMORY_ALLOCATED', "
                "torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved(), "
                "flush=True))\n"
                "sys.argv = sys.argv[1:]\n"
                "runpy.run_path(sys.argv[0], run_name='__main__')\n")


def plain_peak(entry: dict[str, Any], folder: Path, extra: list[str]) -> int | None:
    """The script alone: its `max_memory_allocated` (`plain_peaks`)."""
    return plain_peaks(entry, folder, extra)[0]


def plain_peaks(entry: dict[str, Any], folder: Path, extra: list[str],
                env_extra: dict[str, str] | None = None) -> tuple[int | None, int | None]:
    """The script alone (no tool), its run's `max_memory_allocated`: the tool's own hooks
    cannot be what moved a fix's peak. A script that trains for longer than its manifest's
    `memory_stop_after_s` (else `stop_after_s`; the ResNet's epoch) is interrupted there
    (SIGINT: its exit hook still prints)."""
    import signal

    env = {**script_env(entry), **(env_extra or {})}
    proc = subprocess.Popen([PY, "-c", PLAIN_RUNNER, *entry["command"], *extra], cwd=folder,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True)
    try:
        said, _ = proc.communicate(timeout=entry.get("memory_stop_after_s",
                                                     entry.get("stop_after_s", TOOL_TIMEOUT_S)))
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)
        try:
            said, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            said, _ = proc.communicate()
    peaks = [ln.split()[1:3] for ln in said.splitlines() if ln.startswith("MAX_MEMORY_ALLOCATED ")]
    return (int(peaks[-1][0]), int(peaks[-1][1])) if peaks else (None, None)


def run_script(script_id: str, corpus: Path, out: Path, max_fixes: int,
               only: set[str] | None = None) -> dict[str, Any]:
    """One script under the tool, then up to `max_fixes` of its offered fixes by hand (those
    in `only`, when given: one question per call when device time is short)."""
    entry = _entry(script_id)
    folder = corpus / entry["id"]
    if not folder.is_dir():
        return {"failed": f"{folder} is not laid out (benchmarks/corpus/layout.py)"}
    make_data(entry, folder)
    runs = out / "runs" / script_id
    res: dict[str, Any] = {"tool": _under_tool(entry, folder, runs / "tool", [], [])}
    offered = ((res["tool"].get("memory") or {}).get("over_step") or {}).get("fixes") or []
    res["offered"] = [{k: f[k] for k in ("id", "title", "saves_bytes", "time_ms")}
                      for f in offered]
    offered = [f for f in offered if only is None or f["id"] in only]
    res["fixes"] = {}
    for f in [f for f in offered if f["id"] in FIX_ARGS[script_id]][:max_fixes]:
        res["fixes"][f["id"]] = _under_tool(entry, folder, runs / f["id"],
                                            fix_args(script_id, f), ["--no-memory-history"])
    copies = {f["id"]: edited(entry, folder, f["id"]) for f in offered
              if f["id"] in by_hand(entry)}
    for fix_id, copy in copies.items():
        res["fixes"][fix_id] = _under_tool(entry, copy, runs / fix_id, [],
                                           ["--no-memory-history"])
        res["fixes"][fix_id]["args"] = [f"(by hand: {fix_id} edit)"]
    res["plain"] = {"base": plain_peak(entry, folder, [])}
    for f in offered:
        if f["id"] in copies:
            res["plain"][f["id"]] = plain_peak(entry, copies[f["id"]], [])
        elif f["id"] in res["fixes"]:
            res["plain"][f["id"]] = plain_peak(entry, folder, fix_args(script_id, f))
    if any(f["id"] == "expandable_segments" for f in offered):
        # what it frees is reserved memory: the reserved peak alone, with and without it
        res["plain_reserved"] = {
            "base": plain_peaks(entry, folder, [])[1],
            "expandable_segments": plain_peaks(entry, folder, [], EXPANDABLE_ENV)[1]}
    print(f"C {script_id}: {res['tool'].get('code')}, fixes {list(res['fixes'])}", flush=True)
    return res


def run_corpus(corpus: Path, out: Path, max_fixes: int = 2, only: set[str] | None = None,
               scripts: list[str] | None = None) -> dict[str, Any]:
    """Every script in turn; each one's results written as soon as it is done (a call cut
    short by its time limit keeps the scripts it finished)."""
    from bench_analyze_vs_hta import write_json

    done: dict[str, Any] = {}
    for sid in scripts or list(FIX_ARGS):
        done[sid] = run_script(sid, corpus, out, max_fixes, only)
        out.mkdir(parents=True, exist_ok=True)
        write_json(str(out / "memory_acceptance_C_partial.json"), {"corpus": done})
    return done


def corpus_lines(corpus: dict[str, Any]) -> list[str]:
    """Per script: kinds' sum vs the run's peak, and each fix's predicted vs measured saving."""
    from memory_acceptance_gpu import _gb, _pct, error_pct, kinds_at_peak

    lines = []
    for sid, res in corpus.items():
        if "failed" in res:
            lines.append(f"== {sid}: {res['failed']}")
            continue
        tool = res["tool"]
        kinds = kinds_at_peak(tool.get("memory"))
        total = sum(kinds.values()) if kinds else None
        peak = tool.get("max_memory_allocated")
        lines.append(f"== {sid} (exit {tool.get('code')}): kinds at the peak {_gb(total)} GB vs "
                     f"the run's max_memory_allocated {_gb(peak)} GB: "
                     f"{_pct(error_pct(total, peak))}")
        predicted = {f["id"]: f for f in res.get("offered") or []}
        for fix_id, run in (res.get("fixes") or {}).items():
            p = predicted[fix_id]["saves_bytes"]
            got = run.get("max_memory_allocated")
            measured = peak - got if peak is not None and got is not None else None
            lines.append(f"   {fix_id} ({' '.join(run['args'])}): predicted {_gb(p)} GB, "
                         f"measured {_gb(measured)} GB ({_pct(error_pct(p, measured))}); step "
                         f"{run.get('median_ms')} ms vs {tool.get('median_ms')} ms")
            plain = res.get("plain") or {}
            if plain.get("base") is not None and plain.get(fix_id) is not None:
                alone = plain["base"] - plain[fix_id]
                lines.append(f"      alone (no tool): {_gb(plain['base'])} → "
                             f"{_gb(plain[fix_id])} GB, measured {_gb(alone)} GB "
                             f"({_pct(error_pct(p, alone))})")
        reserved = res.get("plain_reserved") or {}
        if reserved.get("base") is not None and reserved.get("expandable_segments") is not None:
            p = predicted["expandable_segments"]["saves_bytes"]
            got = reserved["base"] - reserved["expandable_segments"]
            lines.append(f"   expandable_segments (alone, reserved): predicted {_gb(p)} GB, "
                         f"{_gb(reserved['base'])} → {_gb(reserved['expandable_segments'])} GB, "
                         f"measured {_gb(got)} GB ({_pct(error_pct(p, got))})")
        if not res.get("fixes"):
            lines.append("   no offered fix the script has an option for: "
                         + ", ".join(f["id"] for f in res.get("offered") or []))
    return lines
