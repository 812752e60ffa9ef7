"""The committed JSON Schemas equal the generated ones, accept every spec file, and catch mistakes editors should
flag; every spec file carries the yaml-language-server modeline pointing at them."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from kueueplan.spec.schema import COMBINED, schemas, write_schemas

REPO = Path(__file__).resolve().parents[2]
SPEC_FILES = sorted(p for folder in [REPO / "environments", *sorted((REPO / "examples").glob("*/environments"))]
                    for p in folder.rglob("*.yaml"))


def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads((REPO / "schemas" / COMBINED).read_text()))


def test_committed_schemas_are_fresh() -> None:
    committed = {p.name: p.read_text(encoding="utf-8") for p in (REPO / "schemas").glob("*.json")}
    assert committed == schemas(), "schemas/ is stale: run `python -m kueueplan.spec.schema schemas`"


def test_write_schemas_is_idempotent(tmp_path: Path) -> None:
    assert len(write_schemas(tmp_path)) == len(schemas())
    assert write_schemas(tmp_path) == []


@pytest.mark.parametrize("path", SPEC_FILES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_spec_files_pass_the_schema_and_carry_the_modeline(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    first = text.splitlines()[0]
    assert first.startswith("# yaml-language-server: $schema=")
    target = (path.parent / first.split("$schema=", 1)[1]).resolve()
    assert target == (REPO / "schemas" / COMBINED).resolve()
    validator = _validator()
    for doc in yaml.safe_load_all(text):
        assert [e.message for e in validator.iter_errors(doc)] == []


@pytest.mark.parametrize("doc,needle", [
    ({"kind": "Team", "metadata": {"name": "a"}, "spec": {"quotas": [{"flavor": "x", "resources": {"cpu": {
        "nominal_quota": 1}}}]}}, "nominal_quota"),
    ({"kind": "Team", "metadata": {"name": "a"}, "spec": {"queueingStrategy": "Fastest"}}, "Fastest"),
    ({"kind": "Priority", "metadata": {"name": "Bad_Name"}, "spec": {"value": 1}}, "Bad_Name"),
    ({"kind": "Nonsense", "metadata": {"name": "a"}}, "Nonsense"),
])
def test_schema_flags_mistakes(doc: dict, needle: str) -> None:
    doc = {"apiVersion": "kueueplan.io/v1alpha1", **doc}
    messages = [e.message for e in _validator().iter_errors(doc)]
    messages += [m.message for e in _validator().iter_errors(doc) for m in (e.context or [])]
    assert any(needle in m for m in messages), messages
