"""Every rule documents a failing and a passing example; both run here under the rule's ID."""

from __future__ import annotations

from pathlib import Path

import pytest

from kueueplan.validate import Result, validate
from kueueplan.validate.registry import all_rules

RULES = all_rules()


def run_text(tmp: Path, text: str, crds: list[str] | None, name: str = "example.yaml") -> Result:
    """Validate YAML text the way the CLI validates a folder holding it."""
    folder = tmp / "in"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text)
    return validate([str(folder)], crds=crds, policies=[])


def rules_of(result: Result) -> set[str]:
    return {f.rule for f in result.findings}


def test_every_rule_has_both_examples() -> None:
    missing = [r.id for r in RULES if set(r.examples) != {"fails", "passes"}]
    assert missing == []


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_failing_example_is_caught(rule, tmp_path: Path, crd_paths: list[str]) -> None:
    result = run_text(tmp_path, rule.examples["fails"], crd_paths)
    hits = [f for f in result.findings if f.rule == rule.id]
    assert hits, f"{rule.id} not reported; got {[(f.rule, f.message) for f in result.findings]}"
    assert all(f.message for f in hits)


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_passing_example_is_clean(rule, tmp_path: Path, crd_paths: list[str]) -> None:
    result = run_text(tmp_path, rule.examples["passes"], crd_paths)
    assert rule.id not in rules_of(result), [f for f in result.findings if f.rule == rule.id]


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_examples_hold_with_the_schema_pack_alone(rule, tmp_path: Path) -> None:
    """No --crds and no ../shared: the built-in schema pack is enough for every documented example."""
    assert rule.id in rules_of(run_text(tmp_path, rule.examples["fails"], None))
    (tmp_path / "p").mkdir()
    assert rule.id not in rules_of(run_text(tmp_path / "p", rule.examples["passes"], None))
