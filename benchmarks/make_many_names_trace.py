"""Make a Kineto trace whose event names are nearly all distinct, and its few-names twin.

A trace is hostile for speed when most names are distinct (Triton kernels named per fused
graph, ops recorded with stacks and varied shapes): every cost paid per distinct name, not per
event, shows. Both traces have the same events, times and correlations; only the names (and
the shapes of the ops) differ, so their analysis times compare the per-name cost alone.

Each op is three events: a `cpu_op`, its `cudaLaunchKernel` and the kernel, in `--steps`
ProfilerSteps. With `--distinct` every op gets one name of its own, on the op for even ops and
on the kernel for odd ones: 666 k distinct names in 2 M events, the case of issue 12.

    python benchmarks/make_many_names_trace.py OUT.json.gz --ops 666000 --distinct
    python benchmarks/make_many_names_trace.py OUT.json.gz --ops 666000
"""

from __future__ import annotations

import argparse
import gzip
import json

FEW_OPS = ["aten::mm", "aten::add", "aten::mul", "aten::layer_norm", "aten::gelu",
           "aten::softmax", "aten::copy_", "aten::sum"]
FEW_KERNELS = ["nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT",
               "triton_poi_fused_add_mul_0", "triton_red_fused_sum_1",
               "void at::native::vectorized_elementwise_kernel<4>", "ampere_sgemm_128x64_nn",
               "triton_per_fused_softmax_2", "void at::native::reduce_kernel<512, 1>",
               "Memcpy-like copy kernel"]


def events(n_ops: int, steps: int, distinct: bool) -> list[dict]:
    """The trace's events: n_ops ops (3 events each) spread over `steps` ProfilerSteps."""
    out: list[dict] = []
    per_step = max(1, n_ops // steps)
    t = 0.0
    for i in range(n_ops):
        if i % per_step == 0:
            name = f"ProfilerStep#{i // per_step}"
            out.append({"ph": "X", "cat": "user_annotation", "name": name,
                        "pid": 1, "tid": 1, "ts": t, "dur": per_step * 10.0, "args": {}})
        op = f"aten::fused_op_{i}" if distinct and i % 2 == 0 else FEW_OPS[i % len(FEW_OPS)]
        kernel = (f"triton_poi_fused_graph_{i}_kernel" if distinct and i % 2 == 1
                  else FEW_KERNELS[i % len(FEW_KERNELS)])
        dims = [[i % 977 + 1, 64], [64]] if distinct else [[128, 64], [64]]
        out.append({"ph": "X", "cat": "cpu_op", "name": op, "pid": 1, "tid": 1, "ts": t,
                    "dur": 8.0, "args": {"External id": i, "Input Dims": dims,
                                         "Input type": ["float", "float"]}})
        out.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                    "tid": 1, "ts": t + 1.0, "dur": 5.0,
                    "args": {"External id": i, "correlation": i}})
        out.append({"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 7,
                    "ts": t + 7.0, "dur": 6.0,
                    "args": {"External id": i, "correlation": i, "device": 0, "stream": 7}})
        t += 10.0
    return out


def main(argv: list[str] | None = None) -> None:
    """Write the trace."""
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--ops", type=int, default=666_000, help="ops (3 events each)")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--distinct", action="store_true", help="a distinct name per op")
    a = ap.parse_args(argv)
    head = {"schemaVersion": 1, "deviceProperties": [
        {"id": 0, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9, "computeMinor": 0,
         "warpSize": 32}]}
    # laid out as the profiler writes it (one event per line), so it is read as real traces
    # are: streamed, piece by piece
    with gzip.open(a.out, "wt", compresslevel=1) as f:
        f.write(json.dumps(head)[:-1] + ', "traceEvents": [\n')
        f.write(",\n".join(map(json.dumps, events(a.ops, a.steps, a.distinct))))
        f.write("\n]}\n")


if __name__ == "__main__":
    main()
