"""%%gpuprofile out of memory in its first step: the cell still raises, the post-mortem is shown."""

from __future__ import annotations

import pytest
from IPython.testing import globalipapp
from memory_recordings import FakeApi

from jupyter_gpuprof.capture import memory_record
from jupyter_gpuprof.store import RunStore

SETUP = """
import torch
from torch import nn
model = nn.Linear(16, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
def train_step():
    opt.zero_grad()
    model(torch.randn(8, 16)).sum().backward()
    opt.step()
"""


@pytest.fixture
def ip(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    shell = globalipapp.start_ipython() or globalipapp.get_ipython()
    shell.run_line_magic("load_ext", "jupyter_gpuprof")
    shell.run_cell(SETUP)
    api = FakeApi("oom")
    shell.user_ns["allocator"] = api
    monkeypatch.setattr(memory_record, "TorchMemoryApi", lambda: api)
    monkeypatch.setattr(memory_record._Observer, "attached", False)
    monkeypatch.setattr(memory_record._Observer, "recorder", None)
    return shell


def test_out_of_memory_in_the_first_step_shows_the_post_mortem(ip, tmp_path, capsys) -> None:
    flags = f"--body --steps 2 --warmup 1 --active 1 --runs-root {tmp_path}"
    res = ip.run_cell(f"%%gpuprofile {flags}\ntrain_step()\nallocator.fail(192 * 1024 ** 2)")
    assert res.error_in_exec is not None
    assert type(res.error_in_exec).__name__ == "OutOfMemoryError"
    runs = RunStore(tmp_path).list()
    assert len(runs) == 1 and runs[0].meta.status == "failed"
    assert runs[0].memory_history_path() is not None and not runs[0].trace_paths()
    out = capsys.readouterr().out
    assert "Out of memory: 0.20 GB requested" in out
    assert out.count("<script>:20") >= 3  # the top 3 allocations with their lines
