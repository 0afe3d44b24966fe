"""The dependency graph of the profiled steps, for replaying them with a fix applied.

The step is a sequence of host items (launch calls, blocking copies, syncs, cross-stream event
calls) in time order on the driving process, each preceded by host time split into classes
(data pipeline, dispatch of launching ops, other host work), and GPU operations linked to the
item that launched them by correlation id, in stream order. `step_replay.replay()` runs this
graph forward; advice transforms it (one fix each) and replays it to predict the new step.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from .hardware import GpuArch, gpu_arch
from .hostwork import SYNC_APIS, HostWork
from .intervals import Coverage, subtract
from .kernels import kernel_rows
from .kineto_json import GPU_CATEGORIES
from .name_masks import names_in, names_where
from .op_flops import op_flops
from .steps import Window
from .trace import Trace

#: host item kinds
LAUNCH, BLOCKING, SYNC, RECORD, WAIT = 0, 1, 2, 3, 4
RECORD_APIS = frozenset({"cudaEventRecord", "cuEventRecord", "cudaEventRecordWithFlags"})
WAIT_APIS = frozenset({"cudaStreamWaitEvent", "cuStreamWaitEvent"})
#: a graph holds the first whole steps up to this many host items (replays stay well under a
#: second per fix on traces of any length)
MAX_ITEMS = 50_000
#: the capture's phase ranges (capture/phases.py) that a compiled model's graphs cover, and
#: the autograd engine's events for the backward nodes (its backward)
FORWARD_PHASE, BACKWARD_PHASE = "forward", "backward"
MODEL_PHASES = frozenset({FORWARD_PHASE, BACKWARD_PHASE})
BACKWARD_NODE = "autograd::engine::evaluate_function"
#: ops Dynamo leaves to eager execution by default, forward and backward: the recurrent
#: modules (`torch._dynamo.config.allow_rnn` is off; their cuDNN kernels launch per time step)
GRAPH_BREAK_OPS = frozenset({"aten::lstm", "aten::gru", "aten::rnn_tanh", "aten::rnn_relu",
                             "aten::_cudnn_rnn_backward", "aten::_cudnn_rnn"})
#: DDP's gradient reducer: the bucket copies, the averaging and the all-reduce its autograd
#: hooks run during backward. Compiling a DDP model splits its graph at the buckets
#: (DDPOptimizer) and leaves the hooks eager, so no CUDA graph of the model holds them
DDP_REDUCER_PREFIXES = ("torch::distributed::reducer", "torch.distributed.ddp.reducer")
#: collectives: the reducer's all-reduce where they run outside the forward passes (one in a
#: forward pass, as SyncBatchNorm's or FSDP's all-gather, is the model's own)
COLLECTIVE_PREFIXES = ("c10d::", "record_param_comms", "nccl:")
#: a top-level module call launching fewer kernels is a loss or a helper, not the model,
#: unless no call of its step launches more
MODEL_CALL_MIN_LAUNCHES = 10
#: columns of `StepGraph.host`
HOST_COLUMNS = {
    "ts_us": "start of the call (profiled)", "dur_us": "call duration (profiled)",
    "kind": "0 launch/async copy, 1 blocking copy, 2 sync, 3 event record, 4 stream wait",
    "pre_input_us": "host time in the data pipeline since the previous item",
    "pre_dispatch_us": "host time in ops that launch GPU work since the previous item",
    "pre_host_us": "other host time since the previous item (Python, host-only ops)",
    "pre_hostop_us": "the part of pre_host_us inside ops that launch nothing (autograd "
                     "bookkeeping, CPU math)",
    "pre_framework_us": "the part of pre_host_us inside the framework's own calls, backward() "
                        "and the optimizer's step and zero_grad: host time no change to the "
                        "loop's own code moves",
    "pre_eager_dispatch_us": "the part of pre_dispatch_us inside the parts of the model "
                             "that compiling leaves eager (graph_break, reducer): dispatch "
                             "that stays when the next launch is graphed",
    "gpu": "index into `StepGraph.gpu` of the operation it launches (-1: none)",
    "step": "0-based profiled step the item belongs to",
    "optimizer": "the call happens inside Optimizer.step / zero_grad (stays eager under graphs)",
    "eager": "the call happens outside the model's forward and backward (the optimizer, the "
             "loop's own code): compiling the model does not put it in a CUDA graph",
    "reducer": "the call happens inside DDP's gradient reducer (bucket copies, averaging, "
               "all-reduce), which its autograd hooks run outside any compiled graph",
    "graph_break": "a graph break leaves the call eager: it happens inside a module Dynamo "
                   "does not trace (an RNN, GRU or LSTM: GRAPH_BREAK_OPS) or, as Dynamo "
                   "cannot resume after one, later in that forward pass, or in the backward "
                   "of either",
    "model_entry": "the first call of a forward pass of the model (a top-level module call "
                   "launching at least MODEL_CALL_MIN_LAUNCHES kernels, or the one launching "
                   "most in its step): where a compiled model pays its guards and wrappers",
}
#: columns of `StepGraph.gpu`
GPU_COLUMNS = {
    "ts_us": "profiled start", "dur_us": "duration", "stream": "CUDA stream",
    "kind": "kernel kind (see KERNEL_COLUMNS) or memcpy/memset", "name": "activity name",
    "dtype": "launching op's dtype", "tensor_core": "runs on Tensor Cores",
    "bytes": "bytes a copy moves (-1 for kernels)", "copy": "HtoD | DtoH | DtoD | ''",
    "pageable": "copy from/to pageable host memory", "flops": "FLOPs of a GEMM/conv (0 unknown)",
}


@dataclass
class StepGraph:
    """Host items, the GPU operations they launch, and where the steps start and end."""

    host: pd.DataFrame
    gpu: pd.DataFrame
    start_us: float
    n_steps: int
    tail_host_us: float  # host time after the last item of the last step
    tail_input_us: float
    tail_dispatch_us: float
    launch_latency_us: float
    tail_framework_us: float = 0.0  # the part of tail_host_us inside backward or the optimizer
    optimizer_fused: bool = False  # the optimizer already steps with fused kernels
    gpu_name: str | None = None
    arch: GpuArch | None = None  # which precisions the GPU has (the precision fix's choice)
    memo: dict[Any, Any] = field(default_factory=dict, repr=False)  # predictions, computed once

    def with_(self, host: pd.DataFrame | None = None, gpu: pd.DataFrame | None = None,
              **changes: Any) -> StepGraph:
        """A transformed copy (the memo is not carried over)."""
        return replace(self, host=self.host if host is None else host,
                       gpu=self.gpu if gpu is None else gpu, memo={}, **changes)

    def per_step(self, n: float) -> str:
        """A count over the graph's steps, per step, for the fixes' driver texts."""
        return f"{n / self.n_steps:.0f}"

    @property
    def profiled_step_ms(self) -> float:
        """Profiled step length the graph spans."""
        return float(self.memo.get("profiled_step_ms", float("nan")))


def _gpu_table(trace: Trace, corr: np.ndarray, rows: pd.DataFrame) -> pd.DataFrame:
    """GPU operations launched by the given correlation ids, with what a fix needs to know."""
    rows = rows[rows["correlation"].isin(corr)].drop_duplicates("correlation")
    name = rows["name"].astype(str)
    copy = np.select([names_where(rows, lambda n: "HtoD" in n, "HtoD"),
                      names_where(rows, lambda n: "DtoH" in n, "DtoH"),
                      names_where(rows, lambda n: "DtoD" in n, "DtoD")], ["HtoD", "DtoH", "DtoD"],
                     "")
    flops = rows["external_id"].map(op_flops(trace, rows["external_id"].unique())).fillna(0.0)
    return pd.DataFrame({
        "ts_us": rows["ts_us"].to_numpy(), "dur_us": rows["dur_us"].to_numpy(),
        "stream": rows["stream"].to_numpy(), "kind": _labels(rows["kind"]),
        "name": name.to_numpy(), "dtype": _labels(rows["dtype"]),
        "tensor_core": rows["tensor_core"].to_numpy(), "bytes": rows["bytes"].to_numpy(),
        "copy": pd.Categorical(copy),
        "pageable": names_where(rows, lambda n: "Pageable" in n, "Pageable"),
        "flops": flops.to_numpy(dtype=np.float64), "correlation": rows["correlation"].to_numpy(),
    })


def _labels(col: pd.Series) -> pd.Categorical:
    """A column of few distinct words as categories: each fix's masks test it many times."""
    return pd.Categorical(col.astype(str).to_numpy())


