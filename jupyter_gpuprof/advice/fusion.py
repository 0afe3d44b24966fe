"""The chains of memory-bound kernels one compiled kernel could fuse, found and priced as array
work: the what-if's memory and launch fixes replay the step with them fused."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .. import units
from ..analysis.kernels import compiler_generated
from ..analysis.step_graph import BLOCKING, SYNC, StepGraph
from ..analysis.summary import Analysis
from . import thresholds as T

REDUCING_KINDS = ("norm", "softmax", "reduction")


def memory_work(a: Analysis) -> tuple[float, float]:
    """ms per step in memory-bound kernels, and in all kernels: what the memory finding weighs."""
    total = float(a.kinds["total_us"].sum()) / 1e3 / max(a.n_steps, 1) if len(a.kinds) else 0.0
    return a.kind_ms_per_step(T.MEMORY_KINDS), total


def memory_fusion_advised(a: Analysis) -> bool:
    """Whether memory-bound kernels carry enough of the GPU time for the memory finding, which
    then prices the fusion of their longer chains (else the compile that the launch fix shows
    fuses them too, and the launch fix prices it: each fusion priced once)."""
    mem, total = memory_work(a)
    return total > 0 and mem / total >= T.MEMORY_BOUND_MIN_SHARE


def segments(g: StepGraph) -> np.ndarray:
    """Per GPU operation, the stretch of host program it was launched in: a new one starts at
    every step and every host wait (a compiled region ends where Python needs a value)."""
    h = g.host
    waits = h["kind"].isin([SYNC, BLOCKING]).to_numpy()
    seg = np.cumsum(waits) + h["step"].to_numpy() * (len(h) + 1)
    out = np.full(len(g.gpu), -1, dtype=np.int64)
    linked = h["gpu"].to_numpy() >= 0
    out[h["gpu"].to_numpy()[linked]] = seg[linked]
    return out


def compiled(g: StepGraph) -> np.ndarray:
    """Per GPU operation, whether compiling the model compiles the code that launched it: not
    what the graph's `eager` calls launch (the optimizer, the loop's own code, what a graph
    break leaves eager), which no compiled kernel fuses."""
    h = g.host
    gidx = h["gpu"].to_numpy()
    out = np.zeros(len(g.gpu), dtype=bool)
    linked = gidx >= 0
    out[gidx[linked]] = ~h["eager"].to_numpy(dtype=bool)[linked]
    return out


def chain_members(g: StepGraph, min_us: float,
                  max_us: float = math.inf) -> tuple[np.ndarray, np.ndarray]:
    """Runs of consecutive bandwidth-bound kernels of the compiled code (`compiled`; none the
    compiler already generated, `compiler_generated`; each
    `min_us` or longer and shorter than `max_us`) on one stream and in one stretch of host
    program, two to
    `T.FUSION_MAX_KERNELS`, that one compiled kernel could fuse: pointwise ops around at most
    one reduction (the compiler fuses a reduction's producers in as its prologue and its
    consumers as its epilogue, and starts a new kernel at the next one). Returned as the
    members' GPU rows, chain after chain (streams in order of appearance, each in start
    order), and where each chain starts among them."""
    gpu = g.gpu
    dur = gpu["dur_us"].to_numpy(dtype=float)
    mem = (gpu["kind"].isin(T.MEMORY_KINDS).to_numpy() & (dur >= min_us) & (dur < max_us)
           & compiled(g) & ~compiler_generated(gpu["name"]))
    stream = pd.factorize(gpu["stream"], sort=False)[0]
    order = np.lexsort((gpu["ts_us"].to_numpy(), stream))  # stable: ties keep row order
    m, seg, st = mem[order], segments(g)[order], stream[order]
    red = gpu["kind"].isin(REDUCING_KINDS).to_numpy()[order] & m
    # maximal runs of fusable kernels on one stream in one stretch of host program
    joins = np.zeros(len(m), dtype=bool)
    joins[1:] = m[1:] & m[:-1] & (st[1:] == st[:-1]) & (seg[1:] == seg[:-1])
    run_start = np.flatnonzero(m & ~joins)
    if not len(run_start):
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    run_end = run_start + _run_len(joins, run_start)
    # a chain starts where its run starts and at every reduction but the run's first
    reds = np.flatnonzero(red)
    run_of = np.searchsorted(run_start, reds, side="right") - 1
    later = np.ones(len(reds), dtype=bool)
    later[1:] = run_of[1:] == run_of[:-1]
    later[:1] = False
    start = np.sort(np.concatenate((run_start, reds[later])))
    owner = np.searchsorted(run_start, start, side="right") - 1
    end = np.append(start[1:], 0)
    last = np.append(owner[1:] != owner[:-1], True)
    end[last] = run_end[owner[last]]
    # past the cap, a chain ends early and the next one may take in a reduction: walk those
    # runs chain by chain
    capped = np.zeros(len(run_start), dtype=bool)
    capped[owner[end - start > T.FUSION_MAX_KERNELS]] = True
    plain = ~capped[owner]
    starts, ends = [start[plain]], [end[plain]]
    for s0, e0 in zip(run_start[capped].tolist(), run_end[capped].tolist(), strict=True):
        s = s0
        while s < e0:  # greedy, one chain per pass: at the cap or at the second reduction
            k = int(np.searchsorted(reds, s))
            second = int(reds[k + 1]) if k + 1 < len(reds) and reds[k] < e0 else e0
            e = min(e0, s + T.FUSION_MAX_KERNELS, second)
            starts.append(np.array([s]))
            ends.append(np.array([e]))
            s = e
    start, end = np.concatenate(starts), np.concatenate(ends)
    keep = end - start > 1
    start, end = start[keep], end[keep]
    by = np.argsort(start, kind="stable")
    start, end = start[by], end[by]
    lens = end - start
    offsets = np.cumsum(lens) - lens
    return order[np.repeat(start - offsets, lens) + np.arange(int(lens.sum()))], offsets


def _run_len(joins: np.ndarray, run_start: np.ndarray) -> np.ndarray:
    """Length of each run of joined kernels from its start."""
    breaks = np.flatnonzero(~joins)  # every position not joined to the one before
    nxt = np.searchsorted(breaks, run_start, side="right")
    stop = np.where(nxt < len(breaks), breaks[np.minimum(nxt, len(breaks) - 1)], len(joins))
    out: np.ndarray = stop - run_start
    return out


def _summed_as_numpy(values: np.ndarray, offsets: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Each chain's sum of `values`, to the last digit as numpy sums the chain's own array:
    in order below 8 terms, pairwise (its own blocking) from 8."""
    pairwise_from = 8  # numpy's summation, not a policy
    out: np.ndarray = values[offsets].copy()
    for k in range(1, min(int(lens.max()), pairwise_from)):
        more = lens > k
        out[more] += values[offsets[more] + k]
    for c in np.flatnonzero(lens >= pairwise_from).tolist():
        out[c] = values[offsets[c]:offsets[c] + lens[c]].sum()
    return out


