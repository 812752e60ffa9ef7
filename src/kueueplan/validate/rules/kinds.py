"""Layer 5: mistakes specific to the job integrations GPU platforms queue (JobSet, Kubeflow, AppWrapper,
LeaderWorkerSet, StatefulSet, ...); their pod sets come from kube.podsets."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kueueplan.validate import kueue
from kueueplan.validate.model import Context, Obj
from kueueplan.validate.registry import Hit, rule

# Kinds whose Workload takes its queue from the object's own labels (jobframework.QueueNameForObject on the job;
# leaderworkerset_reconciler.go and statefulset_reconciler.go on the LWS / StatefulSet). Not Deployment, whose pods
# are each their own Workload and read their own labels, nor Pod.
_QUEUE_ON_OBJECT = ("Job", "JobSet", "PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob", "TrainJob",
                    "AppWrapper", "LeaderWorkerSet", "StatefulSet", "RayJob", "RayCluster", "RayService",
                    "SparkApplication")


def _template_queue_labels(obj: Obj) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """The queue labels below the object's spec: on every nested `metadata.labels`, and on a SparkApplication's
    driver and executor `labels` (the spark-operator puts those on the pods)."""
    if obj.kind == "SparkApplication":
        for role in ("driver", "executor"):
            part = obj.spec.get(role)
            labels = part.get("labels") if isinstance(part, dict) else None
            if isinstance(labels, dict) and labels.get(kueue.QUEUE_LABEL):
                yield ("spec", role, "labels", kueue.QUEUE_LABEL), str(labels[kueue.QUEUE_LABEL])
    yield from _nested_queue_labels(obj.spec, ("spec",))


def _nested_queue_labels(node: Any, path: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """(path of the labels map, queue) for each `metadata.labels` below spec that carries the queue label."""
    if isinstance(node, dict):
        md = node.get("metadata")
        if isinstance(md, dict) and isinstance(md.get("labels"), dict) and md["labels"].get(kueue.QUEUE_LABEL):
            yield path + ("metadata", "labels", kueue.QUEUE_LABEL), str(md["labels"][kueue.QUEUE_LABEL])
        for k, v in node.items():
            if k != "metadata":
                yield from _nested_queue_labels(v, path + (str(k),))
    elif isinstance(node, list):
        for i, v in enumerate(node[:1000]):  # bounded: a hostile list is not walked whole
            yield from _nested_queue_labels(v, path + (i,))


@rule("KP440", "warning", "5 never works", kinds=_QUEUE_ON_OBJECT)
def queue_label_on_template(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """The `kueue.x-k8s.io/queue-name` label sits on a pod or job template inside the object, not on the object.

    Kueue reads the queue of these kinds from the object's own labels: the label on a template is ignored, so the
    job is either not queued at all (it runs beside Kueue, outside every quota) or, with
    `manageJobsWithoutQueueName`, suspended with no queue. Move the label to the object's `metadata.labels`.

    Fails:

    ```yaml
    apiVersion: jobset.x-k8s.io/v1alpha2
    kind: JobSet
    metadata:
      name: pretrain
    spec:
      replicatedJobs:
      - name: workers
        template:
          spec:
            template:
              metadata:
                labels:
                  kueue.x-k8s.io/queue-name: user-queue
              spec:
                containers:
                - name: trainer
                  image: busybox
    ```

    Passes:

    ```yaml
    apiVersion: jobset.x-k8s.io/v1alpha2
    kind: JobSet
    metadata:
      name: pretrain
      labels:
        kueue.x-k8s.io/queue-name: user-queue
    spec:
      replicatedJobs:
      - name: workers
        template:
          spec:
            template:
              spec:
                containers:
                - name: trainer
                  image: busybox
    ```
    """
    if obj.labels.get(kueue.QUEUE_LABEL) or not isinstance(obj.spec, dict):
        return
    for path, queue in _template_queue_labels(obj):
        yield Hit(obj, path, f"{obj.kind} reads its queue from its own metadata.labels: the "
                             f"{kueue.QUEUE_LABEL}: {queue!r} label on this template is ignored; "
                             "move it to the object's metadata.labels")
        return  # once per object


def _max_pod_sets(version: tuple[int, int]) -> int:
    """apis/kueue/*/workload_types.go MaxPodSets: 8 before v0.18, 10 in v0.18, 18 from v0.19."""
    return 18 if version >= (0, 19) else 10 if version >= (0, 18) else 8


@rule("KP441", "error", "5 never works", kinds=("JobSet", "AppWrapper"))
def too_many_pod_sets(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A queued JobSet or AppWrapper would make a Workload with more pod sets than Kueue allows.

    Kueue makes one pod set per replicatedJob of a JobSet and per component pod set of an AppWrapper; the
    Workload API refuses more than MaxPodSets (18 from Kueue v0.19, 10 in v0.18, 8 before), so no Workload is
    created and the job stays suspended. Merge replicated jobs or split the object.

    Fails:

    ```yaml
    apiVersion: jobset.x-k8s.io/v1alpha2
    kind: JobSet
    metadata:
      name: sweep
      labels:
        kueue.x-k8s.io/queue-name: user-queue
    spec:
      replicatedJobs:
          - {name: job-0, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-1, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-2, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-3, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-4, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-5, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-6, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-7, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-8, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-9, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-10, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-11, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-12, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-13, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-14, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-15, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-16, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-17, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-18, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
    ```

    Passes:

    ```yaml
    apiVersion: jobset.x-k8s.io/v1alpha2
    kind: JobSet
    metadata:
      name: sweep
      labels:
        kueue.x-k8s.io/queue-name: user-queue
    spec:
      replicatedJobs:
          - {name: job-0, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-1, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-2, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-3, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-4, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-5, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-6, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-7, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-8, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-9, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-10, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-11, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-12, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-13, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-14, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-15, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-16, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
          - {name: job-17, template: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}
    ```
    """
    if not obj.labels.get(kueue.QUEUE_LABEL):
        return
    from kueueplan.errors import KueueplanError
    from kueueplan.kube.podsets import pod_sets_for, version_tuple

    try:
        version = version_tuple(obj.kueue_version or ctx.kueue_version)
        sets = pod_sets_for(obj.data, version)
    except KueueplanError:
        return  # shapes are the schema layer's and KP501's to report
    limit = _max_pod_sets(version)
    if len(sets) > limit:
        where = "replicatedJobs" if obj.kind == "JobSet" else "components"
        yield Hit(obj, ("spec", where), f"{len(sets)} pod sets; a Kueue v{version[0]}.{version[1]} Workload holds "
                                        f"at most {limit}, so Kueue creates none and the {obj.kind} never runs")
