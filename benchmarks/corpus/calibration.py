"""The calibration table over the training-script corpus: every `--try` the corpus ran, its
predicted gain against the measured one, per fix on the H200.

    python benchmarks/corpus/calibration.py docs/evidence/corpus_h200.json [--json]

Each try recorded in the evidence (`runs[].results[].tool.tries`, judged by the tool when the
corpus ran) becomes one record entry through `advice.calibration.entries_of_tries`, exactly as
a try in a runs root does; the table is `advice.calibration.summarize_record` printed by the
CLI's own table (`views.whatif_text.record_table`). The workload fingerprint is the script's
id (the evidence keeps no kernel names), the run id `<date>#<call>/<script>`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from jupyter_gpuprof.advice.calibration import (  # noqa: E402
    entries_of_tries,
    summarize_record,
    workload_fingerprint,
)
from jupyter_gpuprof.store.calibration import CalibrationEntry  # noqa: E402
from jupyter_gpuprof.views.whatif_text import record_table  # noqa: E402


def corpus_entries(evidence: dict[str, Any]) -> list[CalibrationEntry]:
    """One entry per try of every call of the evidence (the GPU named in its `about`)."""
    gpu = m.group(1) if (m := re.search(r"on one (NVIDIA [A-Z0-9]+)", evidence["about"])) \
        else None
    out: list[CalibrationEntry] = []
    for i, call in enumerate(evidence["runs"]):
        for result in call["results"]:
            tries = (result.get("tool") or {}).get("tries") or []
            out += entries_of_tries(tries, gpu_name=gpu,
                                    workload=workload_fingerprint(result["id"], []),
                                    run_id=f"{call['date']}#{i}/{result['id']}",
                                    source="corpus", created=call["date"])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("evidence", type=Path)
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args()
    entries = corpus_entries(json.loads(args.evidence.read_text()))
    rows = [dataclasses.asdict(r) for r in summarize_record(entries, every_gpu=True)]
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        scripts = len({e["workload"] for e in entries})
        print(f"{len(entries)} tries of {scripts} scripts")
        print(record_table([{**r, "predicted_gain_pct": None,  # type: ignore[typeddict-item]
                             "corrected_gain_pct": None} for r in rows]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
