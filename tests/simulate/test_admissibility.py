"""`can_ever_admit`: the validator's "can this workload EVER be admitted" question, with the arithmetic."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml

from kueueplan.kube.objects import LabelSelector, read_cluster
from kueueplan.simulate.admissibility import can_ever_admit


def _docs(*paths: Path) -> list:
    out = []
    for p in paths:
        out.extend(d for d in yaml.safe_load_all(p.read_text()) if d)
    return out


def test_oke_dev_rayjob_on_current_kueue(shared_dir: Path) -> None:
    oke = shared_dir / "upstream" / "seeds" / "oke"
    cluster = read_cluster(_docs(oke / "kueue-resources-priorityscheduling.yaml"))
    job = _docs(oke / "ray-job.ps-dev-pytorch-distributed-training.yaml")[0]
    job.setdefault("metadata", {})["namespace"] = "default"
    verdict = can_ever_admit(cluster, job)
    assert not verdict.admissible
    assert verdict.cluster_queue == "ps-cluster-queue"
    assert "needs 2500m cpu (head 2 + RayJob submitter 500m = 2500m)" in verdict.reason
    assert "at most 2 of flavor default-flavor" in verdict.reason
    assert can_ever_admit(cluster, job, "v0.8").admissible


def test_borrowing_counts_and_namespace_selector(shared_dir: Path) -> None:
    seeds = shared_dir / "upstream" / "seeds" / "kueue-preemption"
    cluster = read_cluster(_docs(*sorted(seeds.glob("*.y*ml"))))
    prod = _docs(seeds / "team-a-ray-cluster-prod.yaml")[0]
    assert can_ever_admit(cluster, prod).admissible  # cpu/memory borrowed from shared-cq
    moved = dict(prod, metadata=dict(prod["metadata"], namespace="team-b"))
    moved["metadata"]["labels"] = dict(prod["metadata"]["labels"])
    verdict = can_ever_admit(cluster, moved)  # team-b-cq can borrow at most 4 GPU: 4 fits, but cpu 10 of 20 fits too
    assert verdict.admissible
    moved["spec"] = dict(prod["spec"], workerGroupSpecs=[dict(prod["spec"]["workerGroupSpecs"][0], replicas=3)])
    verdict = can_ever_admit(cluster, moved)
    assert not verdict.admissible and "nvidia.com/gpu" in verdict.reason and "borrowingLimit 4" in verdict.reason


def test_missing_queue_and_uncovered_resource() -> None:
    cluster = read_cluster([
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "f"}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cq"},
         "spec": {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
             {"name": "f", "resources": [{"name": "cpu", "nominalQuota": 4}]}]}]}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"namespace": "ns", "name": "lq"},
         "spec": {"clusterQueue": "cq"}},
    ])
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns", "labels": {
        "kueue.x-k8s.io/queue-name": "lq"}}, "spec": {"containers": [{"name": "c", "resources": {
            "requests": {"cpu": "1", "example.com/fpga": "1"}}}]}}
    verdict = can_ever_admit(cluster, pod)
    assert not verdict.admissible and "no namespaceSelector" in verdict.reason
    cluster.cluster_queues["cq"] = dataclasses.replace(cluster.cluster_queues["cq"], namespace_selector=LabelSelector())
    verdict = can_ever_admit(cluster, pod)
    assert not verdict.admissible and "resource example.com/fpga unavailable" in verdict.reason
    pod["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "other"
    assert "LocalQueue ns/other doesn't exist" in can_ever_admit(cluster, pod).reason


def test_a_refusal_before_the_last_pod_set_says_what_it_counted() -> None:
    """Kueue's flavor assignment refuses at the pod set that overflows (flavorassigner.go: 'previously considered
    podsets requests + current podset request > maximum capacity'): with the head and 4 workers over 4 cpu, the
    submitter's 500m is never counted, so the figure is 5, not the whole 5500m."""
    cluster = read_cluster([
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "f"}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cq"},
         "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu", "memory"], "flavors": [
             {"name": "f", "resources": [{"name": "cpu", "nominalQuota": 4},
                                         {"name": "memory", "nominalQuota": "100Gi"}]}]}]}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"namespace": "ns", "name": "lq"},
         "spec": {"clusterQueue": "cq"}},
    ])

    def pod(cpu: str) -> dict:
        return {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}

    job = {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "j", "namespace": "ns", "labels": {
        "kueue.x-k8s.io/queue-name": "lq"}}, "spec": {"entrypoint": "python x.py", "rayClusterSpec": {
            "headGroupSpec": {"template": pod("1")},
            "workerGroupSpecs": [{"groupName": "cpu-workers", "replicas": 4, "template": pod("1")}]}}}
    verdict = can_ever_admit(cluster, job)
    assert not verdict.admissible
    assert "needs 5 cpu with its pod sets placed so far (in all: head 1 + cpu-workers 4x1 + RayJob submitter " \
           "500m = 5500m) but ClusterQueue cq can use at most 4 of flavor f" in verdict.reason, verdict.reason
    job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["replicas"] = 3  # refused at the last pod set: all counted
    verdict = can_ever_admit(cluster, job)
    assert "needs 4500m cpu (head 1 + cpu-workers 3x1 + RayJob submitter 500m = 4500m) but" in verdict.reason
