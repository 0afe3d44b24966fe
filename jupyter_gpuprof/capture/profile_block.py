"""profile(): the context-manager form of a capture, for scripts and notebooks alike."""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Iterator
from pathlib import Path

from ..oneline import error_line
from ..store import RunStore
from . import options
from .ranks import env_ranks, parse_ranks, rank_selected
from .session import ProfileSession, current_session
from .settings import CaptureSettings


@contextlib.contextmanager
def profile(
    name: str = "profile",
    steps: int = options.STEPS,
    warmup: int = options.WARMUP,
    wait: int = options.WAIT,
    prof_warmup: int = options.PROF_WARMUP,
    active: int = options.ACTIVE,
    *,
    with_stack: bool = False,
    record_shapes: bool = True,
    profile_memory: bool = True,
    phases: bool = True,
    count_flops: bool = True,
    runs_root: str | os.PathLike[str] | None = None,
    ranks: str | list[int] | None = None,
) -> Iterator[ProfileSession]:
    """Profile the training loop inside the block; steps come from optimizer.step() or step()."""
    settings = CaptureSettings(
        steps=steps,
        warmup=warmup,
        wait=wait,
        prof_warmup=prof_warmup,
        active=active,
        record_shapes=record_shapes,
        profile_memory=profile_memory,
        with_stack=with_stack,
        phases=phases,
        count_flops=count_flops,
        mode="loop",
        ranks=parse_ranks(ranks) if ranks is not None else env_ranks(),
    )
    root = Path(runs_root) if runs_root is not None else None
    if not rank_selected(settings.ranks):  # ranks (default $JUPYTER_GPUPROF_RANKS) leave us out
        inert = ProfileSession(settings, name=name, store=RunStore(root))
        inert.closed = True  # untouched: step() and finish() see a closed session
        yield inert
        return
    run = None
    existing = current_session()
    if existing is not None and existing.settings.mode == "script" and not existing.driver.started:
        # Under `jupyter gpuprof run` the script's own profile() block takes over the run folder.
        run = existing.run
        existing.discard()
    session = ProfileSession(settings, name=name, store=RunStore(root), run=run).begin()
    try:
        yield session
    except BaseException as e:
        try:
            session.finish(e)
        except Exception as save_error:  # noqa: BLE001 - never mask the block's own exception
            warnings.warn(
                "jupyter_gpuprof: could not save the run: "
                f"{error_line(save_error, with_type=True)}", stacklevel=3
            )
        raise
    session.finish()
