"""Runs every rule over the inputs and returns sorted, de-duplicated findings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kueueplan.errors import InputRefusedError
from kueueplan.validate.finding import Finding, severity_rank
from kueueplan.validate.model import Context, Obj
from kueueplan.validate.registry import Hit, Rule, all_rules, iter_global_rules, object_rules_by_kind


@dataclass
class Result:
    findings: list[Finding]
    objects: int
    files: list[str]
    crds: list[dict[str, Any]] = field(default_factory=list)
    crd_sources: list[str] = field(default_factory=list)
    k8s_schema_version: str | None = None
    policy_files: list[str] = field(default_factory=list)
    without_crd: list[str] = field(default_factory=list)  # custom kinds among the inputs with no CRD loaded
    kustomizations: list[str] = field(default_factory=list)  # kustomization files: findings are on raw objects
    schema_skipped: dict[str, str] = field(default_factory=dict)  # "Kind.group" -> why the pack had no schema

    def counts(self) -> dict[str, int]:
        out = {"error": 0, "warning": 0, "info": 0}
        for f in self.findings:
            out[f.severity] += 1
        return out

    def fails(self, fail_on: str) -> bool:
        threshold = severity_rank(fail_on)
        return any(severity_rank(f.severity) <= threshold for f in self.findings)


def run_rules(ctx: Context, preliminary: list[Finding], select: set[str] | None = None) -> list[Finding]:
    """Per-object rules by kind, then global rules; hits become findings with file, line and object."""
    by_kind, generic = object_rules_by_kind()
    findings = list(preliminary)
    per_kind: dict[str, list[Rule]] = {}  # the selected rules of each kind, chosen once (not once per object)
    for obj in ctx.objects:
        rules = per_kind.get(obj.kind)
        if rules is None:
            rules = per_kind[obj.kind] = [r for r in generic + by_kind.get(obj.kind, [])
                                          if select is None or r.id in select]
        for r in rules:
            findings.extend(_guarded(r, obj, obj, ctx))
    for r in iter_global_rules():
        if select is None or r.id in select:
            findings.extend(_guarded(r, None, ctx))
    return sorted(_without_covered_cel(set(findings)), key=Finding.sort_key)


CEL_RULE = "KP204"


def _without_covered_cel(findings: set[Finding]) -> set[Finding]:
    """One fault, one finding: drop a CEL failure when a rule that checks the same thing (Rule.covers_cel)
    reported that fault on the same object; that rule points at the exact field and names the values."""
    covers = {r.id: r.covers_cel for r in all_rules() if r.covers_cel}
    covered: dict[tuple[str, str], set[str]] = {}
    for f in findings:
        for cel_message, own_text in covers.get(f.rule, ()):
            if own_text in f.message:
                covered.setdefault((f.file, f.object), set()).add(cel_message)
    if not covered:
        return findings
    return {f for f in findings if f.rule != CEL_RULE
            or not any(message in f.message for message in covered.get((f.file, f.object), ()))}


def _guarded(r: Rule, obj: Obj | None, *args: Any) -> list[Finding]:
    """r.func(*args)'s findings; a rule that trips over input it did not expect reports that, instead of a
    traceback."""
    try:
        return _to_findings(r, r.func(*args))
    except (RecursionError, InputRefusedError):
        raise  # input refused outright (a CRD over the CEL budget, malformed, over a limit): exit 2
    except Exception as err:  # noqa: BLE001 - never let a rule bug stop the whole validation
        where = Hit(obj, (), f"internal error while checking this object ({type(err).__name__}: {err}); the "
                             "object is probably malformed elsewhere too — please report this")
        return [hit_to_finding(r.id, "error", where)]


def _to_findings(r: Rule, hits: Any) -> list[Finding]:
    out = []
    for hit in hits or ():
        out.append(hit_to_finding(r.id, hit.severity or r.severity, hit))
    return out


def hit_to_finding(rule_id: str, severity: str, hit: Hit) -> Finding:
    obj: Obj | None = hit.obj
    if obj is None:
        return Finding(rule_id, severity, "", None, "", hit.message)
    file, line = obj.where(hit.path)
    return Finding(rule_id, severity, file, line, obj.ref, hit.message)
