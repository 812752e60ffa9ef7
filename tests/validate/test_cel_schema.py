"""CRD schema compiler and CEL evaluation: the API server's semantics, one behaviour per test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kueueplan.validate.celrules import CelEvaluator, compile_rule, is_transition_rule, prune, referenced_names
from kueueplan.validate.schema import Issue, SchemaCompiler

from ._crd import cel_validations


def test_every_crd_cel_rule_compiles(crd_paths: list[str]) -> None:
    rules: list[str] = []
    for folder in crd_paths:
        for f in sorted(Path(folder).glob("*.yaml")):
            rules += [v["rule"] for v in cel_validations(yaml.load(f.read_text(), Loader=yaml.CSafeLoader))]
    assert len(rules) > 40
    broken = [r for r in set(rules) if compile_rule(r, "").program is None]
    assert broken == []
    assert any(is_transition_rule(r) for r in rules)  # present, and skipped at evaluation


def _check(schema: dict[str, Any], value: Any, crd: bool = True) -> list[Issue]:
    issues: list[Issue] = []
    SchemaCompiler(crd=crd, cel_hook=CelEvaluator()).compile_root(schema)(value, (), issues)
    return issues


OBJ = {"type": "object", "properties": {"a": {"type": "string"}, "n": {"type": "integer", "minimum": 1}}}


def test_unknown_field_and_type_errors() -> None:
    issues = _check(OBJ, {"a": 1, "b": True, "n": 0})
    kinds = sorted((p, k) for p, k, _ in issues)
    assert kinds == [(("a",), "schema"), (("b",), "unknown-field"), (("n",), "schema")]


def test_null_in_non_nullable_crd_field_is_dropped_like_the_server() -> None:
    assert _check(OBJ, {"a": None}) == []
    schema = {**OBJ, "required": ["a"]}
    assert [k for _, k, _ in _check(schema, {"a": None})] == ["schema"]


def test_int_or_string_quantity_pattern_applies_to_strings_only() -> None:
    schema = {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}],
              "pattern": r"^(\+|-)?[0-9]+(Gi|m)?$"}
    assert _check(schema, 4) == [] and _check(schema, "4Gi") == []
    assert len(_check(schema, "four")) == 1
    assert len(_check(schema, 1.5)) == 1  # a float is neither an integer nor a string


def test_list_map_keys_must_be_unique() -> None:
    schema = {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
              "items": {"type": "object", "properties": {"name": {"type": "string"}}}}
    issues = _check(schema, [{"name": "a"}, {"name": "b"}, {"name": "a"}])
    assert [(p, k) for p, k, _ in issues] == [((2,), "duplicate")]


def test_go_case_insensitive_regex() -> None:
    schema = {"type": "string", "pattern": "^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$"}
    assert _check(schema, "ProvisioningRequestConfig") == []
    assert len(_check(schema, "9lives")) == 1


def _cel(rule: str, value: Any, schema: dict[str, Any] | None = None) -> str | None:
    node = {**(schema or {}), "x-kubernetes-validations": [{"rule": rule, "message": "nope"}]}
    return CelEvaluator().evaluate(compile_rule(rule, "nope"), node, value)


def test_cel_rule_reading_a_missing_field_fails() -> None:
    failure = _cel("self.nodeLabels.size() >= 1", {"topologyName": "t"})
    assert failure is not None and "could not be evaluated" in failure


def test_cel_defaults_are_applied_before_evaluation() -> None:
    schema = {"type": "object", "properties": {
        "whenCanBorrow": {"type": "string", "default": "MayStopSearch"},
        "whenCanPreempt": {"type": "string", "default": "TryNextFlavor"},
        "preference": {"type": "string"}}}
    rule = "!has(self.preference) || (self.whenCanBorrow == 'TryNextFlavor' && self.whenCanPreempt == 'TryNextFlavor')"
    assert _cel(rule, {"preference": "BorrowingOverPreemption"}, schema) == "nope"
    assert _cel(rule, {"preference": "BorrowingOverPreemption", "whenCanBorrow": "TryNextFlavor"}, schema) is None


def test_cel_k8s_extensions() -> None:
    assert _cel("[1, 2, 3].exists_one(x, x == 2)", {}) is None
    assert _cel("'ABC'.matches('^(?i)[a-z]+$')", {}) is None
    assert _cel("isQuantity('500m') && !isQuantity('five')", {}) is None
    assert _cel("quantity('1Gi') > quantity('1G')", {}) is None
    # the rest of the Kubernetes library (kueueplan.validate.celk8s), as CRD rules get it on the server
    assert _cel("self.name.lowerAscii() == self.name && self.name.split('-').size() == 2", {"name": "ab-c"}) is None
    assert _cel("self.name.lowerAscii() == self.name", {"name": "Ab"}) == "nope"
    assert _cel("self.levels.isSorted() && quantity(self.q).isLessThan(quantity('1Gi'))",
                {"levels": [1, 2], "q": "1Mi"}) is None


def test_pruning_keeps_what_the_rule_reads_and_refuses_whole_object_equality() -> None:
    assert referenced_names("size(self.filter(i, size(self.filter(j, j == i)) > 1)) == 0") is None
    names = referenced_names("self.flavors.all(x, size(x.resources) == size(self.coveredResources))")
    schema = {"type": "object", "properties": {
        "coveredResources": {"type": "array", "items": {"type": "string"}},
        "flavors": {"type": "array", "items": {"type": "object", "properties": {
            "name": {"type": "string"}, "resources": {"type": "array", "items": {"type": "object"}}}}}}}
    value = {"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [{"name": "cpu"}]}]}
    assert prune(value, schema, names) == {"coveredResources": ["cpu"], "flavors": [{"resources": [{"name": "cpu"}]}]}


@pytest.mark.parametrize("levels,ok", [
    ([{"nodeLabel": "rack"}, {"nodeLabel": "kubernetes.io/hostname"}], True),
    ([{"nodeLabel": "rack"}, {"nodeLabel": "rack"}], False),
])
def test_whole_object_uniqueness_rule_is_exact(levels: list[dict[str, str]], ok: bool) -> None:
    rule = "size(self.filter(i, size(self.filter(j, j == i)) > 1)) == 0"
    schema = {"type": "array", "items": {"type": "object", "properties": {"nodeLabel": {"type": "string"}}}}
    assert (_cel(rule, levels, schema) is None) is ok


def test_release_manifests_yaml_is_a_crd_source(crd_paths: list[str], tmp_path: Path) -> None:
    from kueueplan.validate.crds import load_crds

    parts = [f.read_text() for f in sorted(Path(crd_paths[0]).glob("*.yaml"))]
    deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: kueue-controller-manager\n"
    (tmp_path / "manifests.yaml").write_text("\n---\n".join([deployment, *parts]))
    crds = load_crds([tmp_path / "manifests.yaml"])
    versions = crds.lookup("kueue.x-k8s.io", "ClusterQueue")
    assert versions is not None and versions["v1beta1"].deprecated and versions["v1beta2"].storage
    assert len(crds.versions) == len(parts)


def test_crd_files_are_scanned_then_parsed_only_for_kinds_in_use(crd_paths: list[str], tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Before the parsed cache exists, CRDs are read by pattern (group, kind, versions) and parsed on first
    lookup: the pattern must agree with a full parse for every upstream CRD."""
    from kueueplan.validate import crds as crds_mod

    monkeypatch.setenv("KUEUEPLAN_CACHE_DIR", str(tmp_path / "cache"))
    for folder in crd_paths:
        for f in sorted(Path(folder).glob("*.yaml")):
            docs = [d for d in yaml.load_all(f.read_text(), Loader=yaml.CSafeLoader) if isinstance(d, dict)
                    and d.get("kind") == "CustomResourceDefinition"]
            want = [(d["spec"]["group"], d["spec"]["names"]["kind"], [v["name"] for v in d["spec"]["versions"]])
                    for d in docs]
            assert crds_mod._scan(f.read_bytes()) == want, f.name
    crds_mod._LOADED.clear()
    crds = crds_mod.load_crds(crd_paths)
    assert crds.versions == {} and ("ray.io", "RayJob") in crds.pending
    described = {(c["group"], c["kind"]): c["versions"] for c in crds.describe()}
    assert described[("kueue.x-k8s.io", "ClusterQueue")] == ["v1beta1", "v1beta2"]
    assert sorted(crds.lookup("kueue.x-k8s.io", "ClusterQueue") or {}) == ["v1beta1", "v1beta2"]
    assert set(crds.versions) == {("kueue.x-k8s.io", "ClusterQueue")}  # nothing else parsed
    assert {(c["group"], c["kind"]): c["versions"] for c in crds.describe()} == described
    crds_mod._LOADED.clear()
    again = crds_mod.load_crds(crd_paths)  # the parsed file is cached now: read eagerly from JSON
    assert ("kueue.x-k8s.io", "ClusterQueue") in again.versions and ("ray.io", "RayJob") in again.pending
    crds_mod._LOADED.clear()
