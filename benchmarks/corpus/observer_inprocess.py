"""The observer check inside one process: a corpus script's own log, the capture's pieces toggled.

    python benchmarks/corpus/observer_inprocess.py CORPUS OUT [ID ...] [-- EXTRA ARGS]

Across processes a host-bound script's speed moves by 10-30 % (docs/benchmarks.md §21), so
the script alone against the script under the tool needs 100-260 pairs to judge a 3 % bar.
Here the script runs once, unmodified, with its manifest's observer command and, appended, EXTRA
ARGS or else the manifest's `inprocess_args` (more epochs or iterations: a run of about a minute
on the H200, long enough to hold many blocks); observer_toggle.py, loaded at its start-up,
switches everything the capture runs through a baseline on and off in blocks of the manifest's
`block_s` seconds (default 0.5) after $OBSERVER_SETTLE_S (default 5). Each of the script's own
log values goes to the block it was measured in (the line before it and its own line both
inside the block), each `on` block is compared with the `off` block before it (ratio
of their medians, blocks with at least $OBSERVER_MIN_VALUES values each, default 3; of their
means where the manifest's `observer.align` is "epoch", blocks of whole DataLoader epochs), and the
rounds' geometric mean and 95 % t interval are judged against the 3 % bar. The process's own
speed, and its slow wander, divide out. $OBSERVER_CPUS pins the script and its workers (a
host-bound step that wanders between two speeds as it moves between cores keeps one on one
core). Writes OUT/observer_inprocess.json.

What this leaves out is the capture's one-off start (its modules imported, the warm-up step's
probes, the allocator history stopped), which costs no step of the baseline a call.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_gpu  # noqa: E402
from observer_concurrent import pooled  # noqa: E402
from observer_toggle import ALIGNMENTS, MARK  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BOOT = Path(__file__).resolve().parent / "inprocess"


def switches(lines: list[tuple[float, str]]) -> list[tuple[float, str]]:
    """(time, 'on'|'off') of every switch the toggler printed, in order: stamped as it arrived,
    like the log lines (stderr and stdout share one pipe, so a line printed before a switch
    also arrives before it)."""
    return [(t, line.split()[1]) for t, line in lines
            if line.startswith(MARK) and line.split()[1] in ("on", "off")]


def settled(lines: list[tuple[float, str]]) -> list[float]:
    """When each block's reading may begin: the toggler's `settled` marks (the loop has taken
    the batches its DataLoader made ready during the switch's pause; none without workers)."""
    return [t for t, line in lines if line.startswith(MARK) and line.split()[1] == "settled"]


def values(entry: dict[str, Any], lines: list[tuple[float, str]]
           ) -> list[tuple[float, float, float]]:
    """The script's own log values with the span each was measured over: (from, to, ms). A
    value is the time between its line and the one before (the spacing, for a log that only
    counts), or the logged time of the iterations between them. The manifest's
    `observer.own_log`, where a script prints a finer value of its own than the one its
    fixes are timed by (LBFGS: each closure evaluation's loss, about 20 a step), wins."""
    log = (entry.get("observer") or {}).get("own_log") or entry["own_log"]
    stamped = [(t, m) for t, line in lines if not line.startswith(MARK)
               for m in [re.search(log["regex"], line, flags=re.M)] if m]
    out = []
    for (t0, _), (t1, m) in zip(stamped, stamped[1:], strict=False):
        if log["group"] == 0:
            ms = 1e3 * (t1 - t0) / log.get("per", 1)
        else:
            ms = float(m.group(log["group"])) * run_gpu.UNIT_MS[log["unit"]]
        out.append((t0, t1, ms))
    return out


def blocks(marks: list[tuple[float, str]], vals: list[tuple[float, float, float]],
           ready: list[float] | None = None) -> list[tuple[str, list[float]]]:
    """Each block (its state, the values measured wholly inside it but the first), in order.
    The first holds the switch's one-off work, which a capture pays once a run, not a step:
    an `on` block's first step begins the session's baseline (its clock's events made). Where
    the toggler printed `settled` marks (`ready`: a loop fed by DataLoader workers), a block is
    read from its mark, and a block that ended before its mark has no values."""
    out = []
    for (start, state), (end, _) in zip(marks, marks[1:], strict=False):
        if ready:
            start = next((t for t in ready if start <= t < end), end)
        out.append((state, [ms for a, b, ms in vals if a >= start and b <= end][1:]))
    return out


#: what stands for a block: the median of its values, or, for blocks of whole epochs, their
#: mean (each block holds the same stalls, so its mean is the wall time a value the user pays,
#: where a median jumps between two levels that alternate, as DCGAN's two workers' batches do)
BLOCK_STAT = dict(zip(ALIGNMENTS, (statistics.median, statistics.fmean), strict=True))


def rounds(blk: list[tuple[str, list[float]]], least: int = 3, align: str = "") -> list[float]:
    """Each `on` block over the `off` block just before it (both with `least` values), each
    block read by `BLOCK_STAT` of its alignment."""
    stat = BLOCK_STAT[align]
    out = []
    for (s0, off), (s1, on) in zip(blk, blk[1:], strict=False):
        if s0 == "off" and s1 == "on" and len(off) >= least and len(on) >= least:
            out.append(stat(on) / stat(off))
    return out


def alignment(entry: dict[str, Any]) -> str:
    """Where blocks may end: anywhere (""), or at the same place of each DataLoader epoch
    ("epoch"), the manifest's `observer.align`; $OBSERVER_ALIGN, when set, wins."""
    align = os.environ.get("OBSERVER_ALIGN", (entry.get("observer") or {}).get("align", ""))
    if align not in ALIGNMENTS:
        raise ValueError(f"{entry['id']}: align {align!r} is not one of {ALIGNMENTS}")
    return align


def command(entry: dict[str, Any], extra: list[str]) -> tuple[list[str], float, float]:
    """The script's command line for a run long enough to hold many blocks, its block length
    and when it is stopped (Ctrl-C). The manifest's `observer` gives them: `inprocess_command`
    (a script whose length is positional), or its `command` with `inprocess_args` (or EXTRA)
    appended; `block_s`, long enough for several of its log values (default 0.5 s);
    `inprocess_stop_s` for a script that runs past a minute (default 600 s). $OBSERVER_BLOCK_S
    and $OBSERVER_TIMEOUT_S, when set, win over the manifest."""
    obs = entry.get("observer") or {}
    base = obs.get("inprocess_command") or obs.get("command") or entry["command"]
    more = extra if extra else ([] if "inprocess_command" in obs
                                else obs.get("inprocess_args", []))
    cmd = [run_gpu.PY, *entry.get("launcher", []), *base, *more]
    block_s = float(os.environ.get("OBSERVER_BLOCK_S") or obs.get("block_s", 0.5))
    stop_s = float(os.environ.get("OBSERVER_TIMEOUT_S") or obs.get("inprocess_stop_s", 600))
    return cmd, block_s, stop_s


def run_one(entry: dict[str, Any], corpus: Path, extra: list[str]) -> dict[str, Any]:
    """The script once, its pieces toggled; its rounds and their verdict."""
    folder = corpus / entry["id"]
    env = run_gpu.script_env(entry)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(BOOT), env.get("PYTHONPATH", ""),
                                                    str(ROOT)) if p)
    env["PYTHONUNBUFFERED"] = "1"  # each log line leaves the script when it is printed
    run_gpu.make_data(entry, folder)
    for prep in entry.get("prepare", []):  # the script's own data generator (LBFGS)
        run_gpu._run([run_gpu.PY, prep], folder, env, 120)
    cmd, block_s, stop_s = command(entry, extra)
    env["OBSERVER_BLOCK_S"] = str(block_s)  # read by the toggler in the script's process
    env["OBSERVER_ALIGN"] = align = alignment(entry)
    ran = run_gpu._run(cmd, folder, env, stop_s)
    marks = switches(ran["lines"])
    ready = settled(ran["lines"])
    blk = blocks(marks, values(entry, ran["lines"]), ready)
    least = int(os.environ.get("OBSERVER_MIN_VALUES", "3"))
    got = rounds(blk, least, align)
    return {"id": entry["id"], "command": cmd[1:], "block_s": float(env["OBSERVER_BLOCK_S"]),
            "align": align, "settle": _stock(ran["lines"]),
            "read_from": "settled" if ready else "switch",
            "code": ran["code"], "switches": len(marks),
            "blocks": [{"state": s, "values": v} for s, v in blk], "rounds": got,
            "pooled": pooled(got),
            "tail": run_gpu.neutral_text(ran["out"][-2000:]) if ran["code"] != 0 else "",
            "first_error": run_gpu.neutral_text(first_error(ran["out"])) if ran["code"] != 0
            else ""}