def _optimizer_ranges(trace: Trace) -> Coverage:
    """Host ranges of the optimizer's step and zero_grad (torch names them Optimizer.*)."""
    ann = trace.of("user_annotation", "cpu_op", columns=["name", "ts_us", "end_us"])
    opt = ann[names_where(ann, lambda n: n.startswith("Optimizer."), "Optimizer.")]
    return Coverage.of(opt["ts_us"].to_numpy(), opt["end_us"].to_numpy())


def _framework_other(trace: Trace, host: HostWork, optimizer: Coverage) -> Coverage:
    """Host time inside backward() (the capture's phase) and the optimizer's calls that is
    neither the data pipeline nor dispatch: the autograd engine's and the optimizer's own
    Python, the main thread waiting for the backward's thread."""
    ann = trace.of("user_annotation")
    back = ann[names_in(ann, frozenset({BACKWARD_PHASE}))]
    framework = Coverage.of(np.concatenate([back["ts_us"].to_numpy(), optimizer.starts]),
                            np.concatenate([back["end_us"].to_numpy(), optimizer.ends]))
    return subtract(framework, host.input, host.launch)


def _reducer_ranges(trace: Trace) -> Coverage:
    """DDP's gradient reducer (`DDP_REDUCER_PREFIXES`): its ops and its collectives' ranges
    (`COLLECTIVE_PREFIXES` outside the forward passes the capture marked), on whichever thread
    ran them."""
    prefixes = DDP_REDUCER_PREFIXES + COLLECTIVE_PREFIXES
    spans = [df[names_where(df, lambda n: n.startswith(prefixes), prefixes)]
             for df in (trace.of("cpu_op"), trace.of("user_annotation"))]
    ranges = pd.concat([d[["ts_us", "end_us", "name"]] for d in spans])
    ann = trace.of("user_annotation")
    fwd = ann[names_in(ann, frozenset({FORWARD_PHASE}))]
    generic = ranges["name"].astype(str).str.startswith(COLLECTIVE_PREFIXES).to_numpy()
    in_forward = Coverage.of(fwd["ts_us"].to_numpy(), fwd["end_us"].to_numpy()).contains(
        ranges["ts_us"].to_numpy())
    ranges = ranges[~(generic & in_forward)]
    return Coverage.of(ranges["ts_us"].to_numpy(), ranges["end_us"].to_numpy())


