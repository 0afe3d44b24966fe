"""The typed shape of a cached summary.json: what the list and the views read from it.

A cache that does not match is recomputed, never served (a half-written or older summary
crashed the HTML view). Kept in its own module so a full typed summary model can replace it.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .json_checks import decode


class VerdictSchema(msgspec.Struct):
    """`verdict`: the one-line diagnosis the list shows."""

    category: str | None
    summary: str
    confidence: str | None = None
    reasons: list[Any] = []


class StepsSchema(msgspec.Struct):
    """`steps`: the step-time statistics the list shows."""

    median_ms: float | None = None
    p95_ms: float | None = None
    n: int = 0
    baseline_ms: list[float] = []
    profiled_ms: list[float] = []
    warmup_ms: list[float] = []


class SourceSchema(msgspec.Struct):
    """`source`: where the summary came from."""

    gpu: str | None = None


class SummarySchema(msgspec.Struct):
    """summary.json (`Report.to_json()`): every block the views read must be present."""

    schema_version: int
    source: SourceSchema
    steps: StepsSchema
    gpu: dict[str, Any]
    verdict: VerdictSchema
    findings: list[dict[str, Any]]
    ops: list[dict[str, Any]]
    kernels: list[dict[str, Any]]
    kernel_kinds: list[dict[str, Any]]
    transfers: list[dict[str, Any]]
    syncs: dict[str, Any]
    launch: dict[str, Any] | None
    comm: dict[str, Any] | None
    memory: dict[str, Any]
    flops: dict[str, Any] | None
    input: dict[str, Any]
    ranks: list[dict[str, Any]]
    distributed: dict[str, Any] | None
    timeline: dict[str, Any] | None = None
    warnings: list[Any] = []


def decode_summary(data: bytes) -> dict[str, Any]:
    """A summary.json's contents, or BadJson (one line) when it is not a complete summary."""
    value = decode(data, SummarySchema)
    if not isinstance(value, dict):
        raise ValueError("summary.json does not hold a JSON object")
    return value
