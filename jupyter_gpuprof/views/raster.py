"""A tiny raster canvas and PNG encoder for the static report's charts (numpy + zlib only).

Sanitizers (JupyterLab's for untrusted notebooks, GitHub's) strip inline SVG but keep
`<img src="data:image/png;base64,…">`, so the static report draws its charts as PNG. Plotting
libraries are not dependencies of the package; the charts need only filled rectangles, lines
and short labels, which a pixel array and a 3×5 bitmap font draw in a few lines.
"""

from __future__ import annotations

import base64
import struct
import zlib

import numpy as np

#: 3×5 glyphs: 5 rows of 3 pixels per character ('#' = ink); letters are drawn as capitals
GLYPHS = {
    'a': ".#. #.# ### #.# #.#", 'b': "##. #.# ##. #.# ##.", 'c': ".## #.. #.. #.. .##",
    'd': "##. #.# #.# #.# ##.", 'e': "### #.. ##. #.. ###", 'f': "### #.. ##. #.. #..",
    'g': ".## #.. #.# #.# .##", 'h': "#.# #.# ### #.# #.#", 'i': "### .#. .#. .#. ###",
    'j': "..# ..# ..# #.# .#.", 'k': "#.# #.# ##. #.# #.#", 'l': "#.. #.. #.. #.. ###",
    'm': "#.# ### ### #.# #.#", 'n': "##. #.# #.# #.# #.#", 'o': ".#. #.# #.# #.# .#.",
    'p': "##. #.# ##. #.. #..", 'q': ".#. #.# #.# ##. .##", 'r': "##. #.# ##. #.# #.#",
    's': ".## #.. .#. ..# ##.", 't': "### .#. .#. .#. .#.", 'u': "#.# #.# #.# #.# ###",
    'v': "#.# #.# #.# #.# .#.", 'w': "#.# #.# ### ### #.#", 'x': "#.# #.# .#. #.# #.#",
    'y': "#.# #.# .#. .#. .#.", 'z': "### ..# .#. #.. ###", '0': "### #.# #.# #.# ###",
    '1': ".#. ##. .#. .#. ###", '2': "##. ..# .#. #.. ###", '3': "##. ..# .#. ..# ##.",
    '4': "#.# #.# ### ..# ..#", '5': "### #.. ##. ..# ##.", '6': ".## #.. ### #.# ###",
    '7': "### ..# .#. .#. .#.", '8': "### #.# ### #.# ###", '9': "### #.# ### ..# ##.",
    ' ': "... ... ... ... ...", '.': "... ... ... ... .#.", ',': "... ... ... .#. #..",
    ':': "... .#. ... .#. ...", '%': "#.# ..# .#. #.. #.#", '-': "... ... ### ... ...",
    '+': "... .#. ### .#. ...", '(': ".#. #.. #.. #.. .#.", ')': ".#. ..# ..# ..# .#.",
    '/': "..# ..# .#. #.. #..", '=': "... ### ... ### ...", '_': "... ... ... ... ###",
    '×': "... #.# .#. #.# ...", 'µ': "... #.# #.# ##. #..", '#': "#.# ### #.# ### #.#",
    '<': "..# .#. #.. .#. ..#", '>': "#.. .#. ..# .#. #..", "'": ".#. .#. ... ... ...",
    '?': "##. ..# .#. ... .#.", '!': ".#. .#. .#. ... .#.", '↔': "... #.# ### #.# ...",
    '▸': "#.. ##. ### ##. #..", '→': "... ..# ### ..# ...", '·': "... ... .#. ... ...",
}
GLYPH_W, GLYPH_H = 3, 5


def _rgb(color: str) -> tuple[int, int, int]:
    """'#rrggbb' as an RGB triple."""
    c = color.lstrip("#")
    return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


def _glyph(ch: str) -> np.ndarray:
    """A character's 5×3 ink mask (unknown characters draw as '?')."""
    rows = GLYPHS.get(ch.lower(), GLYPHS["?"]).replace(" ", "")
    return np.array([c == "#" for c in rows], dtype=bool).reshape(GLYPH_H, GLYPH_W)


class Canvas:
    """An RGB pixel array with the few drawing calls the static charts use."""

    def __init__(self, width: int, height: int, background: str = "#ffffff") -> None:
        self.width, self.height = int(width), int(height)
        self.pixels = np.empty((self.height, self.width, 3), dtype=np.uint8)
        self.pixels[:] = _rgb(background)

    def rect(self, x0: float, y0: float, x1: float, y1: float, color: str,
             alpha: float = 1.0) -> None:
        """Fill [x0, x1) × [y0, y1), clipped; at least one pixel wide and tall."""
        a, b = int(max(0, np.floor(x0))), int(min(self.width, max(np.floor(x0) + 1, round(x1))))
        c, d = int(max(0, np.floor(y0))), int(min(self.height, max(np.floor(y0) + 1, round(y1))))
        if a >= b or c >= d:
            return
        region = self.pixels[c:d, a:b]
        ink = np.array(_rgb(color), dtype=float)
        region[:] = (region * (1 - alpha) + ink * alpha).astype(np.uint8)

    def text(self, x: float, y: float, text: str, color: str = "#222222",
             scale: int = 2) -> float:
        """Draw `text` with its top-left at (x, y); returns the x after the last glyph."""
        ink = _rgb(color)
        for ch in text:
            mask = np.kron(_glyph(ch), np.ones((scale, scale), dtype=bool))
            xi, yi = int(x), int(y)
            h = min(mask.shape[0], self.height - yi) if yi >= 0 else 0
            w = min(mask.shape[1], self.width - xi) if xi >= 0 else 0
            if h > 0 and w > 0:
                self.pixels[yi:yi + h, xi:xi + w][mask[:h, :w]] = ink
            x += (GLYPH_W + 1) * scale
        return x

    def png(self) -> bytes:
        """The canvas as PNG bytes (8-bit RGB, no filtering, zlib level 9)."""
        raw = b"".join(b"\x00" + row.tobytes() for row in self.pixels)

        def chunk(kind: bytes, data: bytes) -> bytes:
            return (struct.pack(">I", len(data)) + kind + data
                    + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))

    def img_tag(self, alt: str) -> str:
        """An `<img>` with the PNG inline (alt text already HTML-escaped by the caller)."""
        data = base64.b64encode(self.png()).decode("ascii")
        return (f"<img class='gpuprof-png' alt='{alt}' width='{self.width}' "
                f"height='{self.height}' src='data:image/png;base64,{data}'>")


def text_width(text: str, scale: int = 2) -> int:
    """Pixels `Canvas.text` advances for `text`."""
    return len(text) * (GLYPH_W + 1) * scale
