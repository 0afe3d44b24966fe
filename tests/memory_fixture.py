"""The memory blocks the front end's tests draw (tests/data/expected/memory.json), made by the
report model from the H200 recordings: `python tests/memory_fixture.py --write` re-records them."""

from __future__ import annotations

import gzip
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import msgspec
from memory_recordings import MEMORY, known, one_kernel_forward, truth
from paths import TESTS

from jupyter_gpuprof.report.memory_summary import memory_blocks
from jupyter_gpuprof.store.layout import MEMORY_HISTORY_FILE, MEMORY_HISTORY_KEY

FIXTURE = TESTS / "data" / "expected" / "memory.json"
#: the GPU the recordings ran on (H200: 139.8 GiB), for the headroom
GPU_TOTAL = 150_110_011_392


def _block(case: str, ours: dict[str, Any]) -> dict[str, Any]:
    """`summary.memory`'s over_step and oom for one recording, as the model writes them."""
    snap = json.loads(gzip.decompress((MEMORY / f"{case}.snapshot.json.gz").read_bytes()))
    snap[MEMORY_HISTORY_KEY] = ours
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / MEMORY_HISTORY_FILE).write_bytes(gzip.compress(json.dumps(snap).encode()))
        over, oom, problem = memory_blocks(tmp, GPU_TOTAL, forward=one_kernel_forward(40.0))
    assert problem is None, problem
    return dict(msgspec.to_builtins({"over_step": over, "oom": oom}))


def memory_fixture() -> dict[str, dict[str, Any]]:
    """The GPT-2 step's memory (addresses known, fp32) and the out-of-memory step's."""
    t = truth("oom")
    return {
        "gpt2": _block("gpt2", {"addresses": known("gpt2"), "param_element_size": 4}),
        "oom": _block("oom", {"oom": {"requested": t["observer_requested"], "error": t["error"]}}),
    }


if __name__ == "__main__":
    if "--write" in sys.argv:
        FIXTURE.write_text(json.dumps(memory_fixture(), indent=1) + "\n")
        print(f"wrote {FIXTURE.name}")
