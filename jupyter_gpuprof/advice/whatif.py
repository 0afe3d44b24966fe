"""Each fix as a transformation of the step's dependency graph, replayed to predict its gain.

A finding's expected gain is `1 − predicted / real step`, where the prediction replays the
transformed graph (see `analysis.step_replay`) reconciled with the unprofiled baseline. Because
the replay keeps the dependencies, a root cause is credited with the symptoms it causes: removing
the syncs that drain the launch queue also removes the launch gaps that follow them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import units
from ..analysis.hardware import host_link_gbps
from ..analysis.step_graph import BLOCKING, LAUNCH, RECORD, SYNC, WAIT, StepGraph
from ..analysis.step_replay import REAL_COLUMN, predict
from ..analysis.summary import Analysis
from . import thresholds as T
from .fusion import fused, memory_fusion_advised
from .whatif_precision import precision_fix

#: the launch fix's routes: compiling the model (`launch_fix`), or, where a graph break leaves
#: part of the model eager, the whole step captured by hand (`hand_graph_fix`)
COMPILE_ROUTE, HAND_ROUTE = "compile", "hand"


@dataclass
class Prediction:
    """One fix's predicted step and what in the graph produced it."""

    category: str
    predicted_step_ms: float
    real_step_ms: float
    driver: str
    requires: str = ""  # the category whose fix must come first (launch needs the syncs gone)
    route: str = COMPILE_ROUTE  # how the fix is applied (the launch fix: HAND_ROUTE or not)
    fusion_ms: float = 0.0  # of the saving, the longer chains' fusion (`launch_fix` fuse_longer)

    @property
    def gain_pct(self) -> float:
        """Share of the real step the fix saves."""
        if not self.real_step_ms > 0:
            return 0.0
        return max(0.0, 100.0 * (1.0 - self.predicted_step_ms / self.real_step_ms))


Transform = Callable[[StepGraph], tuple[StepGraph, str]]


def input_fix(g: StepGraph) -> tuple[StepGraph, str]:
    """Workers prefetch: the batch is ready when the step asks for it."""
    h = g.host.assign(pre_input_us=0.0)
    ms = (g.host["pre_input_us"].sum() + g.tail_input_us) / 1e3 / g.n_steps
    return g.with_(host=h, tail_input_us=0.0), (
        f"data pipeline off the host path ({units.ms(ms)} per profiled step of __next__ removed)")


def _pinned_gbps(g: StepGraph) -> float:
    """Pinned host-link bandwidth: the trace's own pinned copies where it has big ones."""
    c = g.gpu[(g.gpu["copy"].isin(["HtoD", "DtoH"])) & ~g.gpu["pageable"]
              & (g.gpu["bytes"] >= 1 << 20)]
    if len(c):
        return float(c["bytes"].sum() / c["dur_us"].sum() / 1e3)
    return host_link_gbps(g.gpu_name)


def transfer_fix(g: StepGraph) -> tuple[StepGraph, str]:
    """Pinned buffers + non_blocking: copies at pinned bandwidth, the host does not wait."""
    gpu = g.gpu.copy()
    big = gpu["copy"].isin(["HtoD", "DtoH"]) & (gpu["bytes"] >= T.READBACK_MAX_BYTES)
    gbps = _pinned_gbps(g)
    slow = big & (gpu["pageable"] | (gpu["bytes"] / gpu["dur_us"].clip(lower=1e-3) / 1e3 < gbps))
    gpu.loc[slow, "dur_us"] = gpu.loc[slow, "bytes"] / (gbps * 1e3)
    host = g.host.copy()
    copies = host["gpu"].isin(np.flatnonzero(big.to_numpy())).to_numpy()
    # a pageable copy is a cudaMemcpyAsync followed by the stream sync that makes it blocking:
    # that sync belongs to the copy and goes with it
    own_sync = np.concatenate(([False], copies[:-1])) & (host["kind"] == SYNC).to_numpy()
    host.loc[copies, "kind"] = LAUNCH
    host.loc[copies, "dur_us"] = T.ASYNC_COPY_CALL_US
    host.loc[own_sync, "kind"] = LAUNCH
    host.loc[own_sync, "dur_us"] = 0.0
    mb = float(gpu.loc[big, "bytes"].sum()) / 1e6 / g.n_steps
    return g.with_(host=host, gpu=gpu), (
        f"{mb:.1f} MB per step copied at {gbps:.0f} GB/s pinned, {int(copies.sum())} copy calls "
        f"no longer hold the host")


