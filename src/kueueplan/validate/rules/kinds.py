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
                    "AppWrapper", "LeaderWorkerSet", "StatefulSet", "RayJob", "RayCluster", "RayService")


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
    for path, queue in _nested_queue_labels(obj.spec, ("spec",)):
        yield Hit(obj, path, f"{obj.kind} reads its queue from its own metadata.labels: the "
                             f"{kueue.QUEUE_LABEL}: {queue!r} label on this template is ignored; "
                             "move it to the object's metadata.labels")
        return  # once per object
