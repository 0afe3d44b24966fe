"""Spikes: the few long steps that hold much of the wall time, and what ran in them.

The median says how fast a step can be; the user pays the mean. A loop whose DataLoader starts
its workers again at every epoch, or that saves a checkpoint every N steps, has a fast median
and a slow mean. This finds the baseline's spikes (steps far above the median), groups the
adjacent ones into stalls, names what ran in each from the capture's events
(capture/stalls.py) and prices them over the long run: a stall that recurs every epoch costs
its excess once per epoch, however many epochs the baseline happened to see.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from ..store.meta_blocks import StallMeta

#: a step this many times the median, and `SPIKE_MIN_MS` above it, is a spike
SPIKE_FACTOR = 2.0
SPIKE_MIN_MS = 1.0
#: what each recorded event is, for the words of a stall's cause
CAUSES = {"loader-start": "DataLoader workers started (a new epoch)",
          "loader-iter": "a new DataLoader epoch", "save": "torch.save (a checkpoint)",
          "gc": "a full garbage-collector pass", "eval": "an evaluation pass (model.eval())",
          "partial-batch": "the first epoch's last, partial batch (its new shapes autotuned or "
                           "compiled once; drop_last=True avoids them)"}
#: the fix category each cause belongs to (eval, a partial batch's one-time autotuning and
#: unexplained spikes have none; "": what nothing recorded explains)
CATEGORY_OF = {"loader-start": "input", "loader-iter": "input", "save": "host", "gc": "host",
               "partial-batch": "", "": ""}


@dataclass(frozen=True)
class Stall:
    """Adjacent spike steps of the baseline and what ran in them."""

    first: int  # baseline step index
    last: int
    excess_ms: float  # time above the median, summed over the stall's steps
    #: the excess split by cause (a key of CAUSES; "" for what nothing recorded explains):
    #: a save, a GC pass or an eval counts its own measured time, a new epoch the rest (its
    #: workers' first batch is waited for in the steps after it started them)
    parts: dict[str, float] = field(default_factory=dict)
    period_steps: int | None = None  # steps between two such stalls, where known (an epoch)

    @property
    def cause(self) -> str | None:
        """The part that holds most of the excess (None when nothing recorded explains it)."""
        if not self.parts:
            return None
        top = max(self.parts, key=lambda k: self.parts[k])
        return top or None

    def per_step(self, n_steps: int) -> float:
        """Its share per step over the long run: once per period where it recurs, else as
        often as the baseline saw it."""
        return 1.0 / self.period_steps if self.period_steps else 1.0 / max(n_steps, 1)


@dataclass(frozen=True)
class Spikes:
    """The baseline's stalls, their share of the wall time, and what the baseline could see."""

    median_ms: float
    mean_ms: float  # the baseline's own mean, spikes included
    n_steps: int
    stalls: list[Stall] = field(default_factory=list)
    epoch_steps: int | None = None  # batches per epoch of the training loader
    saw_epoch: bool = False  # a new epoch started during the baseline

    def _weights(self) -> list[float]:
        """Each stall's share per step over the long run. A stall that recurs comes once a
        period: a baseline that saw it k times (k starts of an epoch) counts their mean once
        a period, not each of them once a period; the others as often as the baseline saw
        them."""
        seen = Counter((s.cause, s.period_steps) for s in self.stalls if s.period_steps)
        return [s.per_step(self.n_steps) / (seen[(s.cause, s.period_steps)] if s.period_steps
                                            else 1) for s in self.stalls]

    @property
    def excess_ms_per_step(self) -> float:
        """Long-run excess per step over the median: recurring stalls once per period, the
        others as the baseline saw them."""
        return sum(s.excess_ms * w for s, w in zip(self.stalls, self._weights(), strict=True))

    @property
    def wall_ms(self) -> float:
        """What a step costs over the long run: the median plus the stalls' excess per step."""
        return self.median_ms + self.excess_ms_per_step

    @property
    def share_pct(self) -> float:
        """The stalls' share of the long-run wall time."""
        return 100.0 * self.excess_ms_per_step / self.wall_ms if self.wall_ms > 0 else 0.0

    def excess_of(self, category: str) -> float:
        """Long-run excess per step of the stall parts a fix of `category` removes."""
        return sum(ms * w for s, w in zip(self.stalls, self._weights(), strict=True)
                   for cause, ms in s.parts.items() if CATEGORY_OF.get(cause) == category)

    def summary(self) -> str | None:
        """One sentence on the stalls' share of the wall time (None without stalls)."""
        if not self.stalls or self.excess_ms_per_step <= 0:
            return None
        causes = []
        for st in self.stalls:
            what = CAUSES.get(st.cause or "", "nothing recorded ran in them")
            every = f", every {st.period_steps} steps" if st.period_steps else ""
            causes.append(f"{what}{every}")
        named = "; ".join(dict.fromkeys(causes))
        return (f"{len(self.stalls)} stall(s) of the baseline hold {self.share_pct:.0f}% of the "
                f"wall time: a step costs {self.wall_ms:.2f} ms over the long run against a "
                f"{self.median_ms:.2f} ms median ({named})")

    def unseen_epoch_note(self) -> str | None:
        """Said when the baseline was too short to contain an epoch start."""
        if self.saw_epoch or not self.epoch_steps or self.epoch_steps <= self.n_steps:
            return None
        return (f"the baseline's {self.n_steps} steps saw no epoch start (an epoch is "
                f"{self.epoch_steps} steps): what an epoch boundary costs is not in these figures")


