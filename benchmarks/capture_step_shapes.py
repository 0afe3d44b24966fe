"""The steps the capture's pieces are timed in (bench_capture_pieces.py): host-bound shapes of
real corpus scripts' steps, each returning its wall time in ms, and a way to run one with cold
caches."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_observer_within import _loop  # noqa: E402 - the word LM's shape of step


def _gpt_loop(device: str) -> Any:
    """One step of minGPT's adder's shape (returns its wall time in ms): a DataLoader batch
    from 2 workers (sampled with replacement, never ending, as minGPT's trainer does), a 3-layer
    transformer, AdamW through `optimizer.step()`."""
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, RandomSampler, TensorDataset

    torch.manual_seed(0)
    if device == "cpu":
        torch.set_num_threads(1)
    width, vocab, seq = 48, 10, 6
    emb = nn.Embedding(vocab, width).to(device)
    body = nn.TransformerEncoder(nn.TransformerEncoderLayer(width, 3, 4 * width,
                                                            batch_first=True), 3).to(device)
    head = nn.Linear(width, vocab).to(device)
    params = [*emb.parameters(), *body.parameters(), *head.parameters()]
    opt = torch.optim.AdamW(params, lr=5e-4)
    data = TensorDataset(torch.randint(0, vocab, (4096, seq)), torch.randint(0, vocab, (4096, seq)))
    sampler = RandomSampler(data, replacement=True, num_samples=10**9)
    batches = iter(DataLoader(data, batch_size=64, sampler=sampler, num_workers=2))

    def step() -> float:
        t0 = time.perf_counter()
        x, y = next(batches)
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        loss = nn.functional.cross_entropy(head(body(emb(x))).view(-1, vocab), y.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        return (time.perf_counter() - t0) * 1e3

    return step


def _ddp_loop(device: str) -> Any:
    """One step of the DDP tutorial's shape (returns its wall time in ms): a Linear(20, 1) in
    DistributedDataParallel over one process, 32 samples collated from a list of tensor pairs
    and pinned in the main process, copied in, cross-entropy, SGD: a step of about a
    millisecond on the H200's host, where a few microseconds of ours are a percent."""
    import os

    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel
    from torch.utils.data import DataLoader

    torch.manual_seed(0)
    if device == "cpu":
        torch.set_num_threads(1)
    if not dist.is_initialized():
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(29500 + os.getpid() % 1000))
        dist.init_process_group("nccl" if device == "cuda" else "gloo", rank=0, world_size=1)
    model = torch.nn.Linear(20, 1).to(device)
    model = DistributedDataParallel(model, device_ids=[0] if device == "cuda" else None)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    data = [(torch.rand(20), torch.rand(1)) for _ in range(2048)]
    loader = DataLoader(data, batch_size=32, shuffle=True, pin_memory=device == "cuda")
    batches = iter(loader)

    def step() -> float:
        nonlocal batches
        t0 = time.perf_counter()
        try:
            source, targets = next(batches)
        except StopIteration:  # an epoch ends: the loader starts again, as the script's does
            batches = iter(loader)
            source, targets = next(batches)
        source, targets = source.to(device), targets.to(device)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(source), targets)
        loss.backward()
        opt.step()
        return (time.perf_counter() - t0) * 1e3

    return step


SHAPES = {"lm": _loop, "gpt": _gpt_loop, "ddp": _ddp_loop}


def evicting(step: Callable[[], float], mib: int) -> Callable[[], float]:
    """`step` run with the processor's caches emptied before it (a buffer of `mib` MiB read
    and written first, outside the step's time): each call of ours meets the cold caches a
    big step leaves behind, as on a GPU host where a tight loop's 2 µs clock mark took 27 µs
    inside a step (capture/driver.py)."""
    import numpy as np

    buf = np.zeros(mib * 2**20 // 8)

    def cold() -> float:
        np.add(buf, 1.0, out=buf)
        return step()

    return cold
