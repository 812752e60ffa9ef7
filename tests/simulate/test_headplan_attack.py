"""Head plans (simulate/headplan.py) change how the scheduler nominates the heads of plain ClusterQueues in flat
cohorts, never what a run gives: every input here runs with engine.HEAD_PLANS on and off, and the outputs
(result JSON with workload messages, events in order, warnings) must be equal.

The random clusters aim at a plan's edges: many plain queues in one or two flat cohorts (and alone), one or
several resources per head (cpu, memory, GPUs, `pods` covered, zero requests), borrowingLimit absent, 0 or
more, withinClusterQueue Never or LowerPriority, heads that alternate plain and not plain (partial admission,
two flavors, requests no flavor covers), workloads arriving into queues that have a plan (copies joining a
parked bucket), `delete`/`finish` of pending workloads, priority classes changing value, LocalQueue and
ClusterQueue stop policies, ClusterQueues re-applied with other quotas mid-run, waitForPodsReady with and
without blockAdmission, admission checks (Ready, Retry, Rejected, with delays including 0) and `until` cuts.
"""

from __future__ import annotations

import copy
import os
from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from kueueplan.simulate import engine
from kueueplan.simulate.result import result_json
from kueueplan.simulate.scenario import scenario_from_dict

V2 = "kueue.x-k8s.io/v1beta2"
UNIT = {"cpu": "", "memory": "Gi", "nvidia.com/gpu": "", "pods": ""}
_EXAMPLES = int(os.environ.get("HEADPLAN_ATTACK_EXAMPLES", "60"))


def run(data: dict[str, Any], plans: bool) -> dict[str, Any] | str:
    """The run's result with head plans on or off (or the exception it raised, as text)."""
    old = engine.HEAD_PLANS
    engine.HEAD_PLANS = plans
    try:
        return result_json(engine.simulate(scenario_from_dict(copy.deepcopy(data))))
    except Exception as exc:  # noqa: BLE001 - a raise on one side only is a discrepancy too
        return f"{type(exc).__name__}: {exc}"
    finally:
        engine.HEAD_PLANS = old


def assert_same(data: dict[str, Any]) -> None:
    on, off = run(data, True), run(data, False)
    assert on == off


def _quota(draw: Any, res: str) -> dict[str, Any]:
    u = UNIT[res]
    nominal = draw(st.integers(0, 8))
    q: dict[str, Any] = {"name": res, "nominalQuota": f"{nominal}{u}"}
    limit = draw(st.integers(0, 3))
    if limit == 1:
        q["borrowingLimit"] = f"0{u}"
    elif limit == 2:
        q["borrowingLimit"] = f"{draw(st.integers(1, 6))}{u}"
    if draw(st.integers(0, 4)) == 0:
        q["lendingLimit"] = f"{draw(st.integers(0, nominal))}{u}"
    return q


def cluster_queue(draw: Any, i: int, resources: list[str], flavors: list[str], checks: bool) -> dict[str, Any]:
    fl = flavors[:1] if draw(st.integers(0, 4)) else flavors
    groups = [{"coveredResources": resources,
               "flavors": [{"name": f, "resources": [_quota(draw, r) for r in resources]} for f in fl]}]
    preemption: dict[str, Any] = {
        "withinClusterQueue": draw(st.sampled_from(["Never", "LowerPriority", "LowerPriority", "LowerOrNewerEqualPriority"]
                                                   if draw(st.integers(0, 5)) == 0 else ["Never", "LowerPriority"])),
        "reclaimWithinCohort": "Any" if draw(st.integers(0, 5)) else draw(st.sampled_from(["Never", "LowerPriority"]))}
    if draw(st.integers(0, 7)) == 0:
        preemption["borrowWithinCohort"] = {"policy": "LowerPriority", "maxPriorityThreshold": draw(st.integers(0, 2))}
    spec: dict[str, Any] = {"namespaceSelector": {}, "preemption": preemption,
                            "queueingStrategy": "StrictFIFO" if draw(st.integers(0, 7)) == 0 else "BestEffortFIFO",
                            "resourceGroups": groups}
    cohort = draw(st.sampled_from([None, "c1", "c1", "c1", "c2"]))
    if cohort:
        spec["cohortName"] = cohort
    if checks and draw(st.integers(0, 2)) == 0:
        spec["admissionChecks"] = [draw(st.sampled_from(["ready", "prov"]))]
    return {"apiVersion": V2, "kind": "ClusterQueue", "metadata": {"name": f"cq{i}"}, "spec": spec}


