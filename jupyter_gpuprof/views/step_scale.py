"""The step chart's axis, by the widget's rule (src/report/stepscale.ts), for the static charts.

Which steps are outliers drawn clipped at the scale's end (so one 1 s spike never flattens a
2 ms spread), the drawn range, and which axis labels are written (never two overprinted). The
widget and these charts apply the same constants to the same step series;
tests/views/test_step_scale.py and src/__tests__/stepscale.spec.ts check both against
tests/data/expected/step_scale.json.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .. import units

#: a step is clipped when it lies this many interquartile ranges above the third quartile...
OUTLIER_IQR = 3.0
#: ...and at least this many times the series' median (so ordinary jitter is never clipped)
OUTLIER_MEDIAN = 1.5
#: fewest steps a series needs before any is called an outlier
OUTLIER_MIN_N = 4
#: a scale spans at least this share of its median step, so jitter never looks like a spike
MIN_SPAN_OF_MEDIAN = 0.2


@dataclass(frozen=True)
class StepScale:
    """A series' scale: `frac` maps a step time to 0 (low end) .. 1 (high end)."""

    lo: float
    hi: float
    #: steps above this are drawn clipped at the high end (None: none is)
    cap: float | None

    def frac(self, v: float) -> float:
        """Where `v` sits on the scale, clamped to 0..1."""
        return min(1.0, max(0.0, (v - self.lo) / (self.hi - self.lo)))

    def clipped(self, v: float) -> bool:
        """Whether step time `v` lies above the scale (drawn clipped, its value written)."""
        return self.cap is not None and v > self.cap


def quantile(ordered: Sequence[float], q: float) -> float:
    """The `q` quantile (0..1) of ascending `ordered`, linearly interpolated."""
    at = (len(ordered) - 1) * q
    i = math.floor(at)
    j = min(i + 1, len(ordered) - 1)
    return ordered[i] + (ordered[j] - ordered[i]) * (at - i)


def outlier_cap(values: Sequence[float]) -> float | None:
    """The value above which a series' steps are clipped as outliers, or None when none is."""
    if len(values) < OUTLIER_MIN_N:
        return None
    ordered = sorted(values)
    q1, q3 = quantile(ordered, 0.25), quantile(ordered, 0.75)
    fence = max(q3 + OUTLIER_IQR * (q3 - q1), OUTLIER_MEDIAN * quantile(ordered, 0.5))
    return fence if ordered[-1] > fence else None


def step_scale(values: Sequence[float]) -> StepScale:
    """A series' linear scale, outliers clipped, at least MIN_SPAN_OF_MEDIAN of its median wide."""
    cap = outlier_cap(values)
    shown = sorted(v for v in values if cap is None or v <= cap)
    lo_v, hi_v = shown[0], shown[-1]
    # a spread far smaller than the step is drawn small, not stretched across the chart
    span = max(hi_v - lo_v, MIN_SPAN_OF_MEDIAN * quantile(shown, 0.5), 1e-3)
    lo = max(0.0, (lo_v + hi_v) / 2 - 0.6 * span)
    return StepScale(lo=lo, hi=lo + 1.2 * span, cap=cap)


def axis_labels(scale: StepScale, values: Sequence[float], length_px: float,
                room_px: Callable[[str, str], float]) -> list[tuple[float, str]]:
    """The (value, text) labels of a series drawn `length_px` long: its highest and lowest
    step on the scale, the lowest dropped when it reads the same or sits closer than
    `room_px(top_text, bottom_text)` to the highest (it would overprint)."""
    shown = [v for v in values if not scale.clipped(v)]
    if not shown:
        return []
    top, bottom = max(shown), min(shown)
    out = [(top, units.ms(top))]
    apart = (scale.frac(top) - scale.frac(bottom)) * length_px
    if units.ms(bottom) != units.ms(top) and apart >= room_px(units.ms(top), units.ms(bottom)):
        out.append((bottom, units.ms(bottom)))
    return out
