"""The capture a framework callback drives: started at train begin, closed at train end."""

from __future__ import annotations

import os
from typing import Any

from ..capture.session import ProfileSession, current_session
from ..capture.settings import CaptureSettings
from ..store import Run, RunStore
from ..store.meta_blocks import FrameworkMeta
from ..terminal import say


class CallbackCapture:
    """One hook-driven capture per training run; steps come from the optimizer hook."""

    # `settings`: the callback's **kwargs, passed through to CaptureSettings, which checks them
    def __init__(self, name: str, runs_root: str | os.PathLike[str] | None,
                 analyze: bool, settings: dict[str, Any]) -> None:
        self.name = name
        self.runs_root = runs_root
        self.analyze = analyze
        self.settings = CaptureSettings(mode="loop", **settings)  # validates the counts now
        self.session: ProfileSession | None = None
        self.run: Run | None = None
        self.report: Any = None

    # `framework`: capture/frameworks.py's block, typed as its describe_* functions give it
    def begin(self, framework: FrameworkMeta | None) -> None:
        """Open the run and install the hooks; the framework block fits the schedule."""
        if self.session is not None:  # the last training raised (HF has no exception event)
            self.end(RuntimeError("the training stopped before its end"))
        running = current_session()
        if running is not None and not running.closed:
            say("gpuprofile: a capture is already running (%%gpuprofile or profile()); "
                  "the callback leaves this training to it")
            return
        settings = CaptureSettings(**{**self.settings.__dict__})
        self.session = ProfileSession(settings, name=self.name,
                                      store=RunStore(self.runs_root)).begin()
        if framework is not None:
            self.session.use_framework(framework)

    def end(self, error: BaseException | None = None) -> None:
        """Close the run (kept as failed when incomplete), then analyse it if asked."""
        session, self.session = self.session, None
        if session is None:
            return
        self.run = session.finish(error)
        say(session.describe())
        if self.run.meta.error:
            say(f"gpuprofile: run {self.run.meta.status}: {self.run.meta.error}")
        if self.analyze and self.run.trace_paths():
            from ..report import analyze_run

            self.report = analyze_run(self.run)
            say(f"gpuprofile: verdict {self.report.advice.verdict}: "
                  f"{self.report.advice.verdict.summary}")
