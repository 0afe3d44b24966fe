"""What bf16 autocast would save, from the fp32 step's autograd graph: each saved tensor's dtype
replayed under CUDA autocast's rules, from the op that saved it and the ops that produced it.

CUDA autocast (torch.amp) runs the lower-precision ops (matmuls, convolutions, attention) in
bf16: they cast their floating inputs to bf16, save those copies (a weight's copy is new
memory: the cast cache) and return bf16. The float32 ops (pow, exp, norms, softmax, the
losses, sums…) cast their inputs to fp32, save those and return fp32. The batch norms return
their data input's dtype (bf16 in, fp32 weights and statistics). Every other op returns
the widest floating dtype of its inputs: a bf16 tensor added to the fp32 residual stream is
fp32, a Python number does not widen (`0.5 * x` stays bf16); masks and indices keep theirs. A
cast copy of an activation is one per op that casts it (three projections of one normalised
input save three bf16 copies); a weight's copy is one (autocast's cast cache). The graph
(`GraphNode`s, walked by the capture from the loss) carries the op of each node, its inputs'
producers and what it saved, with the storages they share; the saving is the saved bytes in
fp32 minus the same storages' bytes in the dtypes autocast would save them in (a storage saved
both as itself and as a cast copy counts both).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..store.memory_snapshot import GraphRecord

BF16, FP32 = 2, 4
#: autograd node names (without `Backward<N>`) of CUDA autocast's lower-precision list
LOWER = ("Addmm", "Mm", "Bmm", "Baddbmm", "Addbmm", "Addmv", "Mv", "Addr", "Dot", "Vdot",
         "Convolution", "CudnnConvolution", "ConvolutionTranspose", "Prelu", "Linear",
         "ScaledDotProduct", "EfficientAttention", "FlashAttention")
#: ... and of its float32 list
FP32_OPS = ("Pow", "Exp", "Expm1", "Log", "Log2", "Log10", "Log1P", "Acos", "Asin", "Cosh",
            "Sinh", "Tan", "Erfinv", "Reciprocal", "Rsqrt", "Softplus", "NativeLayerNorm",
            "LayerNorm", "NativeGroupNorm", "GroupNorm", "Norm", "LinalgVectorNorm", "Softmax",
            "LogSoftmax", "NllLoss", "NllLoss2D", "MseLoss", "L1Loss", "SmoothL1Loss",
            "HuberLoss", "BinaryCrossEntropyWithLogits", "KlDiv", "CosineSimilarity", "Cumsum",
            "Cumprod", "Prod", "Sum", "Dist", "Cdist", "Renorm", "Logsumexp")
#: ... and the batch norms, on neither list, whose kernels take a bf16 input with fp32 weights
#: and statistics and return the input's dtype (the widest-input rule would make them fp32)
AS_INPUT = ("NativeBatchNorm", "CudnnBatchNorm", "MiopenBatchNorm", "BatchNorm")


@dataclass
class Saved:
    """One tensor a node saved for backward: its storage and how it relates to the node."""

    storage: int  # storage identity (data pointer), shared by views
    storage_bytes: int  # the storage's bytes in the fp32 step
    view_elems: int  # elements of the saved view (a cast copy's size)
    floating: bool  # fp32 in the step (masks, indices: not floating)
    producer: int | None  # id of the node that produced it (None: a leaf or no grad)
    parameter: bool = False  # a leaf that requires grad (a weight)
    output: bool = False  # the node's own result
    element_size: int = FP32  # as the step ran (below 4: it already runs in low precision)


@dataclass
class GraphNode:
    """An autograd node of the fp32 step: its op, its inputs' producers, what it saved."""

    id: int
    op: str  # the node's class name, e.g. 'AddmmBackward0'
    inputs: list[int | None]  # producer ids of its inputs (None: a leaf / no grad)
    saved: list[Saved] = field(default_factory=list)


def op_kind(op: str) -> str:
    """'lower', 'fp32', 'input' (its data input's dtype) or 'follow' (widest input) for an
    autograd node's class name."""
    base = op.split("Backward")[0]
    if base in LOWER or "Attention" in base or base.startswith(LOWER):
        return "lower"
    if base in AS_INPUT:
        return "input"
    return "fp32" if base in FP32_OPS else "follow"