def _host_waits(g: StepGraph) -> np.ndarray:
    """Host items that wait on the GPU for a value (syncs, small read-backs): what `sync_fix`
    removes and what no CUDA graph can contain."""
    host = g.host
    gidx = host["gpu"].to_numpy()
    small = np.zeros(len(host), dtype=bool)
    ok = gidx >= 0
    small[ok] = g.gpu["bytes"].to_numpy()[gidx[ok]] < T.READBACK_MAX_BYTES
    return ((host["kind"] == SYNC).to_numpy()
            | ((host["kind"] == BLOCKING).to_numpy() & small))


def sync_fix(g: StepGraph) -> tuple[StepGraph, str]:
    """No host waits inside the step: the host runs ahead and the launch queue stays full."""
    host = g.host.copy()
    waits = _host_waits(g)
    held = float(g.host.loc[waits, "dur_us"].sum()) / 1e3 / g.n_steps
    host.loc[waits, "kind"] = LAUNCH
    host.loc[waits & (host["gpu"] < 0).to_numpy(), "dur_us"] = 0.0
    return g.with_(host=host), (
        f"{g.per_step(float(waits.sum()))} host waits per step removed ({units.ms(held)} per "
        f"profiled step held); the host runs ahead, so the launch gaps after each wait close too")


def _without_waits(g: StepGraph) -> tuple[StepGraph, str]:
    """The step with its host waits removed, as a CUDA graph needs, and the words saying so."""
    if not (n_waits := float(_host_waits(g).sum())):
        return g, ""
    return sync_fix(g)[0], (f"after its {g.per_step(n_waits)} host waits per step are removed "
                            "(a CUDA graph cannot contain one), ")


