"""The replay as array work (`step_replay.replay`) against the replay's rules walked one host
item at a time (the reference below, the replay as it was written first), on random graphs
with every kind of host item, several streams and cross-stream events."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from jupyter_gpuprof.analysis import step_replay
from jupyter_gpuprof.analysis.step_graph import BLOCKING, LAUNCH, RECORD, SYNC, WAIT, StepGraph
from jupyter_gpuprof.analysis.step_replay import SYNC_CALL_US, SYNC_RETURN_US, replay


def reference(g: StepGraph, f: float = 1.0) -> float:
    """The replay's rules, one host item at a time."""
    t = g.host
    pre = ((t["pre_input_us"] + t["pre_dispatch_us"] + t["pre_host_us"]).to_numpy() * f).tolist()
    dur = (t["dur_us"].to_numpy() * f).tolist()
    gdur, gstream = g.gpu["dur_us"].tolist(), g.gpu["stream"].tolist()
    free: dict[int, float] = {}
    h = all_end = recorded = g.start_us
    pending = -math.inf
    for i, k in enumerate(t["kind"].tolist()):
        h += pre[i]
        if k in (LAUNCH, BLOCKING):
            j = int(t["gpu"].iloc[i])
            end = h
            if j >= 0:
                s = gstream[j]
                start = max(h + g.launch_latency_us, free.get(s, g.start_us), pending)
                end = start + gdur[j]
                free[s] = end
                pending = -math.inf
                all_end = max(all_end, end)
            h += dur[i]
            if k == BLOCKING and end + SYNC_RETURN_US > h:
                h = end + SYNC_RETURN_US
        elif k == SYNC:
            h = max(h + min(dur[i], SYNC_CALL_US * f), all_end + SYNC_RETURN_US)
        elif k == RECORD:
            recorded = all_end
            h += dur[i]
        elif k == WAIT:
            pending = recorded
            h += dur[i]
    h += (g.tail_host_us + g.tail_input_us + g.tail_dispatch_us) * f
    return (max(h, all_end) - g.start_us) / 1e3 / max(g.n_steps, 1)


def graph(kinds: list[int], gdur: list[float], streams: list[int], pre: list[float],
          dur: list[float], launched: list[bool] | None = None) -> StepGraph:
    """A graph whose launching items launch the GPU operations in order."""
    gpu_of, n = [], 0
    for i, k in enumerate(kinds):
        if k in (LAUNCH, BLOCKING) and (launched is None or launched[i]) and n < len(gdur):
            gpu_of.append(n)
            n += 1
        else:
            gpu_of.append(-1)
    host = pd.DataFrame({"pre_input_us": np.zeros(len(kinds)), "pre_dispatch_us": pre,
                         "pre_host_us": np.zeros(len(kinds)), "dur_us": dur, "kind": kinds,
                         "gpu": gpu_of})
    gpu = pd.DataFrame({"dur_us": gdur[:n], "stream": streams[:n]}, dtype=float)
    gpu["stream"] = gpu["stream"].astype(int)
    return StepGraph(host=host, gpu=gpu, start_us=100.0, n_steps=2, tail_host_us=3.0,
                     tail_input_us=0.0, tail_dispatch_us=0.0, launch_latency_us=5.0)


def random_graph(rng: np.random.Generator, n: int, p_wait: float, n_streams: int) -> StepGraph:
    kinds = rng.choice([LAUNCH, BLOCKING, SYNC, RECORD, WAIT], size=n,
                       p=[1 - 4 * p_wait - 0.2, p_wait, p_wait, 0.1 + p_wait, 0.1 + p_wait])
    return graph(kinds.tolist(), rng.exponential(rng.choice([2.0, 30.0]), n).tolist(),
                 rng.integers(0, n_streams, n).tolist(), rng.exponential(6.0, n).tolist(),
                 rng.exponential(4.0, n).tolist(), (rng.random(n) < 0.9).tolist())


@pytest.fixture(params=[0, step_replay.SHORT_RUN], ids=["arrays-only", "as-shipped"])
def short_run(request, monkeypatch):
    monkeypatch.setattr(step_replay, "SHORT_RUN", request.param)


@pytest.mark.parametrize("seed", range(40))
def test_random_graphs_replay_as_the_rules_walked_one_by_one(seed, short_run):
    rng = np.random.default_rng(seed)
    g = random_graph(rng, int(rng.integers(1, 400)), float(rng.choice([0.0, 0.002, 0.05])),
                     int(rng.integers(1, 4)))
    for f in (1.0, 0.3):
        assert replay(g, f) == pytest.approx(reference(g, f), rel=1e-12)


@pytest.mark.parametrize("case", [
    # empty graph, one launch, one sync
    ([], [], [], [], []),
    ([LAUNCH], [50.0], [0], [1.0], [2.0]),
    ([SYNC], [], [], [1.0], [9.0]),
    # overlapping: a GPU-bound queue, then a launch-bound stretch, on one stream
    ([LAUNCH] * 6, [100.0, 100.0, 1.0, 1.0, 1.0, 1.0], [0] * 6, [1.0, 1.0, 1.0, 300, 50, 50],
     [2.0] * 6),
    # two streams: the second waits on an event recorded after the first's long kernel
    ([LAUNCH, RECORD, WAIT, LAUNCH, LAUNCH], [500.0, 10.0, 10.0], [0, 1, 1], [1.0] * 5, [1.0] * 5),
    # a wait with nothing recorded in the stretch, carried over a sync to the next launch
    ([LAUNCH, RECORD, SYNC, WAIT, SYNC, LAUNCH], [40.0, 5.0], [0, 1], [1.0] * 6, [1.0] * 6),
])
def test_edge_cases_replay_as_the_rules(case, short_run):
    g = graph(*case)
    assert replay(g) == pytest.approx(reference(g), rel=1e-12)


def test_a_wait_holds_the_next_launch_on_another_stream(short_run):
    """Without the record/wait, the 10 µs kernel on stream 1 would end at 118 µs."""
    g = graph([LAUNCH, RECORD, WAIT, LAUNCH], [500.0, 10.0], [0, 1], [1.0] * 4, [1.0] * 4)
    assert replay(g) * 2e3 == pytest.approx(516.0)  # kernel 106–606, then 606–616 µs


def test_a_calibration_reads_the_graphs_frames_once_and_a_changed_copy_its_own(monkeypatch):
    """The unscaled arrays are taken from the frames once per graph (a calibration replays the
    same graph some 27 times), and a transformed copy (`with_`) replays its own frames."""
    g = random_graph(np.random.default_rng(7), 400, 0.05, 2)
    reads = []
    frame_to_numpy = pd.Series.to_numpy

    def counted(self, *args, **kwargs):
        reads.append(self.name)
        return frame_to_numpy(self, *args, **kwargs)

    lo, hi = step_replay.SCALE_RANGE
    real = (reference(g, lo) + reference(g, hi)) / 2  # reached by bisection
    monkeypatch.setattr(pd.Series, "to_numpy", counted)
    step_replay.calibrate(g, real)
    first = len(reads)
    assert first > 0
    assert reads.count("dur_us") <= 4  # once per graph, not per replay (27 replays)
    changed = g.with_(host=g.host.assign(dur_us=g.host["dur_us"] * 2.0))
    for f in (0.5, 1.0, 2.0):
        assert replay(changed, f) == pytest.approx(reference(changed, f), rel=1e-12)
        assert replay(g, f) == pytest.approx(reference(g, f), rel=1e-12)
