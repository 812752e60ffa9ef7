"""Validation findings as text (grouped by file), JSON (versioned), SARIF 2.1.0, JUnit XML and GitHub annotations.

Every format is deterministic: findings arrive sorted by file, line, rule, object and message.
"""

from __future__ import annotations

from collections import Counter

import json
from pathlib import Path
from collections.abc import Iterable
from dataclasses import replace
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from kueueplan import __version__
from kueueplan.report.escape import display_text, gh_data, gh_property, one_line, xml_text
from kueueplan.validate.engine import Result
from kueueplan.validate.finding import Finding

JSON_SCHEMA_VERSION = 1
FORMATS = ("text", "json", "sarif", "junit", "github")
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def render(result: Result, fmt: str, rules: Iterable[Any] = (), fail_on: str = "error") -> str:
    result = _displayable(result)
    if fmt == "text":
        return to_text(result, fail_on)
    if fmt == "json":
        return to_json(result, fail_on)
    if fmt == "sarif":
        return to_sarif(result, rules)
    if fmt == "junit":
        return to_junit(result)
    if fmt == "github":
        return to_github(result)
    raise ValueError(f"unknown format {fmt!r}")


def _displayable(result: Result) -> Result:
    """File names and messages that every format can encode (non-UTF-8 file names included)."""
    findings = [replace(f, file=display_text(f.file), object=display_text(f.object), message=display_text(f.message))
                for f in result.findings]
    return replace(result, findings=findings, files=[display_text(f) for f in result.files])


def summary(result: Result, fail_on: str) -> dict[str, Any]:
    counts = result.counts()
    return {
        "errors": counts["error"], "warnings": counts["warning"], "infos": counts["info"],
        "objects": result.objects, "files": len(result.files), "failOn": fail_on,
        "passed": not result.fails(fail_on),
        "crds": {"sources": result.crd_sources, "missing": result.without_crd, "skipped": result.schema_skipped,
                 "used": [f"{c['kind']}.{c['group']}/{v}" for c in result.crds for v in c["used"]],
                 "loaded": [f"{c['kind']}.{c['group']} ({', '.join(c['versions'])})" for c in result.crds]},
        "kubernetesSchemas": result.k8s_schema_version,
        "policies": result.policy_files,
        "kustomizations": [{"file": k, "objects": "raw"} for k in result.kustomizations],
    }


def to_json(result: Result, fail_on: str = "error") -> str:
    doc = {"version": JSON_SCHEMA_VERSION, "tool": f"kueueplan {__version__}",
           "findings": [f.as_dict() for f in result.findings], "summary": summary(result, fail_on)}
    return json.dumps(doc, indent=2, sort_keys=False) + "\n"


def to_text(result: Result, fail_on: str = "error") -> str:
    """Findings grouped by file. Info findings are listed only with --fail-on info; otherwise counted by rule."""
    lines: list[str] = []
    current: str | None = None
    shown = [f for f in result.findings if fail_on == "info" or f.severity != "info"]
    for f in shown:
        file = f.file or "<input>"
        if file != current:
            if current is not None:
                lines.append("")
            lines.append(file)
            current = file
        where = (f"  {f.line}:{f.column}:" if f.column else f"  {f.line}:") if f.line else "  -:"
        obj = f" {f.object}" if f.object else ""
        lines.append(f"{where} {f.severity} {f.rule}{obj}: {f.message}")
    if lines:
        lines.append("")
    lines.append(_summary_line(result, fail_on))
    hidden = Counter(f.rule for f in result.findings if f not in shown)
    if hidden:
        by_rule = ", ".join(f"{rule} x{n}" for rule, n in sorted(hidden.items()))
        lines.append(f"info: {sum(hidden.values())} finding(s) not listed ({by_rule}); "
                     "use --fail-on info or -o json to see them")
    if result.crd_sources:
        used = sorted({f"{c['kind']}/{v}" for c in result.crds for v in c["used"]})
        lines.append(f"CRDs: {', '.join(result.crd_sources)}" + (f" (used: {', '.join(used)})" if used else ""))
    for k in result.kustomizations:
        folder = str(Path(k).parent)
        lines.append(f"note: {folder} is a kustomize folder: its findings are on the raw files, before kustomize "
                     f"renders them (patches, namePrefix, generators); check the rendered objects with "
                     f"`kustomize build {folder} | kueueplan validate -`")
    for kind, why in sorted(result.schema_skipped.items()):
        lines.append(f"schema and CEL checks skipped for {kind}: {why}")
    rest = [k for k in result.without_crd if k not in result.schema_skipped]
    if rest:
        lines.append(f"no CRD for: {', '.join(rest)} (schema and CEL rules not checked; pass it with --crds)")
    # file, object and field names come from the PR: a newline in one could start a '::error::' in a CI log
    return "\n".join(one_line(line) for line in lines) + "\n"


def _summary_line(result: Result, fail_on: str) -> str:
    c = result.counts()
    verdict = "FAILED" if result.fails(fail_on) else "passed"
    return (f"{verdict}: {c['error']} error(s), {c['warning']} warning(s), {c['info']} info in {result.objects} "
            f"object(s) from {len(result.files)} input(s) (--fail-on {fail_on})")


