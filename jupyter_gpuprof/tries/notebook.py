"""`--try`: apply fixes that need no code change in the live kernel and measure each step.

Each try starts from the same state as the baseline ended in and leaves nothing behind:
module parameters and buffers, gradients, optimizer state, RNG states, the backend flags it
flips and the names it rebinds in the namespace are copied before and restored after, also
when the try raises (the error is reported, not raised). Steps are timed exactly like the
baseline (`driver.default_clock`, warm-up excluded). Before the fixes, the control (the cell's
step again, no fix, from the same state) is measured the same way, and each try is compared
with it by the same statistics as `compare` (median change, 95 % interval, Mann-Whitney), as a
script's tries are with the command re-run: the baseline ran under the capture, earlier.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import random
import statistics
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, NotRequired, TypedDict, cast

from ..advice.fix_table import FIX_NAMES, stack_parts, tries_measuring
from ..advice.tries import CONTROL
from ..capture import options
from ..capture.conditions import BASELINE_INTERVAL_S, ConditionSampler
from ..capture.driver import default_clock
from ..oneline import first_line
from ..store.meta_blocks import TryMeta
from . import appliers
from .namespace import modules, optimizers, to_host, torch_module
from .records import add_headline

if TYPE_CHECKING:
    import torch
    from torch.optim.optimizer import StateDict

#: steps whose loss is compared with the original's, from the same starting state
LOSS_STEPS = 3
#: interleaved rounds of the control and the tries: a fix that wins all 8 has a sign-test p
#: of 2/256, under `analysis.compare.ROUNDS_ALPHA`; fewer than 8 steps can never be judged
ROUNDS = 8
LOSS_NAMES = ("loss", "l", "train_loss")


def parse_fixes(text: str | None, findings: Sequence[Mapping[str, object]]) -> list[str]:
    """The tries asked for: a comma list of FIX_NAMES, or 'auto' (each finding's own tries, as
    the report shows them, else its category's)."""
    if text in (None, "", "auto"):
        out: list[str] = []
        for f in findings:  # a finding as the summary's JSON holds it
            own = tries_measuring(f.get("category"), f.get("try_fixes"))
            out += [t for t in own if t not in out]
        return out
    names = [n.strip() for n in str(text).split(",") if n.strip()]
    # "loader+graphs": one try with both on (a stack), each part a fix of the table
    bad = [p for n in names for p in stack_parts(n) if p not in FIX_NAMES]
    if bad:
        raise ValueError(f"--try: unknown fix {', '.join(bad)}; choose from {', '.join(FIX_NAMES)}")
    return names


class RngStates(TypedDict):
    """The random generators' states a try's steps advance (numpy's and CUDA's when in use)."""

    torch: torch.Tensor
    python: tuple[Any, ...]  # random.getstate(): opaque, handed back to random.setstate
    numpy: NotRequired[Any]  # numpy's own state object, handed back to it as it was
    cuda: NotRequired[list[torch.Tensor]]


class BackendFlags(TypedDict):
    """The backend flags a try may flip (tf32)."""

    matmul_tf32: bool
    cudnn_tf32: bool


#: a module's copy: the module, its state dict and its parameters' gradients, in host memory
ModuleCopy = tuple["torch.nn.Module", "dict[str, torch.Tensor]", "list[torch.Tensor | None]"]


@dataclass
class KernelState:
    """Copies of what a try may change, and `restore()` to put every one of them back."""

    ns: dict[str, object]  # the IPython user namespace: the user's names, any values
    rng: RngStates
    flags: BackendFlags
    bindings: dict[str, object] = field(default_factory=dict)
    modules: dict[int, ModuleCopy] = field(default_factory=dict)
    optimizers: dict[int, tuple[torch.optim.Optimizer, StateDict]] = field(default_factory=dict)

    @classmethod
    def capture(cls, ns: dict[str, object]) -> KernelState:
        """Copy the namespace's modules, optimizers, RNG states and backend flags now."""
        torch = torch_module()
        bindings = dict(ns)
        module_copies: dict[int, ModuleCopy] = {}
        for m in modules(ns).values():
            params = list(m.parameters())
            module_copies[id(m)] = (m, to_host(m.state_dict()),
                                    [None if p.grad is None else to_host(p.grad) for p in params])
        optimizer_copies = {id(o): (o, to_host(o.state_dict())) for o in optimizers(ns).values()}
        rng: RngStates = {"torch": torch.get_rng_state(), "python": random.getstate()}
        with contextlib.suppress(ImportError):
            import numpy as np

            rng["numpy"] = np.random.get_state()
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            rng["cuda"] = torch.cuda.get_rng_state_all()
        flags: BackendFlags = {"matmul_tf32": torch.backends.cuda.matmul.allow_tf32,
                               "cudnn_tf32": torch.backends.cudnn.allow_tf32}
        return cls(ns, rng, flags, bindings, module_copies, optimizer_copies)

    def restore(self) -> None:
        """Put back every copied value: names the try rebound, backend flags, then the values."""
        torch = torch_module()
        self.ns.update({k: v for k, v in self.bindings.items() if self.ns.get(k) is not v})
        torch.backends.cuda.matmul.allow_tf32 = self.flags["matmul_tf32"]
        torch.backends.cudnn.allow_tf32 = self.flags["cudnn_tf32"]
        self.restore_values()

    def restore_values(self) -> None:
        """Put back parameters, buffers, gradients, optimizer state and RNG states (in place)."""
        torch = torch_module()
        for m, state, grads in self.modules.values():
            m.load_state_dict(state)
            for p, g in zip(m.parameters(), grads, strict=False):
                p.grad = None if g is None else g.to(p.device, copy=True)
        for o, state in self.optimizers.values():
            o.load_state_dict(copy.deepcopy(state))
        torch.set_rng_state(self.rng["torch"])
        random.setstate(self.rng["python"])
        if "numpy" in self.rng:
            import numpy as np

            np.random.set_state(self.rng["numpy"])
        if "cuda" in self.rng:
            torch.cuda.set_rng_state_all(self.rng["cuda"])


@contextlib.contextmanager
def applied(fix: str, ns: dict[str, object], step: Callable[[], object],
            cuda: bool) -> Iterator[Callable[[], object]]:
    """The step with `fix` applied by its applier (namespace and flags are put back by
    `KernelState`); a stack's fixes ("loader+graphs") each on the step the one before gave."""
    with contextlib.ExitStack() as on:
        fixed = step
        for part in stack_parts(fix):
            fixed = on.enter_context(appliers.load(part).notebook(ns, fixed, cuda))
        yield fixed


#: how a fix is applied to the step: `applied`, or a benchmark's own (an A/A's no-op fix)
Applier = Callable[[str, dict[str, object], Callable[[], object], bool],
                   AbstractContextManager[Callable[[], object]]]


@contextlib.contextmanager
def _unchanged(fix: str, ns: dict[str, object], step: Callable[[], object],
               cuda: bool) -> Iterator[Callable[[], object]]:
    """The control's "fix": the step as it is."""
    yield step


class Measured(NamedTuple):
    """The control (the step again, no fix; None when not asked for) and each fix's try."""

    control: TryMeta | None
    tries: list[TryMeta]


def _loss(ns: Mapping[str, object]) -> float | None:
    """The step's scalar loss, read from the namespace after it ran (None if not found)."""
    for k in LOSS_NAMES:
        v = ns.get(k)
        if v is not None and hasattr(v, "detach") and getattr(v, "numel", lambda: 0)() == 1:
            return float(v.detach().float().cpu())
    return None


def _losses(step: Callable[[], object], ns: Mapping[str, object], n: int) -> list[float]:
    """Losses of n steps (a read-back each: these steps are never timed)."""
    out = []
    for _ in range(n):
        step()
        if (v := _loss(ns)) is not None:
            out.append(v)
    return out


def loss_rel_diff(original: list[float], fixed: list[float]) -> float | None:
    """Mean relative difference of the fixed run's first losses from the original's."""
    pairs = [(a, b) for a, b in zip(original, fixed, strict=False) if a]
    if not pairs:
        return None
    return sum(abs(b - a) / abs(a) for a, b in pairs) / len(pairs)


def timed_steps(step: Callable[[], object], warmup: int, steps: int) -> tuple[list[float], str]:
    """Step times measured like the baseline: warm-up untimed, a clock mark at each boundary."""
    for _ in range(warmup):
        step()
    clock = default_clock(steps + 1)
    clock.mark()
    for _ in range(steps):
        step()
        clock.mark()
    return clock.durations_ms(), clock.timing


def _peak_memory_reset(cuda: bool) -> None:
    """Start counting peak GPU memory for the timed steps."""
    if cuda:
        torch_module().cuda.reset_peak_memory_stats()


def _peak_memory(cuda: bool) -> int | None:
    """Peak GPU memory since the reset (None on CPU)."""
    return int(torch_module().cuda.max_memory_allocated()) if cuda else None


def round_sizes(steps: int, rounds: int = ROUNDS) -> list[int]:
    """The timed steps of each round: `steps` split as evenly as possible, one at least."""
    n = max(1, min(rounds, steps))
    return [steps // n + (1 if i < steps % n else 0) for i in range(n)]


def run_tries(step: Callable[[], object], ns: dict[str, object], fixes: list[str],
              warmup: int = options.WARMUP, steps: int = options.STEPS,
              sampler: Callable[[], ConditionSampler] | None = None,
              control: bool = True, apply: Applier = applied,
              progress: Callable[[str], None] | None = None) -> Measured:
    """The control (with `control`) and each fix applied to the live step, measured alike from
    the same state in interleaved rounds (control, fix 1, fix 2, control, ...: a host that
    changes speed between blocks moves every side alike); raw results (judged by
    advice.tries). `progress` hears what runs next, and may raise to stop the tries there
    (the kernel's state is put back all the same)."""
    torch = torch_module()
    cuda = torch.cuda.is_available() and torch.cuda.is_initialized()
    if sampler is None:  # sampled like the run's baseline: the try's steps are timed alike
        sampler = functools.partial(ConditionSampler, interval_s=BASELINE_INTERVAL_S)
    state = KernelState.capture(ns)
    names = [CONTROL, *fixes] if control else list(fixes)
    blocks: list[list[TryMeta]] = [[] for _ in names]
    try:
        original = _losses(step, ns, LOSS_STEPS)
        state.restore()
        rounds = round_sizes(steps)
        for r, size in enumerate(rounds):
            # the first round warms each fix up; later ones start with its loss steps
            how = (warmup if r == 0 else LOSS_STEPS, size, cuda)
            for name, done in zip(names, blocks, strict=True):
                if done and done[0].get("error"):
                    continue  # a failed fix is not tried again
                if progress is not None:
                    progress(f"round {r + 1}/{len(rounds)}: {name}")
                fix_applier = _unchanged if control and name == CONTROL else apply
                done.append(_one_try(name, fix_applier, step, ns, state, original, how,
                                     sampler))
    finally:
        state.restore()
    merged = [_merged(done) for done in blocks]
    return Measured(merged[0], merged[1:]) if control else Measured(None, merged)


def _merged(rounds: list[TryMeta]) -> TryMeta:
    """One fix's rounds as one try: all step times, each round's median, the first round's
    losses and conditions, the highest peak memory; its first error if a round failed."""
    failed = next((r for r in rounds if r.get("error")), None)
    if failed is not None:
        return {"fix": failed["fix"], "error": failed["error"]}
    out = cast(TryMeta, dict(rounds[0]))  # the first round's record, then the whole try's
    out["step_ms"] = [ms for r in rounds for ms in r.get("step_ms") or []]
    out["round_ms"] = [statistics.median(r["step_ms"]) for r in rounds if r.get("step_ms")]
    peaks = [p for r in rounds if (p := r.get("peak_memory_bytes")) is not None]
    out["peak_memory_bytes"] = max(peaks) if peaks else None
    add_headline(out, out["step_ms"])
    return out


def _one_try(fix: str, apply: Applier, step: Callable[[], object], ns: dict[str, object],
             state: KernelState, original: list[float], how: tuple[int, int, bool],
             sampler: Callable[[], ConditionSampler]) -> TryMeta:
    """One fix applied and measured from the saved state, which is put back after it."""
    warmup, steps, cuda = how
    out: TryMeta = {"fix": fix}
    try:
        with apply(fix, ns, step, cuda) as fixed:
            state.restore_values()  # a probing step may have run: start where all do
            _measure(fixed, ns, original, warmup, steps, cuda, sampler, out)
    except Exception as e:  # noqa: BLE001 - a failed try is a result, not a crash
        first = (first_line(str(e)) or "")[:300]
        out["error"] = f"{type(e).__name__}: {first}"
    finally:
        state.restore()
    return out


def _measure(fixed: Callable[[], object], ns: Mapping[str, object], original: list[float],
             warmup: int, steps: int, cuda: bool, sampler: Callable[[], ConditionSampler],
             out: TryMeta) -> None:
    """Loss of the first steps against the original's, then warm-up and timed steps (into
    `out`, once all are measured)."""
    losses = _losses(fixed, ns, LOSS_STEPS)
    for _ in range(max(0, warmup - LOSS_STEPS)):
        fixed()
    _peak_memory_reset(cuda)  # the peak of the timed steps alone, as the script's tries'
    conditions = sampler().start() if cuda else None
    try:
        step_ms, timing = timed_steps(fixed, 0, steps)
    finally:
        cond = conditions.stop() if conditions is not None else None
    rel = loss_rel_diff(original, losses)
    peak = _peak_memory(cuda)
    out["step_ms"], out["timing"] = step_ms, timing
    add_headline(out, step_ms)
    out.update({"peak_memory_bytes": peak, "loss_original": original, "loss_fixed": losses,
                "loss_rel_diff": rel, "conditions": cond})
