"""GPU conditions: NVML samples summarised, and comparisons across changed conditions distrusted."""

import types

import pytest

from jupyter_gpuprof.advice.cost import cost_block, gpu_hour_price, gpu_hours, headline
from jupyter_gpuprof.analysis.compare import step_change
from jupyter_gpuprof.analysis.conditions import condition_changes, gpu_time_spread
from jupyter_gpuprof.capture.conditions import ConditionSampler
from jupyter_gpuprof.views.whatif_text import describe

BEFORE = [10.0, 10.1, 9.9, 10.05, 9.95, 10.0, 10.02, 9.98]
AFTER = [8.0, 8.1, 7.9, 8.05, 7.95, 8.0, 8.02, 7.98]


class FakeNvml:
    """Answers like pynvml for one GPU whose clocks and throttle bits follow a script."""

    NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_TEMPERATURE_GPU = 1, 2, 0

    def __init__(self, sm_mhz, throttle=0, pids=()):
        self.sm, self.throttle, self.pids = list(sm_mhz), throttle, pids

    def nvmlDeviceGetHandleByIndex(self, i):
        return i

    def nvmlDeviceGetClockInfo(self, h, kind):
        return (self.sm.pop(0) if len(self.sm) > 1 else self.sm[0]) if kind == 1 else 4800

    def nvmlDeviceGetPowerUsage(self, h):
        return 650_000

    def nvmlDeviceGetTemperature(self, h, kind):
        return 71

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, h):
        return self.throttle

    def nvmlDeviceGetComputeRunningProcesses(self, h):
        return [types.SimpleNamespace(pid=p) for p in self.pids]


def _measure(nvml):
    s = ConditionSampler(nvml=nvml, interval_s=3600).start()
    for _ in range(3):
        s.sample()
    return s.stop()


def test_samples_are_summarised():
    c = _measure(FakeNvml([1980, 1980, 1975, 1980], throttle=0x20 | 0x1, pids=(4242,)))
    assert c["available"] and c["sm_clock_mhz"]["min"] == 1975
    assert c["sm_clock_mhz"]["median"] == 1980 and c["power_w"]["median"] == 650
    assert c["throttle"] == ["sw_thermal"] and c["other_pids"] == [4242]
    assert "sw_thermal" in describe(c)


def test_without_nvml_the_reason_is_kept():
    def broken():
        raise ImportError("No module named 'pynvml'")

    s = ConditionSampler(nvml=types.SimpleNamespace(nvmlDeviceGetHandleByIndex=lambda i: broken()))
    c = s.start().stop()
    assert not c["available"] and "NVML unavailable" in c["reason"]


def test_a_throttled_measurement_is_unreliable_never_significant():
    calm = _measure(FakeNvml([1980]))
    hot = _measure(FakeNvml([1980, 1700, 1700, 1700], throttle=0x40))
    assert step_change(BEFORE, AFTER, conditions=(calm, calm))["verdict"] == "significant"
    # the slower side throttled: the difference may be the throttle's
    ch = step_change(AFTER, BEFORE, conditions=(calm, hot))
    assert ch["verdict"] == "unreliable" and not ch["significant"]
    assert any("SM clock" in r for r in ch["unreliable_reasons"])
    assert any("hw_thermal" in r for r in ch["unreliable_reasons"])
    ch = step_change(BEFORE, AFTER, conditions=(hot, calm))
    assert ch["verdict"] == "unreliable" and not ch["significant"]


def test_a_faster_side_held_back_by_its_conditions_keeps_its_lead():
    """A throttle or a lower clock on the faster side only shrank its lead: still significant,
    where the same throttle on the slower side makes the comparison unreliable (above)."""
    calm = _measure(FakeNvml([1980]))
    hot = _measure(FakeNvml([1980, 1700, 1700, 1700], throttle=0x40))
    ch = step_change(BEFORE, AFTER, conditions=(calm, hot))
    assert ch["verdict"] == "significant" and ch["unreliable_reasons"] == []
    # the same throttle on both sides is no difference between them
    capped = _measure(FakeNvml([1980], throttle=0x4))
    assert condition_changes(capped, capped) == []
    assert condition_changes(calm, capped) == ["the GPU throttled after (sw_power_cap)"]
    assert condition_changes(calm, capped, faster="after") == []


