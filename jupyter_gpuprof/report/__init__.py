"""The report: a run or trace -> a typed summary (analysis + advice), and two runs compared.

`Report` bundles the analysis DataFrames and the advice; `Report.to_json()` is the encoding of
the typed `Summary` (report/model.py) that summary.json caches and every view consumes.
"""

from .build import Report, analyze_path, analyze_run, analyze_trace, cached_summary, run_summary
from .comparison import Comparison, compare
from .model import SUMMARY_SCHEMA_VERSION, Summary

__all__ = [
    "SUMMARY_SCHEMA_VERSION",
    "Comparison",
    "Report",
    "Summary",
    "analyze_path",
    "analyze_run",
    "analyze_trace",
    "cached_summary",
    "compare",
    "run_summary",
]
