"""Where the observer gap comes from: a corpus script alone, alone with one piece of the
capture's residue added at a time, and under the tool, timed by the script's own log.

    python benchmarks/corpus/observer_causes.py CORPUS OUT [ID ...]   (GPU host; run_gpu.sh env)

Each residue is what the capture leaves in the process before its baseline window: its modules
imported (`import`), the compiler's eager stance entered and left for the probed warm-up step
(`dynamo`: imports torch._dynamo and sympy), the GPU-conditions sampler thread (`sampler`),
the garbage collector told to leave the objects made so far alone (`freeze`), and a whole
capture session whose warm-up never ends (`session`: every hook and probe, no baseline
clock). Variants run interleaved, $OBSERVER_REPS times each (default 2); the same log
positions as the observer check (observer.py) are compared with the script alone: ratio of
medians, and of means.
$OBSERVER_VARIANTS=alone,tool,...: only those variants. $OBSERVER_CPUS=2-5 pins this process
and so every variant it starts to those cores (the same cores for all: which core a process
lands on is then not a difference between variants). $OBSERVER_NO_ASLR=1 turns address-space
randomisation off for this process and so for every process it starts (the same memory layout
in every process: whether the spread between processes is where things land in memory).
"""

from __future__ import annotations

import json
import math
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import observer  # noqa: E402
import run_gpu  # noqa: E402

from jupyter_gpuprof.capture.conditions import ConditionSampler  # noqa: E402

#: the script runs after these residues are set up (run_path, so it is still `__main__`)
WRAPPER = '''
import os, runpy, sys
parts = set(filter(None, os.environ.get("OBSERVER_RESIDUE", "").split(",")))
if "import" in parts:
    import jupyter_gpuprof.launcher.autorun, jupyter_gpuprof.capture.session  # noqa: F401
if "dynamo" in parts:
    import torch
    torch.compiler.set_stance("force_eager").__exit__(None, None, None)
if "sampler" in parts:
    from jupyter_gpuprof.capture.conditions import ConditionSampler
    _sampler = ConditionSampler(0).start()
if "session" in parts:  # the capture's hooks and probes, its baseline never reached
    import tempfile
    from jupyter_gpuprof.capture.session import ProfileSession
    from jupyter_gpuprof.capture.settings import CaptureSettings
    from jupyter_gpuprof.store import RunStore
    _session = ProfileSession(CaptureSettings(mode="script", warmup=10**9),
                              store=RunStore(tempfile.mkdtemp())).begin()
if "freeze" in parts:
    import gc
    gc.freeze()
script, sys.argv = sys.argv[1], sys.argv[1:]
sys.path[0] = os.path.dirname(os.path.abspath(script))  # as `python script.py` has it
runpy.run_path(script, run_name="__main__")
'''

#: name -> residues ("tool": under `jupyter gpuprof run`; "alone": the plain command)
VARIANTS: dict[str, str | None] = {
    "alone": None, "runpy": "", "import": "import", "dynamo": "import,dynamo",
    "sampler": "import,sampler", "dynamo+freeze": "import,dynamo,freeze",
    "all": "import,dynamo,sampler", "session": "session", "session+sampler": "session,sampler",
    "tool": None, "tool-bare": None, "tool-no-flops": None,
    "tool-no-phases": None, "tool-no-shapes-memory": None, "tool-on": None,
}
#: the tool's capture options per tool variant (bare: no probes, phases, shapes or memory;
#: on: the script runs on to its end after the capture, its later iterations the control)
TOOL_FLAGS = {"tool": [], "tool-on": [],
              "tool-bare": ["--no-flops", "--no-phases", "--no-shapes", "--no-memory"],
              "tool-no-flops": ["--no-flops"], "tool-no-phases": ["--no-phases"],
              "tool-no-shapes-memory": ["--no-shapes", "--no-memory"]}


#: personality(2) flag: map every process the same way (what `setarch -R` sets)
ADDR_NO_RANDOMIZE = 0x0040000


def _no_aslr() -> bool:
    """Re-run this script with address-space randomisation off, inherited by its children."""
    if os.environ.get("OBSERVER_NO_ASLR") != "1":
        return False
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    current = libc.personality(0xFFFFFFFF)
    if current & ADDR_NO_RANDOMIZE:
        return True
    if libc.personality(current | ADDR_NO_RANDOMIZE) == -1:
        raise OSError(ctypes.get_errno(), "personality(ADDR_NO_RANDOMIZE) refused")
    os.execv(sys.executable, [sys.executable, *sys.argv])
    return True  # not reached


def _gpu_state(summary: dict[str, Any]) -> dict[str, Any]:
    """The SM clock's and power's median and range while one process ran."""
    if not summary.get("available"):
        return {"reason": summary.get("reason")}
    return {k: summary[k] for k in ("sm_clock_mhz", "power_w", "temp_c")} | {
        "throttle": summary.get("throttle")}