def test_the_baselines_gpu_time_is_known_up_to_its_slowest_clock():
    """Kernels captured at 1,980 MHz ran as slow as 1,700 MHz in a power-capped baseline: the
    trace's GPU time is a lower bound by that ratio; an unthrottled baseline by its median."""
    captured = _measure(FakeNvml([1980]))
    capped = _measure(FakeNvml([1980, 1700, 1900, 1900], throttle=0x4))
    assert gpu_time_spread(capped, captured) == pytest.approx(1980 / 1700)
    steady = _measure(FakeNvml([1980, 1700, 1900, 1900]))
    assert gpu_time_spread(steady, captured) == pytest.approx(1980 / 1900)
    assert gpu_time_spread(captured, capped) == 1.0  # a faster baseline: the trace's bound
    assert gpu_time_spread(None, captured) == 1.0


def test_clock_drop_threshold_and_new_processes():
    base = _measure(FakeNvml([2000]))
    assert condition_changes(base, _measure(FakeNvml([1910]))) == []  # 4.5 % lower: fine
    assert condition_changes(base, _measure(FakeNvml([1890])))  # 5.5 % lower
    crowded = _measure(FakeNvml([2000], pids=(777,)))
    assert condition_changes(base, crowded) == [
        "another process appeared on the GPU (pid 777)"]
    assert condition_changes(None, crowded) == []  # one side unrecorded: judge the times


def test_gpu_hours_and_money(monkeypatch):
    assert gpu_hours(36.0, n_gpus=2) == pytest.approx(0.02)
    monkeypatch.setenv("JUPYTER_GPUPROF_GPU_HOUR_PRICE", "2.5")
    price = gpu_hour_price()
    c = cost_block(36.0, 9.0, [{"id": "s", "category": "sync", "predicted_step_ms": 18.0}],
                   price=price)
    assert c["step"] == {"gpu_hours_per_1k_steps": pytest.approx(0.01),
                         "money_per_1k_steps": pytest.approx(0.025)}
    assert c["savings"][0]["gpu_hours_per_1k_steps"] == pytest.approx(0.005)
    assert headline(c).startswith("Every 1,000 steps take 0.01 GPU-hours; the GPU idles 25%")
    assert "0.00625 at 2.50 per GPU-hour" in headline(c)
    monkeypatch.setenv("JUPYTER_GPUPROF_GPU_HOUR_PRICE", "two")
    with pytest.raises(ValueError, match="is not a number"):
        gpu_hour_price()


def test_baseline_and_capture_each_get_their_conditions(monkeypatch):
    from jupyter_gpuprof.capture import conditions

    monkeypatch.setattr(conditions, "_cuda_in_use", lambda: True)
    clocks = iter([[1980], [1700]])
    intervals: list[float] = []

    def sampler(interval_s: float) -> ConditionSampler:
        intervals.append(interval_s)
        return ConditionSampler(nvml=FakeNvml(next(clocks)), interval_s=3600)

    phases = conditions.PhaseConditions(sampler)
    for event in ("last_warmup", "baseline", "capture", "done"):  # the driver's order
        phases.on_event(event)
    got = phases.finish()
    assert list(got) == ["baseline", "capture"]
    assert got["baseline"]["sm_clock_mhz"]["median"] == 1980
    assert got["capture"]["sm_clock_mhz"]["median"] == 1700
    # the timed baseline is sampled less often than the capture: each sample costs its step
    assert intervals == [conditions.BASELINE_INTERVAL_S, conditions.SAMPLE_INTERVAL_S]
    assert conditions.BASELINE_INTERVAL_S >= 5 * conditions.SAMPLE_INTERVAL_S


def test_a_session_discarded_in_its_baseline_stops_the_sampler(tmp_path, monkeypatch):
    """A capture thrown away mid-baseline (a rank left out late, the observer check switching
    the capture off) leaves no sampler thread polling the GPU behind it."""
    from capture_fixtures import Trainer

    from jupyter_gpuprof.capture import conditions
    from jupyter_gpuprof.capture.session import ProfileSession
    from jupyter_gpuprof.capture.settings import CaptureSettings
    from jupyter_gpuprof.store import RunStore

    monkeypatch.setattr(conditions, "_cuda_in_use", lambda: True)
    made: list[ConditionSampler] = []

    def sampler(interval_s: float) -> ConditionSampler:
        made.append(ConditionSampler(nvml=FakeNvml([1980]), interval_s=interval_s))
        return made[-1]

    session = ProfileSession(CaptureSettings(mode="script", warmup=0, steps=50),
                             store=RunStore(tmp_path))
    session.conditions = conditions.PhaseConditions(sampler)
    session.begin()
    t = Trainer()
    for _ in range(3):
        t.step()
    assert session.driver.phase.name == "BASELINE" and made
    thread = made[0]._thread
    assert thread is not None and thread.is_alive()
    session.discard()
    thread.join(timeout=5)
    assert not thread.is_alive()
