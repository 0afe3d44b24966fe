"""How every surface writes a duration, a size and a share: one spec, the widget's included.

A figure reads the same in the text report, the static copy, the HTML export, the advice's
sentences and the widget: `src/generated/units.ts` is written from the constants below by
`python -m jupyter_gpuprof.views.palette`, the widget's `ms()` follows them, and
`tests/data/expected/units.json` (a table of values and their text) holds both languages to it.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

#: durations shorter than this (ms) are written in µs: a 4 µs step is not "0.00 ms"
US_BELOW_MS = 0.1
#: significant digits of a µs duration ("50 µs", "4 µs", "12.3 µs")
US_DIGITS = 3
#: decimals of a ms duration ("0.25 ms", "11.93 ms", "1,079.70 ms")
MS_DECIMALS = 2
#: decimals of a size in GB ("2.48 GB") and of a share in % ("41.6 %" is written "42%")
GB_DECIMALS = 2
#: what a figure the analysis left undefined reads
MISSING = "n/a"


def rounded(value: float, digits: int) -> float:
    """`value` rounded half away from zero at `digits` decimals, on its shortest decimal form
    (14.5 -> 15, 1.005 -> 1.01): the rounding the widget's `rounded` does too, where Python's
    own formatting rounds half to even and JavaScript's `toFixed` works on the binary value."""
    q = Decimal(repr(float(value))).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return float(q)


def ms(value: float | None) -> str:
    """A duration in ms as every surface writes it."""
    if value is None or not math.isfinite(value):
        return MISSING
    us = round(value * 1e3, 3)  # to the ns: float noise never decides the unit
    if 0 < abs(us) < US_BELOW_MS * 1e3:
        return f"{float(f'{us:.{US_DIGITS}g}'):g} µs"
    return f"{rounded(value, MS_DECIMALS):,.{MS_DECIMALS}f} ms"


def us(value: float | None) -> str:
    """A duration given in µs, written like `ms`."""
    return ms(None if value is None else value / 1e3)


def pct(value: float | None, digits: int = 0) -> str:
    """A share in % ("42%", "8.8%"): no space before the sign, as the advice writes it."""
    if value is None or not math.isfinite(value):
        return MISSING
    return f"{rounded(value, digits):.{digits}f}%"


def count(value: float | None) -> str:
    """A count per step ("1.8", "2", "2,940"): one decimal unless it is whole there, so 1.8
    calls a step never reads "1" and 2.0 reads "2"."""
    if value is None or not math.isfinite(value):
        return MISSING
    r = rounded(value, 1)
    return f"{r:,.0f}" if r == int(r) else f"{r:,.1f}"


def signed_pct(value: float | None, digits: int = 1) -> str:
    """A change in % with its sign ("+46.7%", "-3.0%")."""
    if value is None or not math.isfinite(value):
        return MISSING
    return f"{rounded(value, digits):+.{digits}f}%"


def num(value: float | None, digits: int = 0) -> str:
    """A plain figure (a clock in MHz, a temperature) rounded like every other."""
    if value is None or not math.isfinite(value):
        return MISSING
    return f"{rounded(value, digits):.{digits}f}"


def gb(n_bytes: float | None) -> str:
    """A size in bytes as decimal GB."""
    if n_bytes is None or not math.isfinite(n_bytes):
        return MISSING
    return f"{rounded(n_bytes / 1e9, GB_DECIMALS):.{GB_DECIMALS}f} GB"
