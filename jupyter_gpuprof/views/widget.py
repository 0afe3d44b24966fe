"""The inline report widget (anywidget): interactive in JupyterLab / Notebook 7, static elsewhere.

The widget gets the summary dict only (never the trace). Its front end is the TypeScript report
in `src/report/` (the same panels the sidebar's run view mounts), bundled by `jlpm build` into
static/widget.js; it draws SVG itself rather than loading plotly.js, so a saved notebook stays
small: plotly.js alone is ~4.6 MB per widget state. Each display also carries `text/html`
(numbers, verdict, findings, inline SVG charts) and `text/plain`, which static viewers show.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anywidget
import traitlets

from .fallback import static_report
from .svg import kinds_svg, step_chart_svg
from .text import render_text

STATIC = Path(__file__).parent / "static"
#: shown in place of the report when the front-end bundle was never built (a bare source tree)
UNBUILT_ESM = """export default { render({ el }) { el.textContent =
  "The report widget's front end is not built: run `jlpm build` in the source checkout, "
  + "or install the package from a wheel. The static report below still has every figure."; } };"""


def _bundle(name: str, missing: str) -> Path | str:
    """The built front-end file, or `missing` so that importing the views never fails."""
    path = STATIC / name
    return path if path.is_file() else missing


class ReportWidget(anywidget.AnyWidget):
    """One report: Step time, GPU timeline, Operators, Transfers & syncs, Next steps."""

    _esm = _bundle("widget.js", UNBUILT_ESM)
    _css = _bundle("widget.css", "")
    summary = traitlets.Dict().tag(sync=True)
    # charts drawn once in Python (escaped SVG) so the front end and the fallback agree
    charts = traitlets.Dict().tag(sync=True)

    def __init__(self, summary: dict[str, Any], **kwargs: Any) -> None:
        charts = {"steps": step_chart_svg(summary.get("steps") or {}),
                  "kinds": kinds_svg(summary.get("kernel_kinds") or [])}
        super().__init__(summary=summary, charts=charts, **kwargs)

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict, dict] | None:
        """The widget view plus static `text/html` and `text/plain` for kernel-less viewers."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, meta = bundle if isinstance(bundle, tuple) else (bundle, {})
        data = {**data, "text/html": static_report(self.summary),
                "text/plain": render_text(self.summary)}
        return data, meta

    def __repr__(self) -> str:
        return render_text(self.summary)
