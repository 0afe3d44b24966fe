"""GPU conditions during a measurement (clocks, power, temperature, throttling, other processes).

Sampled through NVML (`nvidia-ml-py`, optional) in a background thread between `start()` and
`stop()`, so the baseline, the capture and each `--try` carry the conditions they ran under.
Without NVML the summary says why and comparisons fall back to the step times alone.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from typing import Any, Literal, TypedDict

from ..store.meta_blocks import PhaseConditionsMeta

#: seconds between two samples (NVML queries cost well under a millisecond)
SAMPLE_INTERVAL_S = 0.1
#: ... and in the timed baseline, where each sample's six NVML calls hand the GIL to the step and
#: back: at 0.1 s that cost a 5.7 ms host-bound step ~1 % on the H200 (docs/benchmarks.md §21,
#: session 45); twice a second still sees a clock or throttle change over a baseline
BASELINE_INTERVAL_S = 0.5
#: NVML's clock-throttle reason bits, by the short names `analysis.conditions` judges
THROTTLE_BITS = {0x4: "sw_power_cap", 0x8: "hw_slowdown", 0x20: "sw_thermal",
                 0x40: "hw_thermal", 0x80: "hw_power_brake", 0x2: "applications_clocks",
                 0x10: "sync_boost"}


SpreadKey = Literal["sm_clock_mhz", "mem_clock_mhz", "power_w", "temp_c"]
#: the figures summarised by their spread, in the order the summary lists them
SPREAD_KEYS: tuple[SpreadKey, ...] = ("sm_clock_mhz", "mem_clock_mhz", "power_w", "temp_c")


class Sample(TypedDict):
    """One NVML reading of the GPU."""

    sm_clock_mhz: float
    mem_clock_mhz: float
    power_w: float
    temp_c: float
    throttle: list[str]
    pids: list[int]


def _load_nvml() -> Any:
    """pynvml, initialised (ImportError without nvidia-ml-py)."""
    import pynvml  # nvidia-ml-py

    pynvml.nvmlInit()
    return pynvml


class ConditionSampler:
    """Samples one GPU's conditions until stopped; `summary()` is what a run's meta keeps."""

    def __init__(self, device_index: int = 0, interval_s: float = SAMPLE_INTERVAL_S,
                 nvml: Any = None) -> None:
        """Sample GPU `device_index` every `interval_s`; `nvml`: a pynvml-like module (tests)."""
        self.device_index = device_index
        self.interval_s = interval_s
        self._nvml = nvml
        self.samples: list[Sample] = []
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._handle: Any = None
        self.cpu_ns = 0  # the sampler thread's own CPU time (what it can take from the step)

    def start(self) -> ConditionSampler:
        """Begin sampling (a failed NVML load is kept as the reason, never raised)."""
        try:
            nvml = self._nvml = self._nvml or _load_nvml()
            self._handle = nvml.nvmlDeviceGetHandleByIndex(self.device_index)
            self.sample()
        except Exception as e:  # noqa: BLE001 - conditions are optional
            self.error = f"NVML unavailable: {type(e).__name__}: {e}"
            return self
        self._thread = threading.Thread(target=self._loop, daemon=True, name="gpuprof-nvml")
        self._thread.start()
        return self

    def _loop(self) -> None:
        """Sample until stopped."""
        while not self._stop.wait(self.interval_s):
            t0 = time.thread_time_ns()
            try:
                self.sample()
            except Exception:  # noqa: BLE001 - one failed sample is not worth a traceback
                pass
            self.cpu_ns += time.thread_time_ns() - t0

    def sample(self) -> None:
        """Take one sample now."""
        n, h = self._nvml, self._handle
        reasons_of = (getattr(n, "nvmlDeviceGetCurrentClocksEventReasons", None)
                      or n.nvmlDeviceGetCurrentClocksThrottleReasons)
        reasons = int(reasons_of(h))
        procs = n.nvmlDeviceGetComputeRunningProcesses(h)
        self.samples.append({
            "sm_clock_mhz": float(n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM)),
            "mem_clock_mhz": float(n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_MEM)),
            "power_w": float(n.nvmlDeviceGetPowerUsage(h)) / 1e3,
            "temp_c": float(n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU)),
            "throttle": [name for bit, name in THROTTLE_BITS.items() if reasons & bit],
            "pids": sorted(int(p.pid) for p in procs),
        })

    def stop(self) -> PhaseConditionsMeta:
        """Stop sampling and return the summary."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2 * self.interval_s + 1)
        if self.samples and self._handle is not None:
            try:
                self.sample()  # the state at the very end of the measurement
            except Exception:  # noqa: BLE001
                pass
        return self.summary()

    def summary(self) -> PhaseConditionsMeta:
        """min/median/max of each figure, throttle reasons seen, other processes seen."""
        if not self.samples:
            return {"available": False, "reason": self.error or "no samples"}
        out: PhaseConditionsMeta = {"available": True, "n_samples": len(self.samples),
                                    "sampler_cpu_ms": round(self.cpu_ns / 1e6, 4)}
        for key in SPREAD_KEYS:
            vals = [s[key] for s in self.samples]
            out[key] = {"min": min(vals), "median": statistics.median(vals), "max": max(vals)}
        out["throttle"] = sorted({r for s in self.samples for r in s["throttle"]})
        me = os.getpid()
        out["other_pids"] = sorted({p for s in self.samples for p in s["pids"] if p != me})
        return out


class PhaseConditions:
    """One sampler for the baseline and one for the capture, driven by the step driver's events.

    Samples only when this process already uses CUDA (it never initialises the GPU itself).
    """

    def __init__(self, factory: Any = ConditionSampler) -> None:
        """`factory(interval_s=...)` makes one sampler per phase."""
        self._factory = factory
        self._running: tuple[str, ConditionSampler] | None = None
        self.phases: dict[str, PhaseConditionsMeta] = {}

    def on_event(self, event: str) -> None:
        """'baseline' and 'capture' start a phase (ending the previous one); 'done' ends it."""
        self._end()
        if event in ("baseline", "capture") and _cuda_in_use():
            interval = BASELINE_INTERVAL_S if event == "baseline" else SAMPLE_INTERVAL_S
            self._running = (event, self._factory(interval_s=interval).start())

    def _end(self) -> None:
        """Stop the running phase's sampler and keep its summary."""
        if self._running is not None:
            name, sampler = self._running
            self._running = None
            self.phases[name] = sampler.stop()

    def finish(self) -> dict[str, PhaseConditionsMeta]:
        """The conditions of every phase that ran (what the run's meta keeps)."""
        self._end()
        return self.phases


def _cuda_in_use() -> bool:
    """Whether this process already uses CUDA (sampling never initialises it)."""
    import sys

    torch = sys.modules.get("torch")
    return bool(torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized())
