"""Child-process code shared by the kill-matrix tests (CLI and `%%gpuprofile`): one place says
how a stage is killed, so both matrices kill the trace write the same way."""

from __future__ import annotations

#: for a child that defines `stage` (str) and `killed()`: at "trace write" the store's trace
#: copy writes 4 kB and the child is killed there (a half-written trace left behind)
HALF_TRACE_THEN_KILLED = '''
if stage == "trace write":
    import gzip
    copy = shutil.copyfileobj

    def half_then_killed(src, dst, length=0):
        if not isinstance(dst, gzip.GzipFile):  # not the store's trace: left alone
            return copy(src, dst, length)
        dst.write(src.read(4096))
        dst.flush()
        killed()

    shutil.copyfileobj = half_then_killed
'''


def with_trace_kill(script: str) -> str:
    """`script` with its "{HALF_TRACE_THEN_KILLED}" line replaced by the shared code."""
    assert "{HALF_TRACE_THEN_KILLED}" in script
    return script.replace("{HALF_TRACE_THEN_KILLED}", HALF_TRACE_THEN_KILLED.strip("\n"))
