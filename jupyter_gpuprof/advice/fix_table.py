"""The fixes `--try` can apply without a code change: one row each, the only list of them.

A row says which verdict category's finding the fix measures and what it switches on; the code
that applies it lives in `tries/appliers/<name>.py` (in the live kernel and at a script's
start-up). Adding a fix is a row here and that module; tests/advice/test_fix_table.py holds
every row to an applier with both halves. The advice reads the rows (which tries measure a
finding, whose prediction a try is judged against); it never applies one.
"""

from __future__ import annotations

from dataclasses import dataclass

from .thresholds import LOADER_PREFETCH, MAX_LOADER_WORKERS


@dataclass(frozen=True)
class TryFix:
    """One fix `--try` applies: its name, the category whose finding it measures (None: a
    memory fix, which the memory over the step offers, no verdict finding), its help, the code
    a user writes to apply it by hand, and its family (fixes of one family replace each other:
    only one of them is kept in a stack)."""

    name: str
    category: str | None
    help: str
    code: str
    family: str


#: in the order the recommended ones are tried (a finding's first fix is tried first)
FIXES = (
    TryFix("tf32", "precision", "TF32 Tensor-Core math for fp32 matmuls and convolutions",
           "torch.backends.cuda.matmul.allow_tf32 = True   # TF32 Tensor Cores for fp32\n"
           "torch.backends.cudnn.allow_tf32 = True", "tf32"),
    TryFix("amp", "precision", "bf16 autocast around the step",
           'with torch.autocast("cuda", dtype=torch.bfloat16):   # the forward and the loss\n'
           "    loss = loss_fn(model(x), y)                      # backward() outside, as "
           "before", "amp"),
    TryFix("compile", "memory", "torch.compile of the modules the step calls",
           "model = torch.compile(model)", "compile"),
    TryFix("graphs", "launch", "torch.compile(mode='reduce-overhead'): the step as CUDA graphs",
           'model = torch.compile(model, mode="reduce-overhead")', "compile"),
    TryFix("loader", "input", "DataLoaders with workers, pinned memory and prefetch",
           f"loader = DataLoader(dataset, ..., num_workers={MAX_LOADER_WORKERS}, "
           "pin_memory=True,\n"
           f"                    persistent_workers=True, prefetch_factor={LOADER_PREFETCH})",
           "loader"),
    TryFix("checkpoint", None, "activation checkpointing of the model's repeated layers",
           "model.gradient_checkpointing_enable()   # a Hugging Face model; else, per layer:\n"
           "hidden = torch.utils.checkpoint.checkpoint(layer, hidden, use_reentrant=False)",
           "checkpoint"),
)
BY_NAME = {f.name: f for f in FIXES}
#: every fix name, as `--try` help and errors list them
FIX_NAMES = tuple(f.name for f in FIXES)
#: the finding whose prediction each try is measured against (a memory fix measures none)
CATEGORY_OF = {f.name: f.category for f in FIXES if f.category is not None}
#: each verdict category's fixes, in the order tried
TRIES_OF: dict[str, tuple[str, ...]] = {
    c: tuple(f.name for f in FIXES if f.category == c) for c in dict.fromkeys(CATEGORY_OF.values())
}


def tries_measuring(category: object, own: object = None) -> tuple[str, ...]:
    """The `--try` fixes that measure a finding: its own list where it has one (a rule that
    knows which of its category's fixes applies, as bf16 autocast where TF32 is on, or none,
    as for a step captured by hand, which no try applies), else its category's."""
    if isinstance(own, (list, tuple)):
        return tuple(str(t) for t in own)
    return TRIES_OF.get(str(category), ())


#: joins the fixes of a stack in one try's name: "loader+graphs" is loader, then graphs on top
STACK_SEP = "+"


def stack_name(fixes: list[str] | tuple[str, ...]) -> str:
    """The name of a try with every fix of `fixes` on, in order."""
    return STACK_SEP.join(fixes)


def stack_parts(name: str) -> list[str]:
    """The fixes a try's name switches on, in order ("amp" alone is one)."""
    return [p for p in name.split(STACK_SEP) if p]


def fixes_help() -> str:
    """The fix names for an option's help: `amp,tf32,...`."""
    return ",".join(FIX_NAMES)