def _graph_break_ranges(trace: Trace) -> Coverage:
    """What a graph break leaves eager: the ops Dynamo does not trace (`GRAPH_BREAK_OPS`),
    and, as it cannot resume after one (it compiles the forward pass up to the break and runs
    the rest eager), the rest of each forward pass they break and, in backward (which runs the
    forward's ops in reverse), everything from the pass's first autograd node to the end of
    their own backward."""
    ops = trace.of("cpu_op")
    rnn = ops[names_in(ops, GRAPH_BREAK_OPS)].sort_values("ts_us")
    rs, rend = rnn["ts_us"].to_numpy(), rnn["end_us"].to_numpy()
    ann = trace.of("user_annotation")
    fwd = ann[names_in(ann, frozenset({FORWARD_PHASE}))]
    fs, fe = fwd["ts_us"].to_numpy(), fwd["end_us"].to_numpy()
    first, last = np.searchsorted(rs, fs, side="left"), np.searchsorted(rs, fe, side="left")
    hit = first < last  # forward passes an RNN breaks: from the break to the pass's end
    in_forward = Coverage.of(fs, fe).contains(rs)
    # an RNN op outside every forward pass is its backward: eager from the first autograd
    # node after the forward pass before it (or the trace's first, where none is before it)
    nodes = np.sort(ops.loc[names_where(ops, lambda n: n.startswith(BACKWARD_NODE),
                                        BACKWARD_NODE), "ts_us"].to_numpy())
    ends = np.concatenate(([-np.inf], np.sort(fe)))
    back = ~in_forward if len(fs) else np.zeros(len(rs), dtype=bool)
    before = ends[np.searchsorted(ends, rs[back], side="right") - 1]
    at = np.searchsorted(nodes, before, side="left")
    found = np.append(nodes, np.inf)[at]  # no autograd node after it: the op's own start
    return Coverage.of(np.concatenate([rs, rs[first[hit]], np.minimum(found, rs[back])]),
                       np.concatenate([rend, fe[hit], rend[back]]))


