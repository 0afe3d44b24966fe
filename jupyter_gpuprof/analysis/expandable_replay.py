"""What the allocator would reserve with expandable segments, replayed on the recorded history.

`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` keeps one segment per pool that grows by
mapping pages at its end. A block freed inside it stays mapped and is reused, best fit, so what
it still reserves beyond the allocated bytes is the holes between live blocks when it is at its
largest, not the cached segments of the default allocator: a ResNet-50's 1.14 GB of slack (7.05
GB reserved at a 5.91 GB peak) came down to 6.01 GB reserved, not to 5.91 (H200). The replay
follows torch's CUDA caching allocator: blocks of at most 1 MiB in the small pool, larger ones in
the large pool; the smallest free block that fits, the lowest address among equals; a block
split whenever 512 bytes or more would be left; free neighbours merged; when nothing fits, the
free tail grown by whole pages (2 MiB small, 20 MiB large).
"""

from __future__ import annotations

import bisect

import numpy as np

from .memory_history import MemoryHistory

#: torch's allocator constants (c10/cuda/CUDACachingAllocator.cpp)
SMALL_SIZE = 1 << 20  # kSmallSize: a request this size or less comes from the small pool
MIN_BLOCK = 512  # kMinBlockSize: the least a split may leave
PAGE = {True: 2 << 20, False: 20 << 20}  # kSmallBuffer, kLargeBuffer: the pages mapped


class _Segment:
    """One pool's growing segment: its free blocks by (size, offset) and by offset."""

    def __init__(self, small: bool) -> None:
        self.page = PAGE[small]
        self.mapped = 0
        self.by_size: list[tuple[int, int]] = []  # (size, offset), sorted
        self.starts: list[int] = []  # free block offsets, sorted
        self.size_at: dict[int, int] = {}  # free block offset -> size
        self.live: dict[int, int] = {}  # live block key -> its offset
        self.length: dict[int, int] = {}  # live block key -> its size

    def _add_free(self, off: int, size: int) -> None:
        bisect.insort(self.by_size, (size, off))
        bisect.insort(self.starts, off)
        self.size_at[off] = size

    def _drop_free(self, off: int) -> int:
        size = self.size_at.pop(off)
        del self.by_size[bisect.bisect_left(self.by_size, (size, off))]
        del self.starts[bisect.bisect_left(self.starts, off)]
        return size

    def alloc(self, key: int, size: int) -> None:
        i = bisect.bisect_left(self.by_size, (size, -1))
        if i < len(self.by_size):
            have, off = self.by_size[i]
            self._drop_free(off)
        else:  # nothing fits: grow the free tail (or the end) by whole pages
            tail = self.starts[-1] if self.starts else None
            if tail is not None and tail + self.size_at[tail] == self.mapped:
                off, have = tail, self._drop_free(tail)
            else:
                off, have = self.mapped, 0
            grow = -(-(size - have) // self.page) * self.page
            self.mapped += grow
            have += grow
        if have - size >= MIN_BLOCK:
            self._add_free(off + size, have - size)
        else:
            size = have
        self.live[key], self.length[key] = off, size

    def free(self, key: int) -> None:
        off, size = self.live.pop(key), self.length.pop(key)
        j = bisect.bisect_left(self.starts, off)
        if j < len(self.starts) and self.starts[j] == off + size:  # merge the next free block
            size += self._drop_free(off + size)
        if j > 0:
            prev = self.starts[j - 1]
            if prev + self.size_at[prev] == off:  # and the previous one
                off, size = prev, size + self._drop_free(prev)
        self._add_free(off, size)


def expandable_reserved(history: MemoryHistory) -> int:
    """The most the history's blocks would have reserved with expandable segments: the two
    pools' mapped bytes at their largest (the blocks alive at the start packed first)."""
    b = history.blocks
    n = history.n_events
    pools = {True: _Segment(True), False: _Segment(False)}
    small = (b["bytes"] <= SMALL_SIZE).to_numpy()
    sizes = b["bytes"].to_numpy()
    alloc_i, free_i = b["alloc_i"].to_numpy(), b["free_i"].to_numpy()
    keys = np.arange(len(b))
    first = keys[alloc_i < 0]
    for k in first[np.argsort(b["addr"].to_numpy()[first], kind="stable")]:
        pools[bool(small[k])].alloc(int(k), int(sizes[k]))
    # each event in order: its frees, then its allocation (an index holds one of them)
    freed, made = free_i < n, alloc_i >= 0
    order = np.concatenate([keys[freed], keys[made]])
    when = np.concatenate([free_i[freed], alloc_i[made]])
    is_alloc = np.concatenate([np.zeros(freed.sum(), bool), np.ones(made.sum(), bool)])
    most = sum(p.mapped for p in pools.values())
    for j in np.lexsort((is_alloc, when)):
        k = int(order[j])
        pool = pools[bool(small[k])]
        if is_alloc[j]:
            pool.alloc(k, int(sizes[k]))
            most = max(most, pools[True].mapped + pools[False].mapped)
        elif k in pool.live:
            pool.free(k)
    return most
