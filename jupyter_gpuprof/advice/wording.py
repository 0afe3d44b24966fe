"""How the advice writes a duration, so a microsecond-long trace is not "the 0.0 ms step".

Step and window times read in ms with a fixed number of decimals; a unit-test trace whose
step lasts 0.3 µs would print as 0.0 ms, so durations below a tenth of a millisecond are
written in µs (three significant figures).
"""

from __future__ import annotations


def duration_text(ms: float, digits: int = 1) -> str:
    """`ms` as "12.3 ms" (`digits` decimals), or as "0.3 µs" below 0.1 ms."""
    if ms >= 0.1 or ms == 0 or ms != ms:  # zero and NaN keep the ms wording
        return f"{ms:.{digits}f} ms"
    return f"{ms * 1e3:.3g} µs"
