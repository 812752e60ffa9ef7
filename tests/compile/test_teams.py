"""Teams and workloads compile into the right names, selectors and labels; mistakes name the spec field."""

from __future__ import annotations

from pathlib import Path

import pytest

from kueueplan.compile import compile_platform
from kueueplan.errors import KueueplanError
from kueueplan.kube.objects import read_cluster

HEAD = "apiVersion: kueueplan.io/v1alpha1\n"
BASE = HEAD + """kind: ResourceFlavor
metadata: {name: cpu}
---
""" + HEAD + """kind: Priority
metadata: {name: low}
spec: {value: 10}
---
""" + HEAD + """kind: Priority
metadata: {name: high}
spec: {value: 1000}
"""


def _write(tmp_path: Path, teams: str, env_spec: str = "{}", workloads: str = "") -> Path:
    (tmp_path / "base.yaml").write_text(BASE)
    (tmp_path / "teams.yaml").write_text(teams)
    (tmp_path / "env.yaml").write_text(HEAD + f"kind: Environment\nmetadata: {{name: dev}}\nspec: {env_spec}\n")
    if workloads:
        (tmp_path / "workloads.yaml").write_text(workloads)
    return tmp_path


def _team(name: str, body: str = "") -> str:
    return HEAD + f"kind: Team\nmetadata: {{name: {name}}}\nspec:\n  quotas:\n  - flavor: cpu\n" \
                  f"    resources: {{cpu: 4}}\n{body}"


def _workload(body: str) -> str:
    return HEAD + "kind: Workload\nmetadata: {name: job}\nspec:\n  team: ml\n  kind: RayJob\n  image: ray\n" \
                  "  head: {resources: {requests: {cpu: 1}}}\n" + body


