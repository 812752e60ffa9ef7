"""Pod sets of the load-only kinds (simulated, never built): the Kubeflow training-operator v1 jobs TFJob,
XGBoostJob, PaddleJob and JAXJob, and KubeRay's RayService. Expected values are written out from Kueue v0.19.2's
code: pkg/controller/jobs/kubeflow/kubeflowjob/kubeflowjob_controller.go PodSets (one pod set per replica type
present, in pkg/controller/jobs/kubeflow/jobs/<kind>/<kind>_controller.go OrderedReplicaTypes, named lower-cased,
count = ptr.Deref(replicas, 1)) and pkg/controller/jobs/rayservice/rayservice_controller.go PodSets
(raycluster.BuildPodSets of spec.rayClusterConfig)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kueueplan.kube.objects import read_cluster
from kueueplan.kube.podsets import (JOB_KINDS, LOAD_ONLY_KINDS, SERVING_KINDS, SUPPORTED_KINDS, derive_workload,
                                    pod_sets_for)

GI = 2**30
MI = 2**20


def _example(shared: Path, name: str) -> dict:
    return yaml.safe_load((shared / "upstream" / "kueue" / "examples" / "jobs" / name).read_text())


def _shape(sets) -> list:
    return [(ps.name, ps.count, ps.per_pod) for ps in sets]


@pytest.mark.parametrize("example,expected", [
    # tfReplicaSpecs PS x1 and Worker x2 (no Chief, Master or Evaluator): order Chief, Master, PS, Worker, Evaluator
    ("sample-tfjob.yaml", [("ps", 1, {"cpu": 1000, "memory": 200 * MI}),
                           ("worker", 2, {"cpu": 1000, "memory": 200 * MI})]),
    # xgbReplicaSpecs Master x1, Worker x2; cpu 0.5 is 500m
    ("sample-xgboostjob.yaml", [("master", 1, {"cpu": 500, "memory": 256 * MI}),
                                ("worker", 2, {"cpu": 500, "memory": 256 * MI})]),
    # paddleReplicaSpecs Worker x2 only: the absent Master is no pod set
    ("sample-paddlejob.yaml", [("worker", 2, {"cpu": 1000, "memory": 256 * MI})]),
    # jaxReplicaSpecs Worker x2 (JAXJob's one replica type)
    ("sample-jaxjob.yaml", [("worker", 2, {"cpu": 1000, "memory": 200 * MI})]),
    # rayClusterConfig: head x1 (requests 2 / 4Gi, limits ignored), group small-group x replicas 1
    ("ray-service-sample.yaml", [("head", 1, {"cpu": 2000, "memory": 4 * GI}),
                                 ("small-group", 1, {"cpu": 1000, "memory": 2 * GI})]),
])
def test_kueue_examples(shared_dir: Path, example: str, expected: list) -> None:
    manifest = _example(shared_dir, example)
    assert _shape(pod_sets_for(manifest)) == expected
    spec = derive_workload(manifest, read_cluster([]))
    assert (spec.kind, spec.queue_name, spec.problem) == (manifest["kind"], "user-queue", None)
    assert spec.finishes is (manifest["kind"] != "RayService")  # a RayService serves until deleted


def _replica(cpu: str, replicas: int | None = None, pcn: str | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}
    if pcn:
        spec["priorityClassName"] = pcn
    out: dict = {"template": {"spec": spec}}
    if replicas is not None:
        out["replicas"] = replicas
    return out


def _tfjob(specs: dict, **spec: object) -> dict:
    return {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "tf", "namespace": "ml"},
            "spec": {"tfReplicaSpecs": specs, **spec}}


def test_tfjob_every_replica_type_in_kueue_order() -> None:
    """Written in another order, with lower-case and missing replicas: Kueue's order, names lower-cased, the
    Evaluator type (TFJobReplicaTypeEval = "Evaluator"), replicas default 1."""
    job = _tfjob({"Evaluator": _replica("1"), "worker": _replica("4", 8), "ps": _replica("2", 2),
                  "Master": _replica("3", 0), "Chief": _replica("5")})
    assert _shape(pod_sets_for(job)) == [("chief", 1, {"cpu": 5000}), ("master", 0, {"cpu": 3000}),
                                         ("ps", 2, {"cpu": 2000}), ("worker", 8, {"cpu": 4000}),
                                         ("evaluator", 1, {"cpu": 1000})]


def test_replica_types_a_kind_does_not_have_are_no_pod_sets() -> None:
    """JAXJob's OrderedReplicaTypes is Worker alone: a Master written on it is not part of its Workload."""
    jax = {"apiVersion": "kubeflow.org/v1", "kind": "JAXJob", "metadata": {"name": "j"},
           "spec": {"jaxReplicaSpecs": {"Master": _replica("8"), "Worker": _replica("1", 4)}}}
    assert _shape(pod_sets_for(jax)) == [("worker", 4, {"cpu": 1000})]


def test_scheduling_policy_priority_class_comes_first() -> None:
    """kubeflowjob_controller.go PriorityClass(): runPolicy.schedulingPolicy.priorityClass, else the first replica
    type's (in order) template class; the same for MPIJob (mpijob_controller.go)."""
    cluster = read_cluster([{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                             "metadata": {"name": n}, "value": v} for n, v in (("high", 1000), ("low", 10))])
    specs = {"Worker": _replica("1", pcn="low"), "PS": _replica("1", pcn="high")}
    assert derive_workload(_tfjob(specs), cluster).priority == 1000  # PS comes before Worker
    policy = {"runPolicy": {"schedulingPolicy": {"priorityClass": "low"}}}
    spec = derive_workload(_tfjob(specs, **policy), cluster)
    assert (spec.priority, spec.priority_class, spec.priority_source) == (10, "low", "PriorityClass")
    mpi = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "m"},
           "spec": {"runPolicy": {"schedulingPolicy": {"priorityClass": "high"}},
                    "mpiReplicaSpecs": {"Launcher": _replica("1", pcn="low"), "Worker": _replica("1", 2)}}}
    assert derive_workload(mpi, cluster).priority == 1000
    missing = derive_workload(_tfjob(specs, runPolicy={"schedulingPolicy": {"priorityClass": "gone"}}), cluster)
    assert missing.problem == "PriorityClass gone not found"
    # another kind's spec.runPolicy means nothing to Kueue
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "b"},
           "spec": {"runPolicy": {"schedulingPolicy": {"priorityClass": "high"}},
                    "template": {"spec": {"containers": [{"name": "c"}]}}}}
    assert derive_workload(job, cluster).priority == 0


def test_rayservice_is_its_raycluster(shared_dir: Path) -> None:
    """The same pod sets as a RayCluster of the same spec at every release, autoscaler sidecar (v0.19) included."""
    service = _example(shared_dir, "ray-service-sample.yaml")
    service["spec"]["rayClusterConfig"]["enableInTreeAutoscaling"] = True
    cluster = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "c"},
               "spec": service["spec"]["rayClusterConfig"]}
    for release in ("v0.17", "v0.18", "v0.19"):
        assert pod_sets_for(service, release) == pod_sets_for(cluster, release)
    head = {ps.name: ps.per_pod for ps in pod_sets_for(service, "v0.19")}["head"]
    assert head == {"cpu": 2500, "memory": 4 * GI + 512 * MI}  # + the autoscaler's default 500m / 512Mi


def test_load_only_kinds_are_simulated_not_built() -> None:
    assert set(LOAD_ONLY_KINDS) <= set(SUPPORTED_KINDS)
    assert not set(LOAD_ONLY_KINDS) & set(JOB_KINDS)
    assert "RayService" in SERVING_KINDS
