"""The expandable-segments replay: holes reused best fit, neighbours merged, the tail grown by
pages, small and large pools apart (each rule fails without its code)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jupyter_gpuprof.analysis.expandable_replay import expandable_reserved
from jupyter_gpuprof.analysis.memory_history import MemoryHistory

MIB = 1 << 20


def _history(ops: list[tuple[str, str, int]]) -> MemoryHistory:
    """A history from ("alloc"|"free", name, MiB) steps, one event each."""
    rows: dict[str, dict[str, int]] = {}
    for i, (op, name, mib) in enumerate(ops):
        if op == "alloc":
            rows[name] = {"addr": 4096 * (len(rows) + 1), "bytes": int(mib * MIB), "alloc_i": i,
                          "free_i": len(ops), "frame_i": -1}
        else:
            rows[name]["free_i"] = i
    n = len(ops)
    blocks = pd.DataFrame(list(rows.values()))
    blocks["alloc_us"] = blocks["alloc_i"]
    blocks["free_us"] = blocks["free_i"]
    delta = np.zeros(n, dtype="int64")
    np.add.at(delta, blocks["alloc_i"].to_numpy(), blocks["bytes"].to_numpy())
    freed = blocks[blocks["free_i"] < n]
    np.add.at(delta, freed["free_i"].to_numpy(), -freed["bytes"].to_numpy())
    return MemoryHistory(blocks=blocks, frames=[], event_us=np.arange(n, dtype="int64"),
                         allocated=np.cumsum(delta), reserved_bytes=0, phases=[])


def test_a_freed_block_is_reused_before_the_segment_grows() -> None:
    # 30 + 30 MiB map three 20 MiB pages; the 20 MiB block takes the first one's hole
    ops = [("alloc", "a", 30), ("alloc", "b", 30), ("free", "a", 0), ("alloc", "c", 20)]
    assert expandable_reserved(_history(ops)) == 60 * MIB


def test_a_hole_too_small_leaves_the_segment_to_grow_at_its_end() -> None:
    ops = [("alloc", "a", 30), ("alloc", "b", 30), ("free", "a", 0), ("alloc", "d", 40)]
    assert expandable_reserved(_history(ops)) == 100 * MIB


def test_free_neighbours_merge_into_one_hole() -> None:
    ops = [("alloc", "a", 30), ("alloc", "b", 30), ("alloc", "k", 20), ("free", "a", 0),
           ("free", "b", 0), ("alloc", "e", 55)]
    assert expandable_reserved(_history(ops)) == 80 * MIB


def test_the_free_tail_grows_in_place() -> None:
    # a: 30 of 40 mapped, 10 free at the end; b needs 25: 20 more, not 40
    ops = [("alloc", "a", 30), ("alloc", "b", 25)]
    assert expandable_reserved(_history(ops)) == 60 * MIB


def test_small_blocks_map_their_own_pages() -> None:
    ops = [("alloc", "s", 0.5), ("alloc", "t", 0.5), ("alloc", "u", 0.5), ("alloc", "a", 30)]
    assert expandable_reserved(_history(ops)) == 2 * MIB + 40 * MIB
