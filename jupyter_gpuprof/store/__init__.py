"""On-disk run folders: the only code that reads or writes them."""

from .run import RUN_META_SCHEMA_VERSION, Run, RunMeta, open_run
from .runs import (
    BrokenRun,
    CorruptRun,
    InvalidRunId,
    RunInProgress,
    RunNotFound,
    RunStore,
    RunStoreError,
    default_root,
)

__all__ = [
    "RUN_META_SCHEMA_VERSION",
    "BrokenRun",
    "CorruptRun",
    "InvalidRunId",
    "Run",
    "RunMeta",
    "RunInProgress",
    "RunNotFound",
    "RunStore",
    "RunStoreError",
    "default_root",
    "open_run",
]