def output_dtypes(nodes: list[GraphNode]) -> dict[int, int]:
    """Each node's output element size under autocast (producers before consumers)."""
    by_id = {n.id: n for n in nodes}
    out: dict[int, int] = {}

    def dtype(i: int) -> int:
        stack = [i]
        while stack:
            j = stack[-1]
            pending = [p for p in by_id[j].inputs if p is not None and p in by_id and p not in out]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            node = by_id[j]
            kind = op_kind(node.op)
            if kind == "lower":
                out[j] = BF16
            elif kind == "fp32":
                out[j] = FP32
            elif kind == "input":
                first = next((p for p in node.inputs if p is not None and p in out), None)
                out[j] = out[first] if first is not None else FP32
            else:  # the widest input: a weight or a saved non-grad tensor (a rotary table) is
                # fp32; a Python number (`0.5 * x`, saved as a one-element tensor) is not
                sizes = [out[p] for p in node.inputs if p is not None and p in out]
                sizes += [FP32 for s in node.saved
                          if s.floating and s.producer is None and s.view_elems > 1]
                out[j] = max(sizes) if sizes else FP32
        return out[i]

    for n in nodes:
        dtype(n.id)
    return out


def autocast_saving(nodes: list[GraphNode]) -> tuple[int, int]:
    """(saved bytes in the fp32 step, the same saves' bytes under autocast) over distinct storages;
    a weight's bf16 copy counts under autocast only (the fp32 weight is the parameters')."""
    dt = output_dtypes(nodes)
    fp32: dict[int, int] = {}
    amp: dict[tuple[int, int, int], int] = {}
    for node in nodes:
        kind = op_kind(node.op)
        for s in node.saved:
            if not s.parameter:
                fp32[s.storage] = s.storage_bytes
            if not s.floating:
                amp[(s.storage, 0, -1)] = s.storage_bytes
                continue
            native = dt.get(node.id, FP32) if s.output else (
                dt.get(s.producer, FP32) if s.producer is not None else FP32)
            want = BF16 if kind == "lower" else FP32 if kind == "fp32" else native
            if s.parameter and want == FP32:
                continue  # the parameter itself: no new memory
            if want == native and not s.parameter:  # the tensor itself: shared by its savers
                key, size = (s.storage, want, -1), s.storage_bytes * want // FP32
            elif s.parameter:  # a weight's copy: autocast's cast cache keeps one per weight
                key, size = (s.storage, want, -1), s.view_elems * want
            else:  # an activation's copy: each op casts its own (q, k and v projections: 3)
                key, size = (s.storage, want, node.id), s.view_elems * want
            amp[key] = max(amp.get(key, 0), size)
    return sum(fp32.values()), sum(amp.values())


@dataclass
class AutocastReplay:
    """One recorded step's saved-for-backward bytes as it ran and under bf16 autocast."""

    saved_bytes: int
    autocast_bytes: int
    nodes: int
    low_precision: bool  # the step already saved tensors below fp32 (autocast on, bf16 weights)


def from_records(records: list[GraphRecord]) -> list[GraphNode]:
    """The capture's graph (`CaptureAdditions.graph`) as nodes."""
    return [
        GraphNode(
            id=int(r["id"]), op=str(r["op"]),
            inputs=[None if i is None else int(i) for i in r["inputs"]],
            saved=[Saved(int(s["storage"]), int(s["storage_bytes"]), int(s["view_elems"]),
                         bool(s["floating"]),
                         None if s["producer"] is None else int(s["producer"]),
                         bool(s["parameter"]), bool(s["output"]), int(s["element_size"]))
                   for s in r["saved"]],
        )
        for r in records
    ]


def autocast_replay(records: list[GraphRecord] | None) -> AutocastReplay | None:
    """The recorded graph replayed under autocast (None: no graph recorded)."""
    if not records:
        return None
    nodes = from_records(records)
    saved, amp = autocast_saving(nodes)
    low = any(s.element_size < FP32 for n in nodes for s in n.saved if s.floating)
    return AutocastReplay(saved, amp, len(nodes), low)
