"""bf16 autocast's saved bytes replayed on an fp32 autograd graph: each of autocast's rules."""

from __future__ import annotations

from jupyter_gpuprof.analysis.autocast_dtypes import (
    GraphNode,
    Saved,
    autocast_saving,
    op_kind,
    output_dtypes,
)

MB = 1_000_000


def _s(storage: int, mb: int, producer: int | None, **kw: bool) -> Saved:
    return Saved(storage, mb * MB, mb * MB // 4, kw.pop("floating", True), producer, **kw)


def _mlp() -> list[GraphNode]:
    """norm(x) -> linear (weight W) -> gelu written as x * pow(x, 3) -> + residual, as the
    loss's graph lists them (loss first): ids 0 add, 1 mul, 2 pow, 3 addmm, 4 layer norm."""
    return [
        GraphNode(0, "AddBackward0", [1, None]),  # + the fp32 residual (a leaf here)
        GraphNode(1, "MulBackward0", [3, 2], [_s(3, 40, 3), _s(2, 40, 2)]),
        GraphNode(2, "PowBackward0", [3], [_s(3, 40, 3)]),
        GraphNode(3, "AddmmBackward0", [4, None], [_s(4, 10, 4), _s(9, 8, None, parameter=True)]),
        GraphNode(4, "NativeLayerNormBackward0", [None], [_s(5, 10, None), _s(6, 1, None)]),
    ]


def test_op_kinds_follow_autocasts_lists() -> None:
    assert op_kind("AddmmBackward0") == op_kind("ScaledDotProductEfficientAttentionBackward0")
    assert op_kind("MmBackward0") == "lower" and op_kind("ConvolutionBackward0") == "lower"
    assert op_kind("PowBackward0") == op_kind("LogSoftmaxBackward0") == "fp32"
    assert op_kind("NativeLayerNormBackward0") == "fp32" and op_kind("SumBackward1") == "fp32"
    assert op_kind("GeluBackward0") == op_kind("AddBackward0") == "follow"
    assert op_kind("CummaxBackward0") == "follow"  # not a matmul for containing 'mm'


def test_dtypes_flow_from_the_producers() -> None:
    dt = output_dtypes(_mlp())
    assert dt[3] == 2  # the matmul returns bf16
    assert dt[2] == 4 and dt[4] == 4  # pow and the norm return fp32
    assert dt[1] == 4  # bf16 x fp32: the widest
    assert dt[0] == 4  # + a leaf (fp32)


def test_saved_bytes_each_rule() -> None:
    fp32, amp = autocast_saving(_mlp())
    # fp32: matmul out 40, pow out 40, norm out 10, norm's input 10 + stats 1 (the weight: 0)
    assert fp32 == (40 + 40 + 10 + 10 + 1) * MB
    expected = (
        20  # the matmul's output in bf16 (saved by mul)
        + 40  # pow's output, fp32 (saved by mul)
        + 40  # pow's own fp32 copy of the bf16 matmul output it saved
        + 5  # the matmul's bf16 copy of the norm's output (the fp32 original is not saved)
        + 4  # the weight's bf16 copy: the cast cache
        + 10 + 1  # the norm's saved input and statistics stay fp32
    )
    assert amp == expected * MB


def test_masks_keep_their_bytes() -> None:
    nodes = [GraphNode(0, "NativeDropoutBackward0", [1], [_s(7, 3, None, floating=False)]),
             GraphNode(1, "MmBackward0", [None], [_s(8, 12, None)])]
    fp32, amp = autocast_saving(nodes)
    assert fp32 == 15 * MB and amp == (3 + 6) * MB


def test_each_op_casts_its_own_copy_but_a_weight_is_cast_once() -> None:
    """q, k and v projections of one fp32 input save three bf16 copies (1.5x its bytes); the
    weight shared by two matmuls is cast once (autocast's cast cache)."""
    norm = GraphNode(3, "NativeLayerNormBackward0", [None], [])
    weight = _s(9, 8, None, parameter=True)
    projections = [GraphNode(i, "MmBackward0", [3, None], [_s(4, 10, 3), weight])
                   for i in (0, 1, 2)]
    fp32, amp = autocast_saving([*projections, norm])
    assert fp32 == 10 * MB
    assert amp == (3 * 5 + 4) * MB


def test_a_python_number_does_not_widen_a_saved_table_does() -> None:
    """`0.5 * h` (the scalar saved as one element) stays bf16; `q * cos` (a saved fp32 rotary
    table without grad) is fp32."""
    half = GraphNode(0, "MulBackward0", [1, None], [Saved(5, 4, 1, True, None)])
    rotary = GraphNode(2, "MulBackward0", [1, None], [Saved(6, 4096, 1024, True, None)])
    matmul = GraphNode(1, "MmBackward0", [None], [])
    dt = output_dtypes([half, rotary, matmul])
    assert dt[0] == 2 and dt[2] == 4
