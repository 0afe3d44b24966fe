"""Builds tiny synthetic Kineto traces with exactly known timings for arithmetic tests."""

from __future__ import annotations

import gzip
import itertools
import json
from pathlib import Path
from typing import Any

H200 = {"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150_000_000_000, "computeMajor": 9,
        "computeMinor": 0, "numSms": 132}
PID, TID, STREAM = 100, 100, 7


class TraceBuilder:
    """Append host ops, launches, kernels, copies and syncs; `write()` a .json.gz trace."""

    def __init__(self, gpu: bool = True) -> None:
        self.events: list[dict[str, Any]] = []
        self.gpu = gpu
        self._corr = itertools.count(1)
        self._ext = itertools.count(1)

    def _x(self, cat: str, name: str, ts: float, dur: float, pid: int = PID, tid: int = TID,
           **args: Any) -> dict[str, Any]:
        ev = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur,
              "args": args}
        self.events.append(ev)
        return ev

    def step(self, n: int, ts: float, dur: float) -> None:
        """A ProfilerStep#n host range."""
        self._x("user_annotation", f"ProfilerStep#{n}", ts, dur)

    def annotation(self, name: str, ts: float, dur: float, tid: int = TID) -> None:
        """A user range (e.g. the DataLoader's __next__)."""
        self._x("user_annotation", name, ts, dur, tid=tid)

    def op(self, name: str, ts: float, dur: float, tid: int = TID, dims: Any = None,
           types: Any = None) -> int:
        """A cpu_op; returns its External id."""
        ext = next(self._ext)
        args: dict[str, Any] = {"External id": ext}
        if dims is not None:
            args["Input Dims"] = dims
        if types is not None:
            args["Input type"] = types
        self._x("cpu_op", name, ts, dur, tid=tid, **args)
        return ext

    def kernel(self, name: str, launch_ts: float, ts: float, dur: float, ext: int = -1,
               api: str = "cudaLaunchKernel", launch_dur: float = 5.0, stream: int = STREAM,
               tid: int = TID) -> None:
        """A launch call on the host and the kernel it starts on the GPU."""
        corr = next(self._corr)
        self._x("cuda_runtime", api, launch_ts, launch_dur, tid=tid, correlation=corr,
                **{"External id": ext})
        self._x("kernel", name, ts, dur, pid=0, tid=stream, device=0, stream=stream,
                correlation=corr, **{"External id": ext})

    def memcpy(self, kind: str, src: str, dst: str, nbytes: int, call_ts: float,
               call_dur: float, ts: float, dur: float, api: str = "cudaMemcpyAsync",
               ext: int = -1, stream: int = STREAM) -> None:
        """A copy call on the host and the copy on the GPU."""
        corr = next(self._corr)
        self._x("cuda_runtime", api, call_ts, call_dur, correlation=corr,
                **{"External id": ext})
        self._x("gpu_memcpy", f"Memcpy {kind} ({src} -> {dst})", ts, dur, pid=0, tid=stream,
                device=0, stream=stream, correlation=corr, bytes=nbytes,
                **{"External id": ext})

    def sync(self, ts: float, dur: float, api: str = "cudaStreamSynchronize") -> None:
        """A host call that blocks until the GPU is done."""
        self._x("cuda_runtime", api, ts, dur, correlation=next(self._corr))

    def memory(self, ts: float, total_allocated: int, nbytes: int) -> None:
        """An allocator event as recorded with profile_memory."""
        self.events.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                            "pid": PID, "tid": TID, "ts": ts, "args": {
                                "Total Allocated": total_allocated, "Bytes": nbytes,
                                "Device Id": 0, "Device Type": 1}})

    def doc(self) -> dict[str, Any]:
        """The trace as a JSON-ready dict."""
        return {"schemaVersion": 1, "deviceProperties": [H200] if self.gpu else [],
                "record_shapes": 1, "profile_memory": 1,
                "traceEvents": sorted(self.events, key=lambda e: e["ts"])}

    def write(self, path: Path, **extra: Any) -> Path:
        """Write a gzipped trace and return its path."""
        doc = {**self.doc(), **extra}
        path.write_bytes(gzip.compress(json.dumps(doc).encode()))
        return path
