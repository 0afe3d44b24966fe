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
from dataclasses import dataclass

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


#: a stretch of host items between two host waits shorter than this is walked item by item
#: (array work costs more per call than it saves on a few items)
SHORT_RUN = 48


@dataclass
class _Clock:
    """Where the replay stands: the host clock, the GPU's, and the cross-stream event state."""

    h: float
    all_end: float
    recorded: float
    pending: float
    free: dict[int, float]


#: memo key of a graph's unscaled replay arrays and its unprofiled costs (`_items`)
_ARRAYS = "replay_arrays"


@dataclass
class _Items:
    """The graph's host items and GPU operations as arrays, host times scaled."""

    pre: np.ndarray
    dur: np.ndarray
    kind: np.ndarray
    gpu: np.ndarray
    gdur: np.ndarray
    gstream: np.ndarray
    lat: float
    h0: float
    sync_call: float


def _items(g: StepGraph, f: float) -> _Items:
    """The arrays one replay reads, host times multiplied by `f` (the unscaled arrays taken
    from the graph's frames once: a calibration replays the same graph some 27 times)."""
    if _ARRAYS not in g.memo:
        t = g.host
        g.memo[_ARRAYS] = (
            (t["pre_input_us"] + t["pre_dispatch_us"] + t["pre_host_us"]).to_numpy(
                dtype=np.float64),
            t["dur_us"].to_numpy(dtype=np.float64),
            t[REAL_COLUMN].to_numpy(dtype=np.float64) if REAL_COLUMN in t.columns else None,
            t["kind"].to_numpy(dtype=np.int64), t["gpu"].to_numpy(dtype=np.int64),
            g.gpu["dur_us"].to_numpy(dtype=np.float64),
            g.gpu["stream"].to_numpy(dtype=np.int64))
    pre, dur, real, kind, gpu, gdur, gstream = g.memo[_ARRAYS]
    pre = pre * f
    if real is not None:  # a fix's costs measured unprofiled are not rescaled
        pre = pre + real
    return _Items(pre=pre, dur=dur * f, kind=kind, gpu=gpu, gdur=gdur, gstream=gstream,
                  lat=g.launch_latency_us, h0=g.start_us, sync_call=SYNC_CALL_US * f)


def replay(g: StepGraph, host_scale: float = 1.0) -> float:
    """Predicted mean step length (ms) of the graph, host times multiplied by `host_scale`.

    Between two host items that wait (on the GPU: syncs, blocking copies; or, for the next
    launch, on another stream: stream waits) nothing the host does depends on the GPU, so such a
    stretch is array work (`_run`); only the waiting items, and stretches too short to pay for
    array work, are walked one item at a time (`_walk`, the rules themselves)."""
    it = _items(g, host_scale)
    c = _Clock(h=it.h0, all_end=it.h0, recorded=it.h0, pending=-math.inf, free={})
    first = 0
    waits = (it.kind == SYNC) | (it.kind == BLOCKING) | (it.kind == WAIT)
    for w in [*np.flatnonzero(waits).tolist(), len(it.kind)]:
        if w - first >= SHORT_RUN:
            _run(c, it, first, w)
        else:
            _walk(c, it, first, w)
        _walk(c, it, w, min(w + 1, len(it.kind)))
        first = w + 1
    h = c.h + (g.tail_host_us + g.tail_input_us + g.tail_dispatch_us) * host_scale
    return (max(h, c.all_end) - it.h0) / 1e3 / max(g.n_steps, 1)


