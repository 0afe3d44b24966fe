"""Synthetic multi-rank runs (one trace per rank) whose cross-rank timings are known exactly.

Every step lasts 10 ms on the host (unless a scenario sets `step_us`). A rank computes (one GEMM
kernel), then all-reduces (one NCCL kernel on stream 20): the kernel starts when the rank
arrives and every rank's kernel ends when the last one has arrived and the 1 ms transfer is done.
"""

from __future__ import annotations

from pathlib import Path

from tracebuilder import TraceBuilder

STEPS = 4
STEP_US = 10_000.0
TRANSFER_US = 1_000.0
GEMM = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"
ALLREDUCE = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
ALLREDUCE_OLD = "ncclKernel_AllReduce_RING_LL_Sum_bfloat16(ncclWorkElem)"
DATALOADER = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
BF16 = ["c10::BFloat16", "c10::BFloat16"]


def rank_step(b: TraceBuilder, s: float, load_us: float, compute_us: float, arrive_last: float,
              comm_at: float | None = None, nccl: str = ALLREDUCE,
              transfer_us: float = TRANSFER_US) -> None:
    """One step of one rank: optional data loading, a GEMM, then the all-reduce.

    `arrive_last` is when (µs into the step) the last rank starts its all-reduce; this rank
    starts its own at `comm_at` (default: when its GEMM ends).
    """
    if load_us:
        b.annotation(DATALOADER, s, load_us)
    ext = b.op("aten::mm", s + load_us + 5, 8.0, types=BF16)
    b.kernel(GEMM, s + load_us + 10, s + load_us + 100, compute_us, ext=ext)
    start = s + load_us + 100 + compute_us if comm_at is None else s + comm_at
    end = s + arrive_last + transfer_us
    b.kernel(nccl, s + load_us + 30, start, end - start, stream=20)


def write_run(folder: Path, ranks: list[dict], shift_us: dict[int, float] | None = None,
              queued: dict[int, int] | None = None) -> Path:
    """Write trace.rank<R>.json.gz per rank; `ranks[r]` holds `rank_step` keyword arguments.

    `shift_us[r]` moves rank r's clock; `queued[r]` adds that many collectives that ran before
    the capture's first step (their launches unrecorded), so the ranks' sequences start apart.
    """
    folder.mkdir(parents=True, exist_ok=True)
    for r, kw in enumerate(ranks):
        kw = dict(kw)
        step_us = kw.pop("step_us", STEP_US)
        b = TraceBuilder()
        for n in range(STEPS):
            s = n * step_us
            rank_step(b, s, **kw)
            b.step(n + 1, s, step_us)
        for extra in range((queued or {}).get(r, 0)):  # run before the capture, launch unseen
            b.events.append({"ph": "X", "cat": "kernel", "name": kw.get("nccl", ALLREDUCE),
                             "pid": 0, "tid": 20, "ts": -3000.0 + 1000 * extra, "dur": 500.0,
                             "args": {"device": 0, "stream": 20, "correlation": 10**6 + extra}})
        for ev in b.events:  # a rank whose clock runs ahead of rank 0's
            ev["ts"] += (shift_us or {}).get(r, 0.0)
        b.write(folder / f"trace.rank{r}.json.gz",
                distributedInfo={"rank": r, "world_size": len(ranks), "backend": "nccl"})
    return folder


def gpu_straggler(nccl: str = ALLREDUCE) -> list[dict]:
    """Rank 1 computes 6 ms per step, rank 0 4 ms: rank 0 waits 2 ms in every all-reduce."""
    return [dict(load_us=0.0, compute_us=4000.0, arrive_last=6100.0, nccl=nccl),
            dict(load_us=0.0, compute_us=6000.0, arrive_last=6100.0, nccl=nccl)]


def host_straggler() -> list[dict]:
    """Same compute on both, but rank 1's data loading holds its GPU back 2 ms per step."""
    return [dict(load_us=0.0, compute_us=4000.0, arrive_last=6100.0),
            dict(load_us=2000.0, compute_us=4000.0, arrive_last=6100.0)]


def overlapped() -> list[dict]:
    """Balanced ranks whose 1.6 ms all-reduce starts at 3 ms, under the GEMM until 4.1 ms."""
    return [dict(load_us=0.0, compute_us=4000.0, arrive_last=3000.0, comm_at=3000.0,
                 transfer_us=1600.0)] * 2


def comm_bound() -> list[dict]:
    """Balanced ranks: 1 ms of compute, then a 6 ms all-reduce with nothing to hide it; the step
    ends when the all-reduce does (a 10 ms host step would be 2.9 ms of host work on top)."""
    return [dict(load_us=0.0, compute_us=1000.0, arrive_last=1100.0, transfer_us=6000.0,
                 step_us=7150.0)] * 2
