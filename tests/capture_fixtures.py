"""Shared by the capture tests: a tiny CPU model and a guard that nothing is left installed."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest
import torch
import torch.utils.data.dataloader as dl
from torch import nn
from torch.nn.modules import module as nn_module
from torch.optim import optimizer as optim_module


def global_state() -> tuple:
    return (
        len(nn_module._global_forward_pre_hooks),
        len(nn_module._global_forward_hooks),
        len(optim_module._global_optimizer_pre_hooks),
        len(optim_module._global_optimizer_post_hooks),
        torch.autograd.backward,
        dl._BaseDataLoaderIter.__next__,
    )


@pytest.fixture(autouse=True)
def nothing_left_installed():
    """Fail a test that leaves a profiler running, a global hook or a wrapper in place."""
    from jupyter_gpuprof.capture.session import current_session

    before = global_state()
    yield
    assert not torch._C._autograd._profiler_enabled(), "a profiler was left running"
    assert global_state() == before, "global hooks or wrappers were left installed"
    assert current_session() is None, "a capture session was left active"


class Trainer:
    """A tiny MLP classification step on CPU."""

    def __init__(self, seed: int = 0) -> None:
        torch.manual_seed(seed)
        self.model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01)
        self.x = torch.randn(8, 16)
        self.y = torch.randint(0, 4, (8,))
        self.steps = 0

    def step(self, x: torch.Tensor | None = None, y: torch.Tensor | None = None) -> None:
        self.opt.zero_grad()
        loss = nn.functional.cross_entropy(
            self.model(self.x if x is None else x), self.y if y is None else y
        )
        loss.backward()
        self.opt.step()
        self.steps += 1

    def loader(self, batches: int) -> torch.utils.data.DataLoader:
        ds = torch.utils.data.TensorDataset(
            torch.randn(8 * batches, 16), torch.randint(0, 4, (8 * batches,))
        )
        return torch.utils.data.DataLoader(ds, batch_size=8)


def trace_names(path: Path) -> Counter:
    with gzip.open(path) as f:
        events = json.load(f)["traceEvents"]
    return Counter(e.get("name") for e in events if e.get("ph") == "X")


def profiler_steps(names: Counter) -> int:
    return sum(1 for n in names if str(n).startswith("ProfilerStep#"))