def chains(g: StepGraph, min_us: float, max_us: float = math.inf) -> list[np.ndarray]:
    """`chain_members` as one array of GPU rows per chain."""
    members, offsets = chain_members(g, min_us, max_us)
    return np.split(members, offsets[1:]) if len(offsets) else []


def fused(g: StepGraph, min_us: float, max_us: float = math.inf) -> tuple[StepGraph, str]:
    """Each chain of memory-bound kernels becomes one kernel moving the chain's unique bytes.

    Every member of a chain streams the same activation: the fused kernel moves what its
    largest member moves (one read, one write), plus each other member's extra operands, seen
    as the time that member takes beyond the chain's lightest one, at the bandwidth they reached.
    """
    members, offsets = chain_members(g, min_us, max_us)
    durs = g.gpu["dur_us"].to_numpy(dtype=float, copy=True)
    d = durs[members]
    lens = np.diff(np.append(offsets, len(members)))
    if not len(offsets):
        return g.with_(), ""
    hi, lo = np.maximum.reduceat(d, offsets), np.minimum.reduceat(d, offsets)
    excess = _summed_as_numpy(d - np.repeat(lo, lens), offsets, lens)
    new = hi + excess - (hi - lo)
    before, after = float(d.sum()), float(new.sum())
    durs[members[offsets]] = new
    first = np.zeros(len(members), dtype=bool)
    first[offsets] = True
    dropped = np.zeros(len(durs), dtype=bool)
    dropped[members[~first]] = True
    # the compiler that fuses them also stops dispatching the fused-away ops one by one (what
    # ran ahead of them inside a part of the model left eager still runs)
    gidx = g.host["gpu"].to_numpy()
    items = (gidx >= 0) & dropped[np.maximum(gidx, 0)]
    kept = g.host["pre_eager_dispatch_us"].to_numpy()
    host = g.host.assign(dur_us=np.where(items, 0.0, g.host["dur_us"].to_numpy()),
                         pre_dispatch_us=np.where(items, kept, g.host["pre_dispatch_us"]
                                                  .to_numpy()),
                         gpu=np.where(items, -1, gidx))
    n = g.n_steps
    return g.with_(host=host, gpu=g.gpu.assign(dur_us=durs)), (
        f"; {int(dropped.sum()) / n:.0f} memory-bound kernels per step fused into their chains "
        f"({units.ms(before / 1e3 / n)} → {units.ms(after / 1e3 / n)} per step of GPU time)")
