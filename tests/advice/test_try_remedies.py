"""A try that measured nothing is reported with its cause and remedy (advice/try_remedies.py)."""

from __future__ import annotations

import json
import shutil

from paths import ROOT

from jupyter_gpuprof.advice.try_remedies import remedy_for, with_remedies
from jupyter_gpuprof.report import analyze_path

CORPUS = ROOT / "tests" / "data" / "corpus"


def _recorded_failures() -> list[tuple[str, str, str]]:
    out = []
    for meta in sorted(CORPUS.glob("*/meta.json")):
        for t in json.loads(meta.read_text()).get("tries") or []:
            if t.get("error"):
                out.append((meta.parent.name, t["fix"], t["error"]))
    return out


def test_every_try_that_failed_on_the_h200_corpus_has_a_known_remedy():
    """The corpus's failed tries on the H200 (graphs under gradient accumulation and in a GAN,
    a framework wrapper compiled, a compile past the time limit): none is left as a bare
    exception line."""
    failures = _recorded_failures()
    assert len(failures) >= 4
    unknown = [(name, fix, err[:80]) for name, fix, err in failures if remedy_for(err) is None]
    assert unknown == []


def test_an_unknown_failure_is_shown_as_it_was():
    assert remedy_for("ValueError: something nobody has seen") is None
    assert remedy_for(None) is None
    (t,) = with_remedies([{"fix": "amp", "error": "ValueError: something nobody has seen"}])
    assert "remedy" not in t


#: what nanoGPT's graphs try raised on the H200 before the try marked the first iteration's end
#: (the 2026-12-02 recording; the 2026-12-03 one's try ran: −25 % against its control)
GRAPHS_CRASH = ("RuntimeError: Error: accessing tensor output of CUDAGraphs that has been "
                "overwritten by a subsequent run. Stack trace: File \"model.py\", line 177, "
                "in forward")


def test_the_report_and_its_verdict_carry_the_remedy(tmp_path):
    folder = tmp_path / "nanogpt-bf16"
    shutil.copytree(CORPUS / "nanogpt-bf16", folder)
    meta = json.loads((folder / "meta.json").read_text())
    meta["tries"] = [{"fix": "graphs", "applied": ["torch.compile(GPT, mode='reduce-overhead')"],
                      "error": GRAPHS_CRASH, "source": "script"}]
    (folder / "meta.json").write_text(json.dumps(meta))
    r = analyze_path(folder)
    (graphs,) = [t for t in r.to_json()["tries"] if t["fix"] == "graphs"]
    assert "cudagraph_mark_step_begin()" in graphs["remedy"]
    assert "gradient accumulation" in graphs["cause"]
    text = r.to_text()
    assert "remedy: call torch.compiler.cudagraph_mark_step_begin()" in text
