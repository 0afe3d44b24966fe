"""Why a `--try` measured nothing, in the user's terms, and what to do about it: advice as data.

A try that crashes or changes nothing is reported with its cause and the remedy, never as a
bare exception line. Each entry is a failure seen on real scripts (the corpus on the H200,
docs/benchmarks.md §14), matched on the error text the try recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, cast

from ..store.meta_blocks import TryMeta


class Remedy(NamedTuple):
    """A known way a try fails: the text that identifies it, its cause, what to do."""

    marker: str  # a piece of the error text (case-insensitive)
    cause: str
    remedy: str


REMEDIES: tuple[Remedy, ...] = (
    Remedy("accessing tensor output of CUDAGraphs that has been overwritten",
           "the CUDA graphs reused their memory before the step had read it again (gradient "
           "accumulation, or a second model that reads the first one's output)",
           "call torch.compiler.cudagraph_mark_step_begin() once per iteration, before its "
           "first model call (with gradient accumulation once per optimizer step, not per "
           "micro-batch: measured on the H200), or compile without CUDA graphs "
           "(--try compile)"),
    Remedy("already tracked for mutation",
           "Dynamo traced a global module hook while it compiled the model",
           "compile with no global module hooks installed (hooks registered with "
           "torch.nn.modules.module.register_module_forward_pre_hook)"),
    Remedy("maximum recursion depth exceeded",
           "a framework's wrapper module was compiled, and the model it wraps called it again",
           "compile the model inside the wrapper (Lightning Fabric: compile before "
           "fabric.setup)"),
    Remedy("without finishing its baseline",
           "compiling, or the first steps with the fix, took longer than a try may run",
           "give the try more time ($JUPYTER_GPUPROF_TRY_TIMEOUT_S seconds) or fewer steps "
           "(--warmup, --steps)"),
    Remedy("a second compile measures nothing",
           "the script compiles its model itself",
           "--try graphs: the script's own torch.compile call with mode='reduce-overhead'"),
    Remedy("out of memory",
           "the fix needs more GPU memory than was free (CUDA graphs keep a memory pool of "
           "their own)",
           "try it with a smaller batch, or free memory the script holds between steps"),
    Remedy("runs an RNN, GRU or LSTM",
           "Dynamo does not trace nn.RNN, nn.GRU or nn.LSTM (torch 2.11): it runs the whole "
           "forward eagerly, so nothing was compiled or captured (mnist_rnn on the H200)",
           "compile the layers around the recurrent one (model.fc = torch.compile(model.fc)), "
           "or set torch._dynamo.config.allow_rnn = True (experimental) before compiling"),
    Remedy("compiled no graph",
           "torch.compile fell back to eager for the step's modules (a graph break it could "
           "not handle: TORCH_LOGS=graph_breaks names it)",
           "run with TORCH_LOGS=graph_breaks and compile the part of the model that traces"),
    Remedy("no module to compile",
           "the step calls no module whose parameters it trains, bound where the try looks",
           "compile the model where the script builds it: model = torch.compile(model)"),
)


def remedy_for(error: str | None) -> Remedy | None:
    """The known failure an error text is, or None (an unknown one is shown as it was)."""
    if not error:
        return None
    text = error.lower()
    return next((r for r in REMEDIES if r.marker.lower() in text), None)


def with_remedies(tries: Sequence[TryMeta] | None) -> list[TryMeta] | None:
    """The tries, each failed one with `cause` and `remedy` where its failure is known."""
    if not tries:
        return None
    out: list[TryMeta] = []
    for t in tries:
        known = remedy_for(t.get("error"))
        out.append(cast(TryMeta, {**t, "cause": known.cause, "remedy": known.remedy})
                   if known else cast(TryMeta, dict(t)))
    return out
