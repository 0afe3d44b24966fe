"""Who writes a run: the creating process (pid, host, start time), to spot runs it abandoned.

A kernel killed during a capture leaves its run `running` forever; with the owner recorded, a
reader on the same host sees the process is gone (or its pid now belongs to another process,
told apart by the start time) and lists the run as `interrupted`.
"""

from __future__ import annotations

import os
import socket

from .meta_blocks import OwnerMeta


def _start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (Linux /proc), None elsewhere."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # field 22, counted after the command name, which is in parentheses and may hold spaces
    fields = stat[stat.rfind(b")") + 2:].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def current_owner() -> OwnerMeta:
    """The owner record of this process, for meta.json's `owner`."""
    pid = os.getpid()
    return OwnerMeta(pid=pid, host=socket.gethostname(), started=_start_ticks(pid))


def owner_gone(owner: OwnerMeta | None) -> bool:
    """True when the owner is known to be dead: same host, and the pid gone or reused."""
    if not isinstance(owner, dict) or owner.get("host") != socket.gethostname():
        return False  # unknown owner, or another machine's process: cannot tell
    pid = owner.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # alive, owned by another user
    started = owner.get("started")
    now = _start_ticks(pid)
    return isinstance(started, int) and now is not None and now != started
