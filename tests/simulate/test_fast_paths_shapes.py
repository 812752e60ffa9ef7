"""The scheduler's shortcuts give the full path's run on the shapes they are most likely to get wrong.

test_fast_paths.py draws one-resource Jobs; here the random clusters have several resources per pod set
(cpu, memory, GPUs, `pods` covered, zero requests), one or two resource groups with one or two flavors,
several pod sets (RayJob head + workers), partial admission (job-min-parallelism), every preemption policy,
borrowing and lending limits, flat and hierarchical cohorts, and events in the middle of the run that change
what the shortcuts remember: a ClusterQueue re-applied with other quotas or flavors (a multi-flavor queue
that becomes single-flavor resumes its LastAssignment), a priority class changing value, LocalQueues stopped,
workloads deleted or finished; sometimes waitForPodsReady with blockAdmission, fair sharing, and an `until`
that leaves heads pending with deferred messages. Each input runs with the shortcuts on and switched off.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.simulate.test_fast_paths import _both

V2 = "kueue.x-k8s.io/v1beta2"
POLICIES = ["Never", "LowerPriority", "LowerOrNewerEqualPriority"]
RECLAIM = ["Never", "LowerPriority", "Any"]
RESOURCES = ["cpu", "memory", "nvidia.com/gpu"]
UNIT = {"cpu": "", "memory": "Gi", "nvidia.com/gpu": "", "pods": ""}


def _quota(draw: Any, res: str) -> dict[str, Any]:
    u = UNIT[res]
    nominal = draw(st.integers(0, 8))
    q: dict[str, Any] = {"name": res, "nominalQuota": f"{nominal}{u}"}
    if draw(st.integers(0, 2)) == 0:
        q["borrowingLimit"] = f"{draw(st.integers(0, 4))}{u}"
    if draw(st.integers(0, 3)) == 0:
        q["lendingLimit"] = f"{draw(st.integers(0, nominal))}{u}"
    return q


def _cluster_queue(draw: Any, i: int, flavors: list[str]) -> dict[str, Any]:
    covered = list(RESOURCES) if draw(st.integers(0, 2)) else \
        draw(st.lists(st.sampled_from(RESOURCES), min_size=1, max_size=3, unique=True))
    if draw(st.integers(0, 3)) == 0:
        covered.append("pods")
    split = draw(st.integers(1, len(covered)))  # two groups when split < len(covered)
    groups = []
    for part in (covered[:split], covered[split:]):
        if not part:
            continue
        fl = draw(st.lists(st.sampled_from(flavors), min_size=1, max_size=2, unique=True))
        groups.append({"coveredResources": part,
                       "flavors": [{"name": f, "resources": [_quota(draw, r) for r in part]} for f in fl]})
    reclaim = draw(st.sampled_from(RECLAIM))
    preemption: dict[str, Any] = {"withinClusterQueue": draw(st.sampled_from(POLICIES)),
                                  "reclaimWithinCohort": reclaim}
    if reclaim != "Never" and draw(st.integers(0, 2)) == 0:
        preemption["borrowWithinCohort"] = {"policy": "LowerPriority",
                                            "maxPriorityThreshold": draw(st.integers(0, 2))}
    spec: dict[str, Any] = {"namespaceSelector": {}, "preemption": preemption,
                            "queueingStrategy": draw(st.sampled_from(["BestEffortFIFO", "StrictFIFO"])),
                            "resourceGroups": groups}
    cohort = draw(st.sampled_from([None, "c1", "c1", "c2"]))
    if cohort:
        spec["cohortName"] = cohort
    return {"apiVersion": V2, "kind": "ClusterQueue", "metadata": {"name": f"cq{i}"}, "spec": spec}


def _requests(draw: Any) -> dict[str, str]:
    res = draw(st.lists(st.sampled_from(RESOURCES), min_size=1, max_size=3, unique=True))
    return {r: f"{draw(st.integers(0, 3))}{UNIT[r]}" for r in res}


def _container(draw: Any) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "c", "resources": {"requests": _requests(draw)}}]}}


def _workload(draw: Any, j: int, n_cq: int) -> dict[str, Any]:
    labels = {"kueue.x-k8s.io/queue-name": f"lq{draw(st.integers(0, n_cq - 1))}",
              "kueue.x-k8s.io/priority-class": f"p{draw(st.integers(0, 2))}"}
    meta: dict[str, Any] = {"name": f"w{j}", "namespace": "default", "labels": labels}
    if draw(st.integers(0, 2)) == 0:
        workers = [{"groupName": "g", "replicas": draw(st.integers(1, 3)), "template": _container(draw)}]
        manifest = {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": meta, "spec": {"rayClusterSpec": {
            "headGroupSpec": {"template": _container(draw)}, "workerGroupSpecs": workers}}}
    else:
        parallelism = draw(st.integers(1, 4))
        if parallelism > 1 and draw(st.booleans()):
            meta["annotations"] = {"kueue.x-k8s.io/job-min-parallelism": str(draw(st.integers(1, parallelism - 1)))}
        manifest = {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
                    "spec": {"parallelism": parallelism, "template": _container(draw)}}
    w: dict[str, Any] = {"at": draw(st.integers(0, 20)), "manifest": manifest}
    if draw(st.integers(0, 3)) > 0:
        w["runFor"] = draw(st.integers(1, 30))
    if draw(st.integers(0, 3)) == 0:
        w["count"] = draw(st.integers(2, 3))
    return w


def _event(draw: Any, cqs: list[dict[str, Any]], workloads: list[dict[str, Any]], flavors: list[str]) -> dict[str, Any]:
    at = draw(st.integers(1, 25))
    kind = draw(st.sampled_from(["cq", "cq", "priority", "stop", "delete", "finish"]))
    if kind == "cq":  # the same name, new quotas, flavors, policies
        return {"at": at, "apply": _cluster_queue(draw, draw(st.integers(0, len(cqs) - 1)), flavors)}
    if kind == "priority":
        return {"at": at, "apply": {"apiVersion": V2, "kind": "WorkloadPriorityClass",
                                    "metadata": {"name": f"p{draw(st.integers(0, 2))}"}, "value": draw(st.integers(0, 5))}}
    if kind == "stop":
        i = draw(st.integers(0, len(cqs) - 1))
        return {"at": at, "apply": {"apiVersion": V2, "kind": "LocalQueue",
                                    "metadata": {"namespace": "default", "name": f"lq{i}"},
                                    "spec": {"clusterQueue": f"cq{i}", "stopPolicy": draw(st.sampled_from(["Hold", "HoldAndDrain", "None"]))}}}
    w = draw(st.sampled_from(workloads))
    name = w["manifest"]["metadata"]["name"] + ("-1" if w.get("count") else "")
    return {"at": at, kind: {"kind": w["manifest"]["kind"], "namespace": "default", "name": name}}


@st.composite
def rich_scenarios(draw: Any) -> dict[str, Any]:
    flavors = ["f1", "f2", "f3"][: draw(st.integers(1, 3))]
    manifests: list[dict[str, Any]] = [{"apiVersion": V2, "kind": "ResourceFlavor", "metadata": {"name": f}}
                                       for f in flavors]
    manifests += [{"apiVersion": V2, "kind": "WorkloadPriorityClass", "metadata": {"name": f"p{v}"}, "value": v}
                  for v in (0, 1, 2)]
    n_cq = draw(st.integers(1, 4))
    cqs = [_cluster_queue(draw, i, flavors) for i in range(n_cq)]
    manifests += cqs
    manifests += [{"apiVersion": V2, "kind": "LocalQueue", "metadata": {"namespace": "default", "name": f"lq{i}"},
                   "spec": {"clusterQueue": f"cq{i}"}} for i in range(n_cq)]
    if draw(st.integers(0, 3)) == 0:
        manifests.append({"apiVersion": V2, "kind": "Cohort", "metadata": {"name": "c2"}, "spec": {"parentName": "c1"}})
    workloads = [_workload(draw, j, n_cq) for j in range(draw(st.integers(1, 9)))]
    spec: dict[str, Any] = {"manifests": manifests, "workloads": workloads}
    events = [_event(draw, cqs, workloads, flavors) for _ in range(draw(st.integers(0, 3)))]
    if events:
        spec["events"] = events
    if draw(st.integers(0, 2)) == 0:
        spec["until"] = draw(st.integers(1, 30))
    if draw(st.integers(0, 5)) == 0:
        spec["configuration"] = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
                                 "waitForPodsReady": {"timeout": "10s", "blockAdmission": draw(st.booleans())}}
        for w in workloads:
            w["podsReadyAfter"] = draw(st.integers(0, 12))
    elif draw(st.integers(0, 7)) == 0:
        spec["fairSharing"] = {}
    return {"apiVersion": "kueueplan.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "shapes"}, "spec": spec}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(data=rich_scenarios())
def test_rich_shapes_same_run_with_and_without_shortcuts(data: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    fast, full, _ = _both(data, monkeypatch)
    assert fast == full


def _job(name: str, requests: dict[str, str], parallelism: int = 1) -> dict[str, Any]:
    return {"at": 0, "manifest": {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": name, "namespace": "default", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {"parallelism": parallelism, "template": {"spec": {"containers": [
            {"name": "c", "resources": {"requests": requests}}]}}}}}


def _one_queue(groups: list[dict[str, Any]], workloads: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "kueueplan.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "one"}, "spec": {
        "manifests": [{"apiVersion": V2, "kind": "ResourceFlavor", "metadata": {"name": "f"}},
                      {"apiVersion": V2, "kind": "ClusterQueue", "metadata": {"name": "cq"},
                       "spec": {"namespaceSelector": {}, "resourceGroups": groups}},
                      {"apiVersion": V2, "kind": "LocalQueue", "metadata": {"namespace": "default", "name": "lq"},
                       "spec": {"clusterQueue": "cq"}}],
        "workloads": workloads}}


def test_single_resource_scan_of_covered_pods(monkeypatch: pytest.MonkeyPatch) -> None:
    """A head whose only request is `pods` (covered; it requests no quota-covered resource) that does not fit
    goes to FlavorAssigner.run_one, which must count its pods as assign() does (it once raised KeyError)."""
    data = _one_queue([{"coveredResources": ["pods"], "flavors": [
        {"name": "f", "resources": [{"name": "pods", "nominalQuota": "1"}]}]}],
        [_job("a", {}), _job("b", {})])
    fast, full, taken = _both(data, monkeypatch)
    assert taken["run_one"] > 0
    assert fast == full
    b = next(w for w in fast["workloads"] if w["name"] == "default/b")
    assert b["state"] == "Pending" and b["message"] == "insufficient unused quota for pods in flavor f, 1 more needed"


def test_parked_head_whose_scan_would_reclaim_one_resource(monkeypatch: pytest.MonkeyPatch) -> None:
    """cpu must be borrowed while memory could be reclaimed from a borrowing queue: the per-resource oracle
    of the full scan says Reclaim for memory (mode Preempt), the whole request finds no targets (the pass
    with borrowing admits own candidates only), so _surely_parked parks it with the scan's message."""
    def cq(name: str, cpu: str, memory: str) -> dict[str, Any]:
        return {"apiVersion": V2, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": {
            "cohortName": "c", "namespaceSelector": {},
            "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
            "resourceGroups": [{"coveredResources": ["cpu", "memory"], "flavors": [{"name": "f", "resources": [
                {"name": "cpu", "nominalQuota": cpu}, {"name": "memory", "nominalQuota": memory}]}]}]}}

    def job(name: str, lq: str, at: int, requests: dict[str, str]) -> dict[str, Any]:
        w = _job(name, requests)
        w["at"] = at
        w["manifest"]["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = lq
        return w

    data = {"apiVersion": "kueueplan.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "mixed"}, "spec": {
        "manifests": [{"apiVersion": V2, "kind": "ResourceFlavor", "metadata": {"name": "f"}},
                      cq("cq0", "0", "4Gi"), cq("cq1", "4", "0"),
                      *({"apiVersion": V2, "kind": "LocalQueue", "metadata": {"namespace": "default", "name": f"lq{i}"},
                         "spec": {"clusterQueue": f"cq{i}"}} for i in (0, 1))],
        "workloads": [job("x", "lq1", 0, {"memory": "4Gi"}), job("p", "lq0", 1, {"cpu": "1", "memory": "2Gi"})],
        "until": 5}}
    fast, full, taken = _both(data, monkeypatch)
    assert taken["surely_parked"] + taken["head_plan"] > 0
    assert fast == full
    p = next(w for w in fast["workloads"] if w["name"] == "default/p")
    assert p["state"] == "Pending" and p["message"] == "insufficient unused quota for memory in flavor f, 2Gi more needed"
