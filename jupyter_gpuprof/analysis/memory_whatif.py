"""What a memory fix would change, replayed on the recorded history rather than guessed from totals.

- **Activation checkpointing** of the layer loop (`HeavyModule`): the unit is the whole layer
  (`layer_call`: a part of it called once per layer, its MLP, widened to the layer). Non-reentrant
  checkpointing keeps only each layer's input (the previous layer's output) between that layer's
  forward and its backward; its other saved activations are gone then and recomputed when the
  backward reaches the layer. The checkpointed history is the recorded one minus, for each
  layer, the saved blocks other than its output over [the layer's end, the layer's first free
  in the backward); its peak may land at another moment than the recorded one (the loss's
  backward, or the recompute of the first layer the backward reaches).
- **Gradients kept across steps**: gradients live at the peak that were alive through an
  optimizer step (`zero_grad()` zeroing them in place); a script that frees them
  (`set_to_none=True`) holds at the peak only the gradients of the step running.
- **Layers run before an out-of-memory failure**: how many of the layer loop's calls ran, and how
  many layers the model has (its parameters' blocks repeat once per layer).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import memory_attribution as attr
from .memory_history import MemoryHistory

#: parameter blocks smaller than this (norm weights, biases) are left out of the layer count:
#: their counts mix the layers' with the model's own (a final norm)
LAYER_PARAM_MIN_BYTES = 1 << 20


@dataclass
class Layers:
    """The layer loop's saved blocks in one forward, split per layer call, in order."""

    blocks: list[pd.DataFrame]  # each layer's saved blocks, allocation order


def layer_output(blocks: pd.DataFrame, backward_i: int, n_events: int) -> object:
    """The layer's output (the next layer's input, which checkpointing keeps), by block index:
    its first block freed in the backward, the largest of those freed at that moment. The next
    layer's backward lets its input go before this layer's backward frees anything (a GPT-2
    residual), or this layer's first backward op is the one that read it (a ResNet block's
    in-place ReLU); the last block allocated is not it (a batch norm's statistics, a downsample
    branch). With nothing freed in the backward (a recording that ends before it does): the last
    block allocated."""
    freed = blocks[(blocks["free_i"] >= backward_i) & (blocks["free_i"] < n_events)]
    if freed.empty:
        return blocks.index[-1]
    first = freed[freed["free_i"] == freed["free_i"].min()]
    return first["bytes"].idxmax()


def _paths(history: MemoryHistory, frame_i: pd.Series) -> pd.Series:
    return pd.Series(
        [attr.module_path(history.frames[i]) if i >= 0 else () for i in frame_i],
        index=frame_i.index,
    )


def split_layers(history: MemoryHistory, blocks: pd.DataFrame, call: str) -> Layers:
    """The blocks allocated under `call` (the layer loop's line), split where the first
    layer's first path comes back after another path: each layer allocates at the same lines."""
    paths = _paths(history, blocks["frame_i"])
    inside = blocks[paths.map(lambda p: call in p)].sort_values("alloc_i")
    if inside.empty:
        return Layers([])
    inner = _paths(history, inside["frame_i"]).map(lambda p: p[p.index(call):])
    first = inner.iloc[0]
    starts = (inner == first) & (inner.shift(1) != first)
    layer_no = starts.cumsum().to_numpy() - 1
    return Layers([inside[layer_no == k] for k in range(int(layer_no.max()) + 1)])


def layer_call(history: MemoryHistory, blocks: pd.DataFrame, call: str) -> tuple[str, int]:
    """Checkpointing's unit from the call holding most saved activations, and its calls: the
    outermost call on its way out that is made as often as it is. A layer's MLP, called once per
    layer, can hold half of them (a 12-layer GPT-2 at 1,024 tokens: 51 %), but checkpointing
    wraps the layer (`gradient_checkpointing_enable()`, `--try checkpoint`): its attention and
    norms go too."""
    calls = len(split_layers(history, blocks, call).blocks)
    if calls < 2:  # no repeated call to widen
        return call, calls
    path = next((p for p in _paths(history, blocks["frame_i"]) if call in p), ())
    for parent in reversed(path[: path.index(call)] if path else ()):
        if len(split_layers(history, blocks, parent).blocks) != calls:
            break
        call = parent
    return call, calls


def checkpointed_peak(history: MemoryHistory, kinds: pd.Series, call: str) -> int | None:
    """The history's peak had the layers called at `call` been checkpointed (None: no layers)."""
    held = checkpointed_allocated(history, kinds, call)
    return int(held.max()) if held is not None else None


