"""Whether two step-time measurements ran under the same GPU conditions.

A comparison of step times only means something when the GPU ran the same way on both sides:
clocks that dropped, thermal or power throttling, or another process that appeared on the GPU
change the step time without any change to the code. The samples come from the capture side
(`capture/conditions.py`, NVML); this module only judges them.
"""

from __future__ import annotations

from collections.abc import Mapping

#: median SM (or memory) clock lower by more than this share on one side: not comparable
CLOCK_DROP_PCT = 5.0
#: throttle reasons that slow the GPU for reasons of heat or power (NVML's names, shortened)
SLOWING_THROTTLES = frozenset({"sw_power_cap", "hw_slowdown", "sw_thermal", "hw_thermal",
                               "hw_power_brake"})


def _median(side: Mapping[str, object], key: str) -> float | None:
    """Median of one sampled figure of a side (None when it was not sampled)."""
    figure = side.get(key)
    v = figure.get("median") if isinstance(figure, Mapping) else None
    return float(v) if isinstance(v, (int, float)) and v > 0 else None


def _listed(side: Mapping[str, object], key: str) -> list[object]:
    """A list the capture recorded ([] when missing)."""
    v = side.get(key)
    return list(v) if isinstance(v, list) else []


def _sampled(side: object) -> Mapping[str, object]:
    """A side's samples as the meta holds them ({} when none were recorded)."""
    return side if isinstance(side, Mapping) else {}


def _lowest(side: Mapping[str, object], key: str) -> float | None:
    """Lowest sample of one figure of a side (None when it was not sampled)."""
    figure = side.get(key)
    v = figure.get("min") if isinstance(figure, Mapping) else None
    return float(v) if isinstance(v, (int, float)) and v > 0 else None


def gpu_time_spread(baseline: object, capture: object) -> float:
    """How many times longer the baseline's GPU work may have run than the trace shows (≥ 1).

    Kernel durations come from the capture, whose GPU was mostly idle under the profiler; the
    baseline ran the GPU flat out, and a GPU held at its power cap clocks down only then (the
    compiled nanoGPT step on the H200: 1,980 MHz captured, down to 1,710 MHz in its baseline).
    The trace's GPU time is then known only up to the capture's clock over the baseline's
    lowest when the baseline throttled, else over its median; 1.0 when either side was not
    sampled."""
    base, cap = _sampled(baseline), _sampled(capture)
    if not (base.get("available") and cap.get("available")):
        return 1.0
    captured = _median(cap, "sm_clock_mhz")
    throttled = set(_listed(base, "throttle")) & SLOWING_THROTTLES
    slowest = (_lowest(base, "sm_clock_mhz") if throttled else None) or _median(
        base, "sm_clock_mhz")
    if not (captured and slowest):
        return 1.0
    return max(1.0, captured / slowest)


def _handicaps(before: object, after: object) -> list[tuple[str, str]]:
    """Each way one side ran slower GPU conditions than the other: (reason, side held back)."""
    out: list[tuple[str, str]] = []
    sides = {"before": _sampled(before), "after": _sampled(after)}
    if not all(s.get("available") for s in sides.values()):
        return out
    for key, label in (("sm_clock_mhz", "SM clock"), ("mem_clock_mhz", "memory clock")):
        a, b = _median(sides["before"], key), _median(sides["after"], key)
        if a and b and abs(a - b) > CLOCK_DROP_PCT / 100 * max(a, b):
            out.append((f"{label} {a:.0f} MHz before vs {b:.0f} MHz after "
                        f"({100 * (b - a) / a:+.0f}%)", "after" if b < a else "before"))
    throttled = {name: set(map(str, _listed(side, "throttle"))) & SLOWING_THROTTLES
                 for name, side in sides.items()}
    for name, other in (("before", "after"), ("after", "before")):
        # a throttle both sides hit is no difference between them (their clocks say how much)
        slow = sorted(throttled[name] - throttled[other])
        if slow:
            out.append((f"the GPU throttled {name} ({', '.join(slow)})", name))
    new = sorted(int(p) for p in set(_listed(sides["after"], "other_pids"))
                 - set(_listed(sides["before"], "other_pids")) if isinstance(p, int))
    if new:
        out.append((f"another process appeared on the GPU (pid {', '.join(map(str, new))})",
                    "after"))
    return out


def condition_changes(before: object, after: object, faster: str | None = None) -> list[str]:
    """Why the two sides' conditions differ enough to distrust a comparison ([] when not).

    `before`, `after`: the conditions each side ran under, as the run meta recorded them (a
    mapping of capture/conditions.py's figures; anything else counts as not sampled).
    `faster`: the side ("before" or "after") whose steps came out shorter, when known: a
    slower clock, a throttle or a crowded GPU on that side only held it back, so its lead
    stands (as a lower bound) and only the other side's handicaps can have made it (a
    compiled nanoGPT try, 20 % faster, ran into the H200's power cap that its uncompiled
    control never reached)."""
    return [reason for reason, side in _handicaps(before, after) if side != faster]


#: what each slowing throttle means, in words a headline can carry
THROTTLE_WORDS = {"sw_power_cap": "power-capped", "hw_power_brake": "power-braked",
                  "sw_thermal": "thermally throttled", "hw_thermal": "thermally throttled",
                  "hw_slowdown": "slowed down by the hardware"}


def shared_handicaps(before: object, after: object) -> list[str]:
    """Conditions both sides ran under that kept both from the GPU's best ([] when none):
    no reason to distrust the change, but a caveat on both step times (nanoGPT fp32 → bf16
    ran power-capped on both sides of an H200)."""
    sides = [_sampled(before), _sampled(after)]
    if not all(s.get("available") for s in sides):
        return []
    both = set.intersection(*({str(t) for t in _listed(s, "throttle")} & SLOWING_THROTTLES
                              for s in sides))
    out = []
    for words in sorted({THROTTLE_WORDS[t] for t in both}):
        names = ", ".join(sorted(t for t in both if THROTTLE_WORDS[t] == words))
        out.append(f"the GPU was {words} on both sides ({names})")
    return out
