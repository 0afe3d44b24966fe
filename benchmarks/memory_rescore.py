"""The memory acceptance's fixes priced again by the current code, against what the GPU measured.

    python benchmarks/memory_rescore.py OUTDIR

Reads OUTDIR/memory_acceptance*.json (the parts merged) and the run folders that
`memory_acceptance_gpu.py` keeps under OUTDIR/runs (each capture's allocator history), prices
each model's memory fixes and the out-of-memory split again (`report.memory_summary
.memory_blocks`, the report's own path) and prints the acceptance's tables with them: a change to
a fix's price is checked against the H200's measurements on a CPU. A fix's time is the first
run's (it needs the trace; the saving does not).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from memory_acceptance_gpu import split_k, table  # noqa: E402


def load_results(out: Path) -> dict[str, Any]:
    """The acceptance's raw results, its parts' files merged (A's models, B's oom, C's corpus)."""
    merged: dict[str, Any] = {"models": {}}
    for path in sorted(out.glob("memory_acceptance*.json")):
        part = json.loads(path.read_text())
        merged["models"].update(part.get("models") or {})
        merged.update({k: v for k, v in part.items() if k in ("oom", "corpus", "quick")})
    return merged


def run_folder(out: Path, recorded: str | None, *under: str) -> Path | None:
    """The run folder a capture recorded, where it is now: its own path, else found by its name
    under OUTDIR/runs/<under…> (the folder copied off the GPU host), else the only one there."""
    if recorded and Path(recorded).is_dir():
        return Path(recorded)
    root = out.joinpath("runs", *under)
    if recorded and (root / Path(recorded).name).is_dir():
        return root / Path(recorded).name
    found = sorted(p for p in root.glob("*") if p.is_dir()) if root.is_dir() else []
    return found[-1] if found else None


def repriced(run: Path, old: dict[str, Any] | None, error: str | None = None) -> dict[str, Any]:
    """The run's memory block priced by the current code, the old fixes' times kept."""
    import msgspec

    from jupyter_gpuprof.report.memory_summary import memory_blocks

    over, oom, _ = memory_blocks(run, (old or {}).get("gpu_total_bytes"), error)
    new = msgspec.to_builtins({"over_step": over, "oom": oom})
    times = {f["id"]: f for f in (((old or {}).get("over_step") or {}).get("fixes") or [])}
    for fix in (new["over_step"] or {}).get("fixes") or []:
        if fix["id"] in times and fix.get("time_ms") is None:
            fix["time_ms"] = times[fix["id"]].get("time_ms")
            fix["time_note"] = times[fix["id"]].get("time_note")
    return {**(old or {}), **new}


def oom_verdict(oom: dict[str, Any]) -> str:
    """The split recommended now against the splits measured under the same cap."""
    fixes = (((oom.get("capture") or {}).get("memory") or {}).get("oom") or {}).get("fixes") or []
    if not fixes or fixes[0]["id"] != "micro_batches":
        return "recommended now: no micro-batch split"
    k = split_k(fixes[0])
    # a B part whose post-mortem offered no split measured none by hand (no fix_title)
    by_hand = ([{"k": split_k({"title": oom["fix_title"]}), **(oom.get("fixed") or {})}]
               if oom.get("fix_title") else [])
    measured = [*by_hand, *(oom.get("larger_splits") or [])]
    seen = {m["k"]: m.get("max_memory_allocated") for m in measured}
    word = ("not measured" if k not in seen
            else "measured: does NOT fit" if seen[k] is None else f"measured: fits ({seen[k]} B)")
    return f"recommended now: {k} micro-batches; {word}"


def rescore(results: dict[str, Any], out: Path) -> dict[str, Any]:
    """`results` with every capture's memory block priced again (the run folders found)."""
    for name, model in results["models"].items():
        cap = model.get("capture") or {}
        if (run := run_folder(out, cap.get("run"), name)) is not None:
            cap["memory"] = repriced(run, cap.get("memory"))
    oom = results.get("oom") or {}
    cap = oom.get("capture") or {}
    if (run := run_folder(out, cap.get("run"), "oom")) is not None:
        cap["memory"] = repriced(run, cap.get("memory"), cap.get("error"))
    for script, res in (results.get("corpus") or {}).items():
        tool = res.get("tool") or {}
        if (run := run_folder(out, None, script, "tool")) is not None:
            tool["memory"] = repriced(run, tool.get("memory"))
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    a = ap.parse_args(argv)
    results = rescore(load_results(a.out), a.out)
    print(table(results))
    if results.get("oom"):  # the table printed the post-mortem as the first run's cell did
        print("   " + oom_verdict(results["oom"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
