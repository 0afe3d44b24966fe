"""A corpus script and one of its memory fixes made by hand, each under the tool, their run
folders kept: where a fix's measured time goes (the two traces side by side).

    python benchmarks/memory_fix_traces.py CORPUS OUT SCRIPT_ID FIX_ID     (a CUDA host)

Writes OUT/<script>-base and OUT/<script>-<fix> (meta.json, trace.json.gz, summary.json; machine
paths made neutral, `neutral`; `python benchmarks/memory_fix_traces.py --neutral FOLDER` does it
to a folder fetched before), the
capture schedule of `memory_acceptance_corpus.py` (history off), and prints each run's baseline
median and GPU busy time per step.
"""

from __future__ import annotations

import gzip
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "corpus"))
from layout import make_data  # noqa: E402
from memory_acceptance_corpus import _entry, _under_tool, edited  # noqa: E402
from run_gpu import neutral  # noqa: E402 - machine paths out of committed data


def keep(run: Path, dest: Path) -> None:
    """The run's meta, trace and summary, machine paths made neutral."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("meta.json", "summary.json"):
        if (run / name).is_file():
            (dest / name).write_bytes(neutral((run / name).read_bytes()))
    if (run / "trace.json.gz").is_file():
        raw = neutral(gzip.decompress((run / "trace.json.gz").read_bytes()))
        (dest / "trace.json.gz").write_bytes(gzip.compress(raw, 6))


def main(corpus: Path, out: Path, script_id: str, fix_id: str) -> int:
    entry = _entry(script_id)
    folder = corpus / script_id
    make_data(entry, folder)
    for tag, where in (("base", folder), (fix_id, edited(entry, folder, fix_id))):
        runs = out / f"runs-{tag}"
        res = _under_tool(entry, where, runs, [], ["--no-memory-history"])
        run = sorted(p for p in runs.glob("*") if p.is_dir())[-1]
        keep(run, out / f"{script_id}-{tag}")
        shutil.rmtree(runs, ignore_errors=True)
        print(f"{tag}: exit {res['code']}, baseline median {res.get('median_ms')} ms, "
              f"peak {res.get('max_memory_allocated')}", flush=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--neutral":
        keep(Path(sys.argv[2]), Path(sys.argv[2]))
        sys.exit(0)
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]))
