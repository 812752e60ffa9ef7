"""Pod sets, queue and priority of the Workload Kueue builds, on the upstream KubeRay samples
(the worked examples of ../shared/docs/workload-podsets.md §10)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kueueplan.errors import KueueplanError
from kueueplan.kube.objects import read_cluster
from kueueplan.kube.podsets import (derive_workload, explain_requests, pod_requests, pod_sets_for, total_requests,
                                    version_tuple)

GI = 2**30
MI = 2**20


def _sample(shared: Path, rel: str) -> dict:
    """The first RayJob/RayCluster document of an upstream sample (some carry ConfigMaps too)."""
    docs = [d for d in yaml.safe_load_all((shared / "upstream" / rel).read_text()) if d]
    return next(d for d in docs if d.get("kind") in ("RayJob", "RayCluster"))


def _per_pod(sets) -> dict:
    return {ps.name: (ps.count, ps.per_pod) for ps in sets}


def test_kueue_toy_sample(shared_dir: Path) -> None:
    sets = pod_sets_for(_sample(shared_dir, "kuberay/samples/ray-job.kueue-toy-sample.yaml"))
    assert _per_pod(sets) == {
        "head": (1, {"cpu": 1000, "memory": 2 * GI}),
        "small-group": (1, {"cpu": 1000, "memory": 1 * GI}),
        "submitter": (1, {"cpu": 500, "memory": 200 * MI}),
    }
    assert total_requests(sets) == {"cpu": 2500, "memory": 3272 * MI}


def test_toy_sample_before_v0_10_has_no_submitter(shared_dir: Path) -> None:
    sets = pod_sets_for(_sample(shared_dir, "kuberay/samples/ray-job.kueue-toy-sample.yaml"), "v0.9")
    assert [ps.name for ps in sets] == ["head", "small-group"]
    assert total_requests(sets)["cpu"] == 2000


def test_ray_job_sample_worker_request_only_cpu(shared_dir: Path) -> None:
    sets = pod_sets_for(_sample(shared_dir, "kuberay/samples/ray-job.sample.yaml"))
    totals = total_requests(sets)
    assert totals["cpu"] == 1700
    assert totals["memory"] == 2 * GI + 200 * MI


def test_light_weight_submitter_costs_nothing(shared_dir: Path) -> None:
    sets = pod_sets_for(_sample(shared_dir, "kuberay/samples/ray-job.light-weight-submitter.yaml"))
    sub = {ps.name: ps for ps in sets}["submitter"]
    assert sub.count == 1 and sub.per_pod == {}


def test_pytorch_mnist_counts_replicas_not_min_replicas(shared_dir: Path) -> None:
    sets = pod_sets_for(_sample(shared_dir, "kuberay/samples/ray-job.pytorch-mnist.yaml"))
    workers = [ps for ps in sets if ps.name not in ("head", "submitter")]
    assert [ps.count for ps in workers] == [2]


def test_autoscaler_sidecar_in_head(shared_dir: Path) -> None:
    sets = pod_sets_for(_sample(shared_dir, "kuberay/samples/ray-cluster.autoscaler.yaml"))
    got = _per_pod(sets)
    assert got["head"] == (1, {"cpu": 1500, "memory": 2 * GI + 512 * MI})
    assert got["small-group"][0] == 0
    # before v0.19 the autoscaler container was not counted
    older = _per_pod(pod_sets_for(_sample(shared_dir, "kuberay/samples/ray-cluster.autoscaler.yaml"), "v0.18"))
    assert older["head"] == (1, {"cpu": 1000, "memory": 2 * GI})


def test_oke_dev_job_no_longer_fits_2_cpu(shared_dir: Path) -> None:
    manifest = _sample(shared_dir, "seeds/oke/ray-job.ps-dev-pytorch-distributed-training.yaml")
    now = total_requests(pod_sets_for(manifest))
    then = total_requests(pod_sets_for(manifest, "v0.8"))
    assert then == {"cpu": 2000, "memory": 8 * 10**9, "nvidia.com/gpu": 1}
    assert now["cpu"] == 2500 and now["memory"] == 8 * 10**9 + 200 * MI
    assert explain_requests(pod_sets_for(manifest), "cpu") == "head 2 + RayJob submitter 500m = 2500m"


def test_kueue_preemption_ray_clusters(shared_dir: Path) -> None:
    prod = pod_sets_for(_sample(shared_dir, "seeds/kueue-preemption/team-a-ray-cluster-prod.yaml"))
    dev = pod_sets_for(_sample(shared_dir, "seeds/kueue-preemption/team-b-ray-cluster-dev.yaml"))
    assert total_requests(prod) == {"cpu": 10000, "memory": 24 * 10**9, "nvidia.com/gpu": 4}
    assert total_requests(dev) == {"cpu": 6000, "memory": 16 * 10**9, "nvidia.com/gpu": 4}
    assert [ps.name for ps in prod] == ["head", "small-group-test"]


def test_pod_requests_init_containers_sidecars_overhead() -> None:
    spec = {
        "initContainers": [
            {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}},
            {"name": "init", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}},
        ],
        "containers": [
            {"name": "a", "resources": {"requests": {"cpu": "500m"}, "limits": {"memory": "512Mi"}}},
            {"name": "b", "resources": {"limits": {"cpu": "250m"}}},
        ],
        "overhead": {"cpu": "10m"},
    }
    # containers 750m + sidecar 100m = 850m; init 2 + sidecar 100m = 2100m wins; memory: max(512Mi, 1Gi)
    assert pod_requests(spec) == {"cpu": 2110, "memory": GI}


def test_job_count_and_min_parallelism() -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "j", "annotations": {"kueue.x-k8s.io/job-min-parallelism": "2"}},
           "spec": {"parallelism": 5, "completions": 3,
                    "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}}
    (main,) = pod_sets_for(job)
    assert (main.name, main.count, main.min_count) == ("main", 3, 2)


def test_priority_resolution_order() -> None:
    cluster = read_cluster([
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass", "metadata": {"name": "w"}, "value": 7},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "pc"}, "value": 50},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "d1"}, "value": 9,
         "globalDefault": True},
    ])
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns",
                                                           "labels": {"kueue.x-k8s.io/queue-name": "q"}},
           "spec": {"priorityClassName": "pc", "containers": [{"name": "c"}]}}
    assert derive_workload(pod, cluster).priority == 50
    pod["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "w"
    spec = derive_workload(pod, cluster)
    assert (spec.priority, spec.priority_class, spec.queue_name) == (7, "w", "q")
    del pod["metadata"]["labels"]["kueue.x-k8s.io/priority-class"]
    del pod["spec"]["priorityClassName"]
    assert derive_workload(pod, cluster).priority == 9
    pod["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "missing"
    assert "not found" in (derive_workload(pod, cluster).problem or "")


def test_sidecar_mode_adds_submitter_to_head() -> None:
    rayjob = {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "r"},
              "spec": {"submissionMode": "SidecarMode", "rayClusterSpec": {"headGroupSpec": {"template": {"spec": {
                  "containers": [{"name": "h", "resources": {"requests": {"cpu": "1"}}}]}}}}}}
    assert _per_pod(pod_sets_for(rayjob)) == {"head": (1, {"cpu": 1500, "memory": 200 * MI})}


def test_versions_and_errors() -> None:
    assert version_tuple("v0.6.0-rc.1") == (0, 6)
    assert version_tuple(None) == (0, 19)
    with pytest.raises(KueueplanError):
        version_tuple("latest")
    with pytest.raises(KueueplanError):
        pod_sets_for({"kind": "SparkApplication", "metadata": {"name": "d"}})
    with pytest.raises(KueueplanError):
        pod_sets_for({"kind": "Pod", "metadata": {"name": "p"},
                      "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "lots"}}}]}})
