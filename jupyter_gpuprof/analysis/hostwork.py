"""Classify what the host was doing: data loading, syncs, copies, launching, other work.

The idle-gap attribution and the sync table both need the same host-side classes, so they
are built once here from the event table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .intervals import Coverage, subtract
from .name_masks import names_where
from .trace import Trace

#: runtime calls that block the host until the GPU (or a copy) has finished
SYNC_APIS = frozenset({
    "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize",
    "cudaMemcpy", "cudaMemcpy2D", "cudaMemcpyFromSymbol", "cudaMemcpyToSymbol",
    "cuStreamSynchronize", "cuCtxSynchronize", "cuEventSynchronize", "cuMemcpyDtoH_v2",
    "hipStreamSynchronize", "hipDeviceSynchronize", "hipEventSynchronize", "hipMemcpy",
    "hipMemcpy2D", "hipMemcpyFromSymbol", "hipMemcpyToSymbol", "hipMemcpyDtoH",
    "hipMemcpyWithStream",  # blocking copy on a stream (what .item()/.cpu() use on ROCm)
})
#: a host-side copy call counts as a data transfer (not a sync read-back) from this size
TRANSFER_MIN_BYTES = 64 * 1024
#: names of host ranges that produce the next batch
INPUT_MARKERS = ("DataLoader", "__next__")
INPUT_PHASES = frozenset({"data"})
#: texts one of which every input range's name contains (`names_where`'s needles)
INPUT_NEEDLES = (*INPUT_PHASES, INPUT_MARKERS[0])


def is_input_range(name: str) -> bool:
    """Whether a host range is the data pipeline producing a batch."""
    return name in INPUT_PHASES or all(m in name for m in INPUT_MARKERS)


@dataclass
class HostWork:
    """Host time of the main process split into exclusive classes, in priority order.

    A moment counts once: data pipeline first, then sync waits, then big copy calls, then
    ops/calls that launch GPU work; `busy` is all recorded host activity.
    """

    input: Coverage
    sync: Coverage
    transfer: Coverage
    launch: Coverage
    busy: Coverage
    sync_raw: Coverage  # every sync call, before input time is taken out
    sync_calls: pd.DataFrame


def _launching_ops(ops: pd.DataFrame, runtime: pd.DataFrame) -> np.ndarray:
    """Mask of ops that contain at least one runtime/driver call on their own thread."""
    mask = np.zeros(len(ops), dtype=bool)
    for tid, group in ops.groupby("tid", sort=False):
        calls = np.sort(runtime.loc[runtime["tid"] == tid, "ts_us"].to_numpy())
        if len(calls) == 0:
            continue
        lo = np.searchsorted(calls, group["ts_us"].to_numpy(), side="left")
        hi = np.searchsorted(calls, group["end_us"].to_numpy(), side="right")
        mask[ops.index.get_indexer(group.index)] = hi > lo
    return mask


#: the columns the host classes read (each subset taken with just these: `Trace.of`)
_RANGE_COLUMNS = ["name", "pid", "ts_us", "end_us"]
_CALL_COLUMNS = ["name", "pid", "tid", "ts_us", "dur_us", "end_us", "correlation"]
_OP_COLUMNS = ["pid", "tid", "ts_us", "end_us"]


def classify_host(trace: Trace, pid: int) -> HostWork:
    """Build the host-side coverages for the process that drives the GPU."""
    def mine(df: pd.DataFrame) -> pd.DataFrame:
        keep = df["pid"].to_numpy() == pid
        return df if pid < 0 or keep.all() else df[keep]  # all of them: no copy

    def cov(df: pd.DataFrame) -> Coverage:
        return Coverage.of(df["ts_us"].to_numpy(), df["end_us"].to_numpy())

    ann = mine(trace.of("user_annotation", "cpu_op", columns=_RANGE_COLUMNS))
    c_input = cov(ann[names_where(ann, is_input_range, INPUT_NEEDLES)])
    del ann
    runtime = mine(trace.of("cuda_runtime", "cuda_driver", columns=_CALL_COLUMNS))
    is_sync = runtime["name"].isin(SYNC_APIS).to_numpy()
    syncs = runtime[is_sync]
    gpu_copy = trace.of("gpu_memcpy")
    big = set(gpu_copy.loc[gpu_copy["bytes"] >= TRANSFER_MIN_BYTES, "correlation"].tolist())
    is_transfer = (names_where(runtime, lambda n: "Memcpy" in n, "Memcpy") & ~is_sync
                   & runtime["correlation"].isin(big).to_numpy())
    ops = mine(trace.of("cpu_op", columns=_OP_COLUMNS))
    launching = _launching_ops(ops, runtime)
    starts, ends = ops["ts_us"].to_numpy(), ops["end_us"].to_numpy()
    call_starts, call_ends = runtime["ts_us"].to_numpy(), runtime["end_us"].to_numpy()
    # launching ops, then every call but the syncs and the transfers
    launch_calls = ~is_sync & ~is_transfer
    c_launch = Coverage.of(np.concatenate([starts[launching], call_starts[launch_calls]]),
                           np.concatenate([ends[launching], call_ends[launch_calls]]))
    c_busy = Coverage.of(np.concatenate([starts, call_starts]), np.concatenate([ends, call_ends]))
    c_sync = subtract(cov(syncs), c_input)
    c_transfer = subtract(Coverage.of(call_starts[is_transfer], call_ends[is_transfer]),
                          c_input, c_sync)
    c_launch = subtract(c_launch, c_input, c_sync, c_transfer)
    return HostWork(input=c_input, sync=c_sync, transfer=c_transfer, launch=c_launch,
                    busy=c_busy, sync_raw=cov(syncs), sync_calls=syncs)