def launch_fix(g: StepGraph, fuse_longer: bool = False) -> tuple[StepGraph, str]:
    """What `torch.compile(mode="reduce-overhead")` does to a launch-bound step: its chains of
    short kernels fused, then the step replayed from one CUDA graph: launches cost the graph
    floor, dispatch and the Python glue between ops vanish; ops that launch nothing but do real
    host work stay, and so does everything the compiled model does not run: the optimizer and
    the loop's own code outside forward and backward (the graph's `eager` calls); each call
    into the compiled model costs its guards and wrappers (`model_entry`). A graph
    cannot contain a host wait, so a step that syncs has its syncs removed first
    (`requires_sync`). `fuse_longer`: no memory finding prices the chains of longer kernels
    (`fusion.memory_fusion_advised`), so the compile this fix shows fuses them here."""
    g, first = _without_waits(g)
    # the compiled graph also fuses the chains of short kernels (the longer ones, whose bytes
    # set their time, are the memory finding's where it has one: each fusion is priced once)
    g, fusion = fused(g, 0.0, math.inf if fuse_longer else T.MEMORY_MIN_KERNEL_US)
    host = g.host.copy()
    gidx = host["gpu"].to_numpy()
    is_kernel = np.zeros(len(host), dtype=bool)
    is_kernel[gidx >= 0] = ~g.gpu["kind"].isin(["memcpy", "memset"]).to_numpy()[gidx[gidx >= 0]]
    # the optimizer and the loop's own code outside forward and backward stay eager; the fix
    # also makes the optimizer fused (its step in a few launches) where it is not yet
    graphed = ~host["eager"].to_numpy(dtype=bool)
    if not g.optimizer_fused:
        graphed |= host["optimizer"].to_numpy(dtype=bool)
    launches = is_kernel & (host["kind"] == LAUNCH).to_numpy() & graphed
    waits = host["kind"].isin([SYNC, BLOCKING]).to_numpy()  # only big blocking copies are left
    after_wait = np.concatenate(([False], waits[:-1]))  # the host using a read-back value
    glue = ~after_wait & (host["pre_host_us"] < T.HOST_WORK_MIN_US).to_numpy() & graphed
    python = host["pre_host_us"] - host["pre_hostop_us"]
    # dispatch inside a part of the model left eager (a graph-broken LSTM's backward) stays
    kept = host.loc[graphed, "pre_eager_dispatch_us"]
    saved = float(host.loc[launches, "dur_us"].sum()
                  + (host.loc[graphed, "pre_dispatch_us"] - kept).sum()
                  + python[glue].sum()) / 1e3 / g.n_steps
    host.loc[launches, "dur_us"] = 0.0
    host.loc[graphed, "pre_dispatch_us"] = kept
    host.loc[glue, "pre_host_us"] = host.loc[glue, "pre_hostop_us"]
    # one graph launch at each entry into a graphed stretch (a step, after a wait, after
    # eager code)
    entered = graphed & ~np.concatenate(([False], graphed[:-1]))
    seg = graphed & (np.concatenate(([True], waits[:-1])) | entered
                     | (host["step"].diff().fillna(1) != 0).to_numpy())
    host.loc[seg, "pre_host_us"] += T.GRAPH_LAUNCH_US
    # each call into the compiled model runs its guards and wrappers, forward and backward
    entries = host["model_entry"].to_numpy(dtype=bool) & graphed
    host[REAL_COLUMN] = np.where(entries, T.COMPILED_GRAPHS_CALL_US, 0.0)  # measured unprofiled
    floor = g.per_step(float(entries.sum()))
    gpu = g.gpu.copy()
    gpu.loc[~gpu["kind"].isin(["memcpy", "memset"]), "dur_us"] += T.GRAPH_NODE_US
    return g.with_(host=host, gpu=gpu, launch_latency_us=T.GRAPH_NODE_US,
                   tail_dispatch_us=0.0), (
        f"{first}{g.per_step(float(launches.sum()))} launches per step replayed from "
        f"CUDA graphs{_eager_note(g, is_kernel & ~graphed)}"
        f"{_floor_note(floor) if entries.any() else ''} ({units.ms(saved)} per profiled step "
        f"of dispatch and glue removed){fusion}")


def _floor_note(calls: str) -> str:
    """The compiled calls' own host cost, said."""
    return (f", {calls} compiled calls per step at "
            f"{units.ms(T.COMPILED_GRAPHS_CALL_US / 1e3)} of guards and wrappers each")


#: the step graph's columns for what compiling leaves eager inside the model, and how to say it
EAGER_INSIDE = (("reducer", "DDP's gradient reducer, whose hooks run outside the compiled graphs"),
                ("graph_break", "an RNN, GRU or LSTM or after one: Dynamo does not trace it and "
                                "cannot resume after it, so it compiles the forward pass only "
                                "up to it"))


def _eager_note(g: StepGraph, eager: np.ndarray) -> str:
    """What the graphs leave eager, said when there is some: code outside the model, and the
    parts of the model no compiled graph holds (DDP's reducer hooks, the modules Dynamo
    skips)."""
    n = float(eager.sum())
    if not n:
        return ""
    named = [(k, label) for col, label in EAGER_INSIDE
             if (k := float((eager & g.host[col].to_numpy(dtype=bool)).sum()))]
    if len(named) == 1 and named[0][0] == n:
        why = named[0][1]
    else:
        why = "; ".join(["code outside the model",
                         *(f"{g.per_step(k)} of them in {label}" for k, label in named)])
    return f", {g.per_step(n)} left eager ({why})"


