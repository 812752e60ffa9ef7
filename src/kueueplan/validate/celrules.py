"""`x-kubernetes-validations` CEL rules, evaluated as the API server does.

Library: `common-expression-language` (import `cel`, a Rust CEL engine). Measured on the 32 distinct
non-transition rules of the Kueue, KubeRay and autoscaler CRDs (`benchmarks/bench_validate.py
--cel-libraries`, docs/validate.md): it compiles all of them in ~3 ms (cel-python: ~20 ms) and evaluates a
resource-group rule in ~75 us (cel-python: ~800 us).
Most of the cost is converting Python values to CEL values, so each rule sees `self` pruned to the
fields it names (with the schema's defaults filled in, as the API server defaults before validating).

Server semantics kept: a rule that errors (e.g. reads a missing field) fails; transition rules
(`oldSelf`) are skipped, since a manifest is a create; Go regexes `^(?i)...` work (the `cel` crate uses
RE2 syntax); the Kubernetes library functions the engine lacks (kueueplan.validate.celk8s: strings, lists,
regex, `isQuantity`, `quantity` as a number, ...) are registered as custom functions.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import re
from dataclasses import dataclass
from functools import lru_cache
import pathlib
from typing import Any

from kueueplan.validate.schema import Issue, Path


def _load_cel() -> Any:
    """The `cel` Rust extension without its package __init__, which imports a REPL (prompt_toolkit, 120 ms)."""
    try:
        spec = importlib.util.find_spec("cel")
        folder = pathlib.Path(next(iter(spec.submodule_search_locations or [])))  # type: ignore[union-attr]
        binary = next(folder.glob("cel.*.so"), None) or next(folder.glob("cel.*.pyd"))
        loader = importlib.machinery.ExtensionFileLoader("cel.cel", str(binary))
        module_spec = importlib.util.spec_from_file_location("cel.cel", binary, loader=loader)
        module = importlib.util.module_from_spec(module_spec)  # type: ignore[arg-type]
        loader.exec_module(module)
        module.compile  # noqa: B018 - the API we need must be there
        return module
    except Exception:  # noqa: BLE001 - any surprise: the ordinary import
        import cel as module

        return module


cel = _load_cel()

_IDENT_AFTER_DOT = re.compile(r"\.\s*([A-Za-z_][A-Za-z0-9_]*)")
_QUOTED_INDEX = re.compile(r"\[\s*['\"]([^'\"]+)['\"]\s*\]")
_BARE_EQ = re.compile(r"(?<![.\w])([A-Za-z_]\w*)\s*(?:==|!=)\s*([A-Za-z_]\w*)(?![\w.(\[])")
_LITERALS = {"true", "false", "null"}


@dataclass
class CompiledRule:
    rule: str
    message: str
    program: Any  # cel.Program, or None when the rule could not compile
    names: frozenset[str] | None  # fields the rule reads; None = pass `self` whole
    error: str | None = None
    field_path: str | None = None


def referenced_names(rule: str) -> frozenset[str] | None:
    """Field names a rule can read, or None when pruning could change its meaning.

    Pruning is unsafe when two non-literal identifiers are compared directly (`j == i` compares whole
    objects, which must keep all their fields).
    """
    for left, right in _BARE_EQ.findall(rule):
        if left not in _LITERALS and right not in _LITERALS:
            return None
    return frozenset(_IDENT_AFTER_DOT.findall(rule)) | frozenset(_QUOTED_INDEX.findall(rule))


def is_transition_rule(rule: str) -> bool:
    return re.search(r"\boldSelf\b", rule) is not None


@lru_cache(maxsize=4096)
def compile_rule(rule: str, message: str, field_path: str | None = None) -> CompiledRule:
    try:
        program = cel.compile(rule)
    except Exception as err:  # noqa: BLE001 - any compile failure is reported, never raised
        return CompiledRule(rule, message, None, None, error=str(err), field_path=field_path)
    return CompiledRule(rule, message, program, referenced_names(rule), field_path=field_path)


_NODE_RULES: dict[int, tuple[dict[str, Any], list[CompiledRule]]] = {}  # keeps the node alive: ids stay unique


def rules_of(node: dict[str, Any]) -> list[CompiledRule]:
    """Compiled create-time rules of a schema node (cached per node)."""
    hit = _NODE_RULES.get(id(node))
    if hit is not None:
        return hit[1]
    compiled = [compile_rule(v["rule"], v.get("message") or v.get("messageExpression") or "", v.get("fieldPath"))
                for v in node.get("x-kubernetes-validations") or []
                if isinstance(v, dict) and isinstance(v.get("rule"), str) and not is_transition_rule(v["rule"])]
    _NODE_RULES[id(node)] = (node, compiled)
    return compiled


def prune(value: Any, schema: dict[str, Any], names: frozenset[str] | None) -> Any:
    """`value` limited to the fields a rule names, with schema defaults filled in (as the server defaults)."""
    if isinstance(value, dict):
        props = schema.get("properties")
        if props is not None:
            out: dict[str, Any] = {}
            for key, sub in props.items():
                if names is not None and key not in names:
                    continue
                if key in value and value[key] is not None:
                    out[key] = prune(value[key], sub, names)
                elif "default" in sub:
                    out[key] = prune(_copy(sub["default"]), sub, names)
            if names is None or schema.get("x-kubernetes-preserve-unknown-fields"):
                for key, item in value.items():
                    if key not in props and (names is None or key in names):
                        out[key] = item
            return out
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            return {k: prune(v, extra, names) for k, v in value.items()}
        return value
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            return [prune(v, items, names) for v in value]
        return value
    if isinstance(value, float) and value.is_integer() and schema.get("type") == "integer":
        return int(value)
    return value


def over_bounds(value: Any, schema: dict[str, Any]) -> bool:
    """Whether `value`, or anything in it that `schema` describes, is longer than its maxItems, maxProperties
    or maxLength."""
    if isinstance(value, str):
        return len(value) > schema.get("maxLength", len(value))
    if isinstance(value, list):
        items = schema.get("items")
        return len(value) > schema.get("maxItems", len(value)) or isinstance(items, dict) and any(
            over_bounds(v, items) for v in value)
    if isinstance(value, dict):
        if len(value) > schema.get("maxProperties", len(value)):
            return True
        props, extra = schema.get("properties") or {}, schema.get("additionalProperties")
        return any(over_bounds(v, props[k] if k in props else extra) for k, v in value.items()
                   if isinstance(props.get(k, extra), dict))
    return False


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


class CelEvaluator:
    """Evaluates the rules of schema nodes; memoises results per (rule, pruned value)."""

    def __init__(self) -> None:
        self._memo: dict[tuple[str, str], str | None] = {}
        self.evaluations = 0

    def __call__(self, node: dict[str, Any], value: Any, path: Path, out: list[Issue]) -> None:
        for compiled in rules_of(node):
            failure = self.evaluate(compiled, node, value)
            if failure is not None:
                out.append((path, "cel", failure))

    def evaluate(self, compiled: CompiledRule, node: dict[str, Any], value: Any) -> str | None:
        """None when the rule holds, else the message the API server would print."""
        if compiled.program is None:
            return f"rule {compiled.rule!r} does not compile: {compiled.error}"
        pruned = prune(value, node, compiled.names)
        if over_bounds(pruned, node):
            # celcost bounded the rule by the schema's maxItems/maxProperties/maxLength; a value past them
            # (spec.levels with 100,000 items where Kueue allows 16) would run a nested comprehension for hours.
            # The API server stops such a rule at its runtime cost budget (k8s.io/apiextensions-apiserver
            # pkg/apiserver/schema/cel: RuntimeCELCostBudget) and rejects the object on the bound anyway, which
            # the schema check reports.
            return None
        key = (compiled.rule, repr(pruned))
        if key in self._memo:
            return self._memo[key]
        self.evaluations += 1
        try:
            result = compiled.program.execute(_activation(compiled.rule, pruned))
            failure = None if result is True else _message(compiled)
        except Exception as err:  # noqa: BLE001 - an evaluation error fails the rule, as on the server
            failure = f"{_message(compiled)} (the rule could not be evaluated: {_error_text(err)})"
        self._memo[key] = failure
        return failure


def _activation(rule: str, value: Any) -> Any:
    functions = _library_for(rule)
    if not functions:
        return {"self": value}
    ctx = cel.Context({"self": value})
    for name, func in functions.items():
        ctx.add_function(name, func)
    return ctx


@lru_cache(maxsize=4096)
def _library_for(rule: str) -> dict[str, Any]:
    """The Kubernetes CEL library functions a rule calls (kueueplan.validate.celk8s: strings, lists, regex,
    quantity, ...), as the API server offers them to CRD rules too."""
    from kueueplan.validate import celk8s  # imports this module's engine: loaded lazily

    return celk8s.functions_used(rule)


def _message(compiled: CompiledRule) -> str:
    return compiled.message or f"failed rule: {compiled.rule}"


def _error_text(err: Exception) -> str:
    if isinstance(err, KeyError):
        return f"no such key: {err.args[0] if err.args else ''}"
    text = str(err).strip() or type(err).__name__
    return text.splitlines()[0][:200]