def _model_forwards(trace: Trace, starts: np.ndarray, launches: np.ndarray,
                    step_of: np.ndarray) -> tuple[pd.DataFrame, np.ndarray]:
    """The forward passes the capture marked, and which of them are the model: one that
    launches enough kernels to be it, or, in a step whose every forward pass launches fewer,
    the one launching most (a model of one Linear layer is the model all the same); a loss
    function's forward, a top-level module call too, launches fewer than the model beside it
    and is not what compiling the model compiles."""
    ann = trace.of("user_annotation")
    forward = ann[names_in(ann, frozenset({FORWARD_PHASE}))]
    model = np.zeros(len(forward), dtype=bool)
    if not len(forward) or not len(starts):
        return forward, model
    lo = np.searchsorted(starts, forward["ts_us"].to_numpy(), side="left")
    hi = np.searchsorted(starts, forward["end_us"].to_numpy(), side="right")
    before = np.concatenate(([0], np.cumsum(launches)))
    inside = lo < len(starts)
    n = (before[np.minimum(hi, len(starts))] - before[np.minimum(lo, len(starts))])[inside]
    step = step_of[lo[inside]]
    most = pd.Series(n).groupby(step).transform("max").to_numpy()
    model[inside] = (n >= MODEL_CALL_MIN_LAUNCHES) | ((n == most) & (n > 0))
    return forward, model


def _eager(trace: Trace, starts: np.ndarray, in_optimizer: np.ndarray,
           in_reducer: np.ndarray, broken: np.ndarray, forwards: pd.DataFrame) -> np.ndarray:
    """Calls that compiling the model leaves eager: the optimizer's, DDP's reducer's and the
    ops Dynamo breaks its graph at, and where the capture marked the forward passes, every
    call outside the model's (`forwards`: a loss module's is not compiled with the model) and
    outside the autograd engine's backward nodes (whichever thread ran those)."""
    ann = trace.of("user_annotation")
    if not len(ann[names_in(ann, MODEL_PHASES)]):
        alone: np.ndarray = in_optimizer | in_reducer | broken
        return alone
    ops = trace.of("cpu_op")
    nodes = ops[names_where(ops, lambda n: n.startswith(BACKWARD_NODE), BACKWARD_NODE)]
    backward = ann[names_in(ann, frozenset({BACKWARD_PHASE}))]
    model = pd.concat([forwards[["ts_us", "end_us"]], backward[["ts_us", "end_us"]],
                       nodes[["ts_us", "end_us"]]])
    inside = Coverage.of(model["ts_us"].to_numpy(), model["end_us"].to_numpy()).contains(starts)
    out: np.ndarray = in_optimizer | in_reducer | ~inside | broken
    return out


