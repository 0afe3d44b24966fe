"""The report widget's "Try the top fixes": the cell's tries, started from the widget.

The magic offers them on a report whose step the kernel can run again (a one-step cell, no
error). A click runs the same tries as `%%gpuprofile --try` (tries/notebook.py: the control
and each fix in interleaved rounds, judged by advice/tries.py, kept in the run) in a thread of
the kernel, so that the widget's Cancel still reaches it; the progress line and the redrawn
report go back through the widget's state. The kernel's namespace is borrowed meanwhile:
every fix is undone after its round and the state put back at the end, as for `--try`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any, cast

from ..oneline import error_line
from ..store import Run

#: tried where no finding recommends a fix (a CPU kernel, a step with nothing big to fix)
WITHOUT_FINDINGS = ("compile",)


class TriesCancelled(Exception):
    """The widget's Cancel: the tries stop before their next round."""


def offered_fixes(findings: Sequence[Mapping[str, object]]) -> list[str]:
    """The fixes the button tries: the findings' recommended ones, else WITHOUT_FINDINGS."""
    from .notebook import parse_fixes

    return parse_fixes("auto", findings) or list(WITHOUT_FINDINGS)


class WidgetTries:
    """Runs the tries of one report's cell when its widget asks, one run at a time."""

    def __init__(self, widget: Any, ns: dict[str, object], run: Run, code: Any,
                 warmup: int, steps: int) -> None:
        self.widget, self.ns, self.run, self.code = widget, ns, run, code
        self.warmup, self.steps = warmup, steps
        self.fixes: list[str] = []
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        # a Cancel and the start of saving exclude each other: a Cancel either stops the tries
        # before anything is kept or arrives once the saving began and says it came too late
        self._lock = threading.Lock()
        self._saving = self._late = False

    def offer(self, findings: Sequence[Mapping[str, object]]) -> None:
        """Put the button on the widget, naming the fixes it will try."""
        self.fixes = offered_fixes(findings)
        self.widget.offer(f"Try the top fixes ({', '.join(self.fixes)})", self.start,
                          self.cancel)

    def start(self) -> None:
        """Start the tries in a thread (a second click while they run does nothing)."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._cancel.clear()
        self._late = False
        self.widget.try_running = True
        self.widget.try_status = f"trying {', '.join(self.fixes)}…"
        self._thread = threading.Thread(target=self._run, name="gpuprof-tries", daemon=True)
        self._thread.start()

    def cancel(self) -> None:
        """Stop before the next round; what was measured so far is not kept. Once the measured
        tries are being saved, a Cancel says it came too late (the saving is not cut short)."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                return
            if self._saving:
                self._late = True
                self.widget.try_status = ("too late to cancel: the measured tries are being "
                                          "saved")
                return
            self._cancel.set()
            self.widget.try_status = "cancelling after the running round…"

    def _progress(self, what: str) -> None:
        if self._cancel.is_set():
            raise TriesCancelled
        self.widget.try_status = f"trying {', '.join(self.fixes)}: {what}"

    def _run(self) -> None:
        """The tries, judged and kept in the run, then the report redrawn with them."""
        from ..report import analyze_run, run_summary
        from .cell import judged, record_tries
        from .notebook import run_tries
        from .stacking import in_kernel, record_stack, stack_fixes

        ns, code = self.ns, self.code
        step = lambda: exec(code, ns)  # noqa: E731 - the cell's step, as the baseline ran it
        try:
            control, raw = run_tries(step, ns, list(self.fixes), warmup=self.warmup,
                                     steps=self.steps, progress=self._progress)
            measure = in_kernel(step, ns, self.warmup, self.steps, self._progress)
            summary = run_summary(self.run)
            # judged now, kept once the stack is measured too: a Cancel keeps nothing
            stack = stack_fixes(judged(self.run, summary, raw, control), control, measure,
                                self.run.meta.training)
            with self._lock:
                if self._cancel.is_set():  # asked during the last round: keep nothing either
                    raise TriesCancelled
                self._saving = True
            tries = record_tries(self.run, summary, raw, control)
            if stack is not None:
                record_stack(self.run, {**summary, "tries": tries}, stack)
            report = analyze_run(self.run)  # the measured pass re-ranks with the tries
            self.widget.summary = cast(dict[str, Any], report.summary_doc())
            self.widget.try_status = ("tried: the report below now shows what each fix measured"
                                      + (" (the Cancel came too late: they were being saved)"
                                         if self._late else ""))
        except TriesCancelled:
            self.widget.try_status = "cancelled: nothing was kept, the kernel's state is as before"
        except Exception as e:  # noqa: BLE001 - the kernel goes on; say why in one line
            self.widget.try_status = f"the tries failed: {error_line(e, with_type=True)}"
        finally:
            with self._lock:
                self._saving = False
            self.widget.try_running = False


def offer_tries(report: Any, ns: dict[str, object], run: Run, code: Any, warmup: int,
                steps: int) -> WidgetTries | None:
    """Offer the tries on the widget `report` was displayed as (None when it was not)."""
    widget = getattr(report, "shown", None)
    if widget is None or code is None:
        return None
    tries = WidgetTries(widget, ns, run, code, warmup, steps)
    findings = report.to_json().get("findings") or []
    tries.offer(findings)
    return tries
