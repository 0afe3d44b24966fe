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
    saw_epoch: bool = False  # a new epoch started during the steps looked at
    #: 0: the baseline's steps; else the steps after the capture were looked at, this many
    #: (`whole_run_spikes`): the run to the script's end, on the host clock
    after_steps: int = 0

    @property
    def _seen(self) -> str:
        """Which steps these are, for the sentences."""
        if self.after_steps:
            return (f"the {self.after_steps} steps after the capture (to the script's end: "
                    f"{self.mean_ms:.2f} ms a step on average, measured)")
        return f"the baseline's {self.n_steps} steps"

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
        """One sentence on the stalls' share of the wall time, cause by cause, the costliest
        first; for the steps after the capture, also that they held none (None: the
        baseline's, without stalls)."""
        if not self.stalls or self.excess_ms_per_step <= 0:
            return f"no stall in {self._seen}" if self.after_steps else None
        by_cause: dict[str, list[float]] = {}  # what ran, and every: count, ms per step
        for st, w in zip(self.stalls, self._weights(), strict=True):
            what = CAUSES.get(st.cause or "", "a stall nothing recorded explains")
            key = what + (f", every {st.period_steps} steps" if st.period_steps else "")
            seen = by_cause.setdefault(key, [0.0, 0.0])
            seen[0] += 1
            seen[1] += st.excess_ms * w
        named = "; ".join(f"{int(n)}× {key}: {ms:.2f} ms a step" for key, (n, ms) in sorted(
            by_cause.items(), key=lambda kv: -kv[1][1]))
        where = "of the baseline" if not self.after_steps else f"in {self._seen}"
        return (f"{len(self.stalls)} stall(s) {where} hold {self.share_pct:.0f}% of the "
                f"wall time: a step costs {self.wall_ms:.2f} ms over the long run against a "
                f"{self.median_ms:.2f} ms median ({named})")

    def unseen_epoch_note(self) -> str | None:
        """Said when the steps looked at were too short to contain an epoch start."""
        if self.saw_epoch or not self.epoch_steps or self.epoch_steps <= self.n_steps:
            return None
        return (f"{self._seen} saw no epoch start (an epoch is {self.epoch_steps} steps): "
                f"what an epoch boundary costs is not in these figures")


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
    return int(round(float(np.median(gaps)))) if len(gaps) else None


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
    found = _stalls(ms, median, events, epoch_steps)
    saw = any(e["what"].startswith("loader") and 0 <= int(e["step"]) < len(ms) for e in events)
    return Spikes(median, float(ms.mean()), len(ms), found, epoch_steps, saw)