def _model_entries(starts: np.ndarray, forwards: pd.DataFrame) -> np.ndarray:
    """The first item of each of the model's forward passes: where each call into the model
    compiled pays the compiled call's floor."""
    entry = np.zeros(len(starts), dtype=bool)
    if not len(forwards) or not len(starts):
        return entry
    lo = np.searchsorted(starts, forwards["ts_us"].to_numpy(), side="left")
    entry[lo[lo < len(starts)]] = True
    return entry


def _optimizer_fused(trace: Trace) -> bool:
    """Whether the optimizer steps with fused kernels (`fused=True`: one launch per group)."""
    ops = trace.of("cpu_op")
    return bool(names_where(ops, lambda n: n.startswith("aten::_fused_"), "aten::_fused_").any())


def _launch_latency(host: pd.DataFrame, gpu: pd.DataFrame) -> float:
    """Typical call-start → kernel-start delay when the GPU was not busy (the queue was empty)."""
    linked = host[host["gpu"] >= 0]
    g = gpu.iloc[linked["gpu"].to_numpy()]
    delay = g["ts_us"].to_numpy() - linked["ts_us"].to_numpy()
    prev_end = np.maximum.accumulate(np.append(-np.inf, (g["ts_us"] + g["dur_us"]).to_numpy()))
    idle = g["ts_us"].to_numpy() > prev_end[:-1] + 1.0
    d = delay[idle & (delay > 0)]
    return float(np.clip(np.median(d), 1.0, 20.0)) if len(d) else 5.0


def _bounded(steps: pd.DataFrame, items: pd.DataFrame,
             hi: float) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """The first whole steps holding at most MAX_ITEMS items (at least one step): a replay walks
    items one by one, and a few steps predict the period as well as forty do."""
    if len(items) <= MAX_ITEMS or len(steps) < 2:
        return steps, items, hi
    starts = steps["cpu_start_us"].to_numpy(dtype=np.float64)
    per_step = np.bincount(np.clip(np.searchsorted(starts, items["ts_us"].to_numpy(),
                                                   side="right") - 1, 0, None),
                           minlength=len(starts))
    keep = max(1, int(np.searchsorted(np.cumsum(per_step), MAX_ITEMS, side="right")))
    if keep >= len(steps):
        return steps, items, hi
    cut = float(starts[keep])
    return steps.iloc[:keep], items[items["ts_us"].to_numpy() < cut], cut


