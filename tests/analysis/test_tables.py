"""Operator, kernel, transfer, launch and memory tables on tiny traces with known numbers."""

import pytest
from paths import TESTS
from tracebuilder import TraceBuilder

from jupyter_gpuprof.analysis.kernels import kernel_rows, kernel_table, kind_of, uses_tensor_cores
from jupyter_gpuprof.analysis.launch import launch_stats
from jupyter_gpuprof.analysis.memory import memory_table
from jupyter_gpuprof.analysis.ops import op_rows, op_table, per_step, sort_for
from jupyter_gpuprof.analysis.trace import load_trace
from jupyter_gpuprof.analysis.transfers import transfer_table
from jupyter_gpuprof.stats import describe_steps


def _load(b, tmp_path):
    return load_trace(b.write(tmp_path / "t.json.gz"))


def test_op_self_and_total_times(tmp_path):
    b = TraceBuilder()
    b.op("aten::linear", 0.0, 100.0, dims=[[8, 4], [2, 4]], types=["float", "float"])
    addmm = b.op("aten::addmm", 10.0, 50.0, types=["float"])
    b.kernel("sgemm", 20.0, 30.0, 40.0, ext=addmm)
    b.op("aten::t", 70.0, 10.0)
    ops = op_table(op_rows(_load(b, tmp_path))).set_index("name")
    lin, mm, t = ops.loc["aten::linear"], ops.loc["aten::addmm"], ops.loc["aten::t"]
    assert (lin["cpu_total_us"], lin["cpu_self_us"]) == (100.0, 40.0)
    assert (lin["cuda_total_us"], lin["cuda_self_us"]) == (40.0, 0.0)
    assert (mm["cpu_self_us"], mm["cuda_self_us"], mm["cuda_total_us"]) == (50.0, 40.0, 40.0)
    assert (t["cuda_total_us"], t["calls"]) == (0.0, 1)
    assert lin["input_dims"] == "[[8, 4], [2, 4]]"


@pytest.mark.parametrize("name,dtype,kind,tc", [
    ("void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>(...)", "fp32", "gemm",
     False),
    ("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_ffma", "fp32", "gemm", False),
    ("sm80_xmma_gemm_tf32f32_tf32f32_f32_nn_n_tilesize128x128x16", "fp32", "gemm", True),
    ("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", "bf16", "gemm", True),
    ("cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16", "bf16", "attention", True),
    ("fmha_cutlassB_f32_aligned_64x64_k64_sm80(...)", "fp32", "attention", False),
    ("sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc", "bf16", "conv", True),
    ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "", "nccl",
     False),
    ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "", "nccl", False),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>", "",
     "elementwise", False),
    ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float>", "", "norm",
     False),
    ("void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float>>", "", "reduction",
     False),
    ("triton_poi_fused_add_mul_0", "", "elementwise", False),
    ("void at::native::bfloat16_copy_kernel_cuda_convert", "", "elementwise", False),
])
def test_kernel_kind_and_tensor_cores(name, dtype, kind, tc):
    assert kind_of(name) == kind
    assert uses_tensor_cores(name, kind, dtype) is tc


def test_kernel_table_dtype_from_launching_op(tmp_path):
    b = TraceBuilder()
    ext = b.op("aten::mm", 0.0, 10.0, types=["c10::BFloat16", "c10::BFloat16"])
    b.kernel("some_gemm_kernel", 1.0, 20.0, 30.0, ext=ext)
    b.kernel("some_gemm_kernel", 40.0, 60.0, 10.0, ext=ext)
    table = kernel_table(kernel_rows(_load(b, tmp_path)))
    row = table.iloc[0]
    assert (row["dtype"], bool(row["tensor_core"]), row["calls"], row["total_us"]) == (
        "bf16", True, 2, 40.0)
    assert row["pct_of_gpu"] == 100.0


def test_transfers_bandwidth_pageable_blocking_overlap(tmp_path):
    b = TraceBuilder()
    b.memcpy("HtoD", "Pageable", "Device", 100_000_000, 0.0, 50.0, 100.0, 10_000.0)
    b.sync(60.0, 10_050.0)
    b.memcpy("HtoD", "Pinned", "Device", 1_000_000, 20_000.0, 5.0, 20_010.0, 40.0, stream=9)
    b.kernel("k", 19_990.0, 20_000.0, 20.0, stream=7)
    t = transfer_table(_load(b, tmp_path))
    first, second = t.iloc[0], t.iloc[1]
    assert first["gbps"] == pytest.approx(10.0)
    assert bool(first["pageable"]) and bool(first["blocking"])
    assert not bool(second["pageable"]) and not bool(second["blocking"])
    assert second["overlap_pct"] == pytest.approx(25.0)  # 10 of its 40 µs beside the kernel


