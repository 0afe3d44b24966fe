"""What bf16 autocast would also save at a backward peak outside the tensors autograd saved:
the forward's outputs the program itself holds, and the gradients of those outputs.

The graph replay (`autocast_dtypes`) prices what autograd saved. A training loop often holds
more through the backward: nanoGPT's `logits, loss = model(X, Y)` keeps the logits until the
next forward. Under autocast such an output has the dtype of the op that made it (an `nn.Linear`
returns bf16), and so has its gradient: the backward's temporaries at the peak are the
gradients being passed back, each the size and dtype of the forward tensor it belongs to.

From the recorded history, at a peak inside a backward range:
- an output the program holds is a forward block alive at the peak and after that backward
  ends (autograd frees what a node saved when the node runs; what outlives the backward is
  referenced from elsewhere);
- each backward temporary alive at the peak is paired with a forward block alive there of the
  same size, newest first (the backward reaches the forward's tensors in reverse order);
- a block is bf16 under autocast when the call that allocated it is on autocast's
  lower-precision list (`nn.Linear`, the convolutions, attention: its innermost frame), else
  it is left as it is (fp32 ops and the ops that follow their inputs: nothing claimed).
"""

from __future__ import annotations

import numpy as np

from .memory_history import MemoryHistory, PhaseRange

#: the innermost frame of an allocation made by one of autocast's lower-precision calls:
#: a torch module file, or a torch.nn.functional / torch function name
LOWER_FILES = ("torch/nn/modules/linear.py", "torch/nn/modules/conv.py")
LOWER_CALLS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
               "conv_transpose3d", "scaled_dot_product_attention", "matmul", "bmm", "mm",
               "addmm", "baddbmm")
#: bf16 against fp32: the share of a block autocast frees
HALF = 0.5


def _lower(frames: list[dict[str, object]]) -> bool:
    """Whether the allocation's innermost frame is a lower-precision call of autocast's list."""
    if not frames:
        return False
    top = frames[0]
    filename = str(top.get("filename", "")).replace("\\", "/")
    return filename.endswith(LOWER_FILES) or str(top.get("name", "")) in LOWER_CALLS


def _range_at(phases: list[PhaseRange], name: str, us: int) -> PhaseRange | None:
    return next((p for p in phases if p.name == name and p.start_us <= us <= p.end_us), None)


def held_autocast_saving(history: MemoryHistory, saved_kind: np.ndarray,
                         temporary_kind: np.ndarray) -> int:
    """Bytes autocast would free at a backward peak beyond the graph's saves (0 elsewhere).

    `saved_kind` / `temporary_kind`: per block of `history.blocks`, whether the block is of the
    kind 'saved_activations' (allocated in a forward, alive into the backward) / 'temporaries'.
    """
    i = history.peak_i
    backward = _range_at(history.phases, "backward", history.peak_us) if i >= 0 else None
    if backward is None:
        return 0
    b = history.blocks
    alloc_i, free_i = b["alloc_i"].to_numpy(), b["free_i"].to_numpy()
    alloc_us, size = b["alloc_us"].to_numpy(), b["bytes"].to_numpy()
    alive = (alloc_i <= i) & (free_i > i)
    end_i = int(np.searchsorted(history.event_us, backward.end_us, side="right"))
    # the forward's blocks alive at the peak, newest first, and whether autocast makes them bf16
    forward = np.flatnonzero(alive & saved_kind & (alloc_us < backward.start_us))
    forward = forward[np.argsort(-alloc_i[forward], kind="stable")]
    frame_i = b["frame_i"].to_numpy()
    lower = np.array([frame_i[k] >= 0 and _lower(history.frames[frame_i[k]]) for k in forward],
                     dtype=bool)
    held = lower & (free_i[forward] >= end_i)
    saving = int(size[forward][held].sum() * HALF)
    partners: dict[int, list[bool]] = {}
    for k, low in zip(forward, lower, strict=True):
        partners.setdefault(int(size[k]), []).append(bool(low))
    grads = np.flatnonzero(alive & temporary_kind & (alloc_us >= backward.start_us))
    for k in grads[np.argsort(alloc_i[grads], kind="stable")]:
        queue = partners.get(int(size[k]))
        if queue and queue.pop(0):
            saving += int(size[k] * HALF)
    return saving