def checkpointed_allocated(history: MemoryHistory, kinds: pd.Series,
                           call: str) -> np.ndarray | None:
    """The allocated bytes after each event had the layers called at `call` been checkpointed
    (None: no layers): where its peak lands, not only how high."""
    n = history.n_events
    b = history.blocks
    saved = b[kinds == "saved_activations"]
    delta = np.zeros(n + 1, dtype="int64")
    found = False
    for p in history.phases:
        if p.name != attr.FORWARD:
            continue
        mine = saved[(saved["alloc_us"] >= p.start_us) & (saved["alloc_us"] <= p.end_us)]
        layers = split_layers(history, mine, call)
        # the backward reaches a layer at its first free in the backward: autocast's weight
        # casts, freed as its context exits (before the backward), are not that
        after = [q.start_us for q in history.phases
                 if q.name == attr.BACKWARD and q.start_us >= p.end_us]
        backward_i = int(np.searchsorted(history.event_us, min(after))) if after else n
        for k, blocks in enumerate(layers.blocks):
            nxt = layers.blocks[k + 1]["alloc_i"].min() if k + 1 < len(layers.blocks) else None
            end = int(nxt) if nxt is not None else int(blocks["alloc_i"].max()) + 1
            first_free = int(blocks["free_i"].where(blocks["free_i"] >= backward_i, n).min())
            dropped = blocks.drop(index=layer_output(blocks, backward_i, n))  # the output stays
            start = np.maximum(dropped["alloc_i"].to_numpy(), end)
            stop = np.minimum(dropped["free_i"].to_numpy(), first_free)
            ok = stop > start
            np.add.at(delta, start[ok], dropped["bytes"].to_numpy()[ok])
            np.add.at(delta, stop[ok].clip(0, n), -dropped["bytes"].to_numpy()[ok])
            found = found or bool(ok.any())
    if not found:
        return None
    return np.asarray(history.allocated - np.cumsum(delta)[:n])


def gradients_kept_across_steps(history: MemoryHistory, kinds: pd.Series) -> int:
    """Bytes of gradients live at the peak that were alive through an optimizer step before it."""
    i = history.peak_i
    live = history.live_at(i)
    grads = live[kinds[live.index] == "gradients"]
    peak_us = history.peak_us
    ends = [p.end_us for p in history.phases if p.name == attr.OPTIMIZER and p.end_us <= peak_us]
    if grads.empty:
        return 0
    if not ends:  # no optimizer step recorded before the peak: only those from before the history
        return int(grads.loc[grads["alloc_i"] < 0, "bytes"].sum())
    kept = (grads["alloc_i"] < 0) | (grads["alloc_us"] <= max(ends))
    return int(grads.loc[kept, "bytes"].sum())


def layer_count(history: MemoryHistory) -> int | None:
    """The model's layers: the greatest common count of the large blocks from before the
    recording that repeat three times or more (each layer has the same weights: GPT-2's four
    matrices ×L and ×2L, a Llama's ×4L and ×3L; an embedding and its head twice at most)."""
    before = history.blocks[history.blocks["alloc_i"] < 0]
    sizes = Counter(int(s) for s in before["bytes"] if s >= LAYER_PARAM_MIN_BYTES)
    counts = [c for c in sizes.values() if c >= 3]
    return math.gcd(*counts) if counts else None


@dataclass
class LayerProgress:
    """How far the forward of a failed step got through its layer loop."""

    call: str  # the layer loop's line
    begun: int  # layer calls that had begun (the failing one included)
    done: float  # complete layers plus the failing one's share of a complete layer's bytes
    total: int | None  # the model's layers (`layer_count`), None when unknown


def layers_run(history: MemoryHistory) -> LayerProgress | None:
    """The layer loop of the step live at the history's end (an out-of-memory failure) and how
    far it got: the deepest call holding half the step's bytes, as checkpointing's unit is
    found, split per call."""
    live = history.live_at(history.n_events - 1)
    step = live[live["alloc_i"] >= 0]
    if step.empty:
        return None
    paths = _paths(history, step["frame_i"])
    call, _ = attr.heaviest_module(paths, step["bytes"])
    if not call:
        return None
    # a failure inside a layer leaves its innermost call (GPT-2's GELU: half the bytes, one
    # line, one block) heaviest: the loop is the deepest call on its way out that repeats
    path = next(p for p in paths if call in p)
    per_layer: list[int] = []
    for candidate in reversed(path[: path.index(call) + 1]):
        per_layer = [int(b["bytes"].sum()) for b in split_layers(history, step, candidate).blocks]
        if len(per_layer) >= 2:
            call = candidate
            break
    if not per_layer:
        return None
    full = float(np.median(per_layer[:-1])) if len(per_layer) > 1 else 0.0
    last = min(per_layer[-1] / full, 1.0) if full > 0 else 1.0
    return LayerProgress(call, len(per_layer), len(per_layer) - 1 + last, layer_count(history))
