"""Compile and CUDA-graph fixes written for the loop the capture saw: compiled already, with
gradient accumulation, or with several optimizers an iteration.

`torch.compile(mode="reduce-overhead")` replays its graphs from one memory pool, reused from
the point torch takes as a new iteration. With gradient accumulation the gradients of the
first micro-batch are outputs of the backward graph, and the next micro-batch's replay
overwrites them unless an iteration is marked: measured on the H200 with torch 2.11
(benchmarks/graphs_accumulation.py, docs/evidence/graphs_accumulation_h200.json), four
micro-batches crash unmarked and crash marked at every micro-batch, and run with gradients
equal to eager's when `torch.compiler.cudagraph_mark_step_begin()` is called once per
optimizer step, before its first micro-batch. A model the script compiles itself gets the
mode on its own compile call, never a second compile.
"""

from __future__ import annotations

import dataclasses

from ..store.meta_blocks import TrainingMeta
from .findings import Finding, FindingData

#: the fix line that compiles the model into CUDA graphs (advice/fixes.py LAUNCH)
GRAPHS_LINE = 'model = torch.compile(model, mode="reduce-overhead")'
#: the fix line that compiles the model for fusion (advice/fixes.py MEMORY)
COMPILE_LINE = "model = torch.compile(model)"
ALREADY_COMPILED = ("# the model is compiled already: give your own torch.compile call the mode "
                    "(a second compile changes nothing)")
MARK_PER_STEP = ("torch.compiler.cudagraph_mark_step_begin()   # once per optimizer step, before "
                 "its first micro-batch (unmarked, or marked per micro-batch, the next replay "
                 "overwrites the accumulated gradients)")
MARK_PER_ITERATION = ("torch.compiler.cudagraph_mark_step_begin()   # once per iteration, before "
                      "its first model call: {n} optimizers step in it, and a model's output "
                      "(the generator's fake batch) must outlive the other's update")
#: the `--try` fix that sets the mode on the script's own compile call (tries/appliers/graphs.py)
GRAPHS_TRY = "graphs"


def _count(training: TrainingMeta, key: str) -> float:
    """A per-step count of the training block (0 when missing)."""
    value = dict(training).get(key)
    return float(value) if isinstance(value, (int, float)) else 0.0


def mark_line(training: TrainingMeta) -> str | None:
    """Where the loop must mark its iterations for CUDA graphs, or None where it need not."""
    optimizers = _count(training, "optimizers_per_step")
    if optimizers > 1:
        return MARK_PER_ITERATION.format(n=int(optimizers))
    if _count(training, "micro_batches_per_step") > 1:
        return MARK_PER_STEP
    return None


def _graphs_fix(fix: str, compiled: bool, mark: str | None) -> str:
    """The fix with its CUDA-graph line written for this loop."""
    if GRAPHS_LINE not in fix:
        return fix
    line = GRAPHS_LINE + ("   # in place of your torch.compile(model)" if compiled else "")
    if compiled:
        line = f"{ALREADY_COMPILED}\n{line}"
    if mark is not None:
        line = f"{line}\n{mark}"
    return fix.replace(GRAPHS_LINE, line, 1)


def in_loop_terms(findings: list[Finding], training: TrainingMeta | None) -> list[Finding]:
    """The findings with their compile and CUDA-graph fixes written for the loop that ran."""
    if not training:
        return findings
    compiled = _count(training, "compiled_graphs") > 0
    mark = mark_line(training)
    out = []
    for f in findings:
        fix = _graphs_fix(f.fix, compiled, mark)
        data = f.data
        if compiled and COMPILE_LINE in fix and GRAPHS_LINE not in fix:
            fix = fix.replace(COMPILE_LINE, "# the model is compiled already: its kernels are "
                                            "fused as far as torch.compile goes", 1)
        if compiled and GRAPHS_LINE in fix:
            # the try sets the mode on the script's own compile call; compiling again measures
            # nothing
            data = FindingData(**{**data, "try_fixes": [GRAPHS_TRY]})
        out.append(dataclasses.replace(f, fix=fix, data=data))
    return out
