"""JSON Schema of the spec, generated from the pydantic models (for editors via the yaml-language-server modeline).

`python -m kueueplan.spec.schema [OUT_DIR]` (default: schemas/) writes:
- kueueplan.schema.json: one schema for any spec document, dispatching on `kind`;
- <kind>.schema.json: one per kind.
Output is deterministic (sorted keys), so a test can compare it with the committed files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic.json_schema import models_json_schema

from kueueplan.kube.apiversion import KUEUEPLAN_API
from kueueplan.spec.models import DOCUMENT_MODELS

SCHEMA_ID = "https://kueueplan.io/schemas/v1alpha1"
COMBINED = "kueueplan.schema.json"


def _text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def schemas() -> dict[str, str]:
    """File name -> JSON text of every schema."""
    models = [(DOCUMENT_MODELS[kind], "validation") for kind in DOCUMENT_MODELS]
    refs, defs = models_json_schema(models, ref_template="#/$defs/{model}")
    definitions = defs.get("$defs", {})
    out: dict[str, str] = {}
    rules = []
    for kind, model in DOCUMENT_MODELS.items():
        ref = refs[(model, "validation")]["$ref"]
        rules.append({"if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]}, "then": {"$ref": ref}})
        single = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": f"{SCHEMA_ID}/{kind.lower()}.schema.json",
            "title": f"kueueplan {kind}",
            "$ref": ref,
            "$defs": definitions,
        }
        out[f"{kind.lower()}.schema.json"] = _text(single)
    combined = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{SCHEMA_ID}/{COMBINED}",
        "title": f"kueueplan spec document ({KUEUEPLAN_API})",
        "type": "object",
        "required": ["apiVersion", "kind", "metadata"],
        "properties": {"apiVersion": {"const": KUEUEPLAN_API}, "kind": {"enum": list(DOCUMENT_MODELS)}},
        "allOf": rules,
        "$defs": definitions,
    }
    out[COMBINED] = _text(combined)
    return out


def write_schemas(out_dir: str | Path = "schemas") -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in sorted(schemas().items()):
        path = out / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out_dir = args[0] if args else "schemas"
    written = write_schemas(out_dir)
    print(f"{len(written)} schema file(s) updated in {out_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
