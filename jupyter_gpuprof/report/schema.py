"""The JSON Schema of the report summary, generated from the model and checked in beside it.

`python -m jupyter_gpuprof.report.schema` rewrites `summary.schema.json`; the front end's
TypeScript types (`src/generated/summary.ts`, `jlpm gen:types`) are generated from that file,
and the tests fail when either no longer matches the model.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from .model import Summary

SCHEMA_FILE = Path(__file__).with_name("summary.schema.json")


def summary_schema() -> dict[str, object]:
    """The JSON Schema (draft 2020-12) of `Summary`, as msgspec derives it from the classes.

    The root is the Summary object itself rather than a `$ref` to it: TypeScript generators
    resolve references inside `$defs`, not a root that is only a reference. A JSON Schema's
    keys are the standard's, not ours: it is generated and written, never read here.
    """
    generated: dict[str, object] = msgspec.json.schema(Summary)
    _open_free_form(generated)
    defs, root = generated["$defs"], None
    if isinstance(defs, dict):
        root = defs.pop("Summary")
    if not isinstance(root, dict):
        raise TypeError("msgspec's schema of Summary has no $defs entry for it")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **root, "$defs": defs}


def _open_free_form(node: object) -> None:
    """Say explicitly that a free-form object (a finding's `data`) takes any keys.

    msgspec leaves `additionalProperties` out there; the TypeScript generator runs with closed
    objects by default, which would turn such a field into `{}`.
    """
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" not in node:
            node.setdefault("additionalProperties", True)
        for value in node.values():
            _open_free_form(value)
    elif isinstance(node, list):
        for value in node:
            _open_free_form(value)


def schema_text() -> str:
    """The schema file's exact text (stable key order, trailing newline)."""
    return json.dumps(summary_schema(), indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    """Rewrite the checked-in schema from the model."""
    SCHEMA_FILE.write_text(schema_text(), encoding="utf-8")
    print(f"wrote {SCHEMA_FILE.name}")


if __name__ == "__main__":
    main()
