"""Replay a `StepGraph` forward in time to predict how long its steps take.

The host walks its items in order: it spends each item's preceding host time, then the call.
A launched operation starts when the call has reached the GPU, its stream is free and any
cross-stream wait is met; a sync or blocking copy holds the host until the GPU work it waits
on is done. The step ends when both the host and the GPU are done. Host times are scaled by
one factor so that the unchanged graph reproduces the unprofiled step (the profiler inflates
host time; kernel durations barely change), see `calibrate()`.
"""

from __future__ import annotations

import math

import numpy as np

from .step_graph import BLOCKING, LAUNCH, RECORD, SYNC, WAIT, StepGraph

#: host column a fix adds for host time it knows in real (unprofiled) time
REAL_COLUMN = "pre_real_us"
#: host time a sync call costs when the GPU is already done
SYNC_CALL_US = 4.0
#: host time from the GPU finishing to a waiting sync returning
SYNC_RETURN_US = 2.0
#: host-time scale factors tried when reconciling with the unprofiled baseline: the profiler
#: only ever slows the host, so a real step longer than the replay is not blamed on the host
#: (it is shared out over the whole prediction instead)
SCALE_RANGE = (0.02, 1.0)
#: host-time scale assumed where the real step cannot tell it (the GPU bounds the step at every
#: scale): what the profiler (CPU+CUDA activities, record_shapes) left of dispatch-bound host
#: time on traces where the calibration could see it (H200, torch 2.11: 0.48-0.60)
PROFILED_HOST_SCALE = 0.5
#: replays within this fraction of each other count as "the host scale does not matter"
INSENSITIVE = 0.01
#: launches the CUDA driver queues before a launch call blocks until the GPU frees a slot
LAUNCH_QUEUE_DEPTH = 1024
#: a probe this close to the GPU time of the launches beyond the queue was held by the GPU
THROTTLED_PROBE = 0.8


def probe_held_by_gpu(g: StepGraph, host_probe_ms: float) -> bool:
    """Whether the host probe timed the GPU rather than the host: a step of more launches than
    the driver queues, on a GPU slower than its host, blocks the host once the queue is full,
    so the probe lasts about as long as the GPU work beyond the queue (nanoGPT fp32 on the
    H200: 2,457 launches a step, a 133 ms probe against 120 ms of such GPU work; the bf16 step,
    with more launches, probed 75 ms). Such a probe only bounds the host time from above."""
    n = max(g.n_steps, 1)
    launches = len(g.gpu) / n
    if launches <= LAUNCH_QUEUE_DEPTH:
        return False
    beyond_ms = float(g.gpu["dur_us"].sum()) / 1e3 / n * (1 - LAUNCH_QUEUE_DEPTH / launches)
    return host_probe_ms >= THROTTLED_PROBE * beyond_ms


def replay(g: StepGraph, host_scale: float = 1.0) -> float:
    """Predicted mean step length (ms) of the graph, host times multiplied by `host_scale`."""
    h0 = g.start_us
    f = host_scale
    t = g.host
    pre_np = (t["pre_input_us"] + t["pre_dispatch_us"] + t["pre_host_us"]).to_numpy() * f
    if REAL_COLUMN in t.columns:  # a fix's costs measured unprofiled are not rescaled
        pre_np = pre_np + t[REAL_COLUMN].to_numpy()
    pre = pre_np.tolist()
    dur = (t["dur_us"].to_numpy() * f).tolist()
    kinds = t["kind"].tolist()
    gidx = t["gpu"].tolist()
    gdur = g.gpu["dur_us"].tolist()
    gstream = g.gpu["stream"].tolist()
    lat = g.launch_latency_us
    free: dict[int, float] = {}
    h = all_end = recorded = h0
    pending = -math.inf
    sync_call = SYNC_CALL_US * f
    for i, k in enumerate(kinds):
        h += pre[i]
        if k == LAUNCH or k == BLOCKING:
            j = gidx[i]
            end = h
            if j >= 0:
                s = gstream[j]
                start = max(h + lat, free.get(s, h0), pending)
                end = start + gdur[j]
                free[s] = end
                pending = -math.inf
                if end > all_end:
                    all_end = end
            h += dur[i]
            if k == BLOCKING and end + SYNC_RETURN_US > h:
                h = end + SYNC_RETURN_US
        elif k == SYNC:
            h = max(h + min(dur[i], sync_call), all_end + SYNC_RETURN_US)
        elif k == RECORD:
            recorded = all_end
            h += dur[i]
        elif k == WAIT:
            pending = recorded
            h += dur[i]
    h += (g.tail_host_us + g.tail_input_us + g.tail_dispatch_us) * f
    return (max(h, all_end) - h0) / 1e3 / max(g.n_steps, 1)


