"""Layer 6: declared workloads that can never be admitted, using the simulator's own quota model.

`kueueplan.simulate.admissibility` answers "could this fit in an idle cluster?" for simulate and validate
alike, so the two commands never disagree. Missing queues, namespaces and priority classes are reported by
layer 5 (KP401/KP405/KP406/KP408); this layer reports quota and flavor reasons only.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kueueplan.errors import KueueplanError
from kueueplan.kube.podsets import SUPPORTED_KINDS, queue_name_of
from kueueplan.validate.model import Context
from kueueplan.validate.registry import Hit, rule

ADMITTABLE_KINDS = SUPPORTED_KINDS  # every kind kube.podsets derives pod sets for
_LAYER5_REASONS = ("doesn't exist", "namespaceSelector", "not found", "no kueue.x-k8s.io/queue-name")


def _cluster(ctx: Context) -> Any:
    from kueueplan.kube.objects import Cluster, read_object

    cluster = Cluster()
    for obj in ctx.objects:
        if obj.kind in ADMITTABLE_KINDS and obj.kind != "Workload":
            continue
        try:
            kobj = read_object(obj.data, obj.file, None)
        except KueueplanError:
            continue  # malformed objects are reported by the schema and webhook layers
        if kobj is not None:
            cluster.apply(kobj)
        else:
            cluster.other.append(obj.data)  # e.g. a TrainJob's runtime, which derive_workload reads
    return cluster


@rule("KP501", "error", "6 admission", scope="global")
def never_admissible(ctx: Context) -> Iterator[Hit]:
    """A declared workload can never be admitted by its ClusterQueue and cohort, even on an idle cluster.

    Causes: a resource the queue does not cover, more than nominal quota plus everything it could ever
    borrow, or no flavor matching its node selector / tolerations. The message shows the arithmetic.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata:
      name: default-flavor
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu, memory]
        flavors:
        - name: default-flavor
          resources:
          - name: cpu
            nominalQuota: 2
          - name: memory
            nominalQuota: 16Gi
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: user-queue
      namespace: default
    spec:
      clusterQueue: cq
    ---
    apiVersion: ray.io/v1
    kind: RayJob
    metadata:
      name: train
      namespace: default
      labels:
        kueue.x-k8s.io/queue-name: user-queue
    spec:
      entrypoint: python train.py
      shutdownAfterJobFinishes: true
      rayClusterSpec:
        headGroupSpec:
          rayStartParams: {}
          template:
            spec:
              containers:
              - name: ray-head
                image: rayproject/ray:2.9.0
                resources:
                  requests:
                    cpu: "2"
                    memory: 8Gi
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata:
      name: default-flavor
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu, memory]
        flavors:
        - name: default-flavor
          resources:
          - name: cpu
            nominalQuota: 3
          - name: memory
            nominalQuota: 16Gi
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: user-queue
      namespace: default
    spec:
      clusterQueue: cq
    ---
    apiVersion: ray.io/v1
    kind: RayJob
    metadata:
      name: train
      namespace: default
      labels:
        kueue.x-k8s.io/queue-name: user-queue
    spec:
      entrypoint: python train.py
      shutdownAfterJobFinishes: true
      rayClusterSpec:
        headGroupSpec:
          rayStartParams: {}
          template:
            spec:
              containers:
              - name: ray-head
                image: rayproject/ray:2.9.0
                resources:
                  requests:
                    cpu: "2"
                    memory: 8Gi
    ```
    """
    candidates = [o for o in ctx.objects if o.kind in ADMITTABLE_KINDS and _queued(o)]
    if not candidates or not ctx.kueue("ClusterQueue"):
        return
    # The simulator's quota model, so validate and simulate never disagree; imported only when needed.
    from kueueplan.simulate.admissibility import can_ever_admit
    from kueueplan.simulate.resource_node import build_tree

    cluster = _cluster(ctx)
    try:
        tree = build_tree(cluster)
    except KueueplanError:
        return
    for obj in candidates:
        if obj.kind == "RayJob" and obj.spec.get("clusterSelector") and not obj.spec.get("rayClusterSpec"):
            continue  # Kueue skips RayJobs that run on an existing cluster
        data = dict(obj.data)
        if obj.namespace and not obj.metadata.get("namespace"):
            data["metadata"] = {**obj.metadata, "namespace": obj.namespace}
        try:
            verdict = can_ever_admit(cluster, data, obj.kueue_version or ctx.kueue_version, tree)
        except KueueplanError as err:
            yield Hit(obj, ("spec",), f"cannot compute this workload's requests: {err.message}", severity="warning")
            continue
        if verdict.admissible or any(marker in verdict.reason for marker in _LAYER5_REASONS):
            continue
        yield Hit(obj, ("spec",), f"can never be admitted: {verdict.reason}")


def _queued(obj: Any) -> bool:
    return bool(queue_name_of(obj.data))
