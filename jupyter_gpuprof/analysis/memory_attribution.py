"""Who holds the memory: each block of a replayed history given a kind, a module and a source line.

Kinds by principle, the first rule that applies:
1. a known address (the capture walked the model's parameters, their gradients and the
   optimizer's state at the end of the recording): that kind, for blocks still live then;
2. allocated in a `forward` range and freed after that range ended (or never): an activation
   saved for backward; allocated in `backward` and outliving it: a gradient; allocated in
   `optimizer` and outliving it: optimizer state;
3. allocated and freed within one phase range (or outside any): a temporary;
4. live since before the recording and at no known address: `before_recording` (model state
   that the capture could not name).
The module is the chain of `forward` frames in the block's stack; the line is the innermost
frame outside torch, installed packages and this package (the user's own line).
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from ..store.memory_snapshot import Frame
from .memory_history import MemoryHistory
from .timeline_detail import PHASES

FORWARD, BACKWARD, OPTIMIZER = PHASES[0], PHASES[1], PHASES[2]
#: the kinds, in the order reports list them
KINDS = (
    "parameters",
    "gradients",
    "optimizer_state",
    "saved_activations",
    "temporaries",
    "before_recording",
)
#: a known-address kind from the capture -> its kind here
KNOWN_KINDS = ("parameters", "gradients", "optimizer_state")
#: a phase's lasting allocations -> their kind (rule 2)
LASTING = {FORWARD: "saved_activations", BACKWARD: "gradients", OPTIMIZER: "optimizer_state"}
#: path parts that mark a frame as a library's, never the user's line
LIBRARY_PARTS = (
    "site-packages",
    "dist-packages",
    "<frozen",
    os.sep + "lib" + os.sep + "python",
    "jupyter_gpuprof" + os.sep,
)

KnownAddresses = dict[str, list[tuple[int, int]]]


def _phase_of(history: MemoryHistory, us: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(phase name or '', end time of that range or -1) of each time."""
    ranges = [p for p in history.phases if p.name in LASTING]
    name = np.full(len(us), "", dtype=object)
    end = np.full(len(us), -1, dtype="int64")
    for p in ranges:
        inside = (us >= p.start_us) & (us <= p.end_us)
        name[inside] = p.name
        end[inside] = p.end_us
    return name, end


def _known_kind(blocks: pd.DataFrame, n_events: int, known: KnownAddresses | None) -> np.ndarray:
    """Kind by a known address inside the block, for blocks live at the end ('' otherwise)."""
    out = np.full(len(blocks), "", dtype=object)
    if not known:
        return out
    live = (blocks["free_i"] >= n_events).to_numpy()
    order = np.argsort(blocks["addr"].to_numpy())
    starts = blocks["addr"].to_numpy()[order]
    ends = starts + blocks["bytes"].to_numpy()[order]
    for kind in KNOWN_KINDS:
        ptrs = np.array([p for p, _ in known.get(kind, [])], dtype="int64")
        if not len(ptrs):
            continue
        k = np.searchsorted(starts, ptrs, side="right") - 1
        ok = (k >= 0) & (ptrs < ends[k.clip(0)])
        hit = order[k[ok]]
        hit = hit[live[hit] & (out[hit] == "")]
        out[hit] = kind
    return out


def classify(history: MemoryHistory, known: KnownAddresses | None = None) -> pd.Series:
    """The kind (one of KINDS) of every block of the history, by the module docstring's rules."""
    b = history.blocks
    kind = _known_kind(b, history.n_events, known)
    phase, phase_end = _phase_of(history, b["alloc_us"].to_numpy())
    outlives = (b["free_us"].to_numpy() > phase_end) | (b["free_i"].to_numpy() >= history.n_events)
    before = (b["alloc_i"] < 0).to_numpy()
    for name, lasting in LASTING.items():
        kind[(kind == "") & ~before & (phase == name) & outlives] = lasting
    kind[(kind == "") & before] = "before_recording"
    kind[kind == ""] = "temporaries"
    return pd.Series(kind, index=b.index, name="kind")


def kind_series(history: MemoryHistory, kinds: pd.Series) -> dict[str, np.ndarray]:
    """Each kind's allocated bytes after each event (one cumulative sum per kind)."""
    b, n = history.blocks, history.n_events
    out: dict[str, np.ndarray] = {}
    for kind in KINDS:
        mine = b[kinds == kind]
        delta = np.zeros(n + 1, dtype="int64")
        np.add.at(delta, (mine["alloc_i"] + 1).to_numpy(), mine["bytes"].to_numpy())
        np.add.at(delta, (mine["free_i"] + 1).to_numpy().clip(0, n), -mine["bytes"].to_numpy())
        out[kind] = np.cumsum(delta)[1:] if n else np.array([int(mine["bytes"].sum())])
    return out


def is_library(filename: str) -> bool:
    """Whether a frame's file is torch's, an installed package's or this package's."""
    return filename.startswith("<site-packages>") or any(p in filename for p in LIBRARY_PARTS)


def user_line(frames: list[Frame]) -> str:
    """'file:line' of the innermost frame outside the libraries ('' when none)."""
    for f in frames:
        name = str(f.get("filename", ""))
        if name and not is_library(name):
            return f"{os.path.basename(name) if os.sep in name else name}:{f.get('line', 0)}"
    return ""


def module_path(frames: list[Frame]) -> tuple[str, ...]:
    """The `forward` frames outermost first, each 'file:line' (the line that called the next)."""
    return tuple(
        f"{os.path.basename(str(f.get('filename', '')))}:{f.get('line', 0)}"
        for f in reversed(frames)
        if f.get("name") == "forward"
    )


def heaviest_module(paths: pd.Series, bytes_: pd.Series, share: float = 0.5) -> tuple[str, int]:
    """The deepest call in a forward that holds at least `share` of these bytes, and its bytes.

    A model's layers are called from one line in a loop: that line holds most saved
    activations and is the unit that checkpointing wraps.
    """
    total = int(bytes_.sum())
    best, held, depth = "", 0, 1
    while total > 0:
        key = paths.map(lambda p, d=depth: " › ".join(p[:d]) if len(p) >= d else "")
        sums = bytes_.groupby(key).sum()
        sums = sums[sums.index != ""]
        if sums.empty or int(sums.max()) < share * total:
            break
        best, held = str(sums.idxmax()).split(" › ")[-1], int(sums.max())
        depth += 1
    return best, held