def to_github(result: Result) -> str:
    """GitHub Actions workflow commands: one annotation per finding."""
    out = []
    for f in result.findings:
        props = [f"title={_gh_prop(f.rule + (' ' + f.object if f.object else ''))}"]
        if f.file:
            props.insert(0, f"file={_gh_prop(f.file)}")
        if f.line:
            props.insert(1, f"line={f.line}")
            if f.column:
                props.insert(2, f"col={f.column}")
        out.append(f"::{_GITHUB_LEVEL[f.severity]} {','.join(props)}::{_gh_data(f.message)}")
    return "\n".join(out) + ("\n" if out else "")


_gh_data, _gh_prop = gh_data, gh_property  # workflow-command escaping lives in report/escape.py


def to_sarif(result: Result, rules: Iterable[Any] = ()) -> str:
    rule_list = sorted({r.id: r for r in rules}.values(), key=lambda r: r.id)
    index = {r.id: i for i, r in enumerate(rule_list)}
    sarif_rules = [{
        "id": r.id, "name": r.func.__name__,
        "shortDescription": {"text": r.title},
        "fullDescription": {"text": r.doc.split("Fails:")[0].strip()},
        "defaultConfiguration": {"level": _SARIF_LEVEL[r.severity]},
        "properties": {"layer": r.layer},
    } for r in rule_list]
    results = []
    for f in result.findings:
        entry: dict[str, Any] = {"ruleId": f.rule, "level": _SARIF_LEVEL[f.severity],
                                 "message": {"text": f"{f.object}: {f.message}" if f.object else f.message}}
        if f.rule in index:
            entry["ruleIndex"] = index[f.rule]
        if f.file:
            region = {"startLine": f.line} if f.line else {}
            if f.line and f.column:
                region["startColumn"] = f.column
            location: dict[str, Any] = {"artifactLocation": {"uri": f.file}}
            if region:
                location["region"] = region
            entry["locations"] = [{"physicalLocation": location}]
        results.append(entry)
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "kueueplan", "version": __version__, "rules": sarif_rules}},
                  "results": results}],
    }
    return json.dumps(doc, indent=2) + "\n"


def to_junit(result: Result) -> str:
    """One test case per input file; each error finding is a failure (warnings/infos go to system-out)."""
    by_file: dict[str, list[Finding]] = {f: [] for f in result.files}
    for f in result.findings:
        by_file.setdefault(f.file or "<input>", []).append(f)
    failures = sum(1 for f in result.findings if f.severity == "error")
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<testsuites name="kueueplan validate" tests="{len(by_file)}" failures="{failures}">',
           f'  <testsuite name="kueueplan validate" tests="{len(by_file)}" failures="{failures}">']
    for file in sorted(by_file):
        items = by_file[file]
        errors = [f for f in items if f.severity == "error"]
        out.append(f"    <testcase classname=\"kueueplan.validate\" name={quoteattr(xml_text(file))}>")
        for f in errors:
            text = f"{f.file}:{f.line or ''} {f.object} {f.message}"
            out.append(f"      <failure type={quoteattr(f.rule)} message={quoteattr(xml_text(f.message))}>"
                       f"{escape(xml_text(text))}</failure>")
        others = [f for f in items if f.severity != "error"]
        if others:
            text = "\n".join(f"{f.severity} {f.rule} {f.line or ''} {f.object}: {f.message}" for f in others)
            out.append(f"      <system-out>{escape(xml_text(text))}</system-out>")
        out.append("    </testcase>")
    out += ["  </testsuite>", "</testsuites>"]
    return "\n".join(out) + "\n"


def rules_markdown(rules: Iterable[Any]) -> str:
    """The rule catalogue (docs/rules.md), generated from the rule docstrings."""
    lines = ["# kueueplan validate: rule catalogue", "",
             "Generated by `kueueplan validate --list-rules -o markdown` from the rules' docstrings; "
             "do not edit by hand.", "", rules_table(rules, anchor="#")]
    for r in sorted(rules, key=lambda r: r.id):
        lines += ["", f"## {r.id}", "", f"*{r.severity}, layer {r.layer}*", "", r.doc.strip()]
    return "\n".join(lines) + "\n"


def rules_table(rules: Iterable[Any], anchor: str) -> str:
    """The catalogue's summary table; `anchor` prefixes each rule's link (docs/rules.md or the README)."""
    lines = ["| ID | severity | layer | rule |", "|---|---|---|---|"]
    for r in sorted(rules, key=lambda r: r.id):
        lines.append(f"| [{r.id}]({anchor}{r.id.lower()}) | {r.severity} | {r.layer} | {r.title.replace('|', '/')} |")
    return "\n".join(lines)


def rules_text(rules: Iterable[Any]) -> str:
    return "".join(f"{r.id}  {r.severity:<7}  {r.layer:<14}  {r.title}\n" for r in sorted(rules, key=lambda r: r.id))
