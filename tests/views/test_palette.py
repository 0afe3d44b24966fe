"""Colours and banner wording have one source (`views/palette.py`) for Python and the widget."""

import json

from paths import ROOT

from jupyter_gpuprof.views import palette
from jupyter_gpuprof.views.text import banner

SRC = ROOT / "src"


def test_generated_palette_matches_python():
    """Regenerate with `python -m jupyter_gpuprof.views.palette` when this fails."""
    assert (ROOT / palette.TS_FILE).read_text() == palette.typescript()


def test_front_end_copies_no_palette_value():
    """Only the generated module spells a colour or banner out; the widget imports it."""
    values = [*palette.CAUSE_COLORS.values(), *palette.LANE_COLORS.values(),
              palette.NO_GPU_BANNER, palette.PARTIAL_BANNER.split("{")[0]]
    written = [p for p in SRC.rglob("*.ts")
               if "generated" not in p.parts and "__tests__" not in p.parts]
    assert len(written) > 10
    copies = {str(p.relative_to(ROOT)): v for p in written for v in values if v in p.read_text()}
    assert not copies, f"import these from src/generated/palette.ts instead: {copies}"


def test_python_banners_are_the_palette_ones():
    s = json.loads((ROOT / "tests" / "data" / "expected" / "compute.summary.json").read_text())
    cpu_only = {**s, "gpu": {**s["gpu"], "available": False},
                "verdict": {**s["verdict"], "summary": ""}}
    assert banner(cpu_only) == palette.NO_GPU_BANNER
    failed = banner({**s, "source": {**s["source"], "status": "failed", "error": "boom"}})
    assert failed == palette.PARTIAL_BANNER.format(error="boom")
