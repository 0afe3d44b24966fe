"""The inline report widget (anywidget): interactive in JupyterLab / Notebook 7, static elsewhere.

The widget gets the summary dict only (never the trace). Its front end is the TypeScript report
in `src/report/` (the same panels the sidebar's run view mounts), bundled by `jlpm build` into
static/widget.js; it draws SVG itself rather than loading plotly.js, so a saved notebook stays
small: plotly.js alone is ~4.6 MB per widget state.

A notebook saves the widget's state, its front-end code included; the installed JupyterLab
extension draws a saved report with its current code instead (`REPORT_PROTOCOL`), so a notebook
executed months ago shows today's report.

A report is displayed as two outputs (`display_report`): the static report (text/html with PNG
charts, text/plain) and then the widget view. Plain `nbconvert --to html` prefers a widget view
over every other type of the same output, and an untrusted notebook never runs it, so the
static copy must be an output of its own; once the widget draws, its stylesheet hides the
static output right above it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import anywidget
import traitlets

from .fallback import static_report
from .summary_doc import SummaryDoc
from .text import render_text

STATIC = Path(__file__).parent / "static"
#: shown in place of the report when the front-end bundle was never built (a bare source tree)
UNBUILT_ESM = """export default { render({ el }) { el.textContent =
  "The report widget's front end is not built: run `jlpm build` in the source checkout, "
  + "or install the package from a wheel. The static report below still has every figure."; } };"""


#: hides the static copy of a report once the widget below it has drawn (the rule is in the
#: widget's stylesheet, which loads only when the widget renders)
HIDE_STATIC_CSS = (".jp-OutputArea-child:has(.gpuprof-static):has(+ .jp-OutputArea-child "
                   ".gpuprof-w){display:none}")
#: the saved-report protocol: a notebook's saved widget state carries it (`report_protocol`) beside
#: the summary, and the installed JupyterLab extension draws a saved report with its own current
#: code when it knows this protocol (src/savedReports.ts), the notebook's saved `_esm` only when
#: the extension is absent or older. Bump it when a saved state changes so that an older
#: extension could no longer draw it.
REPORT_PROTOCOL = 1
#: the widget output's text/plain: the static output above already holds the whole report
WIDGET_TEXT = "Interactive report (the static copy above has every figure)."


def _bundle(name: str, missing: str) -> Path | str:
    """The built front-end file, or `missing` so that importing the views never fails."""
    path = STATIC / name
    return path if path.is_file() else missing


def _css() -> str:
    """The widget's stylesheet plus the rule that hides the static copy above it."""
    built = STATIC / "widget.css"
    return (built.read_text("utf-8") if built.is_file() else "") + "\n" + HIDE_STATIC_CSS


class ReportWidget(anywidget.AnyWidget):
    """One report: Step time, GPU timeline, Operators, Transfers & syncs, Next steps."""

    _esm = _bundle("widget.js", UNBUILT_ESM)
    _css = _css()
    #: the summary is the widget's whole state: the front end draws every chart from it
    summary = traitlets.Dict().tag(sync=True)
    #: the protocol of the saved state above (see REPORT_PROTOCOL)
    report_protocol = traitlets.Int(REPORT_PROTOCOL).tag(sync=True)
    #: the button that tries fixes in the kernel ("" when the kernel cannot re-run the step)
    try_offer = traitlets.Unicode("").tag(sync=True)
    #: the tries' progress line, and whether they are running (the button becomes Cancel)
    try_status = traitlets.Unicode("").tag(sync=True)
    try_running = traitlets.Bool(False).tag(sync=True)

    def __init__(self, summary: SummaryDoc, with_fallback: bool = True,
                 **kwargs: Any) -> None:
        super().__init__(summary=summary, **kwargs)
        # False when `display_report` shows the static copy as an output of its own
        self.with_fallback = with_fallback
        self._actions: dict[str, Callable[[], None]] = {}
        self.on_msg(self._on_action)

    def offer(self, label: str, start: Callable[[], None], cancel: Callable[[], None]) -> None:
        """Show the try button (`label`); the front end's clicks call `start` and `cancel`."""
        self._actions = {"try": start, "cancel": cancel}
        self.try_offer = label

    def _on_action(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """A button of the front end: {"action": "try"} or {"action": "cancel"}."""
        action = content.get("action") if isinstance(content, dict) else None
        if (run := self._actions.get(str(action))) is not None:
            run()

    def _repr_mimebundle_(self, **kwargs: Any
                          ) -> tuple[dict[str, object], dict[str, object]] | None:
        """The widget view plus static `text/html` and `text/plain` for kernel-less viewers
        (only `text/plain`, one line, when the static copy is its own output)."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, meta = bundle if isinstance(bundle, tuple) else (bundle, {})
        if not self.with_fallback:
            return {**data, "text/plain": WIDGET_TEXT}, meta
        return {**data, **static_bundle(self._summary_doc())}, meta

    def _summary_doc(self) -> SummaryDoc:
        """The synced trait: the summary this widget was given."""
        return cast(SummaryDoc, self.summary)

    def __repr__(self) -> str:
        return render_text(self._summary_doc())


def static_bundle(summary: SummaryDoc) -> dict[str, str]:
    """The static copy of a report as a display bundle (every front end can show it)."""
    return {"text/html": static_report(summary), "text/plain": render_text(summary)}


def display_report(summary: SummaryDoc) -> ReportWidget:
    """Show a report in IPython: the static copy, then the widget (see the module docstring)."""
    from IPython.display import display

    display(static_bundle(summary), raw=True)
    widget = ReportWidget(summary, with_fallback=False)
    display(widget)
    return widget
