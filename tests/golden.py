"""Every committed trace and run folder's summary as recorded before the speed work of issue 25,
so a faster reader or replay that changes any figure fails a test (`test_golden_summaries`).

`python tests/golden.py --write` re-records them (only when a change of figures is intended).
"""

from __future__ import annotations

import json
import lzma
import math
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paths import TESTS  # noqa: E402

DATA = TESTS / "data"
GOLDEN = DATA / "expected" / "golden_summaries.json.xz"
#: floats may differ by this much, relatively (summation order), and no more
REL_TOL = 1e-9
#: what a float at zero may differ by (a difference of two equal sums)
ABS_TOL = 1e-12


def cases() -> list[str]:
    """Every trace or folder the other tests analyse, as a path under tests/data."""
    truth = json.loads((DATA / "wild" / "truth.json").read_text())
    wild = [f"wild/{rel}" for rel in [*truth["files"], *truth["folders"]]]
    folders = [f"{top}/{p.name}" for top in ("real", "corpus")
               for p in sorted((DATA / top).iterdir()) if p.is_dir()]
    return sorted(folders + wild)


def summary_of(rel: str, scratch: Path) -> dict[str, Any]:
    """The summary of one case, analysed from a copy (run folders get a summary written beside
    the trace), with the copy's folder taken out of its strings."""
    from jupyter_gpuprof.report import analyze_path

    src = DATA / rel
    dst = scratch / rel
    if src.is_dir():
        shutil.copytree(src, dst)
        for cached in dst.rglob("summary.json"):
            cached.unlink()  # analysed afresh, not read back
    else:
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
    text = json.dumps(analyze_path(dst).to_json(), sort_keys=True)
    return json.loads(text.replace(str(scratch), "<data>"))


def differences(old: Any, new: Any, where: str = "$") -> list[str]:
    """Where two summaries differ: exact for everything but floats (REL_TOL)."""
    if type(old) is float and type(new) is float:
        if math.isclose(old, new, rel_tol=REL_TOL, abs_tol=ABS_TOL) or (
                math.isnan(old) and math.isnan(new)):
            return []
        return [f"{where}: {old!r} -> {new!r}"]
    if isinstance(old, dict) and isinstance(new, dict):
        out = [f"{where}.{k}: only before" for k in old.keys() - new.keys()]
        out += [f"{where}.{k}: only after" for k in new.keys() - old.keys()]
        for k in sorted(old.keys() & new.keys()):
            out += differences(old[k], new[k], f"{where}.{k}")
        return out
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return [f"{where}: {len(old)} items -> {len(new)}"]
        return [d for i, (a, b) in enumerate(zip(old, new, strict=True)) for d in
                differences(a, b, f"{where}[{i}]")]
    return [] if old == new and type(old) is type(new) else [f"{where}: {old!r} -> {new!r}"]


def load_golden() -> dict[str, Any]:
    """The recorded summaries, by case."""
    with lzma.open(GOLDEN, "rt") as f:
        return json.load(f)


def write_golden() -> None:
    """Record every case's summary with the code as it is now."""
    with tempfile.TemporaryDirectory() as tmp:
        out = {rel: summary_of(rel, Path(tmp)) for rel in cases()}
    with lzma.open(GOLDEN, "wt", preset=9) as f:
        json.dump(out, f, sort_keys=True, separators=(",", ":"))
    print(f"{len(out)} summaries -> {GOLDEN.relative_to(TESTS.parent)}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/golden.py --write")
    write_golden()
