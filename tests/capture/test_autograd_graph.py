"""The step's autograd graph as the capture walks it: ops, producers, saved tensors' storages."""

from __future__ import annotations

import json

import torch
from torch import nn

from jupyter_gpuprof.analysis.autocast_dtypes import autocast_replay
from jupyter_gpuprof.capture.autograd_graph import graph_nodes


def _step(autocast: bool = False) -> torch.Tensor:
    torch.manual_seed(0)
    model = nn.Sequential(nn.LayerNorm(64), nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 8))
    x = torch.randn(512, 64)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        return nn.functional.cross_entropy(model(x), torch.randint(0, 8, (512,)))


def test_nodes_name_their_ops_producers_and_saved_storages() -> None:
    records = graph_nodes(_step())
    json.dumps(records)  # stored in the history file as it is
    by_op = {r["op"]: r for r in records}
    assert {"AddmmBackward0", "GeluBackward0", "NativeLayerNormBackward0"} <= set(by_op)
    gelu = by_op["GeluBackward0"]
    (saved,) = gelu["saved"]  # GELU saves its input: the first linear's output, 512 x 256 fp32
    assert records[saved["producer"]]["op"] == "AddmmBackward0"
    assert saved["storage_bytes"] == 512 * 256 * 4 and saved["floating"]
    weights = [s for r in records for s in r["saved"] if s["parameter"]]
    assert {w["view_elems"] for w in weights} >= {64 * 256, 256 * 8}
    assert graph_nodes(torch.ones(2).sum()) == []  # no graph: nothing walked


def test_replay_prices_an_fp32_step_and_not_one_already_in_bf16() -> None:
    fp32 = autocast_replay(graph_nodes(_step()))
    assert fp32 is not None and not fp32.low_precision
    assert 0 < fp32.autocast_bytes < fp32.saved_bytes
    already = autocast_replay(graph_nodes(_step(autocast=True)))
    assert already is not None and already.low_precision


def test_reentrant_checkpointing_is_not_walked() -> None:
    from torch.utils.checkpoint import checkpoint

    layer = nn.Sequential(nn.Linear(8, 8), nn.GELU())
    x = torch.randn(4, 8, requires_grad=True)
    loss = checkpoint(layer, x, use_reentrant=True).sum()
    assert graph_nodes(loss) == []
    loss.backward()
    assert x.grad is not None
