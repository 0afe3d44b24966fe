"""One measurement of the memory acceptance, in a process of its own (clean peaks and allocator).

    python benchmarks/memory_acceptance_workers.py KIND 'JSON ARGS' RESULT.json

KIND `capture`: the training step under the real capture path (`ProfileSession` in body mode,
as `%%gpuprofile` runs a cell), then the run's report as `%%gpuprofile` shows it: the summary
(`analyze_run`) when the run has a trace, else the memory-only post-mortem (an out-of-memory
error in a warm-up step). KIND `plain`: the same step without any capture (`memory_models`),
its peak and step time, and optionally the allocator history's cost in interleaved blocks.
`cap_bytes` caps the process (`set_per_process_memory_fraction`) before anything is allocated;
`PYTORCH_CUDA_ALLOC_CONF` comes from the parent's environment.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from typing import Any

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memory_models import StepSpec, build, history_overhead, plain_peak  # noqa: E402

#: the capture's schedule: warm-up, timed baseline, profiler wait / warm-up, traced steps
SCHEDULE = {"warmup": 2, "steps": 6, "wait": 1, "prof_warmup": 1, "active": 2}


def _cap(cap_bytes: int | None) -> None:
    """Cap the process at `cap_bytes` (a fraction of the device's memory) before any allocation."""
    if cap_bytes and torch.cuda.is_available():
        total = torch.cuda.get_device_properties(0).total_memory
        torch.cuda.set_per_process_memory_fraction(cap_bytes / total)


def capture(spec: StepSpec, memory_history: bool = True, cap_bytes: int | None = None,
            runs_root: str | None = None) -> dict[str, Any]:
    """The step under the capture; the report's memory part, steps and the run's own peak."""
    from jupyter_gpuprof.capture.session import ProfileSession
    from jupyter_gpuprof.capture.settings import CaptureSettings
    from jupyter_gpuprof.report.build import analyze_run
    from jupyter_gpuprof.report.memory_summary import memory_blocks, memory_only_text
    from jupyter_gpuprof.store import RunStore

    _cap(cap_bytes)
    _, _, step = build(spec)
    root = runs_root or tempfile.mkdtemp(prefix="gpuprof-mem-")
    schedule = {**SCHEDULE, **({"warmup": 1, "steps": 2} if spec.quick else {})}
    settings = CaptureSettings(**schedule, memory_history=memory_history, mode="body")
    session = ProfileSession(settings, name=f"{spec.model}-b{spec.batch}",
                             store=RunStore(root)).begin()
    error: BaseException | None = None
    try:
        session.run_steps(step)
    except torch.OutOfMemoryError as e:  # the cell's own error: the run is still reported
        error = e
    run = session.finish(error)
    out: dict[str, Any] = {"run": str(run.path), "status": run.meta.status,
                           "error": run.meta.error,
                           "meta_max_memory_allocated": run.meta.max_memory_allocated_bytes,
                           "history_file": str(run.memory_history_path() or "")}
    if run.trace_paths():
        report = analyze_run(run)
        summary = report.to_json()
        out["memory"] = summary.get("memory")
        out["steps"] = {k: (summary.get("steps") or {}).get(k) for k in ("median_ms", "n")}
        out["text"] = report.to_text()
    else:  # out of memory before the profiler ran: the post-mortem alone, as the cell prints it
        import msgspec

        over, oom, problem = memory_blocks(run.path, None, run.meta.error)
        out["memory"] = msgspec.to_builtins({"over_step": over, "oom": oom})
        out["problem"] = problem
        out["text"] = memory_only_text(run.path, run.meta.error)
    return out


def plain(spec: StepSpec, cap_bytes: int | None = None, overhead: bool = False,
          steps: int = 4) -> dict[str, Any]:
    """The step alone: peak and time; `overhead`: then the history's cost, interleaved."""
    _cap(cap_bytes)
    try:
        out, step = plain_peak(spec, steps=steps)
    except torch.OutOfMemoryError as e:
        return {"oom": str(e).splitlines()[0]}
    out["alloc_conf"] = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    out["cap_bytes"] = cap_bytes
    if overhead:
        out["history"] = history_overhead(step, spec.device, blocks=2 if spec.quick else 4)
    return out


WORKERS = {"capture": capture, "plain": plain}


def main(argv: list[str]) -> int:
    kind, raw, result = argv
    args = json.loads(raw)
    spec = StepSpec(**args.pop("spec"))
    out = WORKERS[kind](spec, **args)
    with open(result, "w") as f:
        json.dump(out, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