def _requests(draw: Any, resources: list[str]) -> dict[str, str]:
    pick = [r for r in resources if r != "pods"]
    if draw(st.integers(0, 5)) == 0:  # a resource no queue covers (never admissible) or none at all
        pick = draw(st.sampled_from([["ephemeral-storage"], []]))
    out = {r: f"{draw(st.integers(0, 3))}{UNIT.get(r, '')}" for r in pick}
    return out


def workload(draw: Any, name: str, n_cq: int, resources: list[str], ready: bool, max_count: int = 5) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "labels": {
        "kueue.x-k8s.io/queue-name": f"lq{draw(st.integers(0, n_cq - 1))}",
        "kueue.x-k8s.io/priority-class": f"p{draw(st.integers(0, 2))}"}}
    parallelism = draw(st.integers(1, 3))
    if parallelism > 1 and draw(st.integers(0, 4)) == 0:
        meta["annotations"] = {"kueue.x-k8s.io/job-min-parallelism": str(draw(st.integers(1, parallelism - 1)))}
    w: dict[str, Any] = {"at": draw(st.integers(0, 8)), "manifest": {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
        "spec": {"parallelism": parallelism, "template": {"spec": {"containers": [
            {"name": "c", "resources": {"requests": _requests(draw, resources)}}]}}}}}
    if draw(st.integers(0, 4)):
        w["runFor"] = draw(st.integers(1, 8))
    if draw(st.integers(0, 2)) == 0:
        w["count"] = draw(st.integers(2, max_count))
        w["every"] = draw(st.sampled_from([0, 0, 1]))
    if ready:
        w["podsReadyAfter"] = draw(st.sampled_from([0, 0, 2, 15, "never"]))
    return w


def _targets(workloads: list[dict[str, Any]]) -> list[str]:
    names = []
    for w in workloads:
        base = w["manifest"]["metadata"]["name"]
        names += [f"{base}-{i}" for i in range(1, w["count"] + 1)] if w.get("count") else [base]
    return names


def event(draw: Any, cqs: list[dict[str, Any]], workloads: list[dict[str, Any]], resources: list[str],
          flavors: list[str], checks: bool) -> dict[str, Any]:
    at = draw(st.integers(1, 14))
    kind = draw(st.sampled_from(["cq", "priority", "lqstop", "cqstop", "delete", "delete", "finish", "finish"]))
    n = len(cqs)
    if kind == "cq":
        return {"at": at, "apply": cluster_queue(draw, draw(st.integers(0, n - 1)), resources, flavors, checks)}
    if kind == "cqstop":
        cq = copy.deepcopy(cqs[draw(st.integers(0, n - 1))])
        cq["spec"]["stopPolicy"] = draw(st.sampled_from(["Hold", "HoldAndDrain", "None"]))
        return {"at": at, "apply": cq}
    if kind == "priority":
        return {"at": at, "apply": {"apiVersion": V2, "kind": "WorkloadPriorityClass",
                                    "metadata": {"name": f"p{draw(st.integers(0, 2))}"}, "value": draw(st.integers(0, 5))}}
    if kind == "lqstop":
        i = draw(st.integers(0, n - 1))
        return {"at": at, "apply": {"apiVersion": V2, "kind": "LocalQueue",
                                    "metadata": {"namespace": "default", "name": f"lq{i}"},
                                    "spec": {"clusterQueue": f"cq{i}",
                                             "stopPolicy": draw(st.sampled_from(["Hold", "HoldAndDrain", "None"]))}}}
    return {"at": at, kind: {"kind": "Job", "namespace": "default", "name": draw(st.sampled_from(_targets(workloads)))}}


