"""Layer 5: the rules Kueue's job webhooks enforce on managed RayJob / RayCluster / Job objects.

A job is managed when it has a `kueue.x-k8s.io/queue-name` label, or when its namespace has a LocalQueue
named `default` among the inputs (Kueue's defaulting webhook then adds the label).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kueueplan.kube.configschema import FRAMEWORK_BY_KIND, FRAMEWORK_KINDS, registered
from kueueplan.validate import kueue
from kueueplan.kube.configuration import gate_on
from kueueplan.validate.configuration import release_of, universe_configuration
from kueueplan.validate.model import Context, Obj
from kueueplan.kube.names import dns_subdomain_errors
from kueueplan.validate.registry import Hit, rule

_RAY = ("RayJob", "RayCluster", "RayService")


PREBUILT = "kueue.x-k8s.io/prebuilt-workload-name"
# jobframework validateCreateForPrebuiltWorkload: the integrations that support prebuilt Workloads.
PREBUILT_KINDS = ("Job", "JobSet", "TFJob", "PaddleJob", "PyTorchJob", "XGBoostJob", "TrainJob", "MPIJob", "RayJob",
                  "RayCluster", "RayService", "Pod", "AppWrapper")
# jobframework supportedElasticJobGVKs: the kinds that may be elastic (workload-slice) jobs. From v0.18
# ValidateJobOnCreate refuses `elastic-job: "true"` on any other kind; in v0.17 only the SparkApplication webhook
# did, and only with the then-alpha ElasticJobsViaWorkloadSlices gate on (off by default).
ELASTIC_KINDS = ("Job", "RayCluster", "RayJob", "RayService")
ELASTIC_CHECKED_FROM = (0, 18)
POD_GROUP = "kueue.x-k8s.io/pod-group-name"
POD_GROUP_COUNT = "kueue.x-k8s.io/pod-group-total-count"


def managed(obj: Obj, ctx: Context) -> bool:
    """Kueue manages it: its release has the kind's integration (before, no Kueue webhook sees the object), and it
    names a queue or its namespace has a LocalQueue named default."""
    framework = FRAMEWORK_BY_KIND.get(obj.kind)
    if framework is not None and not registered(framework, release_of(obj, ctx)):
        return False
    if kueue.QUEUE_LABEL in obj.labels:
        return True
    return ctx.get("LocalQueue", "default", obj.namespace) is not None


def _cluster_spec(obj: Obj) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
    if obj.kind == "RayCluster":
        return obj.spec, ("spec",)
    if obj.kind == "RayJob":
        spec = obj.spec.get("rayClusterSpec")
        return (spec if isinstance(spec, dict) else None), ("spec", "rayClusterSpec")
    if obj.kind == "RayService":
        spec = obj.spec.get("rayClusterConfig")
        return (spec if isinstance(spec, dict) else None), ("spec", "rayClusterConfig")
    return None, ()


def _workers(cluster: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    groups = cluster.get("workerGroupSpecs")
    return [(i, g) for i, g in enumerate(groups if isinstance(groups, list) else []) if isinstance(g, dict)]


@rule("KP410", "error", "5 never works", kinds=("RayJob",))
def rayjob_shutdown(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A Kueue-managed RayJob must set `shutdownAfterJobFinishes: true` (Kueue's RayJob webhook).

    "a kueue managed job should delete the cluster after finishing": otherwise the RayCluster would keep
    holding the quota. (Skipped for a RayJob that only uses clusterSelector: Kueue ignores those.)

    Fails:

    ```yaml
    apiVersion: ray.io/v1
    kind: RayJob
    metadata:
      name: job
      labels:
        kueue.x-k8s.io/queue-name: user-queue
    spec:
      entrypoint: python -c "print(1)"
      rayClusterSpec:
        headGroupSpec:
          rayStartParams: {}
          template:
            spec:
              containers:
              - name: ray-head
                image: rayproject/ray:2.9.0
    ```

    Passes:

    ```yaml
    apiVersion: ray.io/v1
    kind: RayJob
    metadata:
      name: job
      labels:
        kueue.x-k8s.io/queue-name: user-queue
    spec:
      entrypoint: python -c "print(1)"
      shutdownAfterJobFinishes: true
      rayClusterSpec:
        headGroupSpec:
          rayStartParams: {}
          template:
            spec:
              containers:
              - name: ray-head
                image: rayproject/ray:2.9.0
    ```
    """
    if not managed(obj, ctx) or (obj.spec.get("clusterSelector") and not obj.spec.get("rayClusterSpec")):
        return
    if obj.spec.get("shutdownAfterJobFinishes") is not True:
        yield Hit(obj, ("spec", "shutdownAfterJobFinishes"),
                  "a kueue managed job should delete the cluster after finishing: set "
                  "spec.shutdownAfterJobFinishes: true")