def test_launch_stats(tmp_path):
    b = TraceBuilder()
    b.step(1, 0.0, 100.0)
    for i in range(3):
        b.kernel("tiny", 10.0 * i, 10.0 * i + 8.0, 2.0, launch_dur=5.0)
    s = launch_stats(_load(b, tmp_path), n_steps=1)
    assert s["kernels_per_step"] == 3 and s["median_kernel_us"] == 2.0
    assert s["median_launch_delay_us"] == 8.0 and s["short_kernel_pct"] == 100.0
    assert s["launch_cpu_us_per_step"] == 15.0


def test_memory_peak(tmp_path):
    b = TraceBuilder()
    b.memory(1.0, 1_000, 1_000)
    b.memory(2.0, 3_000_000_000, 2_999_999_000)
    b.memory(3.0, 500, -2_999_999_500)
    m = memory_table(_load(b, tmp_path))
    assert m["peak_allocated_bytes"].tolist() == [3_000_000_000]
    assert m["peak_pct"].iloc[0] == pytest.approx(2.0)


def test_step_statistics():
    d = describe_steps([10, 11, 12, 13, 100])
    assert (d["n"], d["median_ms"], d["iqr_ms"]) == (5, 12.0, 2.0)
    assert d["outliers"] == [4]
    assert describe_steps([])["n"] == 0


def test_autograd_wrappers_fold_under_the_op_they_call(tmp_path):
    # backward: the engine wrapper > MmBackward0 > aten::mm, which launches the kernel
    b = TraceBuilder()
    fwd = b.op("aten::mm", 0.0, 20.0)
    b.kernel("gemm_fwd", 5.0, 30.0, 60.0, ext=fwd)
    b.op("autograd::engine::evaluate_function: MmBackward0", 100.0, 50.0, tid=200)
    b.op("MmBackward0", 102.0, 45.0, tid=200)
    bwd = b.op("aten::mm", 110.0, 30.0, tid=200)
    b.kernel("gemm_bwd", 115.0, 130.0, 90.0, ext=bwd, tid=200)
    ops = op_table(op_rows(_load(b, tmp_path)))
    assert ops["name"].tolist() == ["aten::mm"]  # the wrappers add no row of their own
    mm = ops.iloc[0]
    assert (mm["calls"], mm["cuda_self_us"], mm["cpu_self_us"]) == (2, 150.0, 50.0)
    assert mm["autograd"] == "MmBackward0"  # named beside the op it wraps


def test_self_device_time_orders_the_table_and_host_verdicts_sort_by_cpu(tmp_path):
    b = TraceBuilder()
    b.op("aten::to", 0.0, 900.0)
    copy = b.op("aten::_to_copy", 10.0, 880.0)
    b.kernel("copy_small", 20.0, 950.0, 5.0, ext=copy)
    mm = b.op("aten::mm", 1000.0, 10.0)
    b.kernel("gemm", 1002.0, 1005.0, 400.0, ext=mm)
    ops = op_table(op_rows(_load(b, tmp_path)))
    assert ops["name"].tolist() == ["aten::mm", "aten::_to_copy", "aten::to"]
    assert sort_for(ops, "input")["name"].tolist() == ["aten::to", "aten::_to_copy", "aten::mm"]
    assert sort_for(ops, "compute")["name"].tolist() == ops["name"].tolist()


def test_per_step_columns_are_per_real_step_and_per_call(tmp_path):
    b = TraceBuilder()
    for i in range(4):  # 4 calls over 2 steps, 100 µs GPU and 30 µs host each
        mm = b.op("aten::mm", i * 1000.0, 30.0)
        b.kernel("gemm", i * 1000.0 + 5, i * 1000.0 + 40, 100.0, ext=mm)
    ops = per_step(op_table(op_rows(_load(b, tmp_path))), n_steps=2, real_step_ms=1.0,
                   host_scale=0.5)
    mm = ops.iloc[0]
    assert mm["calls_per_step"] == 2.0 and mm["cuda_self_ms_per_step"] == pytest.approx(0.2)
    assert mm["cpu_self_ms_per_step"] == pytest.approx(0.03)  # 60 µs profiled, halved
    assert mm["cuda_us_per_call"] == 100.0 and mm["cpu_us_per_call"] == 15.0
    assert mm["gpu_pct_of_step"] == pytest.approx(20.0)
    assert mm["cpu_pct_of_step"] == pytest.approx(3.0)


def test_real_input_bound_run_leads_with_its_host_op_and_no_autograd_rows():

    from jupyter_gpuprof.report import analyze_path

    s = analyze_path(TESTS / "data" / "real" / "input").to_json()
    assert s["verdict"]["category"] == "input" and s["ops"][0]["name"] == "aten::to"
    assert not [o for o in s["ops"] if o["name"].endswith("Backward0")]
    mm = next(o for o in s["ops"] if o["name"] == "aten::mm")
    assert mm["autograd"] == "AddmmBackward0"  # nn.Linear: addmm forward, mm backward
