"""What a finished capture writes and says: trace file, meta fields, the one-line summary."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Protocol

from ..oneline import error_line
from ..stats import describe_steps
from ..step_definition import step_definition
from .capture_cost import COST

if TYPE_CHECKING:
    from ..store import Run, RunMeta
    from ..store.meta_blocks import FrameworkMeta, TrainingMeta
    from .callsites import CallSites
    from .conditions import PhaseConditions
    from .driver import StepDriver
    from .flops import StepFlops
    from .memory_record import MemoryRecorder
    from .settings import CaptureSettings
    from .stalls import StallWatch
    from .training import TrainingCounters


class ProfileSession(Protocol):
    """What a finished capture (capture/session.py's ProfileSession) hands over to be written."""

    settings: CaptureSettings
    run: Run | None
    driver: StepDriver
    flops: StepFlops
    conditions: PhaseConditions
    callsites: CallSites
    training: TrainingCounters
    stalls: StallWatch
    framework: FrameworkMeta | None
    fitted: str | None
    memory: MemoryRecorder
    cupti_kept: str | None

    @property
    def manual(self) -> bool:
        """The steps are jupyter_gpuprof.step() intervals."""


def write_trace(session: ProfileSession, rank: int | None) -> str | None:
    """Export the profiler's trace into the run folder; the reason when there is none."""
    prof: Any = session.driver.profiler
    if prof is None:
        return "no trace: the profiler never started"
    run: Run = session.run  # type: ignore[assignment]
    try:
        # exported into the run folder under a temporary name (never $TMPDIR): a writer killed
        # here leaves a file the store's start-up sweep removes (store/temp_files.py)
        with run.export_file() as tmp:
            prof.export_chrome_trace(str(tmp))
            run.write_trace(tmp, rank=rank)
    except Exception as e:  # noqa: BLE001 - e.g. stopped before any active step
        return f"no trace: {error_line(e, with_type=True)}"
    return None


def write_memory_history(session: ProfileSession, error: str | None, rank: int | None) -> None:
    """Save the allocator's history (or the out-of-memory snapshot) into the run folder."""
    history = session.memory.result(error)
    if history is None or session.run is None:
        return
    try:
        session.run.write_memory_history(history, rank)
    except (OSError, TypeError, ValueError) as e:
        session.memory.error = f"memory history not saved: {error_line(e)}"


def fill_meta(session: ProfileSession, meta: RunMeta) -> None:
    """Everything the capture measured, into the run's meta (status and error set by caller)."""
    from .environment import collect_env, max_memory_allocated

    driver, settings = session.driver, session.settings
    with contextlib.suppress(Exception):
        meta.env = collect_env()
    meta.conditions = session.conditions.finish()
    baseline = meta.conditions.get("baseline")
    sampler = baseline.get("sampler_cpu_ms") if baseline else None
    boundaries_ns = driver.baseline_host_ns[:len(driver.baseline_ms) + 1]  # the timed steps'
    stalls = session.stalls.to_meta(boundaries_ns)
    meta.baseline = {"step_ms": driver.baseline_ms, "timing": driver.timing,
                     "warmup_ms": driver.warmup_ms, "host_probe_ms": driver.host_probe_ms,
                     "settle_steps": driver.schedule.settle,
                     "capture_cost": COST.to_meta(sampler), "stalls": stalls["stalls"],
                     "epoch_steps": stalls["epoch_steps"], "loader_ms": stalls["loader_ms"],
                     "loader_workers": stalls["loader_workers"]}
    meta.profiled_step_ms = driver.profiled_ms
    meta.flops_per_step = session.flops.flops
    meta.flops_error = session.flops.error
    if meta.flops_per_step is None and meta.flops_error is None:
        meta.flops_error = (
            "FLOP counting disabled"
            if not settings.count_flops
            else "no warm-up step to count FLOPs on (--warmup 0)"
            if settings.warmup == 0
            else "FLOPs not counted: the capture ended before the last warm-up step"
        )
    with contextlib.suppress(Exception):
        meta.max_memory_allocated_bytes = max_memory_allocated()
    meta.training = {**session.training.to_meta(), "mode": settings.mode,
                     "manual": session.manual}
    if session.fitted:
        meta.training["schedule_fitted"] = session.fitted
    meta.framework = session.framework.copy() if session.framework else {}
    meta.callsites = session.callsites.result()
    meta.profiler_messages = driver.profiler_log.lines()
    meta.cupti_kept = session.cupti_kept


def settling(d: StepDriver) -> str:
    """The settling steps before the baseline in a count of steps, where the loop's DataLoader
    called for them."""
    n = d.schedule.baseline_settle
    return f" + {n} for the batches its DataLoader holds ready" if n else ""


def incomplete_reason(session: ProfileSession) -> str:
    """Why a capture that ended before DONE is incomplete, phrased for the user."""
    d, s = session.driver, session.settings
    if s.mode == "body":
        return f"capture incomplete after {d.n} of {d.schedule.total} steps"
    if not d.started:
        return (
            "no training steps seen: the code never called optimizer.step() "
            "(or jupyter_gpuprof.step())"
        )
    # In loop/script mode the first step only starts the count (it includes setup).
    return (
        f"capture incomplete: the code ran {d.n + 1} steps, the capture needs "
        f"{d.schedule.total + 1} (1 to start + warm-up {s.warmup}{settling(d)} + baseline "
        f"{s.steps} + profiler {d.schedule.capture_steps}); "
        "run more steps or lower --steps/--warmup/--active"
    )


def describe(session: ProfileSession) -> str:
    """One line on what was measured and where it went."""
    d = session.driver
    path = session.run.path if session.run else "?"
    st = describe_steps(d.baseline_ms)
    if st["n"]:
        timing = (
            f"baseline {st['median_ms']:.3f} ms/step median, p95 {st['p95_ms']:.3f} ms "
            f"over {st['n']} steps ({d.timing})"
        )
    else:
        timing = "no baseline steps"
    prof = describe_steps(d.profiled_ms)
    if prof["n"]:
        timing += f"; profiled {prof['median_ms']:.3f} ms/step median over {prof['n']} steps"
    training: TrainingMeta = {**session.training.to_meta(), "manual": session.manual}
    if (what := step_definition(training, session.settings.mode)) is not None:
        timing += f"; {what}"
    return f"gpuprofile: {timing} -> {path}"
