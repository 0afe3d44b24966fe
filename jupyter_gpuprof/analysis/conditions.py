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


def condition_changes(before: object, after: object) -> list[str]:
    """Why the two sides' conditions differ enough to distrust a comparison ([] when not).

    `before`, `after`: the conditions each side ran under, as the run meta recorded them (a
    mapping of capture/conditions.py's figures; anything else counts as not sampled)."""
    reasons: list[str] = []
    sides = {"before": _sampled(before), "after": _sampled(after)}
    if not all(s.get("available") for s in sides.values()):
        return reasons
    for key, label in (("sm_clock_mhz", "SM clock"), ("mem_clock_mhz", "memory clock")):
        a, b = _median(sides["before"], key), _median(sides["after"], key)
        if a and b and abs(a - b) > CLOCK_DROP_PCT / 100 * max(a, b):
            reasons.append(f"{label} {a:.0f} MHz before vs {b:.0f} MHz after "
                           f"({100 * (b - a) / a:+.0f}%)")
    for name, side in sides.items():
        slow = sorted(str(t) for t in set(_listed(side, "throttle")) & SLOWING_THROTTLES)
        if slow:
            reasons.append(f"the GPU throttled {name} ({', '.join(slow)})")
    new = sorted(int(p) for p in set(_listed(sides["after"], "other_pids"))
                 - set(_listed(sides["before"], "other_pids")) if isinstance(p, int))
    if new:
        reasons.append(f"another process appeared on the GPU (pid {', '.join(map(str, new))})")
    return reasons
