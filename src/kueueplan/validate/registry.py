"""Rules register themselves with `@rule`; a rule's docstring is its documentation and its test.

A docstring holds a summary, free text, then two fenced YAML blocks introduced by the lines
`Fails:` and `Passes:`. The test suite runs both; `--list-rules -o markdown` renders the catalogue.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kueueplan.validate.finding import SEVERITIES

# A rule yields Hits; the engine turns them into Findings with file, line and object.
RuleFunc = Callable[..., Iterable["Hit"]]


@dataclass(frozen=True, slots=True)
class Hit:
    """What a rule reports: the object, the key path inside it (for the line) and the message."""

    obj: Any  # kueueplan.validate.model.Obj, or None for file-level problems
    path: tuple[str | int, ...]
    message: str
    severity: str | None = None  # overrides the rule's default severity


@dataclass
class Rule:
    id: str
    severity: str
    layer: str
    title: str
    doc: str
    func: RuleFunc
    kinds: tuple[str, ...] = ()  # per-object rules: kinds they look at; () = every object
    scope: str = "object"  # "object": func(obj, ctx); "global": func(ctx)
    examples: dict[str, str] = field(default_factory=dict)
    covers_cel: tuple[tuple[str, str], ...] = ()  # (CRD CEL message, text of this rule's message for that fault)


RULES: dict[str, Rule] = {}

_FENCE = re.compile(r"^(Fails|Passes):\s*\n\s*```yaml\n(.*?)\n\s*```", re.S | re.M)


def rule(rule_id: str, severity: str, layer: str, kinds: tuple[str, ...] = (),
         scope: str = "object", covers_cel: tuple[tuple[str, str], ...] = ()) -> Callable[[RuleFunc], RuleFunc]:
    """Register a rule under a stable ID. Its docstring must carry a failing and a passing example.

    `covers_cel`: CRD CEL rules that this (webhook) rule also checks, at the exact field and naming the values,
    as pairs (the CEL rule's message, a text that this rule's message holds when it reports that fault). When
    both report one object, the KP204 finding is dropped."""
    assert severity in SEVERITIES, severity

    def register(func: RuleFunc) -> RuleFunc:
        if rule_id in RULES:
            raise ValueError(f"rule {rule_id} registered twice")
        doc = inspect.cleandoc(func.__doc__ or "")
        title = doc.split("\n", 1)[0].strip()
        RULES[rule_id] = Rule(rule_id, severity, layer, title, doc, func, kinds, scope, parse_examples(doc),
                              covers_cel)
        return func

    return register


def parse_examples(doc: str) -> dict[str, str]:
    """The `Fails:` / `Passes:` YAML blocks of a docstring, dedented."""
    out: dict[str, str] = {}
    for label, body in _FENCE.findall(doc):
        out[label.lower()] = inspect.cleandoc("\n" + body) + "\n"
    return out


def all_rules() -> list[Rule]:
    from kueueplan.validate import rules as _rules  # noqa: F401  (registers every rule module)

    return [RULES[k] for k in sorted(RULES)]


def object_rules_by_kind() -> tuple[dict[str, list[Rule]], list[Rule]]:
    """Per-kind rule lists for fast dispatch, plus the rules that look at every object."""
    by_kind: dict[str, list[Rule]] = {}
    generic: list[Rule] = []
    for r in all_rules():
        if r.scope != "object":
            continue
        if not r.kinds:
            generic.append(r)
        for kind in r.kinds:
            by_kind.setdefault(kind, []).append(r)
    return by_kind, generic


def iter_global_rules() -> Iterator[Rule]:
    return (r for r in all_rules() if r.scope == "global")