def test_namespace_template_renames_namespaces_everywhere(tmp_path: Path) -> None:
    spec = _write(tmp_path, _team("ml", "  namespaces: [ml, ml-ci]\n  localQueues:\n  - name: main\n"
                                        "  - {name: ci, namespaces: [ml-ci]}\n"),
                  "{namespaceTemplate: '{env}-{namespace}'}",
                  _workload("  namespace: ml-ci\n  localQueue: ci\n  priority: low\n"))
    manifests = compile_platform(spec)["dev"]
    cluster = read_cluster(manifests)
    namespaces = {m["metadata"]["name"]: m["metadata"]["labels"] for m in manifests if m["kind"] == "Namespace"}
    assert set(namespaces) == {"dev-ml", "dev-ml-ci"}
    selector = cluster.cluster_queues["ml"].namespace_selector
    assert all(selector.matches(labels) for labels in namespaces.values())
    assert not selector.matches({"kubernetes.io/metadata.name": "other"})
    queues = sorted((m["metadata"]["namespace"], m["metadata"]["name"]) for m in manifests if m["kind"] == "LocalQueue")
    assert queues == [("dev-ml", "main"), ("dev-ml-ci", "ci"), ("dev-ml-ci", "main")]
    job = next(m for m in manifests if m["kind"] == "RayJob")
    assert job["metadata"]["namespace"] == "dev-ml-ci"
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "ci"
    assert job["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "low"


def test_existing_namespaces_are_not_created_and_selected_by_name(tmp_path: Path) -> None:
    spec = _write(tmp_path, _team("ml", "  namespaces: [{name: default, create: false}, ml]\n"))
    manifests = compile_platform(spec)["dev"]
    assert [m["metadata"]["name"] for m in manifests if m["kind"] == "Namespace"] == ["ml"]
    selector = read_cluster(manifests).cluster_queues["ml"].namespace_selector
    assert selector.matches({"kubernetes.io/metadata.name": "default"})
    assert selector.matches({"kubernetes.io/metadata.name": "ml"})
    assert not selector.matches({"kubernetes.io/metadata.name": "kube-system"})


def test_two_teams_selectors_are_disjoint(tmp_path: Path) -> None:
    spec = _write(tmp_path, _team("a") + "---\n" + _team("b", "  namespaces: [b1, b2]\n"))
    manifests = compile_platform(spec)["dev"]
    cluster = read_cluster(manifests)
    namespaces = {m["metadata"]["name"]: m["metadata"]["labels"] for m in manifests if m["kind"] == "Namespace"}
    selectors = {cq: cluster.cluster_queues[cq].namespace_selector for cq in ("a", "b")}
    picked = {cq: {ns for ns, labels in namespaces.items() if sel.matches(labels)} for cq, sel in selectors.items()}
    assert picked == {"a": {"a"}, "b": {"b1", "b2"}}


@pytest.mark.parametrize("teams,workloads,needle,file,line", [
    (_team("a", "  namespaces: [shared]\n") + "---\n" + _team("b", "  namespaces: [{name: shared, create: false}]\n"),
     "", "namespace 'shared' has create: false here and create: true in team 'a'", "teams.yaml", 17),
    (_team("a", "  clusterQueue: q\n") + "---\n" + _team("b", "  clusterQueue: q\n"), "",
     "ClusterQueue 'q' already belongs to team 'a'", "teams.yaml", 17),
    (_team("ml", "  priorities: [low]\n"), _workload("  priority: high\n"), "may not use priority 'high'",
     "workloads.yaml", 9),
    (_team("ml"), _workload("  priority: urgent\n"), "unknown Priority 'urgent'", "workloads.yaml", 9),
    (_team("ml"), _workload("  localQueue: nope\n"), "LocalQueue 'nope' does not exist", "workloads.yaml", 9),
    (_team("ml"), _workload("  namespace: elsewhere\n"), "not one of team 'ml'", "workloads.yaml", 9),
    (_team("other"), _workload(""), "unknown Team 'ml'", "workloads.yaml", 5),
    (_team("ml", "  flavors: [gpu]\n"), "", "flavor 'gpu' does not exist; did you mean 'cpu'?", "teams.yaml", 8),
])
def test_reference_errors(tmp_path: Path, teams: str, workloads: str, needle: str, file: str, line: int) -> None:
    spec = _write(tmp_path, teams, workloads=workloads)
    with pytest.raises(KueueplanError) as info:
        compile_platform(spec)
    err = info.value
    assert needle in err.message and err.file.endswith(file) and err.line == line, str(err)


def test_namespace_template_must_give_valid_names(tmp_path: Path) -> None:
    spec = _write(tmp_path, _team("ml"), "{namespaceTemplate: '{namespace}_{env}'}")
    with pytest.raises(KueueplanError, match="not a valid namespace name"):
        compile_platform(spec)


def test_v1beta2_needs_kueue_0_15(tmp_path: Path) -> None:
    spec = _write(tmp_path, _team("ml"), "{kueueVersion: v0.12.0, kueueAPIVersion: v1beta2}")
    with pytest.raises(KueueplanError) as info:
        compile_platform(spec)
    assert "no v1beta2 API" in info.value.message and info.value.file.endswith("env.yaml")


@pytest.mark.parametrize("version,api_version,parent_field", [
    ("v0.19.2", "kueue.x-k8s.io/v1beta2", "parentName"),
    ("v0.14.0", "kueue.x-k8s.io/v1beta1", "parentName"),
    ("v0.10.1", "kueue.x-k8s.io/v1alpha1", "parent"),
])
def test_cohort_api_follows_the_kueue_version(tmp_path: Path, version: str, api_version: str,
                                              parent_field: str) -> None:
    cohort = HEAD + "kind: Cohort\nmetadata: {name: child}\nspec: {parent: root}\n"
    spec = _write(tmp_path, _team("ml", "  cohort: child\n") + "---\n" + cohort, f"{{kueueVersion: {version}}}")
    manifest = next(m for m in compile_platform(spec)["dev"] if m["kind"] == "Cohort")
    assert manifest["apiVersion"] == api_version and manifest["spec"] == {parent_field: "root"}


def test_cohort_objects_need_kueue_0_9(tmp_path: Path) -> None:
    cohort = HEAD + "kind: Cohort\nmetadata: {name: child}\n"
    spec = _write(tmp_path, _team("ml") + "---\n" + cohort, "{kueueVersion: v0.8.1}")
    with pytest.raises(KueueplanError, match="has no Cohort API"):
        compile_platform(spec)


def test_every_team_knob_reaches_a_crd_valid_cluster_queue(tmp_path: Path, shared_dir: Path) -> None:
    from ._support import crd_errors

    check = HEAD + ("kind: AdmissionCheck\nmetadata: {name: budget}\nspec:\n  controllerName: example.com/budget\n"
                    "  parameters: {apiGroup: example.com, kind: BudgetConfig, name: q1}\n")
    body = """  cohort: org
  stopPolicy: Hold
  fairSharing: {weight: 2}
  queueingStrategy: StrictFIFO
  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: TryNextFlavor, preference: PreemptionOverBorrowing}
  preemption: {withinClusterQueue: LowerOrNewerEqualPriority, reclaimWithinCohort: LowerPriority,
               borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 50}}
  admissionChecks: [budget]
  localQueues: [{name: main, stopPolicy: HoldAndDrain, fairSharing: {weight: 500m}}]
"""
    spec = _write(tmp_path, _team("ml", body) + "---\n" + check)
    manifests = compile_platform(spec)["dev"]
    cq = next(m for m in manifests if m["kind"] == "ClusterQueue")
    assert cq["spec"]["stopPolicy"] == "Hold" and cq["spec"]["fairSharing"] == {"weight": "2"}
    assert cq["spec"]["preemption"]["borrowWithinCohort"] == {"policy": "LowerPriority", "maxPriorityThreshold": 50}
    assert cq["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": "budget"}]}
    lq = next(m for m in manifests if m["kind"] == "LocalQueue")
    assert lq["spec"] == {"clusterQueue": "ml", "stopPolicy": "HoldAndDrain", "fairSharing": {"weight": "500m"}}
    ac = next(m for m in manifests if m["kind"] == "AdmissionCheck")
    assert ac["spec"] == {"controllerName": "example.com/budget",
                          "parameters": {"apiGroup": "example.com", "kind": "BudgetConfig", "name": "q1"}}
    assert [e for m in manifests if m["kind"] != "Namespace" for e in crd_errors(shared_dir, m)] == []
