"""The recorded H200 run folders of public training scripts (tests/data/corpus), analysed."""

from __future__ import annotations

import shutil
from pathlib import Path

from paths import ROOT

from jupyter_gpuprof.report import analyze_path

CORPUS = ROOT / "tests" / "data" / "corpus"


def corpus_report(tmp_path: Path, name: str):
    """The report of recorded run `name`, analysed from a copy (analysis writes its summary
    beside the trace)."""
    folder = tmp_path / name
    shutil.copytree(CORPUS / name, folder)
    return analyze_path(folder)