@rule("KP411", "error", "5 never works", kinds=("RayJob",))
def rayjob_cluster_source(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A managed RayJob sets both clusterSelector and rayClusterSpec, or neither (Kueue rejects both).

    Fails:

    ```yaml
    apiVersion: ray.io/v1
    kind: RayJob
    metadata:
      name: job
      labels:
        kueue.x-k8s.io/queue-name: user-queue
    spec:
      entrypoint: python -c "print(1)"
      shutdownAfterJobFinishes: true
    ```

    Passes:

    ```yaml
    apiVersion: ray.io/v1
    kind: RayJob
    metadata:
      name: job
      labels:
        kueue.x-k8s.io/queue-name: user-queue
    spec:
      entrypoint: python -c "print(1)"
      clusterSelector:
        ray.io/cluster: shared
    ```
    """
    if not managed(obj, ctx):
        return
    selector, cluster = obj.spec.get("clusterSelector"), obj.spec.get("rayClusterSpec")
    if selector and cluster:
        yield Hit(obj, ("spec", "clusterSelector"), "a kueue managed job should not use an existing cluster "
                                                    "(clusterSelector) together with rayClusterSpec; drop one")
    elif not selector and not cluster:
        yield Hit(obj, ("spec",), "a kueue managed RayJob needs spec.rayClusterSpec (or a clusterSelector, which "
                                  "Kueue then does not manage)")


@rule("KP412", "error", "5 never works", kinds=_RAY)
def ray_autoscaling(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A managed Ray cluster enables in-tree autoscaling without being an elastic job (Kueue rejects it).

    Set annotation `kueue.x-k8s.io/elastic-job: "true"` (gate ElasticJobsViaWorkloadSlices, on by default
    since v0.18) or turn autoscaling off.

    Fails:

    ```yaml
    apiVersion: ray.io/v1
    kind: RayCluster
    metadata:
      name: rc
      labels:
        kueue.x-k8s.io/queue-name: user-queue
    spec:
      enableInTreeAutoscaling: true
      headGroupSpec:
        rayStartParams: {}
        template:
          spec:
            containers:
            - name: ray-head
              image: rayproject/ray:2.9.0
    ```

    Passes:

    ```yaml
    apiVersion: ray.io/v1
    kind: RayCluster
    metadata:
      name: rc
      labels:
        kueue.x-k8s.io/queue-name: user-queue
      annotations:
        kueue.x-k8s.io/elastic-job: "true"
    spec:
      enableInTreeAutoscaling: true
      headGroupSpec:
        rayStartParams: {}
        template:
          spec:
            containers:
            - name: ray-head
              image: rayproject/ray:2.9.0
    ```
    """
    if not managed(obj, ctx):
        return
    cluster, base = _cluster_spec(obj)
    if cluster and cluster.get("enableInTreeAutoscaling") is True and \
            obj.annotations.get(kueue.ELASTIC_ANNOTATION) != "true":
        yield Hit(obj, base + ("enableInTreeAutoscaling",),
                  "a kueue managed Ray cluster can use in-tree autoscaling only as an elastic job: add annotation "
                  "kueue.x-k8s.io/elastic-job: \"true\" or set enableInTreeAutoscaling: false")


@rule("KP413", "error", "5 never works", kinds=_RAY)
def ray_pod_sets(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A managed Ray object has a worker group named `head`, or more pod sets than a Workload allows (18).

    A RayJob in K8sJobMode also gets a `submitter` pod set, so keep it to at most 16 worker groups.

    Fails:

    ```yaml
    apiVersion: ray.io/v1
    kind: RayCluster
    metadata:
      name: rc
      labels:
        kueue.x-k8s.io/queue-name: user-queue
    spec:
      headGroupSpec:
        rayStartParams: {}
        template:
          spec:
            containers:
            - name: ray-head
              image: rayproject/ray:2.9.0
      workerGroupSpecs:
      - groupName: head
        replicas: 1
        minReplicas: 1
        maxReplicas: 1
        rayStartParams: {}
        template:
          spec:
            containers:
            - name: ray-worker
              image: rayproject/ray:2.9.0
    ```

    Passes:

    ```yaml
    apiVersion: ray.io/v1
    kind: RayCluster
    metadata:
      name: rc
      labels:
        kueue.x-k8s.io/queue-name: user-queue
    spec:
      headGroupSpec:
        rayStartParams: {}
        template:
          spec:
            containers:
            - name: ray-head
              image: rayproject/ray:2.9.0
      workerGroupSpecs:
      - groupName: workers
        replicas: 1
        minReplicas: 1
        maxReplicas: 1
        rayStartParams: {}
        template:
          spec:
            containers:
            - name: ray-worker
              image: rayproject/ray:2.9.0
    ```
    """
    if not managed(obj, ctx):
        return
    cluster, base = _cluster_spec(obj)
    if not cluster:
        return
    workers = _workers(cluster)
    for i, group in workers:
        if str(group.get("groupName", "")).lower() == "head":
            yield Hit(obj, base + ("workerGroupSpecs", i, "groupName"),
                      "a worker group may not be named 'head' (it clashes with the head pod set); rename it")
    submitter = obj.kind == "RayJob" and obj.spec.get("submissionMode", "K8sJobMode") == "K8sJobMode"
    total = 1 + len(workers) + (1 if submitter else 0)
    if total > kueue.MAX_POD_SETS:
        extra = " (head + workers + submitter)" if submitter else " (head + workers)"
        yield Hit(obj, base + ("workerGroupSpecs",), f"{total} pod sets{extra}; a Kueue Workload holds at most "
                                                     f"{kueue.MAX_POD_SETS}: merge worker groups")


def _webhook_exists(obj: Obj, ctx: Context, release: tuple[int, int]) -> bool:
    """Kueue sets up a kind's webhook only where its release has the integration and the Configuration enables
    it (jobframework SetupWebhooks for the enabled frameworks; KP460 reports a queued object that Kueue ignores)."""
    framework = FRAMEWORK_BY_KIND[obj.kind]
    if not registered(framework, release):
        return False
    effective = universe_configuration(ctx, obj)
    return effective is None or framework in effective.config.frameworks


def _spark_managed(obj: Obj, ctx: Context) -> tuple[bool, bool]:
    """(does Kueue's SparkApplication webhook treat it as managed: a queue name, or manageJobsWithoutQueueName;
    is it an elastic job: workloadslicing.Enabled, the annotation "true" with ElasticJobsViaWorkloadSlices on)."""
    effective = universe_configuration(ctx, obj)
    if effective is None:
        return managed(obj, ctx), False  # an unreadable Configuration: KP450 says why
    config = effective.config
    if not _webhook_exists(obj, ctx, effective.release):
        return False, False
    elastic = obj.annotations.get(kueue.ELASTIC_ANNOTATION) == "true" and \
        gate_on(config.feature_gates, "ElasticJobsViaWorkloadSlices", effective.release)
    return managed(obj, ctx) or bool(config.manage_jobs_without_queue_name), elastic


@rule("KP417", "error", "4 webhook", kinds=("SparkApplication",))
def spark_managed_mode(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A SparkApplication Kueue manages runs in cluster mode, with dynamic allocation only as an elastic job.

    Kueue's SparkApplication webhook (pkg/controller/jobs/sparkapplication/sparkapplication_webhook.go
    validateCreate, Kueue v0.17 on) refuses, for a job with a queue name or under manageJobsWithoutQueueName,
    a `spec.mode` other than `cluster` ("only Cluster mode is supported for a kueue managed job"), and
    `spec.dynamicAllocation.enabled: true` unless the job is elastic (`kueue.x-k8s.io/elastic-job: "true"` with
    the ElasticJobsViaWorkloadSlices gate on; from v0.18 Kueue refuses that annotation on a SparkApplication, see
    KP414, so a managed SparkApplication cannot use dynamic allocation at all). The webhook exists only where
    the Configuration enables the sparkoperator.k8s.io/sparkapplication integration (no release's default
    install does; KP460 says when a queued one is ignored). A mode left out is the Spark operator's to default
    (cluster) and is not judged here.

    Fails:

    ```yaml
    apiVersion: sparkoperator.k8s.io/v1beta2
    kind: SparkApplication
    metadata:
      name: spark-pi
      labels:
        kueue.x-k8s.io/queue-name: user-queue
    spec:
      type: Scala
      mode: client
      sparkVersion: 4.0.0
      image: spark:4.0.0
      mainClass: org.apache.spark.examples.SparkPi
      mainApplicationFile: local:///opt/spark/examples/jars/spark-examples.jar
      dynamicAllocation:
        enabled: true
      driver: {coreRequest: "1", memory: 1g}
      executor: {instances: 2, coreRequest: "1", memory: 1g}
    ---
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        integrations:
          frameworks: [batch/job, sparkoperator.k8s.io/sparkapplication]
    ```

    Passes:

    ```yaml
    apiVersion: sparkoperator.k8s.io/v1beta2
    kind: SparkApplication
    metadata:
      name: spark-pi
      labels:
        kueue.x-k8s.io/queue-name: user-queue
    spec:
      type: Scala
      mode: cluster
      sparkVersion: 4.0.0
      image: spark:4.0.0
      mainClass: org.apache.spark.examples.SparkPi
      mainApplicationFile: local:///opt/spark/examples/jars/spark-examples.jar
      driver: {coreRequest: "1", memory: 1g}
      executor: {instances: 2, coreRequest: "1", memory: 1g}
    ---
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        integrations:
          frameworks: [batch/job, sparkoperator.k8s.io/sparkapplication]
    ```
    """
    is_managed, elastic = _spark_managed(obj, ctx)
    if not is_managed:
        return
    mode = obj.spec.get("mode")
    if mode is not None and mode != "cluster":
        yield Hit(obj, ("spec", "mode"), f"mode {mode!r}: only Cluster mode is supported for a kueue managed job; "
                                         "set spec.mode: cluster")
    dynamic = obj.spec.get("dynamicAllocation")
    if isinstance(dynamic, dict) and dynamic.get("enabled") is True and not elastic:
        yield Hit(obj, ("spec", "dynamicAllocation", "enabled"),
                  "a kueue managed job can use dynamicAllocation only when the ElasticJobsViaWorkloadSlices feature "
                  "gate is on and the job is an elastic job: remove spec.dynamicAllocation or drop the queue name")


@rule("KP414", "error", "4 webhook", kinds=FRAMEWORK_KINDS)
def job_labels(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A job's Kueue labels are invalid: queue-name, max-exec-time, prebuilt-workload-name, elastic-job.

    Every integration's webhook runs jobframework ValidateJobOnCreate, with or without a queue name:
    queue-name must be a DNS subdomain; max-exec-time-seconds an integer > 0; prebuilt-workload-name a DNS
    subdomain on a kind that supports prebuilt Workloads; `elastic-job: "true"` only on Job / Ray kinds (from
    Kueue v0.18). A kind is checked from the release that registers its integration (SparkApplication and
    RayService: v0.17), and only where the Configuration enables it: otherwise no Kueue webhook sees it.

    Fails:

    ```yaml
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      labels:
        kueue.x-k8s.io/queue-name: user-queue
        kueue.x-k8s.io/max-exec-time-seconds: "0"
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```

    Passes:

    ```yaml
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      labels:
        kueue.x-k8s.io/queue-name: user-queue
        kueue.x-k8s.io/max-exec-time-seconds: "3600"
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```
    """
    release = release_of(obj, ctx)
    if not _webhook_exists(obj, ctx, release):
        return
    queue = obj.labels.get(kueue.QUEUE_LABEL)
    if isinstance(queue, str):
        for err in dns_subdomain_errors(queue):
            yield Hit(obj, ("metadata", "labels", kueue.QUEUE_LABEL), f"queue-name {queue!r}: {err}")
    max_exec = obj.labels.get(kueue.MAX_EXEC_LABEL)
    if max_exec is not None:
        text = str(max_exec)
        if not text.isdigit() or int(text) <= 0:
            yield Hit(obj, ("metadata", "labels", kueue.MAX_EXEC_LABEL),
                      f"{kueue.MAX_EXEC_LABEL} must be an integer greater than 0, is {text!r}")
    for where, values in (("labels", obj.labels), ("annotations", obj.annotations)):
        prebuilt = values.get(PREBUILT)
        if prebuilt is None:
            continue
        path = ("metadata", where, PREBUILT)
        if obj.kind not in PREBUILT_KINDS:
            yield Hit(obj, path, f"{PREBUILT} is not supported for kind {obj.kind}")
        for err in dns_subdomain_errors(str(prebuilt)):
            yield Hit(obj, path, f"{PREBUILT} {prebuilt!r}: {err}")
    # workloadslicing.Enabled: exactly "true", with the gate (on by default from v0.18)
    if obj.annotations.get(kueue.ELASTIC_ANNOTATION) == "true" and release >= ELASTIC_CHECKED_FROM and \
            obj.kind not in ELASTIC_KINDS:
        yield Hit(obj, ("metadata", "annotations", kueue.ELASTIC_ANNOTATION),
                  f"{kueue.ELASTIC_ANNOTATION} is not supported for kind {obj.kind} (only {', '.join(ELASTIC_KINDS)})")


@rule("KP415", "error", "5 never works", kinds=("Job",))
def job_partial_admission(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """`kueue.x-k8s.io/job-min-parallelism` must be an integer from 1 to parallelism − 1.

    Fails:

    ```yaml
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      labels:
        kueue.x-k8s.io/queue-name: user-queue
      annotations:
        kueue.x-k8s.io/job-min-parallelism: "5"
    spec:
      parallelism: 3
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```

    Passes:

    ```yaml
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      labels:
        kueue.x-k8s.io/queue-name: user-queue
      annotations:
        kueue.x-k8s.io/job-min-parallelism: "2"
    spec:
      parallelism: 3
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```
    """
    value = obj.annotations.get("kueue.x-k8s.io/job-min-parallelism")
    if value is None or not managed(obj, ctx):
        return
    parallelism = obj.spec.get("parallelism", 1)
    path = ("metadata", "annotations", "kueue.x-k8s.io/job-min-parallelism")
    text = str(value)
    if not text.isdigit():
        yield Hit(obj, path, f"job-min-parallelism must be an integer, is {text!r}")
    elif isinstance(parallelism, int) and not 0 < int(text) < parallelism:
        completions = obj.spec.get("completions")
        pods = min(parallelism, completions) if isinstance(completions, int) else parallelism  # KP317: the rest
        yield Hit(obj, path, f"job-min-parallelism {text} must be between 1 and {pods - 1} (the Job's pods: "
                             "parallelism, or completions when smaller, minus one)")


@rule("KP416", "error", "5 never works", kinds=("Pod",))
def pod_group(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A pod-group member lacks `kueue.x-k8s.io/pod-group-total-count`, or it is not an integer ≥ 1.

    Kueue creates no Workload for the group until it knows how many pods to wait for.

    Fails:

    ```yaml
    apiVersion: v1
    kind: Pod
    metadata:
      name: worker-0
      labels:
        kueue.x-k8s.io/queue-name: user-queue
        kueue.x-k8s.io/pod-group-name: group
    spec:
      containers:
      - name: main
        image: busybox
    ```

    Passes:

    ```yaml
    apiVersion: v1
    kind: Pod
    metadata:
      name: worker-0
      labels:
        kueue.x-k8s.io/queue-name: user-queue
        kueue.x-k8s.io/pod-group-name: group
      annotations:
        kueue.x-k8s.io/pod-group-total-count: "2"
    spec:
      containers:
      - name: main
        image: busybox
    ```
    """
    group = obj.labels.get(POD_GROUP) or obj.annotations.get(POD_GROUP)
    if not group or not managed(obj, ctx):
        return
    count = obj.annotations.get(POD_GROUP_COUNT)
    if count is None:
        yield Hit(obj, ("metadata", "annotations"), f"pod group {group!r} needs annotation {POD_GROUP_COUNT} "
                                                    "(the number of pods in the group)")
    elif not str(count).isdigit() or int(str(count)) < 1:
        yield Hit(obj, ("metadata", "annotations", POD_GROUP_COUNT), f"{POD_GROUP_COUNT} must be an integer >= 1, "
                                                                     f"is {count!r}")