def _paired(within: dict[str, list[float | None]]) -> dict[str, Any]:
    """Per tool variant run on, the pairs' (tool window / its later) over (alone window / its
    later): the observer effect with each process's own speed divided out; geometric mean
    and a 95 % t interval over the pairs."""
    out: dict[str, Any] = {}
    alone = within.get("alone") or []
    for name, values in within.items():
        if name == "alone":
            continue
        logs = [math.log(t / a) for t, a in zip(values, alone, strict=False) if t and a]
        if len(logs) < 2:
            continue
        mean, sd = statistics.fmean(logs), statistics.stdev(logs)
        half = T95.get(len(logs) - 1, 1.96) * sd / math.sqrt(len(logs))
        out[name] = {"pairs": [round(math.exp(v), 4) for v in logs],
                     "ratio": math.exp(mean), "ci95": [math.exp(mean - half),
                                                       math.exp(mean + half)]}
        print(f"within-process pairs {name}: ×{math.exp(mean):.3f} "
              f"(95 % CI {math.exp(mean - half):.3f}–{math.exp(mean + half):.3f}, "
              f"{len(logs)} pairs)", flush=True)
    return out


#: two-sided 95 % t quantiles by degrees of freedom (few pairs)
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26,
       10: 2.23, 11: 2.20, 12: 2.18, 15: 2.13, 20: 2.09}


def main() -> int:
    no_aslr = _no_aslr()
    pinned = run_gpu.pin_from_env()
    corpus, out = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    wanted = set(sys.argv[3:]) or {"word-lm"}
    reps = int(os.environ.get("OBSERVER_REPS", "2"))
    out.mkdir(parents=True, exist_ok=True)
    wrap = Path(tempfile.mkdtemp()) / "observer_wrap.py"
    wrap.write_text(WRAPPER)
    results: dict[str, Any] = {}
    for entry in json.loads(run_gpu.MANIFEST.read_text())["scripts"]:
        if entry["id"] not in wanted:
            continue
        folder = corpus / entry["id"]
        obs = entry.get("observer", {})
        cmd = obs.get("command", entry["command"])
        env = run_gpu.script_env(entry)
        run_gpu.make_data(entry, folder)
        capture = obs.get("capture", entry.get("capture", run_gpu.CAPTURE))
        lo, hi = observer.window(capture)
        per, first = obs.get("iters_per_value", 1), obs.get("first_iter", 0)
        chosen = os.environ.get("OBSERVER_VARIANTS", "").split(",")
        variants = {k: v for k, v in VARIANTS.items() if k in chosen or chosen == [""]}
        series: dict[str, list[list[float]]] = {name: [] for name in variants}
        # each process's window over its own later iterations (observer.within_process)
        within: dict[str, list[float | None]] = {name: [] for name in variants}
        # the GPU's clocks and power while each process ran (sampled here, in the parent):
        # whether the spread between processes follows the GPU's state
        gpu: dict[str, list[dict[str, Any]]] = {name: [] for name in variants}
        stop = entry.get("stop_after_s", run_gpu.PLAIN_TIMEOUT_S)
        for rep in range(reps):
            for name, residue in variants.items():
                sampler = ConditionSampler(0, interval_s=0.2).start()
                if name in TOOL_FLAGS:
                    done = run_gpu._tool({**entry, "capture": capture}, [run_gpu.PY, *cmd],
                                         folder, env, out, TOOL_FLAGS[name], f"{name}{rep}",
                                         out / "kept" / entry["id"], stop=name != "tool-on")
                    own = done["own"]
                else:
                    prefix = [run_gpu.PY] if residue is None else [run_gpu.PY, str(wrap)]
                    ran = run_gpu._run([*prefix, *cmd], folder,
                                       dict(env, OBSERVER_RESIDUE=residue or ""), stop)
                    own = run_gpu.own_times(entry, ran)
                values = [ms for _, ms in observer.in_window(own, lo, hi, per, first)]
                series[name].append(values)
                within[name].append(observer.within_process(own, capture, per, first))
                gpu[name].append(_gpu_state(sampler.stop()))
                print(f"{entry['id']} rep {rep} {name}: median "
                      f"{statistics.median(values) if values else None} ms", flush=True)
        alone = [v for rep in series["alone"] for v in rep]
        rows = {}
        for name, reps_values in series.items():
            flat = [v for rep in reps_values for v in rep]
            if flat and alone:
                rows[name] = {"values": len(flat),
                              "median_ratio": statistics.median(flat) / statistics.median(alone),
                              "mean_ratio": statistics.fmean(flat) / statistics.fmean(alone),
                              "median_ms": statistics.median(flat), "series_ms": reps_values,
                              "gpu": gpu[name], "within_process": within[name]}
                print(f"{entry['id']:10} {name:14} median ×{rows[name]['median_ratio']:.3f} "
                      f"mean ×{rows[name]['mean_ratio']:.3f}", flush=True)
        results[entry["id"]] = {"window": [lo, hi], "cpus": pinned, "no_aslr": no_aslr,
                                "variants": rows, "paired": _paired(within)}
        (out / "observer_causes.json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