def build_graph(trace: Trace, steps: pd.DataFrame, window: Window, host: HostWork,
                kernels: pd.DataFrame | None = None) -> StepGraph:
    """The graph of the profiled steps (all of them, in order) of the driving process;
    `kernels`: the trace's `kernel_rows`, where the caller has them already."""
    rt = trace.of("cuda_runtime", "cuda_driver")
    if window.pid >= 0:
        rt = rt[rt["pid"].to_numpy() == window.pid]
    lo, hi = window.start_us, float(steps["cpu_end_us"].max()) if len(steps) else window.end_us
    rt = rt[(rt["ts_us"] >= lo) & (rt["ts_us"] < hi)]
    names = rt["name"].astype(str)
    gpu_corr = trace.of(*GPU_CATEGORIES)["correlation"].to_numpy()
    launches = rt["correlation"].isin(gpu_corr).to_numpy()
    is_sync = names.isin(SYNC_APIS).to_numpy()
    kind = np.select([launches & is_sync, launches, is_sync, names.isin(RECORD_APIS).to_numpy(),
                      names.isin(WAIT_APIS).to_numpy()], [BLOCKING, LAUNCH, SYNC, RECORD, WAIT],
                     -1)
    items = rt.assign(kind=kind)[kind >= 0].sort_values("ts_us", kind="stable")
    steps, items, hi = _bounded(steps, items, hi)
    gpu = _gpu_table(trace, items["correlation"].to_numpy(),
                     kernel_rows(trace) if kernels is None else kernels)
    pos = pd.Series(np.arange(len(gpu)), index=gpu["correlation"].to_numpy())
    gidx = items["correlation"].map(pos).fillna(-1).astype(np.int64).to_numpy()
    starts = items["ts_us"].to_numpy()
    ends = np.maximum.accumulate(items["end_us"].to_numpy()) if len(items) else starts
    bounds = steps["cpu_start_us"].to_numpy(dtype=np.float64) if len(steps) else np.array([lo])
    step_of = np.clip(np.searchsorted(bounds, starts, side="right") - 1, 0, None)
    gap_lo = np.append(lo, ends[:-1]) if len(items) else np.empty(0)
    gap_hi = np.maximum(starts, gap_lo)
    inp = host.input.overlap(gap_lo, gap_hi)
    disp = np.minimum(host.launch.overlap(gap_lo, gap_hi), gap_hi - gap_lo - inp)
    other = np.clip(gap_hi - gap_lo - inp - disp, 0.0, None)
    in_ops = np.clip(host.busy.overlap(gap_lo, gap_hi) - disp, 0.0, None)
    optimizer = _optimizer_ranges(trace)
    in_optimizer = optimizer.contains(starts)
    own = _framework_other(trace, host, optimizer)
    framework = np.minimum(own.overlap(gap_lo, gap_hi), other)
    kind_launch = items["kind"].to_numpy() == LAUNCH
    reducer, breaks = _reducer_ranges(trace), _graph_break_ranges(trace)
    in_reducer, broken = reducer.contains(starts), breaks.contains(starts)
    forwards, is_model = _model_forwards(trace, starts, kind_launch & (gidx >= 0), step_of)
    model_forwards = forwards[is_model]
    # dispatch inside the parts of the model that stay eager (a graph-broken LSTM's backward
    # ahead of the next graphed launch): no graph removes it
    kept = np.minimum(reducer.overlap(gap_lo, gap_hi) + breaks.overlap(gap_lo, gap_hi), disp)
    table = pd.DataFrame({
        "ts_us": starts, "dur_us": items["dur_us"].to_numpy(),
        "kind": items["kind"].to_numpy(), "pre_input_us": inp, "pre_dispatch_us": disp,
        "pre_host_us": other, "pre_hostop_us": np.minimum(in_ops, other),
        "pre_framework_us": framework, "pre_eager_dispatch_us": kept, "gpu": gidx,
        "step": step_of, "optimizer": in_optimizer,
        "eager": _eager(trace, starts, in_optimizer, in_reducer, broken, model_forwards),
        "reducer": in_reducer, "graph_break": broken,
        "model_entry": _model_entries(starts, model_forwards),
    })
    last = float(ends[-1]) if len(items) else lo
    t_lo, t_hi = np.array([min(last, hi)]), np.array([hi])
    t_inp = float(host.input.overlap(t_lo, t_hi)[0])
    t_disp = min(float(host.launch.overlap(t_lo, t_hi)[0]), max(0.0, hi - last - t_inp))
    t_host = max(0.0, hi - last - t_inp - t_disp)
    graph = StepGraph(
        host=table, gpu=gpu, start_us=lo, n_steps=max(len(steps), 1),
        tail_host_us=t_host, tail_input_us=t_inp,
        tail_dispatch_us=t_disp, launch_latency_us=_launch_latency(table, gpu),
        tail_framework_us=min(float(own.overlap(t_lo, t_hi)[0]), t_host),
        optimizer_fused=_optimizer_fused(trace),
        gpu_name=trace.info.gpu_name, arch=gpu_arch(trace.info.devices))
    graph.memo["profiled_step_ms"] = (hi - lo) / 1e3 / graph.n_steps
    return graph