def _walk(c: _Clock, it: _Items, i0: int, i1: int) -> None:
    """Host items `i0:i1` one at a time: the replay's rules as written."""
    pre, dur = it.pre[i0:i1].tolist(), it.dur[i0:i1].tolist()
    gidx = it.gpu[i0:i1].tolist()
    free, h, all_end, pending = c.free, c.h, c.all_end, c.pending
    for i, k in enumerate(it.kind[i0:i1].tolist()):
        h += pre[i]
        if k == LAUNCH or k == BLOCKING:
            j = gidx[i]
            end = h
            if j >= 0:
                s = int(it.gstream[j])
                start = max(h + it.lat, free.get(s, it.h0), pending)
                end = start + float(it.gdur[j])
                free[s] = end
                pending = -math.inf
                if end > all_end:
                    all_end = end
            h += dur[i]
            if k == BLOCKING and end + SYNC_RETURN_US > h:
                h = end + SYNC_RETURN_US
        elif k == SYNC:
            h = max(h + min(dur[i], it.sync_call), all_end + SYNC_RETURN_US)
        elif k == RECORD:
            c.recorded = all_end
            h += dur[i]
        elif k == WAIT:
            pending = c.recorded
            h += dur[i]
    c.h, c.all_end, c.pending = h, all_end, pending


def _run(c: _Clock, it: _Items, i0: int, i1: int) -> None:
    """Host items `i0:i1`, none of them waiting, as array work: the host clock is one running
    sum; each stream's operations end at `end_k = max(ready_k, end_(k-1)) + dur_k`, a running
    maximum over running sums; an event record keeps the latest end of the launches before it.
    """
    kind = it.kind[i0:i1]
    steps = np.empty(2 * len(kind) + 1)
    steps[0] = c.h
    steps[1::2] = it.pre[i0:i1]
    steps[2::2] = np.where((kind == LAUNCH) | (kind == RECORD), it.dur[i0:i1], 0.0)
    clock = np.cumsum(steps)  # sequential, as the host adds its times one by one
    c.h = float(clock[-1])
    gidx = it.gpu[i0:i1]
    pos = np.flatnonzero((kind == LAUNCH) & (gidx >= 0))
    records = np.flatnonzero(kind == RECORD)
    if not len(pos):
        if len(records):
            c.recorded = c.all_end
        return
    ops = gidx[pos]
    ready = clock[2 * pos + 1] + it.lat
    ready[0] = max(ready[0], c.pending)  # a stream wait before the stretch holds its first
    stream = it.gstream[ops]
    end = _stream_ends(c, it.h0, stream, ready, it.gdur[ops])
    if len(records):  # the last record sees the launches ahead of it
        ahead = int(np.searchsorted(pos, records[-1]))
        c.recorded = max(c.all_end, float(end[:ahead].max())) if ahead else c.all_end
    if stream[0] == stream[-1] and bool((stream == stream[0]).all()):
        c.free[int(stream[0])] = float(end[-1])
    else:
        last = len(stream) - 1 - np.unique(stream[::-1], return_index=True)[1]
        c.free.update(zip(stream[last].tolist(), end[last].tolist(), strict=True))
    c.pending = -math.inf
    c.all_end = max(c.all_end, float(end.max()))


def _stream_ends(c: _Clock, h0: float, stream: np.ndarray, ready: np.ndarray,
                 dur: np.ndarray) -> np.ndarray:
    """Each operation's end on its stream: `end_k = total_k + max(free, max_(m<=k)(ready_m −
    total_(m−1)))` with `total` the stream's running sum of durations."""
    if stream[0] == stream[-1] and bool((stream == stream[0]).all()):
        return _ends(ready, dur, c.free.get(int(stream[0]), h0))
    end = np.empty(len(ready))
    for s in np.unique(stream).tolist():
        m = np.flatnonzero(stream == s)
        end[m] = _ends(ready[m], dur[m], c.free.get(s, h0))
    return end


def _ends(ready: np.ndarray, dur: np.ndarray, free: float) -> np.ndarray:
    """One stream's ends: a running maximum over running sums."""
    total = np.cumsum(dur)
    earlier = np.concatenate(([0.0], total[:-1]))
    return total + np.maximum.accumulate(np.maximum(ready - earlier, free))


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
        at_probe = replay(g, f)
        if at_probe <= real_step_ms * (1.0 + INSENSITIVE):
            return f, at_probe
        hi = f  # the probe's host makes the step longer than it ran: an upper bound only
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
