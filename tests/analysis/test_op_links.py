"""Which kernels each op launched and every shape it was called with (`analysis.op_links`),
and the kernel table's short names and launch shapes (`analysis.kernels`)."""

import pandas as pd

from jupyter_gpuprof.analysis.kernels import launch_shape, short_kernel_name
from jupyter_gpuprof.analysis.op_links import op_kernels, op_shapes


def _calls() -> pd.DataFrame:
    return pd.DataFrame({
        "name": ["aten::mm", "aten::mm", "aten::mm", "MmBackward0"],
        "external_id": [1, 2, 3, 4],
        "input_dims": ["[[4, 4]]", "[[4, 4]]", "[[8, 8]]", ""],
        "cuda_self_us": [10.0, 10.0, 40.0, 0.0],
        "wrapper": [False, False, False, True],
    })


def test_each_kernel_goes_to_the_op_whose_external_id_it_carries():
    kernels = pd.DataFrame({"name": ["gemm<float>(int)", "gemm<float>(int)", "big_gemm", "x"],
                            "external_id": [1, 2, 3, -1], "dur_us": [10.0, 10.0, 40.0, 5.0]})
    links = op_kernels(_calls(), kernels)
    assert links.to_dict(orient="records") == [
        {"op": "aten::mm", "kernel": "big_gemm", "short_name": "big_gemm", "calls": 1,
         "total_us": 40.0},
        {"op": "aten::mm", "kernel": "gemm<float>(int)", "short_name": "gemm", "calls": 2,
         "total_us": 20.0}]  # the unlinked kernel (-1) is nobody's


def test_every_shape_with_its_calls_most_first_wrappers_left_out():
    shapes = op_shapes(_calls())
    assert shapes.to_dict(orient="records") == [
        {"op": "aten::mm", "input_dims": "[[4, 4]]", "calls": 2, "cuda_self_us": 20.0},
        {"op": "aten::mm", "input_dims": "[[8, 8]]", "calls": 1, "cuda_self_us": 40.0}]


def test_empty_inputs_give_the_documented_columns():
    assert list(op_kernels(_calls().iloc[:0], pd.DataFrame())) == \
        ["op", "kernel", "short_name", "calls", "total_us"]
    assert list(op_shapes(_calls().iloc[:0])) == ["op", "input_dims", "calls", "cuda_self_us"]


def test_short_kernel_names():
    assert short_kernel_name(
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
        "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)"
    ) == "vectorized_elementwise_kernel<FillFunctor>"  # a wrapper names what it runs
    assert short_kernel_name(
        "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<X>(Y)"
    ) == "multi_tensor_apply_kernel"
    assert short_kernel_name("nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NTT") == \
        "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NTT"
    assert short_kernel_name("Memcpy HtoD (Pageable -> Device)") == "Memcpy HtoD"
    assert short_kernel_name(
        "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>"
        "(cutlass_80_simt_sgemm_128x256_8x4_nt_align1::Params)"
    ) == "Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>"
    assert short_kernel_name(
        "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<"
        "at::native::CUDAFunctor_add<float> >(at::TensorIteratorBase&)::{lambda(int)#1}>(int)"
    ) == "elementwise_kernel<CUDAFunctor_add>"


def test_launch_shapes():
    assert launch_shape("[65536, 1, 1]") == "65536×1×1"
    assert launch_shape("") == ""
