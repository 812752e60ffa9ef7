"""Property test: any shape of Kueue / KubeRay / batch object gives findings, never an exception."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pytest
import yaml

from kueueplan.validate.crds import load_crds
from kueueplan.validate.engine import run_rules
from kueueplan.validate.model import Context, make_obj
from kueueplan.validate.policy import load_policies
from kueueplan.validate.registry import all_rules

KINDS = [("kueue.x-k8s.io/v1beta2", "ClusterQueue"), ("kueue.x-k8s.io/v1beta1", "ClusterQueue"),
         ("kueue.x-k8s.io/v1beta2", "LocalQueue"), ("kueue.x-k8s.io/v1beta2", "Cohort"),
         ("kueue.x-k8s.io/v1beta2", "ResourceFlavor"), ("kueue.x-k8s.io/v1beta2", "Workload"),
         ("kueue.x-k8s.io/v1beta2", "WorkloadPriorityClass"), ("ray.io/v1", "RayJob"), ("ray.io/v1", "RayCluster"),
         ("batch/v1", "Job"), ("v1", "Pod"), ("v1", "Namespace"), ("config.kueue.x-k8s.io/v1beta2", "Configuration"),
         ("kueue.x-k8s.io/v1beta2", "Topology"), ("kueue.x-k8s.io/v1beta2", "AdmissionCheck"),
         ("kueue.x-k8s.io/v1beta2", "MultiKueueConfig"), ("jobset.x-k8s.io/v1alpha2", "JobSet")]
KEYS = ["spec", "metadata", "name", "namespace", "labels", "annotations", "resourceGroups", "coveredResources",
        "flavors", "resources", "nominalQuota", "borrowingLimit", "lendingLimit", "cohortName", "cohort",
        "clusterQueue", "namespaceSelector", "matchLabels", "matchExpressions", "key", "operator", "values",
        "podSets", "template", "containers", "requests", "limits", "cpu", "rayClusterSpec", "headGroupSpec",
        "workerGroupSpecs", "groupName", "replicas", "shutdownAfterJobFinishes", "clusterSelector", "nodeTaints",
        "effect", "tolerations", "parentName", "admissionChecksStrategy", "admissionChecks", "onFlavors",
        "kueue.x-k8s.io/queue-name", "kueue.x-k8s.io/priority-class", "fairSharing", "weight", "preemption",
        "value", "parallelism", "waitForPodsReady", "timeout", "minCount", "count", "topologyName", "levels",
        "nodeLabel", "controllerName", "parameters", "clusters", "topologyRequest", "required",
        "kueue.x-k8s.io/podset-required-topology", "kueue.x-k8s.io/podset-preferred-topology"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(allow_nan=True),
                    st.sampled_from(["", "4", "-1", "500m", "16Gi", "1e400", "cpu", "x" * 300, "Never", "a/b/c"]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)),
                      max_leaves=25)


@st.composite
def objects(draw: Any) -> dict[str, Any]:
    api, kind = draw(st.sampled_from(KINDS))
    body = draw(st.dictionaries(st.sampled_from(KEYS), values, max_size=6))
    return {"apiVersion": api, "kind": kind, **body}


class _Crds:
    """The loaded CRDs, with a short repr (hypothesis prints arguments of failing examples)."""

    def __init__(self, crds: Any) -> None:
        self.crds = crds

    def __repr__(self) -> str:
        return "<shared CRDs>"


@pytest.fixture(scope="module")
def crd_set(crd_paths: list[str]) -> _Crds:
    return _Crds(load_crds(crd_paths))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(objects(), min_size=1, max_size=4))
def test_rules_never_raise(crd_set: Any, datas: list[dict[str, Any]]) -> None:
    objs = [make_obj(d, None, "fuzz.yaml") for d in datas]
    findings = run_rules(Context(objects=objs, crds=crd_set.crds), [])
    internal = [f for f in findings if "internal error" in f.message]
    assert internal == []


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _leaves(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _leaves(v, path + (i,))
    return out


def _replace(node: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(node, dict):
        return {**node, head: _replace(node[head], rest, value)}
    copy = list(node)
    copy[head] = _replace(node[head], rest, value)
    return copy


POLICY = load_policies([Path(__file__).resolve().parents[2] / "policies" / "platform.yaml"], [])
EXAMPLES = [yaml.safe_load_all(text) for r in all_rules() for text in r.examples.values()]
DOCS = [d for docs in EXAMPLES for d in docs if isinstance(d, dict) and "kind" in d and d.get("apiVersion")]


@settings(max_examples=int(os.environ.get("KUEUEPLAN_FUZZ_EXAMPLES", "400")), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(DOCS), st.data())
def test_mutated_rule_examples_never_raise(crd_set: Any, doc: dict[str, Any], data: Any) -> None:
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_leaves(doc)[1:] or [("spec",)]))
        doc = _replace(doc, path, data.draw(values))
    if not isinstance(doc, dict) or not isinstance(doc.get("kind"), str) or not isinstance(doc.get("apiVersion"), str):
        return
    obj = make_obj(doc, None, "fuzz.yaml")
    findings = run_rules(Context(objects=[obj], crds=crd_set.crds, policy=POLICY), [])
    assert [f for f in findings if "internal error" in f.message] == []


SETS = [[d for d in yaml.safe_load_all(text) if isinstance(d, dict)] for r in all_rules()
        for text in r.examples.values()]
SETS = [s for s in SETS if len(s) > 1]


@settings(max_examples=int(os.environ.get("KUEUEPLAN_FUZZ_EXAMPLES", "300")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SETS), st.data())
def test_mutated_multi_object_examples_never_raise(crd_set: Any, docs: list[dict[str, Any]], data: Any) -> None:
    docs = list(docs)
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(docs) - 1))
        path = data.draw(st.sampled_from(_leaves(docs[i])[1:] or [("spec",)]))
        docs[i] = _replace(docs[i], path, data.draw(values))
    objs = [make_obj(d, None, "fuzz.yaml") for d in docs
            if isinstance(d, dict) and isinstance(d.get("kind"), str) and isinstance(d.get("apiVersion"), str)]
    findings = run_rules(Context(objects=objs, crds=crd_set.crds, policy=POLICY), [])
    assert [f for f in findings if "internal error" in f.message] == []