def _stalls(ms: np.ndarray, steady: float, events: list[StallMeta], epoch_steps: int | None,
            b: int = 1, ahead: np.ndarray | None = None) -> list[Stall]:
    """The stalls of step times `ms` (or the means of blocks of `b` steps) over the `steady`
    step, each split by what ran in it (`events`, by step). `ahead`: what each step (block)
    left queued on the host clock (`whole_run_spikes`): a spike pays it first, and what is
    left must be a spike's worth."""
    blocks = events if b == 1 else [cast(StallMeta, {**e, "step": e["step"] // b})
                                    for e in events]
    least = _threshold(steady, 1) - steady
    found, since, owed = [], 0, 0.0
    for lo, hi in _split_at_epoch_starts(_clusters(ms, _threshold(steady, b)), blocks):
        excess = float((ms[lo:hi + 1] - steady).sum() * b)
        if ahead is not None:
            owed += float(ahead[since:lo].sum())
            excess -= owed
            owed, since = max(0.0, -excess), hi + 1
            if excess < least:
                continue  # the work queued while the steps before it ran ahead: no stall
        parts, event = _parts(blocks, lo, hi, excess)
        if set(parts) == {""} and _ends_first_partial_epoch(blocks, hi):
            parts = {"partial-batch": parts[""]}
        if event is not None and b > 1:  # its period in steps, from the events' own steps
            event = next((e for e in events if e["what"] == event["what"]
                          and e["step"] // b == event["step"]), event)
        found.append(Stall(lo * b, hi * b + b - 1, excess, parts,
                           _period(event, events, epoch_steps) if event else None))
    return found


#: a step on the host clock this much shorter than the steady step ran ahead of the GPU: the
#: work it left queued is paid by a later step (the one that reads a result back)
AHEAD = 0.75


def _threshold(steady: float, b: int) -> float:
    """A step (or a block of `b` steps' mean) above this holds a spike: max(2 × the steady
    step, + 1 ms) in one step, that excess spread over a block's b steps."""
    least = max(SPIKE_FACTOR * steady, steady + SPIKE_MIN_MS) - steady
    return steady + least / b


def _steady(ms: np.ndarray, median: float, b: int) -> float:
    """The run's steady step: the mean of its steps (or blocks) below a spike over their
    median. Not the median itself: a host that reads back every k steps, kept in blocks of b,
    alternates short blocks (queued only) and long ones (the wait), and only their mean is
    the step (2 and 12 ms blocks of a 10 ms step have a 12 ms median)."""
    calm = ms[ms <= _threshold(median, b)]
    return float(calm.mean()) if len(calm) else median


def whole_run_spikes(after: Mapping[str, object], median_ms: float | None,
                     stalls: Sequence[Mapping[str, object]] | None = None,
                     epoch_steps: int | None = None) -> Spikes | None:
    """The stalls of the steps after the capture (meta.json's `baseline.after`), to the
    script's end: an evaluation every 500 steps or a checkpoint every 1,000 is in them where
    no baseline of a few dozen steps reaches. None without enough of them.

    They are timed on the host clock, where a step that only queued GPU work ends early and
    the step that reads a result back waits for the work queued before it. So the steady step
    is the run's own (`_steady`) unless that ran ahead of the GPU (below `AHEAD` times the
    baseline's `median_ms`, timed on the GPU's clock), a spike pays first what the steps
    since the previous one left queued (each one's time below the steady step, where it ran
    ahead), and what is left must be a spike's worth: a read-back every ten steps is no
    stall, an evaluation is. A long run's steps come
    in blocks of `block_steps` (their mean each, capture/after_capture.py): a block is a spike
    when it holds more than a spike's excess over the steady step."""
    raw, first = after.get("step_ms"), after.get("first_step")
    b = after.get("block_steps", 1)
    if not isinstance(raw, list) or not isinstance(first, int) or not isinstance(b, int) or b < 1:
        return None
    ms = np.asarray([float(x) for x in raw if isinstance(x, (int, float))], float)
    ms = ms[np.isfinite(ms)]
    if len(ms) < 3:
        return None
    own = _steady(ms, float(np.median(ms)), b)
    steady = (median_ms if median_ms and median_ms > 0 and own < AHEAD * median_ms else own)
    events: list[StallMeta] = []  # by step after the capture
    for e in stalls or []:
        if isinstance(e, dict) and "what" in e and isinstance(e.get("step"), int):
            events.append(cast(StallMeta, {**e, "step": int(e["step"]) - first}))
    ahead = np.where(ms < AHEAD * steady, steady - ms, 0.0) * b
    found = _stalls(ms, steady, events, epoch_steps, b, ahead)
    wall, timed = after.get("wall_ms"), after.get("steps")
    mean = (float(wall) / timed if isinstance(wall, (int, float)) and isinstance(timed, int)
            and timed > 0 else float(ms.mean()))
    saw = any(e["what"].startswith("loader") and 0 <= int(e["step"]) < len(ms) * b
              for e in events)
    # the long-run step is the report's median plus the stalls' share: the baseline's median
    # where there is one (the host clock's steady step only finds the stalls)
    return Spikes(median_ms if median_ms and median_ms > 0 else steady, mean, len(ms) * b,
                  found, epoch_steps, saw,
                  after_steps=timed if isinstance(timed, int) and timed > 0 else len(ms) * b)


def run_spikes(baseline_ms: list[float], stalls: Sequence[Mapping[str, object]] | None = None,
               epoch_steps: int | None = None,
               after: Mapping[str, object] | None = None) -> Spikes | None:
    """The stalls the report prices: those of the steps after the capture where they
    outnumber the baseline's (the longer look at the same run), else the baseline's."""
    base = find_spikes(baseline_ms, stalls, epoch_steps)
    if after is None:
        return base
    whole = whole_run_spikes(after, base.median_ms if base else None, stalls, epoch_steps)
    if whole is None or (base is not None and whole.n_steps <= base.n_steps):
        return base
    return whole
