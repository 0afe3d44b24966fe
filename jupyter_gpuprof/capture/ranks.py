"""Which ranks of a distributed job capture: parsed from `--ranks`, `profile(ranks=)` or the env.

A rank outside the list must run untouched (no hooks, no profiler, no files), so this module
imports nothing heavy: the bootstrap consults it before torch is even imported.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

from ..protocol import ENV_RANKS

#: the spelling of "no rank" (used for the rank that runs under ncu)
NONE = "none"


def parse_ranks(spec: str | Iterable[int] | None) -> list[int] | None:
    """`"0,3"`, `"0-2,5"`, `"none"` or ints -> sorted ranks; None or `""` means every rank."""
    if spec is None:
        return None
    if isinstance(spec, str):
        text = spec.strip()
        if not text:
            return None
        if text.lower() == NONE:
            return []
        out: set[int] = set()
        for part in text.split(","):
            lo, sep, hi = part.strip().partition("-")
            try:
                first, last = int(lo), int(hi) if sep else int(lo)
            except ValueError:
                raise ValueError(
                    f"bad rank list {spec!r}: use ranks like 0,3 or 0-3 (or 'none')"
                ) from None
            if last < first:
                raise ValueError(f"bad rank range {part.strip()!r} in {spec!r}: high end first")
            out.update(range(first, last + 1))
        return sorted(out)
    ranks = sorted({int(r) for r in spec})
    if any(r < 0 for r in ranks):
        raise ValueError(f"ranks must be >= 0, got {ranks}")
    return ranks


def format_ranks(ranks: list[int] | None) -> str:
    """The inverse of parse_ranks, for the environment of child processes."""
    if ranks is None:
        return ""
    return ",".join(map(str, ranks)) if ranks else NONE


def env_ranks() -> list[int] | None:
    """The ranks named by $JUPYTER_GPUPROF_RANKS (None: unset or empty, i.e. every rank)."""
    return parse_ranks(os.environ.get(ENV_RANKS))


def current_rank() -> int | None:
    """This process's global rank, without importing torch; None outside a distributed job."""
    dist = sys.modules.get("torch.distributed")
    if dist is not None and dist.is_available() and dist.is_initialized():
        return int(dist.get_rank())
    for name in ("RANK", "LOCAL_RANK"):
        value = os.environ.get(name, "").strip()
        if value.isdigit():
            return int(value)
    return None


def job_rank() -> tuple[int, int] | None:
    """(rank, world size) when this process is one rank of a job, else None.

    The rank is `current_rank`'s (the one rank detector); the size comes from the same place:
    the process group when it is up, else $WORLD_SIZE (1 when unset).
    """
    rank = current_rank()
    if rank is None:
        return None
    dist = sys.modules.get("torch.distributed")
    if dist is not None and dist.is_available() and dist.is_initialized():
        return rank, int(dist.get_world_size())
    size = os.environ.get("WORLD_SIZE", "").strip()
    return rank, int(size) if size.isdigit() else 1


def rank_selected(ranks: list[int] | None) -> bool:
    """False only when this process is a rank we know of and the list leaves it out."""
    if ranks is None:
        return True
    rank = current_rank()
    return rank is None or rank in ranks