def hand_graph_fix(g: StepGraph) -> tuple[StepGraph, str]:
    """The whole step captured by hand in one CUDA graph (`torch.cuda.graph`) and replayed:
    every launch of forward, backward and the update, those a graph break leaves eager
    included (cuDNN's RNN kernels capture like any other), at the graph's node cost; the
    Python and dispatch that ran between them, the framework's included, do not run at all.
    What stays is outside the graph: the data pipeline, the copies from and to host memory,
    the loop's own long host work and the host using a read-back. No compiled call's guards,
    no fusion. Host waits are taken out first, as no graph contains one."""
    g, first = _without_waits(g)
    host, gpu = g.host.copy(), g.gpu.copy()
    gidx = host["gpu"].to_numpy()
    linked = gidx >= 0
    on_gpu = np.zeros(len(host), dtype=bool)  # work a capture holds: not a host copy
    on_gpu[linked] = ~gpu["copy"].isin(["HtoD", "DtoH"]).to_numpy()[gidx[linked]]
    kind = host["kind"].to_numpy()
    graphed = (on_gpu & (kind == LAUNCH)) | np.isin(kind, [RECORD, WAIT])
    waits = np.isin(kind, [SYNC, BLOCKING])
    after_wait = np.concatenate(([False], waits[:-1]))
    own = (host["pre_host_us"] - host["pre_framework_us"]).to_numpy()
    stays = np.where(after_wait, host["pre_host_us"].to_numpy(),
                     np.where(own >= T.HOST_WORK_MIN_US, own, 0.0))
    saved = float(host.loc[graphed, "dur_us"].sum() + host["pre_dispatch_us"].sum()
                  + (host["pre_host_us"].to_numpy() - stays).sum()) / 1e3 / g.n_steps
    host.loc[graphed, "dur_us"] = 0.0
    host["pre_dispatch_us"] = 0.0
    host["pre_host_us"] = stays
    # one replay per step, and again after each wait left (a big blocking copy)
    block = pd.Series(host["step"].to_numpy() * (len(host) + 1) + np.cumsum(waits))
    host.loc[graphed & ~block.where(graphed).duplicated().to_numpy(),
             "pre_host_us"] += T.GRAPH_LAUNCH_US
    nodes = np.zeros(len(gpu), dtype=bool)
    nodes[gidx[graphed & linked]] = True
    gpu.loc[nodes, "dur_us"] += T.GRAPH_NODE_US
    broken = float((graphed & linked & g.host["eager"].to_numpy(dtype=bool)).sum())
    return g.with_(host=host, gpu=gpu, launch_latency_us=T.GRAPH_NODE_US,
                   tail_dispatch_us=0.0), (
        f"{first}the whole step captured by hand in one CUDA graph: "
        f"{g.per_step(float((graphed & linked).sum()))} launches per step replayed, "
        f"{g.per_step(broken)} of them ones compiling the model leaves eager (the update, "
        f"and an RNN, GRU or LSTM and what follows it) ({units.ms(saved)} per profiled step "
        "of dispatch and glue removed; no fusion)")


def hand_route_applies(g: StepGraph) -> bool:
    """Whether compiling leaves some of the model's launches eager at a graph break, so that
    capturing the step by hand is priced beside it."""
    h = g.host
    return bool((h["graph_break"].to_numpy(dtype=bool) & (h["gpu"] >= 0).to_numpy()
                 & (h["kind"] == LAUNCH).to_numpy()).any())


def requires_sync(g: StepGraph) -> bool:
    """Whether the launch fix needs the step's syncs removed first."""
    return bool(_host_waits(g).any())