_CHECK_OBJECTS = [
    {"apiVersion": V2, "kind": "AdmissionCheck", "metadata": {"name": "ready"},
     "spec": {"controllerName": "example.com/ready"}},
    {"apiVersion": V2, "kind": "ProvisioningRequestConfig", "metadata": {"name": "cfg"}, "spec": {
        "provisioningClassName": "queued-provisioning.gke.io",
        "retryStrategy": {"backoffLimitCount": 1, "backoffBaseSeconds": 2, "backoffMaxSeconds": 10}}},
    {"apiVersion": V2, "kind": "AdmissionCheck", "metadata": {"name": "prov"}, "spec": {
        "controllerName": "kueue.x-k8s.io/provisioning-request",
        "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "cfg"}}},
]


@st.composite
def plan_scenarios(draw: Any, max_cqs: int = 6, max_workloads: int = 14, max_count: int = 5,
                   max_events: int = 4) -> dict[str, Any]:
    flavors = ["f1", "f2"][: draw(st.integers(1, 2))]
    if draw(st.booleans()):
        resources = ["cpu"]
    else:
        resources = draw(st.lists(st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]), min_size=1, max_size=3,
                                  unique=True))
    if draw(st.integers(0, 4)) == 0:
        resources.append("pods")
    checks = draw(st.integers(0, 4)) == 0
    manifests: list[dict[str, Any]] = [{"apiVersion": V2, "kind": "ResourceFlavor", "metadata": {"name": f}}
                                       for f in flavors]
    manifests += [{"apiVersion": V2, "kind": "WorkloadPriorityClass", "metadata": {"name": f"p{v}"}, "value": v}
                  for v in (0, 1, 2)]
    if checks:
        manifests += _CHECK_OBJECTS
    n_cq = draw(st.integers(2, max_cqs))
    cqs = [cluster_queue(draw, i, resources, flavors, checks) for i in range(n_cq)]
    manifests += cqs
    manifests += [{"apiVersion": V2, "kind": "LocalQueue", "metadata": {"namespace": "default", "name": f"lq{i}"},
                   "spec": {"clusterQueue": f"cq{i}"}} for i in range(n_cq)]
    ready = draw(st.integers(0, 4)) == 0
    workloads = [workload(draw, f"w{j}", n_cq, resources, ready, max_count)
                 for j in range(draw(st.integers(2, max_workloads)))]
    spec: dict[str, Any] = {"manifests": manifests, "workloads": workloads}
    events = [event(draw, cqs, workloads, resources, flavors, checks) for _ in range(draw(st.integers(0, max_events)))]
    if events:
        spec["events"] = events
    if ready or draw(st.integers(0, 2)) == 0:  # pods never ready without backoffLimitCount: no end
        spec["until"] = draw(st.integers(1, 30))
    if ready:
        spec["configuration"] = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
                                 "waitForPodsReady": {"timeout": "5s", "blockAdmission": draw(st.booleans()),
                                                      "requeuingStrategy": {"backoffBaseSeconds": 1,
                                                                            "backoffMaxSeconds": 4}}}
    if checks:
        spec["admissionChecks"] = {
            "ready": {"delay": draw(st.sampled_from([0, 0, 1, 3]))},
            "prov": {"delay": draw(st.sampled_from([0, 1, 3])),
                     "outcomes": draw(st.lists(st.sampled_from(["Failed", "Provisioned"]), min_size=1, max_size=3))}}
    return {"apiVersion": "kueueplan.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "headplan"}, "spec": spec}


@settings(max_examples=_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan_scenarios())
def test_random_plan_edges_same_run_with_and_without_head_plans(data: dict[str, Any]) -> None:
    assert_same(data)
