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
    return recorded_report(tmp_path, CORPUS / name)


def recorded_report(tmp_path: Path, folder: Path):
    """The report of a committed run folder, analysed from a copy: analysis rewrites the
    folder's summary.json (with this machine's paths), and committed data stays as recorded."""
    copy = tmp_path / folder.name
    shutil.copytree(folder, copy)
    return analyze_path(copy)
