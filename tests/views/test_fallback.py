"""The static report survives sanitizers: PNG charts (never inline SVG), a notice that reads true
wherever the copy shows."""

import base64
import re
import shutil
import struct
import subprocess
import zlib
from html import unescape

import numpy as np
import pytest
from paths import ROOT

from jupyter_gpuprof.report import analyze_path
from jupyter_gpuprof.views.fallback import STATIC_NOTICE, static_report
from jupyter_gpuprof.views.palette import LANE_COLORS
from jupyter_gpuprof.views.png_charts import timeline_png
from jupyter_gpuprof.views.raster import Canvas

REAL = ROOT / "tests" / "data" / "real"


def _decode_png(data: bytes) -> np.ndarray:
    """Our PNGs back to pixels (8-bit RGB, filter 0 on every row)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, size = 8, b"", (0, 0)
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        if kind == b"IHDR":
            size = struct.unpack(">II", body[:8])
            assert body[8:10] == b"\x08\x02"
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h = size
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(h, 1 + 3 * w)
    assert (raw[:, 0] == 0).all()
    return raw[:, 1:].reshape(h, w, 3)


def test_canvas_png_holds_exactly_the_drawn_pixels():
    c = Canvas(10, 6)
    c.rect(2, 1, 5, 3, "#ff0000")
    c.rect(0, 5, 10, 6, "#0000ff", alpha=0.5)
    px = _decode_png(c.png())
    assert px.shape == (6, 10, 3)
    assert (px[1:3, 2:5] == [255, 0, 0]).all() and (px[0] == 255).all()
    assert (px[1:3, 5] == 255).all()
    assert (px[5] == [127, 127, 255]).all()  # half blue over white


@pytest.fixture(scope="module")
def summary():
    return analyze_path(REAL / "input").to_json()


def _imgs(html: str) -> list[str]:
    return re.findall(r"<img [^>]*src=['\"](data:image/png;base64,[^'\"]+)['\"]", html)


def test_static_report_draws_png_charts_and_starts_with_the_static_notice(summary):
    html = static_report(summary)
    assert "<svg" not in html
    imgs = _imgs(html)
    assert len(imgs) == 3  # step times, timeline, kernel kinds
    for src in imgs:

        px = _decode_png(base64.b64decode(src.split(",", 1)[1]))
        assert px.shape[0] > 20 and len(np.unique(px.reshape(-1, 3), axis=0)) >= 3  # ink, text
    text = unescape(re.sub(r"<style>.*?</style>|<[^>]+>", " ", html, flags=re.S)).split()
    assert " ".join(text).startswith(STATIC_NOTICE.split(";")[0])
    # nbconvert's HTML, GitHub and nbviewer have no File menu and nothing to trust: the notice
    # names where the interactive report opens instead of asking for the impossible
    assert STATIC_NOTICE.startswith("Static copy of the report.")
    assert "File ▸" not in STATIC_NOTICE and "jupyter gpuprof export" in STATIC_NOTICE


def _jupyterlab_sanitize(html: str) -> str:
    """Run @jupyterlab/apputils' Sanitizer (what an untrusted notebook output goes through)."""
    node = shutil.which("node")
    if node is None or not (ROOT / "node_modules/@jupyterlab/apputils").is_dir():
        pytest.skip("needs node and `jlpm install` (JupyterLab's sanitizer runs in node)")
    done = subprocess.run([node, str(ROOT / "tests" / "sanitize_html.cjs")], input=html,
                          capture_output=True, text=True, cwd=ROOT, check=True, timeout=60)
    return done.stdout


def test_charts_survive_jupyterlabs_sanitizer(summary):
    html = static_report(summary)
    clean = _jupyterlab_sanitize(html)
    assert _imgs(clean) == _imgs(html)  # every chart, byte for byte
    assert "Verdict" in clean and f"{summary['steps']['median_ms']:.2f} ms" in clean
    # what the old fallback relied on is exactly what the sanitizer strips
    assert "<svg" not in _jupyterlab_sanitize("<p>a</p><svg><rect width='2'/></svg>")


def _ink_bands(px: np.ndarray, colors: dict[str, str]) -> list[str]:
    """Top to bottom, the colour name of each horizontal band of pixel rows holding it."""
    rgb = {name: np.array([int(c[i:i + 2], 16) for i in (1, 3, 5)]) for name, c in colors.items()}
    bands: list[str] = []
    previous = None
    for row in px:
        inked = next((name for name, v in rgb.items() if (row == v).all(axis=1).any()), None)
        if inked is not None and inked != previous:
            bands.append(inked)
        previous = inked
    return bands


def test_static_timeline_draws_every_rank_of_an_eight_rank_run():
    tl = analyze_path(ROOT / "tests" / "data" / "wild" / "param" / "dlrm_8ranks").to_json()[
        "timeline"]
    assert len(tl["lanes"]) == 24  # per rank: main thread, compute stream, NCCL stream
    src = _imgs(timeline_png(tl))[0]
    data = base64.b64decode(src.split(",", 1)[1])
    px = _decode_png(data)
    # one band of lane colour per lane: all eight groups, not the first four
    assert _ink_bands(px, {k: LANE_COLORS[k] for k in ("cpu", "gpu")}) == ["cpu", "gpu",
                                                                          "gpu"] * 8
    assert px.shape[0] <= 400 and len(data) < 20_000  # thinner lanes, still a small image
