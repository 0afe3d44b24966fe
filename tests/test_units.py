"""One way to write a duration and a size, the widget's included (`jupyter_gpuprof/units.py`).

`tests/data/expected/units.json` is a table of values and how they read; this test holds the
Python spec to it, and `src/__tests__/units.spec.ts` holds the widget's `ms`/`gb` to it, so the
two languages cannot drift. Regenerate with `PYTHONPATH=tests python tests/test_units.py` after
changing the spec.
"""

from __future__ import annotations

import json
import re
import sys

from paths import ROOT

from jupyter_gpuprof import units
from jupyter_gpuprof.views import palette

TABLE = ROOT / "tests" / "data" / "expected" / "units.json"
MS_VALUES = [0.0, 0.0003, 0.004, 0.0123, 0.05, 0.0999, 0.1, 0.25, 0.963, 11.934, 118.7,
             1079.7, 12345.678, -0.05, -3.5, 0.125, 1.005, 2.675, 9.995]
BYTE_VALUES = [0, 2.48e9, 150e9, 123456789, 2.675e9]
#: half-way shares: both languages round them away from zero on the shortest decimal form
PCT_VALUES = [[14.5, 0], [12.5, 0], [-2.5, 0], [8.75, 1], [41.25, 1], [99.95, 1], [0.0, 0]]
#: counts per step: 1.8 calls a step never reads "1"; a whole count keeps no decimal
COUNT_VALUES = [0.0, 1.0, 1.8, 1.95, 0.2, 2.25, 588.0, 2940.0, 0.04]


def table() -> dict:
    """The values and their text under the current spec."""
    return {"ms": [[v, units.ms(v)] for v in MS_VALUES],
            "gb": [[v, units.gb(v)] for v in BYTE_VALUES],
            "pct": [[v, d, units.pct(v, d)] for v, d in PCT_VALUES],
            "count": [[v, units.count(v)] for v in COUNT_VALUES]}


def test_the_committed_table_is_the_spec():
    assert json.loads(TABLE.read_text()) == table()


def test_the_spec_reads_as_intended():
    said = dict(map(tuple, table()["ms"]))
    assert said[0.05] == "50 µs" and said[0.004] == "4 µs" and said[0.0123] == "12.3 µs"
    assert said[0.1] == "0.10 ms" and said[1079.7] == "1,079.70 ms" and said[0.0] == "0.00 ms"
    assert units.ms(None) == units.ms(float("nan")) == units.MISSING
    assert said[0.125] == "0.13 ms" and said[1.005] == "1.01 ms"  # half away from zero
    assert units.pct(14.5) == "15%" and units.pct(-2.5) == "-3%"
    counts = dict(map(tuple, table()["count"]))
    assert counts[1.8] == "1.8" and counts[1.0] == "1" and counts[2940.0] == "2,940"
    assert counts[1.95] == "2" and counts[0.04] == "0"


def test_the_widget_gets_the_spec_generated():
    assert (ROOT / palette.UNITS_TS_FILE).read_text() == palette.units_typescript()


def test_no_view_formats_a_duration_itself():
    """Durations go through units.ms: a view that writes `:.2f} ms` has its own rule again."""
    own = re.compile(r"(?<!%)\{[^{}]*:,?\.\d+f\} ?(ms|µs)")
    for path in (ROOT / "jupyter_gpuprof" / "views").glob("*.py"):
        assert not own.search(path.read_text()), path


if __name__ == "__main__":
    TABLE.write_text(json.dumps(table(), indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {TABLE}", file=sys.stderr)
