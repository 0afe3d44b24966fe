"""The summary's cost blocks as typed schema: what the step is worth, one-time costs, tries.

Kept beside `model.py` (which imports these) so each module stays small; the same rules apply:
fields encode in declaration order and non-finite floats encode as null.
"""

from __future__ import annotations

from typing import Any

import msgspec


class Worth(msgspec.Struct):
    """GPU-hours (and money, when a GPU-hour price is set) of 1,000 steps of some duration."""

    gpu_hours_per_1k_steps: float | None
    money_per_1k_steps: float | None


class Saving(Worth):
    """What one finding's predicted fix saves per 1,000 steps (`advice.cost`)."""

    id: str | None = None
    category: str | None = None


class Cost(msgspec.Struct):
    """`cost`: the step and its idle share in GPU-hours per 1,000 steps, and each saving."""

    price_per_gpu_hour: float | None
    n_gpus: int
    step: Worth
    idle: Worth
    savings: list[Saving]
    headline: str | None = None  # what the idle share costs, in one sentence


class OneTimeCost(msgspec.Struct):
    """A one-time cost in the trace (analysis/one_time.py): named, kept out of the step."""

    kind: str
    name: str
    ts_us: float
    dur_us: float


#: GPU conditions sampled through NVML (clocks, power, temperature, throttling, processes);
#: optional hardware data whose keys depend on the driver, kept as a JSON object
Conditions = dict[str, Any]
#: one fix tried and measured by `--try` (tries/notebook.py), as recorded in the run meta
TryResult = dict[str, Any]
