"""A static cost estimate of `x-kubernetes-validations` rules, so a CRD cannot make `validate` hang.

The CEL engine kueueplan uses (`common-expression-language`) has no cost limit or timeout. The API server
has one: it estimates each rule's worst-case cost from the schema before it accepts a CRD (k8s.io/apiserver
pkg/apiserver/schema/cel, `PerCallLimit` 1,000,000) and refuses rules over budget, e.g. a comprehension nested
in a comprehension over lists without `maxItems`. This module estimates the same way, more coarsely:

- a comprehension (`all`, `exists`, `exists_one`, `map`, `filter`) costs the size of what it iterates times
  (1 + the cost of its body); everything else costs 1;
- a size is the schema's `maxItems` / `maxProperties` / `maxLength` where the receiver is a path from `self`
  or from a comprehension variable; otherwise it is unbounded, which the API server derives from the 3 MiB
  request limit (about a million smallest elements).

Rules estimated over MAX_COST are refused before anything is evaluated. What remains is bounded by the
estimate times the real (node-limited) input, so evaluation ends quickly.
"""

from __future__ import annotations

import re
from typing import Any

from kueueplan.errors import InputRefusedError

MAX_COST = 10_000_000  # ten times the API server's per-rule limit: this estimate is coarser than its own
UNBOUNDED = 1_048_576  # a list without maxItems: 3 MiB request / ~3 bytes per smallest element
MACROS = ("all", "exists", "exists_one", "existsOne", "map", "filter")
_MACRO = re.compile(r"\.\s*(" + "|".join(MACROS) + r")\s*\(")
_PATH = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*|\[\s*'[^']*'\s*\]"
                   r'|\[\s*"[^"]*"\s*\])*)\s*$')


class CelCostError(InputRefusedError):
    """A rule whose estimated cost is over budget."""


def estimate(rule: str, schema: dict[str, Any] | None) -> int:
    """Worst-case cost of `rule` evaluated at a node described by `schema`."""
    return _cost(_blank_strings(rule), {"self": schema})


def check_rule(rule: str, schema: dict[str, Any] | None, where: str = "") -> None:
    cost = estimate(rule, schema)
    if cost > MAX_COST:
        raise CelCostError(
            f"x-kubernetes-validations rule{' at ' + where if where else ''} has an estimated cost of {cost:,}, "
            f"over the budget of {MAX_COST:,}: {rule[:120]!r}",
            hint="the API server refuses such a CRD too; bound the lists the rule iterates with maxItems "
                 "(nested comprehensions over unbounded lists cost their sizes multiplied)")


def check_schema(schema: Any, where: str = "") -> None:
    """Every rule of a CRD version's schema, each against its own node (where `self` points)."""
    stack: list[tuple[Any, str]] = [(schema, "")]
    while stack:
        node, path = stack.pop()
        if not isinstance(node, dict):
            continue
        for rule in node.get("x-kubernetes-validations") or []:
            if isinstance(rule, dict) and isinstance(rule.get("rule"), str):
                check_rule(rule["rule"], node, f"{where}{path or '.'}")
        for key, child in (node.get("properties") or {}).items() if isinstance(node.get("properties"), dict) else ():
            stack.append((child, f"{path}.{key}"))
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                stack.append((node[key], f"{path}[*]"))


def _blank_strings(text: str) -> str:
    """String literals replaced by same-length blanks, so parentheses and dots inside them do not count."""
    return re.sub(r"'''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"",
                  lambda m: m.group(0)[0] + " " * (len(m.group(0)) - 2) + m.group(0)[-1], text, flags=re.S)


def _cost(expr: str, env: dict[str, Any]) -> int:
    total, pos = 1, 0
    while True:
        m = _MACRO.search(expr, pos)
        if m is None:
            return total
        close = _closing(expr, m.end() - 1)
        args = _split_args(expr[m.end():close])
        receiver = _PATH.search(expr[:m.start()])
        target = _resolve(receiver.group(1), env) if receiver else None
        size = _size(target)
        inner = dict(env)
        if args and re.fullmatch(r"\s*[A-Za-z_]\w*\s*", args[0]):
            inner[args[0].strip()] = _element(target)
        body = sum(_cost(a, inner) for a in args[1:]) if len(args) > 1 else 1
        total += size * (1 + body)
        if total > MAX_COST * 1000:
            return total  # far over: no need to be exact
        pos = close + 1


def _closing(expr: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(expr)):
        if expr[i] in "([{":
            depth += 1
        elif expr[i] in ")]}":
            depth -= 1
            if depth == 0:
                return i
    return len(expr)


def _split_args(text: str) -> list[str]:
    out, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out


def _resolve(path: str, env: dict[str, Any]) -> Any:
    parts = re.findall(r"\[\s*['\"]([^'\"]*)['\"]\s*\]|([A-Za-z_]\w*)", path)
    names = [quoted or bare for quoted, bare in parts]
    if not names or names[0] not in env:
        return None
    node = env[names[0]]
    for name in names[1:]:
        if not isinstance(node, dict):
            return None
        props = node.get("properties")
        if isinstance(props, dict) and name in props:
            node = props[name]
        elif isinstance(node.get("additionalProperties"), dict):
            node = node["additionalProperties"]
        else:
            return None
    return node


def _size(node: Any) -> int:
    if not isinstance(node, dict):
        return UNBOUNDED
    for key in ("maxItems", "maxProperties", "maxLength"):
        value = node.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return UNBOUNDED


def _element(node: Any) -> Any:
    """The schema of what a comprehension over `node` binds its variable to (items, or map keys)."""
    if not isinstance(node, dict):
        return None
    if isinstance(node.get("items"), dict):
        return node["items"]
    return None
