"""Verdict categories and GPU-idle gap causes: one enum, one row each, read by every part.

The rules (advice/rules.py) price a finding of a category, the verdict names one, the analysis
splits GPU idle time by the categories that are gap causes, the views and the widget label and
colour them (`src/generated/palette.ts` is written from here by `views/palette.py`). A leaf:
analysis, advice and views all import it, and it imports nothing. Adding a category is a row
here, its rule, its fix text and its colours (tests/test_categories.py enumerates them).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Category(StrEnum):
    """The primary reason a step is not faster (its id is what summaries and tables carry)."""

    INPUT = "input"
    TRANSFER = "transfer"
    SYNC = "sync"
    LAUNCH = "launch"
    HOST = "host"
    MEMORY = "memory"
    PRECISION = "precision"
    COMPUTE = "compute"
    COMM = "comm"
    STRAGGLER = "straggler"
    ONE_TIME = "one-time"


@dataclass(frozen=True)
class About:
    """How a category reads: its name for people, the verdict's opening, whether GPU idle time
    is split by it."""

    label: str
    summary: str
    gap_cause: bool = False


ABOUT: dict[Category, About] = {
    Category.INPUT: About("input", "The GPU waits for the data pipeline to produce batches",
                          gap_cause=True),
    Category.TRANSFER: About("transfer", "Host↔device copies dominate or block the step",
                             gap_cause=True),
    Category.SYNC: About("sync", "The host keeps stopping to wait for the GPU, so launches stop "
                         "queueing ahead", gap_cause=True),
    Category.LAUNCH: About("launch", "Many tiny kernels: launching them takes longer than "
                           "running them", gap_cause=True),
    Category.HOST: About("host", "The GPU idles while the host does work that launches nothing",
                         gap_cause=True),
    # "memory" is about HBM bandwidth, not capacity: its id alone would mislead
    Category.MEMORY: About("memory bandwidth", "The GPU is busy, but in memory-bound unfused "
                           "kernels far below compute peak"),
    # fp32 on SIMT cores, or TF32: both below the bf16 Tensor-Core rate (nanoGPT's TF32 GEMMs)
    Category.PRECISION: About("precision", "The GPU is busy in fp32 matmuls below the bf16 "
                              "Tensor-Core rate"),
    Category.COMPUTE: About("compute", "The GPU is busy doing the work itself: nothing big to "
                            "fix"),
    Category.COMM: About("communication", "Collective communication is exposed and dominates"),
    Category.STRAGGLER: About("straggler rank", "One rank is slower and every other rank waits "
                              "for it in the collectives"),
    Category.ONE_TIME: About("one-time costs", "The profiled window is mostly one-time costs "
                             "(start-up, first launches, graph capture or allocator growth), "
                             "not the steady state"),
}
#: every category id, in the enum's order
CATEGORIES: tuple[str, ...] = tuple(c.value for c in Category)
#: the categories GPU idle time is split by (the idle gaps' causes), in the enum's order
GAP_CAUSES: tuple[str, ...] = tuple(c.value for c in Category if ABOUT[c].gap_cause)
#: what a report without a verdict calls it
NO_VERDICT = "unavailable"


def label(category: str | None) -> str:
    """The reader's name of a verdict category ("memory" reads "memory bandwidth")."""
    if not category:
        return NO_VERDICT
    try:
        return ABOUT[Category(category)].label
    except ValueError:
        return category


def summary(category: str) -> str:
    """The verdict's opening for a category (its own id for one this enum does not know)."""
    try:
        return ABOUT[Category(category)].summary
    except ValueError:
        return category
