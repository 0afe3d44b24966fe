"""The widget's Cancel and the saving of measured tries exclude each other."""

from __future__ import annotations

from types import SimpleNamespace

import jupyter_gpuprof.report as report_module
from jupyter_gpuprof.tries import cell, notebook, stacking
from jupyter_gpuprof.tries.widget_tries import WidgetTries


class _Widget:
    """The widget's traits as the tries set them, each status kept in order."""

    def __init__(self) -> None:
        self.statuses: list[str] = []
        self.summary = None
        self.try_running = False

    def __setattr__(self, name, value):
        if name == "try_status":
            self.statuses.append(value)
        object.__setattr__(self, name, value)


def _tries(monkeypatch, record):
    """Tries whose measuring is instant; `record(tries)` stands for keeping them in the run."""
    widget = _Widget()
    run = SimpleNamespace(meta=SimpleNamespace(training={}))
    tries = WidgetTries(widget, {}, run, "pass", warmup=0, steps=1)
    tries.fixes = ["compile"]
    monkeypatch.setattr(notebook, "run_tries", lambda *a, **k: ({}, {}))
    monkeypatch.setattr(stacking, "in_kernel", lambda *a: None)
    monkeypatch.setattr(stacking, "stack_fixes", lambda *a: None)
    monkeypatch.setattr(report_module, "run_summary", lambda run: {})
    monkeypatch.setattr(cell, "judged", lambda *a: [])
    monkeypatch.setattr(cell, "record_tries", lambda *a: record(tries))
    monkeypatch.setattr(report_module, "analyze_run",
                        lambda run: SimpleNamespace(summary_doc=lambda: {"tries": ["kept"]}))
    return tries, widget


def test_a_cancel_that_comes_while_the_tries_are_saved_says_it_came_too_late(monkeypatch):
    """Once saving began the results are kept: the Cancel must not say "cancelling" and then
    show them after all."""
    def record(tries):
        tries.cancel()  # the click reaches the kernel while the tries are being kept
        return [{"fix": "compile"}]

    tries, widget = _tries(monkeypatch, record)
    tries.start()
    tries._thread.join(10)
    assert widget.statuses[-2].startswith("too late to cancel"), widget.statuses
    assert widget.statuses[-1].startswith("tried") and widget.summary == {"tries": ["kept"]}
    assert widget.statuses[-1].endswith("(the Cancel came too late: they were being saved)")
    assert not widget.try_running


def test_a_cancel_before_saving_keeps_nothing(monkeypatch):
    kept = []
    tries, widget = _tries(monkeypatch, lambda tries: kept.append(1) or [])
    monkeypatch.setattr(stacking, "in_kernel", lambda *a: tries.cancel())  # during the last round
    tries.start()
    tries._thread.join(10)
    assert widget.statuses[-2] == "cancelling after the running round…"
    assert widget.statuses[-1].startswith("cancelled") and not kept and widget.summary is None