def host_fix(g: StepGraph) -> tuple[StepGraph, str]:
    """The loop's own host-only work (bookkeeping, CPU math) moved off the step; what runs
    inside backward() and the optimizer's calls is the framework's, which no change to the
    loop's code moves, and stays."""
    host = g.host.copy()
    movable = host["pre_host_us"] - host["pre_framework_us"]
    work = movable >= T.HOST_WORK_MIN_US
    tail = g.tail_host_us - g.tail_framework_us
    tail = tail if tail >= T.HOST_WORK_MIN_US else 0.0
    ms = (float(movable[work].sum()) + tail) / 1e3 / g.n_steps
    host.loc[work, "pre_host_us"] = host.loc[work, "pre_framework_us"]
    stays = (float(g.host["pre_framework_us"].sum()) + g.tail_framework_us) / 1e3 / g.n_steps
    return g.with_(host=host, tail_host_us=g.tail_host_us - tail), (
        f"{g.per_step(float(work.sum()))} stretches of host-only work per step moved off "
        f"the step ({units.ms(ms)} per profiled step)"
        + (f"; {units.ms(stays)} per profiled step inside backward() and the optimizer's calls "
           "stays (the framework's)" if stays >= T.HOST_WORK_MIN_US / 1e3 else ""))


def memory_fix(g: StepGraph) -> tuple[StepGraph, str]:
    """`torch.compile`'s fusion of the chains of memory-bound kernels long enough for their
    bytes, not their launch, to set their time (what compiled code saves on the host beyond
    that is the launch finding's: a graph saves more)."""
    changed, driver = fused(g, T.MEMORY_MIN_KERNEL_US)
    return changed, driver.removeprefix("; ") or "no chain of memory-bound kernels to fuse"


FIXES: dict[str, Transform] = {
    "input": input_fix, "transfer": transfer_fix, "sync": sync_fix, "launch": launch_fix,
    "host": host_fix, "precision": precision_fix, "memory": memory_fix,
}


def predictions(graph: StepGraph | None, real_step_ms: float,
                host_probe_ms: float | None = None, sync_held_ms: float = 0.0,
                unprofiled: bool = False, fuse_longer: bool = False) -> dict[str, Prediction]:
    """Every fix's prediction for this graph (computed once per graph). `sync_held_ms`: what
    the syncs hold unprofiled beyond the replay (`Analysis.sync_held_ms`), gone with every fix
    that takes the syncs out (the sync fix, the launch fix that needs it first);
    `unprofiled`: the real step is the unprofiled baseline's (`step_replay.calibrate`);
    `fuse_longer`: the launch fix's compile fuses the longer kernels' chains too (`launch_fix`)."""
    if graph is None or not len(graph.host) or not real_step_ms > 0:
        return {}
    key = ("predictions", round(real_step_ms, 6), host_probe_ms, round(sync_held_ms, 6),
           unprofiled, fuse_longer)
    if key not in graph.memo:
        out = {}
        for category, fix in FIXES.items():
            changed, driver = (launch_fix(graph, fuse_longer) if category == "launch"
                               else fix(graph))
            needs = "sync" if category == "launch" and requires_sync(graph) else ""
            unsynced = category == "sync" or needs == "sync"
            held = sync_held_ms if unsynced else 0.0
            out[category] = Prediction(
                category, predict(graph, changed, real_step_ms, host_probe_ms, held, unprofiled),
                real_step_ms, driver, needs)
            if category == "launch" and fuse_longer:
                short = predict(graph, launch_fix(graph)[0], real_step_ms, host_probe_ms, held,
                                unprofiled)
                out[category].fusion_ms = max(0.0, short - out[category].predicted_step_ms)
        if hand_route_applies(graph):  # the route that saves more is the launch fix
            changed, driver = hand_graph_fix(graph)
            waits = out["launch"].requires  # taken out first on either route
            hand = Prediction("launch", predict(graph, changed, real_step_ms, host_probe_ms,
                                                sync_held_ms if waits else 0.0, unprofiled),
                              real_step_ms, driver, waits, HAND_ROUTE)
            if hand.predicted_step_ms < out["launch"].predicted_step_ms:
                out["launch"] = hand
        graph.memo[key] = out
    cached: dict[str, Prediction] = graph.memo[key]
    return cached


def predictions_for(a: Analysis) -> dict[str, Prediction]:
    """Every fix's prediction for an analysed trace, reconciled with its real step."""
    return predictions(a.graph, a.real.step_ms, a.baseline_probe_ms, a.sync_held_ms,
                       a.real.source == "baseline", not memory_fusion_advised(a))
