"""Health of Kueue's and KubeRay's kinds as Argo CD (Lua, run in a real Lua runtime) and Flux (CEL, run in the
project's CEL engine) see it, over status objects as Kueue, the Job controller and KubeRay write them.

The rule under test is gitops-engine's (pkg/sync/sync_context.go): a task of a sync wave finishes only when its
resource is Healthy (succeeded) or Degraded (failed); Progressing and Suspended keep the sync Running, and there
is no sync timeout by default. So every intended state must be Healthy.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kueueplan.compile.argocd import health_checks, health_lua, resource_customizations
from kueueplan.compile.gitops import queue_health_exprs
from kueueplan.validate.celrules import cel

lupa = pytest.importorskip("lupa", reason="lupa (Lua for Python) is a test dependency")
FINISHES_WAVE = {"Healthy", "Degraded"}


def run_lua(kind: str, obj: dict[str, Any]) -> dict[str, str]:
    lua = lupa.LuaRuntime(unpack_returned_tuples=True)
    lua.globals().obj = lua.table_from(obj, recursive=True)
    result = lua.execute(health_lua(kind))
    return {"status": result["status"], "message": result["message"]}


def flux_status(kind: str, obj: dict[str, Any]) -> str:
    """kstatus result of Flux's CEL status reader: inProgress, failed, current in this order, the first true
    wins; none true is InProgress (fluxcd/flux2 rfcs/0009-custom-health-checks)."""
    exprs = next(e for e in queue_health_exprs("kueue.x-k8s.io/v1beta2") if e["kind"] == kind)
    variables = {k: v for k, v in obj.items() if k in ("apiVersion", "kind", "metadata", "spec", "status")}
    for key, status in (("inProgress", "InProgress"), ("failed", "Failed"), ("current", "Current")):
        if cel.compile(exprs[key]).execute(variables) is True:
            return status
    return "InProgress"


def queue(kind: str, *conditions: dict[str, Any], stop: str | None = None, deleting: bool = False,
          **counts: int) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": kind,
                           "metadata": {"name": "team-a", "generation": 2, "uid": "7d1c"},
                           "spec": {"resourceGroups": []} if kind == "ClusterQueue" else {"clusterQueue": "team-a"}}
    if kind == "LocalQueue":
        obj["metadata"]["namespace"] = "team-a"
    if stop:
        obj["spec"]["stopPolicy"] = stop
    if deleting:
        obj["metadata"]["deletionTimestamp"] = "2026-11-25T04:00:00Z"
        obj["metadata"]["finalizers"] = ["kueue.x-k8s.io/resource-in-use"]
    if conditions or counts:
        obj["status"] = {"conditions": [{"type": "Active", "lastTransitionTime": "2026-11-25T03:00:00Z",
                                         "observedGeneration": 2, **c} for c in conditions],
                         "pendingWorkloads": 0, "reservingWorkloads": 0, "admittedWorkloads": 0, **counts}
    return obj


ACTIVE = {"status": "True", "reason": "Ready", "message": "Can admit new workloads"}
# Kueue's own texts (pkg/cache/scheduler/clusterqueue.go inactiveReason; pkg/controller/core/localqueue_controller.go)
INACTIVE = {
    "FlavorNotFound": "Can't admit new workloads: references missing ResourceFlavor(s): gpu-h100.",
    "AdmissionCheckNotFound": "Can't admit new workloads: references missing AdmissionCheck(s): gpu-provisioning.",
    "AdmissionCheckInactive": "Can't admit new workloads: references inactive AdmissionCheck(s): gpu-provisioning.",
    "TopologyNotFound": "Can't admit new workloads: there is no Topology \"default\" for TAS flavor \"gpu-a100\".",
}
STOPPED = {"status": "False", "reason": "Stopped", "message": "Can't admit new workloads: is stopped."}
TERMINATING = {"status": "False", "reason": "Terminating",
               "message": "Can't admit new workloads; clusterQueue is terminating"}


@pytest.mark.parametrize("kind", ["ClusterQueue", "LocalQueue"])
def test_active_queue_is_healthy_with_counts(kind: str) -> None:
    obj = queue(kind, ACTIVE, admittedWorkloads=3, pendingWorkloads=2)
    assert run_lua(kind, obj) == {"status": "Healthy", "message": "3 admitted, 2 pending"}
    assert flux_status(kind, obj) == "Current"


@pytest.mark.parametrize("kind", ["ClusterQueue", "LocalQueue"])
@pytest.mark.parametrize("policy", ["Hold", "HoldAndDrain"])
def test_stopped_queue_is_healthy_with_its_message_and_never_blocks_a_wave(kind: str, policy: str) -> None:
    obj = queue(kind, STOPPED, stop=policy, admittedWorkloads=1)
    health = run_lua(kind, obj)
    assert health["status"] == "Healthy" and f"stopPolicy {policy}" in health["message"]
    assert ("evicts" in health["message"]) == (policy == "HoldAndDrain")
    assert flux_status(kind, obj) == "Current"
    # Kueue may not have written the Stopped condition yet: the spec alone says it is intended.
    assert run_lua(kind, queue(kind, ACTIVE, stop=policy))["status"] == "Healthy"


@pytest.mark.parametrize("kind", ["ClusterQueue", "LocalQueue"])
@pytest.mark.parametrize("reason", sorted(INACTIVE))
def test_inactive_queue_is_degraded_with_kueues_reason(kind: str, reason: str) -> None:
    obj = queue(kind, {"status": "False", "reason": reason, "message": INACTIVE[reason]})
    assert run_lua(kind, obj) == {"status": "Degraded", "message": f"{reason}: {INACTIVE[reason]}"}
    assert flux_status(kind, obj) == "Failed"


def test_local_queue_of_an_inactive_cluster_queue_is_degraded() -> None:
    obj = queue("LocalQueue", {"status": "False", "reason": "ClusterQueueIsInactive",
                               "message": "Can't submit new workloads to clusterQueue"})
    assert run_lua("LocalQueue", obj)["status"] == "Degraded"
    assert flux_status("LocalQueue", obj) == "Failed"


@pytest.mark.parametrize("kind", ["ClusterQueue", "LocalQueue"])
def test_terminating_or_new_queue_is_progressing(kind: str) -> None:
    terminating = queue(kind, TERMINATING, deleting=True, admittedWorkloads=1)
    assert run_lua(kind, terminating)["status"] == "Progressing"
    assert "Terminating" in run_lua(kind, terminating)["message"]
    assert flux_status(kind, terminating) == "InProgress"
    fresh = queue(kind)
    assert run_lua(kind, fresh) == {"status": "Progressing", "message": f"Waiting for Kueue to report the {kind}"}
    no_conditions = queue(kind, pendingWorkloads=0)
    no_conditions["status"]["conditions"] = []
    assert flux_status(kind, no_conditions) == "InProgress"


# --------------------------------------------------------------------------- workloads


def job(*conditions: dict[str, Any], suspend: bool | None = None, queued: bool = True,
        **status: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "batch/v1", "kind": "Job",
                           "metadata": {"name": "train", "namespace": "team-a", "labels": {}},
                           "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}},
                           "status": {"conditions": [dict(c) for c in conditions], **status}}
    if queued:
        obj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "training"
    if suspend is not None:
        obj["spec"]["suspend"] = suspend
    return obj


SUSPENDED = {"type": "Suspended", "status": "True", "reason": "JobSuspended", "message": "Job suspended"}
COMPLETE = {"type": "Complete", "status": "True", "message": "Reached expected number of succeeded pods"}
FAILED = {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
          "message": "Job has reached the specified backoff limit"}


def test_job_held_by_kueue_is_healthy_queued_where_argo_would_say_suspended() -> None:
    held = run_lua("Job", job(SUSPENDED, suspend=True))
    assert held["status"] == "Healthy" and held["message"].startswith("Queued by Kueue in LocalQueue training")
    # Just created: Kueue's webhook suspended it, the Job controller has not written the condition yet.
    assert run_lua("Job", job(suspend=True))["status"] == "Healthy"
    # A Job nobody queues keeps gitops-engine's verdict (health_job.go): Suspended.
    assert run_lua("Job", job(SUSPENDED, suspend=True, queued=False))["status"] == "Suspended"


def test_job_outcomes_follow_gitops_engine() -> None:
    assert run_lua("Job", job(COMPLETE, succeeded=3)) == {"status": "Healthy",
                                                          "message": "Reached expected number of succeeded pods"}
    assert run_lua("Job", job(FAILED)) == {"status": "Degraded", "message": "Job has reached the specified backoff limit"}
    running = run_lua("Job", job(suspend=False, active=3))
    assert running == {"status": "Healthy", "message": "Admitted by Kueue, running: 3 active pod(s)"}
    assert run_lua("Job", job(suspend=False, active=1, queued=False))["status"] == "Progressing"


def ray(kind: str, suspend: bool | None, **status: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "ray.io/v1", "kind": kind,
                           "metadata": {"name": "notebook", "namespace": "team-a",
                                        "labels": {"kueue.x-k8s.io/queue-name": "training"}},
                           "spec": {}, "status": status}
    if suspend is not None:
        obj["spec"]["suspend"] = suspend
    return obj


def test_ray_job_states() -> None:
    assert run_lua("RayJob", ray("RayJob", True, jobDeploymentStatus="Suspended"))["status"] == "Healthy"
    assert run_lua("RayJob", ray("RayJob", True))["message"].startswith("Queued by Kueue")
    assert run_lua("RayJob", ray("RayJob", False, jobDeploymentStatus="Running", jobStatus="RUNNING")) == {
        "status": "Healthy", "message": "Admitted by Kueue: Running"}
    assert run_lua("RayJob", ray("RayJob", False, jobDeploymentStatus="Complete", jobStatus="SUCCEEDED")) == {
        "status": "Healthy", "message": "RayJob complete: SUCCEEDED"}
    failed = run_lua("RayJob", ray("RayJob", False, jobDeploymentStatus="Failed", jobStatus="FAILED",
                                   reason="AppFailed", message="Job entrypoint failed"))
    assert failed["status"] == "Degraded" and "Job entrypoint failed" in failed["message"]


def test_ray_cluster_states() -> None:
    assert run_lua("RayCluster", ray("RayCluster", True, state="suspended"))["status"] == "Healthy"
    assert run_lua("RayCluster", ray("RayCluster", False, state="ready", readyWorkerReplicas=2)) == {
        "status": "Healthy", "message": "RayCluster ready: 2 ready worker(s)"}
    assert run_lua("RayCluster", ray("RayCluster", False))["status"] == "Progressing"
    failure = ray("RayCluster", False, conditions=[{"type": "RayClusterReplicaFailure", "status": "True",
                                                    "reason": "FailedCreateWorkerPod", "message": "quota"}])
    assert run_lua("RayCluster", failure)["status"] == "Degraded"


@pytest.mark.parametrize("kind,obj", [
    ("Job", job(SUSPENDED, suspend=True)),
    ("Job", job(suspend=True)),
    ("RayJob", ray("RayJob", True, jobDeploymentStatus="Suspended")),
    ("RayJob", ray("RayJob", True)),
    ("RayCluster", ray("RayCluster", True, state="suspended")),
    ("RayCluster", ray("RayCluster", True)),
])
def test_a_workload_kueue_holds_never_keeps_the_sync_running(kind: str, obj: dict[str, Any]) -> None:
    assert run_lua(kind, copy.deepcopy(obj))["status"] in FINISHES_WAVE


def test_fragment_has_one_argo_key_per_kind() -> None:
    patch = resource_customizations()
    assert patch["metadata"] == {"name": "argocd-cm"}
    data = patch["data"]
    assert set(data) == {"resource.customizations.health.kueue.x-k8s.io_ClusterQueue",
                         "resource.customizations.health.kueue.x-k8s.io_LocalQueue",
                         "resource.customizations.health.batch_Job",
                         "resource.customizations.health.ray.io_RayJob",
                         "resource.customizations.health.ray.io_RayCluster"}
    assert set(data.values()) == set(health_checks().values())
