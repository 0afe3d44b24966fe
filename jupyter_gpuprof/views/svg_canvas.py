"""A vector canvas with `raster.Canvas`'s drawing calls, so one chart code draws PNG or SVG.

The export (`jupyter gpuprof export`) draws its charts as SVG: crisp at any zoom, text in the
page's sans-serif font and a few kB each, where a PNG with a bitmap font weighs tens of kB.
Rectangles of one colour on one row that touch are merged into one path (a timeline of
thousands of kernels draws as at most one run per pixel column), which keeps the file small.
"""

from __future__ import annotations

from collections import defaultdict
from html import escape

from .raster import text_width

#: the font size (px) of chart text: the bitmap font's glyphs are 14 px tall at scale 2
FONT_PX = 11
#: rectangles closer than this (px) on one row and in one colour are drawn as one
MERGE_PX = 0.5


def _n(v: float) -> str:
    """A coordinate to one decimal, without a trailing '.0' (smaller files, same picture)."""
    return f"{round(v, 1):g}"


class SvgCanvas:
    """The calls `png_charts` draws with, recorded as SVG shapes."""

    def __init__(self, width: int, height: int, background: str = "#ffffff") -> None:
        self.width, self.height = int(width), int(height)
        self.background = background
        # (y0, y1, color, alpha) -> [x0, x1] spans, merged when the SVG is written
        self._rects: dict[tuple[float, float, str, float], list[list[float]]] = defaultdict(list)
        self._order: list[tuple[float, float, str, float]] = []
        self._texts: list[str] = []

    def rect(self, x0: float, y0: float, x1: float, y1: float, color: str,
             alpha: float = 1.0) -> None:
        """Fill [x0, x1) × [y0, y1), at least one pixel wide (as the raster canvas does)."""
        x0, x1 = max(0.0, x0), min(float(self.width), max(x0 + 1, x1))
        if x0 >= x1 or y0 >= y1:
            return
        key = (round(y0, 1), round(y1, 1), color, alpha)
        if key not in self._rects:
            self._order.append(key)
        self._rects[key].append([x0, x1])

    def text(self, x: float, y: float, text: str, color: str = "#222222",
             scale: int = 2) -> float:
        """`text` with its top-left at (x, y); returns the x the raster canvas would end at."""
        self._texts.append(
            f"<text x='{_n(x)}' y='{_n(y + FONT_PX)}' fill='{color}'>"
            f"{escape(text)}</text>")
        return x + text_width(text, scale)

    def _paths(self) -> list[str]:
        """One path per colour and row: its touching rectangles merged."""
        out = []
        for key in self._order:
            y0, y1, color, alpha = key
            spans = sorted(self._rects[key])
            merged: list[list[float]] = [spans[0][:]]
            for a, b in spans[1:]:
                if a <= merged[-1][1] + MERGE_PX:
                    merged[-1][1] = max(merged[-1][1], b)
                else:
                    merged.append([a, b])
            d = "".join(f"M{_n(a)} {_n(y0)}h{_n(b - a)}v{_n(y1 - y0)}h{_n(a - b)}z"
                        for a, b in merged)
            opacity = f" fill-opacity='{alpha:g}'" if alpha < 1 else ""
            out.append(f"<path fill='{color}'{opacity} d='{d}'/>")
        return out

    def svg(self, label: str) -> str:
        """The drawing as an inline `<svg role=img>` (`label` already HTML-escaped)."""
        return (f"<svg class='gpuprof-svg' role='img' aria-label='{label}' "
                f"viewBox='0 0 {self.width} {self.height}' width='{self.width}' "
                f"height='{self.height}' font-size='{FONT_PX}' "
                "font-family='system-ui,-apple-system,Segoe UI,Roboto,sans-serif'>"
                f"<rect width='100%' height='100%' fill='{self.background}'/>"
                + "".join(self._paths()) + "".join(self._texts) + "</svg>")

    def img_tag(self, alt: str) -> str:
        """The chart as the export embeds it (the raster canvas's call of the same name)."""
        return self.svg(alt)
