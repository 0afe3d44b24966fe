"""The fixes `--try` can apply without a code change: one row each, the only list of them.

A row says which verdict category's finding the fix measures and what it switches on; the code
that applies it lives in `tries/appliers/<name>.py` (in the live kernel and at a script's
start-up). Adding a fix is a row here and that module; tests/advice/test_fix_table.py holds
every row to an applier with both halves. The advice reads the rows (which tries measure a
finding, whose prediction a try is judged against); it never applies one.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TryFix:
    """One fix `--try` applies: its name, the category whose finding it measures, its help."""

    name: str
    category: str
    help: str


#: in the order the recommended ones are tried (a finding's first fix is tried first)
FIXES = (
    TryFix("tf32", "precision", "TF32 Tensor-Core math for fp32 matmuls and convolutions"),
    TryFix("amp", "precision", "bf16 autocast around the step"),
    TryFix("compile", "memory", "torch.compile of the modules the step calls"),
    TryFix("graphs", "launch", "torch.compile(mode='reduce-overhead'): the step as CUDA graphs"),
    TryFix("loader", "input", "DataLoaders with workers, pinned memory and prefetch"),
)
BY_NAME = {f.name: f for f in FIXES}
#: every fix name, as `--try` help and errors list them
FIX_NAMES = tuple(f.name for f in FIXES)
#: the finding whose prediction each try is measured against
CATEGORY_OF = {f.name: f.category for f in FIXES}
#: each verdict category's fixes, in the order tried
TRIES_OF: dict[str, tuple[str, ...]] = {
    c: tuple(f.name for f in FIXES if f.category == c) for c in dict.fromkeys(CATEGORY_OF.values())
}


def fixes_help() -> str:
    """The fix names for an option's help: `amp,tf32,...`."""
    return ",".join(FIX_NAMES)
