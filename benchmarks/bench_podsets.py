"""Benchmark kube.podsets: microseconds to derive one Workload's pod sets, per kind (issue 12's integrations
beside the Ray and Job ones), so a change to the shared reading shows up in every command that uses it.

    python benchmarks/bench_podsets.py [N]     # N derivations per kind (default 20,000)
"""

from __future__ import annotations

import sys
import time
from typing import Any

from kueueplan.kube.objects import Cluster
from kueueplan.kube.podsets import derive_workload


def _pod(cpu: str, gpu: int = 0) -> dict[str, Any]:
    res: dict[str, Any] = {"requests": {"cpu": cpu, "memory": "16Gi"}}
    if gpu:
        res["limits"] = {"nvidia.com/gpu": gpu}
    return {"spec": {"containers": [{"name": "main", "image": "img", "resources": res}]}}


def _meta(name: str) -> dict[str, Any]:
    return {"name": name, "namespace": "ml", "labels": {"kueue.x-k8s.io/queue-name": "q"}}


RUNTIME = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
           "metadata": {"name": "torch"},
           "spec": {"mlPolicy": {"numNodes": 1, "torch": {}}, "template": {"spec": {"replicatedJobs": [
               {"name": "node", "template": {"metadata": {"labels": {
                   "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                   "spec": {"template": _pod("1")}}}]}}}}

KINDS: dict[str, dict[str, Any]] = {
    "Job": {"apiVersion": "batch/v1", "kind": "Job", "metadata": _meta("j"),
            "spec": {"parallelism": 4, "template": _pod("4", 1)}},
    "JobSet": {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": _meta("js"),
               "spec": {"replicatedJobs": [{"name": "driver", "template": {"spec": {"template": _pod("2")}}},
                                           {"name": "workers", "replicas": 4, "template": {
                                               "spec": {"parallelism": 2, "template": _pod("32", 8)}}}]}},
    "PyTorchJob": {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": _meta("pt"),
                   "spec": {"pytorchReplicaSpecs": {"Master": {"template": _pod("4", 1)},
                                                    "Worker": {"replicas": 3, "template": _pod("4", 2)}}}},
    "MPIJob": {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": _meta("mpi"),
               "spec": {"mpiReplicaSpecs": {"Launcher": {"template": _pod("1")},
                                            "Worker": {"replicas": 4, "template": _pod("8", 2)}}}},
    "TrainJob": {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": _meta("tj"),
                 "spec": {"runtimeRef": {"name": "torch"}, "trainer": {"numNodes": 4}}},
    "AppWrapper": {"apiVersion": "workload.codeflare.dev/v1beta2", "kind": "AppWrapper", "metadata": _meta("aw"),
                   "spec": {"components": [{"template": {
                       "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "p"},
                       "spec": {"pytorchReplicaSpecs": {"Master": {"template": _pod("1")},
                                                        "Worker": {"replicas": 2, "template": _pod("2", 1)}}}}}]}},
    "LeaderWorkerSet": {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                        "metadata": _meta("lws"),
                        "spec": {"replicas": 2, "leaderWorkerTemplate": {
                            "size": 4, "leaderTemplate": _pod("8", 2), "workerTemplate": _pod("4", 2)}}},
    "StatefulSet": {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": _meta("sts"),
                    "spec": {"replicas": 3, "template": _pod("4", 1)}},
    "Deployment": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta("dep"),
                   "spec": {"replicas": 3, "template": _pod("2")}},
}


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    cluster = Cluster()
    cluster.other.append(RUNTIME)
    print(f"{'kind':<16} {'pod sets':>8} {'us / derivation':>16}")
    for kind, manifest in KINDS.items():
        spec = derive_workload(manifest, cluster)
        start = time.perf_counter()
        for _ in range(n):
            derive_workload(manifest, cluster)
        per = (time.perf_counter() - start) / n * 1e6
        print(f"{kind:<16} {len(spec.pod_sets):>8} {per:>16.1f}")


if __name__ == "__main__":
    main()
