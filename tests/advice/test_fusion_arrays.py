"""The fusion chains and the fused step as array work (`advice.fusion`) against the rules walked
one kernel at a time (the references below, the chains as first written), on random graphs
with several streams, host waits, reductions, chains past the compiler's cap, kernels that
code left eager launches (no compiled kernel fuses those) and kernels the compiler generated
(fused as far as it fuses)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from jupyter_gpuprof.advice import fusion
from jupyter_gpuprof.advice import thresholds as T
from jupyter_gpuprof.analysis.step_graph import BLOCKING, LAUNCH, SYNC, StepGraph

KINDS = ["elementwise", "reduction", "softmax", "gemm", "memcpy", "other"]


def reference_chains(g: StepGraph, min_us: float, max_us: float = math.inf) -> list[list[int]]:
    """The chains, one kernel at a time per stream (streams in order of appearance)."""
    out = []
    gpu = g.gpu
    seg = fusion.segments(g)
    compiled = np.zeros(len(gpu), dtype=bool)
    for j, eager in zip(g.host["gpu"].tolist(), g.host["eager"].tolist(), strict=True):
        if j >= 0:
            compiled[j] = not eager
    mem = (gpu["kind"].isin(T.MEMORY_KINDS) & (gpu["dur_us"] >= min_us)
           & (gpu["dur_us"] < max_us)).to_numpy() & compiled
    for j, name in enumerate(gpu["name"].tolist()):  # the compiler's own kernels: fused already
        if name.startswith("triton_"):
            mem[j] = False
    reduces = gpu["kind"].isin(fusion.REDUCING_KINDS).to_numpy()
    streams = list(dict.fromkeys(gpu["stream"].tolist()))
    for s in streams:
        idx = np.flatnonzero(gpu["stream"].to_numpy() == s)
        order = idx[np.argsort(gpu["ts_us"].to_numpy()[idx], kind="stable")]
        run: list[int] = []
        reduced = False
        for j in [*order.tolist(), -1]:
            if (j >= 0 and mem[j] and not (run and seg[j] != seg[run[-1]])
                    and not (reduced and reduces[j]) and len(run) < T.FUSION_MAX_KERNELS):
                run.append(j)
                reduced = reduced or bool(reduces[j])
                continue
            if len(run) > 1:
                out.append(run)
            run = [j] if j >= 0 and mem[j] else []
            reduced = bool(run) and bool(reduces[j])
    return out


def reference_fused_durs(g: StepGraph, min_us: float) -> np.ndarray:
    """GPU durations with each chain fused, chain by chain."""
    durs = g.gpu["dur_us"].to_numpy(dtype=float, copy=True)
    for run in reference_chains(g, min_us):
        d = durs[run]
        durs[run[0]] = float(d.max() + (d - d.min()).sum() - (d.max() - d.min()))
    return durs


def random_graph(rng: np.random.Generator, n: int) -> StepGraph:
    kinds = rng.choice([LAUNCH, LAUNCH, LAUNCH, SYNC, BLOCKING], size=n,
                       p=[0.3, 0.3, 0.38 - 0.01 * (n > 200), 0.01 + 0.01 * (n > 200), 0.01])
    gpu_of = np.where(kinds != SYNC, np.cumsum(kinds != SYNC) - 1, -1)
    n_gpu = int((kinds != SYNC).sum())
    p_mem = float(rng.choice([0.6, 0.98]))
    others = (1 - p_mem) / 3
    gpu = pd.DataFrame({
        "ts_us": np.round(rng.random(n_gpu) * 50, 0) if rng.random() < 0.3
        else np.arange(n_gpu, dtype=float),
        "dur_us": rng.exponential(12.0, n_gpu),
        "stream": rng.integers(0, int(rng.integers(1, 4)), n_gpu) * 7,
        "kind": rng.choice(KINDS, n_gpu, p=[p_mem * 0.7, p_mem * 0.2, p_mem * 0.1,
                                            others, others, others]),
        "name": rng.choice(["vectorized_elementwise_kernel", "triton_poi_fused_add_0"], n_gpu,
                           p=[0.9, 0.1]),
    })
    host = pd.DataFrame({"kind": kinds, "gpu": gpu_of,
                         "step": np.sort(rng.integers(0, 3, n)),
                         "dur_us": rng.exponential(3.0, n),
                         "pre_dispatch_us": rng.exponential(3.0, n),
                         "eager": rng.random(n) < float(rng.choice([0.0, 0.2])),
                         "pre_eager_dispatch_us": rng.exponential(1.0, n)})
    return StepGraph(host=host, gpu=gpu, start_us=0.0, n_steps=3, tail_host_us=0.0,
                     tail_input_us=0.0, tail_dispatch_us=0.0, launch_latency_us=5.0)


@pytest.mark.parametrize("seed", range(60))
def test_random_chains_are_the_rules_walked_one_by_one(seed):
    rng = np.random.default_rng(seed)
    g = random_graph(rng, int(rng.choice([0, 1, 2, 30, 300, 1500])))
    for min_us in (0.0, T.MEMORY_MIN_KERNEL_US):
        assert [c.tolist() for c in fusion.chains(g, min_us)] == reference_chains(g, min_us)
        changed, _ = fusion.fused(g, min_us)
        assert changed.gpu["dur_us"].tolist() == reference_fused_durs(g, min_us).tolist()
        dropped = {j for c in reference_chains(g, min_us) for j in c[1:]}
        gone = g.host["gpu"].isin(dropped).to_numpy()
        assert (changed.host["gpu"].to_numpy()[gone] == -1).all()
        assert (changed.host["dur_us"].to_numpy()[gone] == 0).all()
        # what ran ahead of a fused-away launch inside a part of the model left eager stays
        assert (changed.host["pre_dispatch_us"].to_numpy()[gone]
                == g.host["pre_eager_dispatch_us"].to_numpy()[gone]).all()
        kept = ~gone
        assert changed.host["gpu"].to_numpy()[kept].tolist() == g.host["gpu"].to_numpy()[
            kept].tolist()


def test_a_long_run_splits_at_the_cap_and_at_the_second_reduction():
    n = T.FUSION_MAX_KERNELS + 10
    kinds = ["elementwise"] * n
    kinds[3] = kinds[6] = "reduction"
    g = StepGraph(host=pd.DataFrame({"kind": [LAUNCH] * n, "gpu": range(n), "step": [0] * n,
                                     "dur_us": [1.0] * n, "pre_dispatch_us": [1.0] * n,
                                     "eager": [False] * n,
                                     "pre_eager_dispatch_us": [0.0] * n}),
                  gpu=pd.DataFrame({"ts_us": np.arange(n, dtype=float), "dur_us": [20.0] * n,
                                    "stream": [0] * n, "kind": kinds,
                                    "name": ["elementwise_kernel"] * n}),
                  start_us=0.0, n_steps=1, tail_host_us=0.0, tail_input_us=0.0,
                  tail_dispatch_us=0.0, launch_latency_us=5.0)
    lens = [len(c) for c in fusion.chains(g, 0.0)]
    assert lens == [6, T.FUSION_MAX_KERNELS, n - 6 - T.FUSION_MAX_KERNELS]