def host_ms_per_step(g: StepGraph) -> float:
    """Profiled host time of a step's own work (waits on the GPU counted as a call only)."""
    t = g.host
    waiting = t["kind"].isin([SYNC, BLOCKING]).to_numpy()
    own = (t["pre_input_us"] + t["pre_dispatch_us"] + t["pre_host_us"]).to_numpy().sum()
    calls = np.where(waiting, np.minimum(t["dur_us"].to_numpy(), SYNC_CALL_US),
                     t["dur_us"].to_numpy()).sum()
    tail = g.tail_host_us + g.tail_input_us + g.tail_dispatch_us
    return float(own + calls + tail) / 1e3 / max(g.n_steps, 1)


def calibrate(g: StepGraph, real_step_ms: float, host_probe_ms: float | None = None,
              unprofiled: bool = False) -> tuple[float, float]:
    """Host-time scale that makes the unchanged graph take `real_step_ms`, and the replay at it.

    A host probe (the host time of one unprofiled step issued from an empty GPU queue) over
    the trace's host time *is* the scale: measured, where the real step only lets it be
    inferred (a step whose GPU work nearly fills it fits many host speeds). Without a probe,
    bisection: the replay only grows with the host scale. When no scale reaches the real step
    (the GPU work alone is longer, or the real step is longer than the profiled one) the
    nearest end is kept and `predict()` rescales predictions by real/replayed; where the GPU
    bounds the step at any scale, `PROFILED_HOST_SCALE` stands in for the unseen host speed.
    So it does wherever an `unprofiled` real step (the baseline's, not the profiled steps')
    is longer than the replay even at the profiled host speed: the profiler only ever slows
    the host, so what lengthened that step is not a slower host (TinyGPT's baseline, timed
    with a sync after each step, serialised the loading the loop overlaps with the GPU:
    taking the host as slow as profiled made its 23 ms of fp32 SIMT GEMMs worth 3 %).
    """
    lo, hi = SCALE_RANGE
    if not (real_step_ms > 0) or not len(g.host):
        return 1.0, replay(g, 1.0)
    if host_probe_ms and (own := host_ms_per_step(g)) > 0:
        f = min(hi, max(lo, host_probe_ms / own))
        if probe_held_by_gpu(g, host_probe_ms):  # an upper bound: the profiler's usual share
            f = min(f, PROFILED_HOST_SCALE)
        return f, replay(g, f)
    if replay(g, lo) >= real_step_ms:
        return lo, replay(g, lo)
    at_hi = replay(g, hi)
    if at_hi <= real_step_ms:
        # the real step is no shorter than the replay at full host time: when the GPU bounds
        # the step at every scale, the real host speed is unseen, so take the profiler's
        # usual inflation out (a fix that shrinks GPU time then meets the real host)
        f = PROFILED_HOST_SCALE
        prior = replay(g, f)
        if unprofiled or prior >= at_hi * (1.0 - INSENSITIVE):
            return f, prior
        return hi, at_hi
    for _ in range(24):
        mid = math.sqrt(lo * hi)
        if replay(g, mid) < real_step_ms:
            lo = mid
        else:
            hi = mid
    f = math.sqrt(lo * hi)
    return f, replay(g, f)


def predict(g: StepGraph, changed: StepGraph, real_step_ms: float,
            host_probe_ms: float | None = None, removed_ms: float = 0.0,
            unprofiled: bool = False) -> float:
    """Predicted real step (ms) of `changed`, reconciled like the unchanged graph `g`.

    `removed_ms`: a part of the real step the replay cannot see and `changed` no longer
    has (the syncs' hold, `Analysis.sync_held_ms`, once a fix takes the syncs out): it is
    taken off the real step before the replay is reconciled with it, not shared out over
    the prediction. `unprofiled`: the real step is the baseline's (`calibrate`)."""
    key = ("calibration", round(real_step_ms, 6), host_probe_ms, unprofiled)
    if key not in g.memo:
        g.memo[key] = calibrate(g, real_step_ms, host_probe_ms, unprofiled)
    f, base = g.memo[key]
    out = replay(changed, f)
    kept = real_step_ms - min(max(removed_ms, 0.0), real_step_ms)
    ratio = kept / base if base > 0 and kept > 0 else 1.0
    return float(out * ratio) if np.isfinite(out) else float("nan")