def run_processes(entry: dict[str, Any], corpus: Path, extra: list[str]) -> dict[str, Any]:
    """The script in the manifest's `observer.processes` processes one after the other
    ($OBSERVER_PROCESSES wins), their rounds pooled: for a script whose stretch of interest is
    short (LBFGS's first five steps, where a capture's baseline lies; its loss runs away after
    them), each process runs only that stretch."""
    obs = entry.get("observer") or {}
    n = int(os.environ.get("OBSERVER_PROCESSES") or obs.get("processes", 1))
    runs = [run_one(entry, corpus, extra) for _ in range(max(1, n))]
    if len(runs) == 1:
        return runs[0]
    got = [r for run in runs for r in run["rounds"]]
    failed = [run for run in runs if run["code"] not in (0, "timeout")]
    return {"id": entry["id"], "command": runs[0]["command"], "block_s": runs[0]["block_s"],
            "align": runs[0]["align"], "settle": runs[0].get("settle", 0),
            "read_from": runs[0].get("read_from", "switch"),
            "code": failed[0]["code"] if failed else runs[0]["code"],
            "switches": sum(run["switches"] for run in runs), "rounds": got,
            "pooled": pooled(got), "tail": failed[0]["tail"] if failed else "",
            "processes": runs}


def _stock(lines: list[tuple[float, str]]) -> int:
    """The loader's stock of ready batches each block waited out (0: no `settled` mark)."""
    return max((int(line.split()[3]) for _, line in lines
                if line.startswith(MARK) and line.split()[1] == "settled"), default=0)