def _clusters(ms: np.ndarray, threshold: float) -> list[tuple[int, int]]:
    idx = np.flatnonzero(ms > threshold)
    out: list[tuple[int, int]] = []
    for i in idx.tolist():
        if out and i == out[-1][1] + 1:
            out[-1] = (out[-1][0], i)
        else:
            out.append((i, i))
    return out


def _split_at_epoch_starts(clusters: list[tuple[int, int]],
                           events: list[StallMeta]) -> list[tuple[int, int]]:
    """Clusters cut where a loader starts an epoch inside them: the steps before it ran before
    the epoch began, so whatever held them is not the new epoch's (DCGAN: the first epoch's
    last, partial batch took 437 ms, the step before its workers started again)."""
    starts = sorted({int(e["step"]) for e in events if str(e["what"]).startswith("loader")})
    out = []
    for first, last in clusters:
        for step in (s for s in starts if first < s <= last):
            out.append((first, step - 1))
            first = step
        out.append((first, last))
    return out


def _ends_first_partial_epoch(events: list[StallMeta], last: int) -> bool:
    """Whether step `last` ran the first epoch's last batch, smaller than the others: the next
    step starts a loader's second epoch and the capture saw that loader's partial batch."""
    return any(str(e["what"]).startswith("loader") and int(e["step"]) == last + 1
               and e.get("epoch") == 1 and (e.get("last_batch") or 0) > 0 for e in events)


def _parts(events: list[StallMeta], first: int, last: int,
           excess: float) -> tuple[dict[str, float], StallMeta | None]:
    """The stall's excess split by cause, and the event that names its period."""
    inside = [e for e in events if first - 1 <= int(e.get("step", -10**9)) <= last]
    parts: dict[str, float] = {}
    left = excess
    for e in sorted((e for e in inside if not str(e["what"]).startswith("loader")),
                    key=lambda e: -float(e.get("ms") or 0.0)):
        ms = min(float(e.get("ms") or 0.0), left)
        if ms > 0:
            parts[e["what"]] = parts.get(e["what"], 0.0) + ms
            left -= ms
    loaders = sorted((e for e in inside if str(e["what"]).startswith("loader")),
                     key=lambda e: e["what"] != "loader-start")
    if left > 0:
        key = loaders[0]["what"] if loaders else ""
        parts[key] = parts.get(key, 0.0) + left
    top = max(parts, key=lambda k: parts[k]) if parts else ""
    named = loaders[0] if top.startswith("loader") and loaders else next(
        (e for e in inside if e["what"] == top), None)
    return parts, named


def _period(event: StallMeta, events: list[StallMeta],
            epoch_steps: int | None) -> int | None:
    """Steps between two events like `event`: a loader's epoch, or the spacing they ran at."""
    if event["what"].startswith("loader"):
        batches = event.get("batches") or epoch_steps
        return int(batches) if batches else None
    steps = sorted({int(e["step"]) for e in events if e.get("what") == event["what"]})
    gaps = np.diff(steps)
    return int(np.median(gaps)) if len(gaps) else None


def find_spikes(step_ms: list[float], stalls: Sequence[Mapping[str, object]] | None = None,
                epoch_steps: int | None = None) -> Spikes | None:
    """The baseline's spikes and their causes; None without a baseline of a few steps.

    `stalls`: meta.json's `baseline.stalls` as read; records without `what` and `step` are
    left out, the rest are the capture's `StallMeta`s."""
    ms = np.asarray([float(x) for x in step_ms if x is not None and np.isfinite(x)], float)
    if len(ms) < 3:
        return None
    events = [cast(StallMeta, e) for e in stalls or []
              if isinstance(e, dict) and "what" in e and "step" in e]
    median = float(np.median(ms))
    threshold = max(SPIKE_FACTOR * median, median + SPIKE_MIN_MS)
    found = []
    for first, last in _split_at_epoch_starts(_clusters(ms, threshold), events):
        excess = float((ms[first:last + 1] - median).sum())
        parts, event = _parts(events, first, last, excess)
        if set(parts) == {""} and _ends_first_partial_epoch(events, last):
            parts = {"partial-batch": parts[""]}
        found.append(Stall(first, last, excess, parts,
                           _period(event, events, epoch_steps) if event else None))
    saw = any(e["what"].startswith("loader") and 0 <= int(e["step"]) < len(ms) for e in events)
    return Spikes(median, float(ms.mean()), len(ms), found, epoch_steps, saw)