def first_error(out: str) -> str:
    """The output around the first error a failed run printed: a crash's C++ message comes
    long before the Python traceback at its tail (a DataLoader worker's abort)."""
    m = re.search(r"terminate called|what\(\):|Traceback|Error|Aborted", out)
    return out[max(0, m.start() - 500):m.start() + 2500] if m else ""


def main(argv: list[str]) -> int:
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    args = argv[:argv.index("--")] if "--" in argv else argv
    corpus, out = Path(args[0]).resolve(), Path(args[1]).resolve()
    wanted = set(args[2:]) or {"word-lm"}
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"settle_s": os.environ.get("OBSERVER_SETTLE_S", "5"),
                               "cpus": run_gpu.pin_from_env()}
    for entry in json.loads(run_gpu.MANIFEST.read_text())["scripts"]:
        if entry["id"] not in wanted:
            continue
        row = results[entry["id"]] = run_processes(entry, corpus, extra)
        (out / "observer_inprocess.json").write_text(json.dumps(results, indent=1))
        p = row["pooled"]
        print(f"{entry['id']}: exit {row['code']}, {row['switches']} switches, pieces on/off "
              f"x{p.get('ratio', float('nan')):.4f} (95 % CI {p.get('ci95')}), "
              f"{p['pairs']} rounds: {p['verdict']}", flush=True)
        if row["tail"]:
            print(row["tail"], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
