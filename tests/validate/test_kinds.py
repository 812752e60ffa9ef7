"""validate on the integration kinds: KP501 uses their pod sets (kube.podsets) to say a workload can never fit,
KP440 flags the queue label left on a template, a TrainJob without its runtime is named."""

from __future__ import annotations

from pathlib import Path

from kueueplan.validate import validate

QUEUE = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: h100
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: training
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - name: cpu
        nominalQuota: 512
      - name: nvidia.com/gpu
        nominalQuota: 32
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: training
  namespace: ml
spec:
  clusterQueue: training
"""

JOBSET = """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: pretrain
  namespace: ml
  labels:
    kueue.x-k8s.io/queue-name: training
spec:
  replicatedJobs:
  - name: workers
    replicas: REPLICAS
    template:
      spec:
        parallelism: 2
        completions: 2
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: trainer
              image: trainer
              resources:
                limits: {nvidia.com/gpu: 8}
"""


def _findings(tmp_path: Path, text: str, rule: str) -> list:
    path = tmp_path / "in.yaml"
    path.write_text(text)
    return [f for f in validate([str(path)], policies=[]).findings if f.rule == rule]


def test_kp501_counts_jobset_pods_as_kueue_does(tmp_path: Path) -> None:
    # 2 replicas x 2 pods x 8 GPUs = 32: fits; 3 replicas = 48 > 32: never
    assert _findings(tmp_path, QUEUE + "---\n" + JOBSET.replace("REPLICAS", "2"), "KP501") == []
    [hit] = _findings(tmp_path, QUEUE + "---\n" + JOBSET.replace("REPLICAS", "3"), "KP501")
    assert "JobSet" in hit.object and "nvidia.com/gpu" in hit.message and "48" in hit.message


def test_kp501_on_a_leaderworkerset_group(tmp_path: Path) -> None:
    lws = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: vllm
  namespace: ml
  labels:
    kueue.x-k8s.io/queue-name: training
spec:
  replicas: 10
  leaderWorkerTemplate:
    size: SIZE
    workerTemplate:
      spec:
        containers:
        - name: vllm
          image: vllm
          resources:
            limits: {nvidia.com/gpu: 8}
"""
    # each group is its own Workload: 10 groups of 4 x 8 GPUs fit one at a time; a group of 5 never does
    assert _findings(tmp_path, QUEUE + "---\n" + lws.replace("SIZE", "4"), "KP501") == []
    assert len(_findings(tmp_path, QUEUE + "---\n" + lws.replace("SIZE", "5"), "KP501")) == 1


def test_trainjob_without_runtime_is_named(tmp_path: Path) -> None:
    trainjob = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: finetune
  namespace: ml
  labels:
    kueue.x-k8s.io/queue-name: training
spec:
  runtimeRef:
    name: torch-distributed
"""
    [hit] = _findings(tmp_path, QUEUE + "---\n" + trainjob, "KP501")
    assert hit.severity == "warning" and "ClusterTrainingRuntime torch-distributed is not among the inputs" in hit.message


def test_kp440_on_statefulset_but_not_deployment(tmp_path: Path) -> None:
    template = """\
apiVersion: apps/v1
kind: KIND
metadata:
  name: web
  namespace: ml
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web, kueue.x-k8s.io/queue-name: training}
    spec:
      containers:
      - {name: web, image: nginx}
"""
    [hit] = _findings(tmp_path, template.replace("KIND", "StatefulSet"), "KP440")
    assert "metadata.labels" in hit.message and "'training'" in hit.message
    # a Deployment's pods are each a Workload that reads its own label: the template label works
    assert _findings(tmp_path, template.replace("KIND", "Deployment"), "KP440") == []


def test_kp440_on_a_sparkapplication_s_driver_labels(tmp_path: Path) -> None:
    """A SparkApplication's Workload takes its queue from the object (jobframework QueueName); the spark-operator
    copies spec.driver.labels and spec.executor.labels onto the pods, where the queue label does nothing for it."""
    spark = """\
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: spark-pi
  namespace: ml
spec:
  type: Scala
  mode: cluster
  driver: {coreRequest: "1", memory: 1g, labels: {kueue.x-k8s.io/queue-name: training}}
  executor: {instances: 2, coreRequest: "1", memory: 1g}
"""
    [hit] = _findings(tmp_path, spark, "KP440")
    assert hit.line == 9 and "'training'" in hit.message  # spec.driver.labels
    on_object = spark.replace("  namespace: ml\n", "  namespace: ml\n  labels: {kueue.x-k8s.io/queue-name: training}\n")
    assert _findings(tmp_path, on_object, "KP440") == []


def test_kp441_max_pod_sets_follows_the_release(tmp_path: Path) -> None:
    jobs = "\n".join(f"  - {{name: job-{i}, template: {{spec: {{template: {{spec: {{containers: [{{name: c, image: b}}]}}}}}}}}}}"
                     for i in range(9))
    text = ("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata:\n  name: sweep\n  labels:\n"
            "    kueue.x-k8s.io/queue-name: q\nspec:\n  replicatedJobs:\n" + jobs + "\n")
    path = tmp_path / "js.yaml"
    path.write_text(text)

    def hits(version: str) -> list[str]:
        return [f.message for f in validate([str(path)], policies=[], kueue_version=version).findings
                if f.rule == "KP441"]

    assert hits("v0.19.2") == []  # 9 <= 18
    [msg] = hits("v0.17.0")  # 9 > 8
    assert "9 pod sets" in msg and "at most 8" in msg


def test_kp501_on_the_load_only_kinds(tmp_path: Path) -> None:
    """TFJob and RayService are simulated, not built: validate still reads their pod sets (ADMITTABLE_KINDS)."""
    tfjob = """\
apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: resnet
  namespace: ml
  labels:
    kueue.x-k8s.io/queue-name: training
spec:
  tfReplicaSpecs:
    Chief:
      template:
        spec:
          containers: [{name: tensorflow, image: tf, resources: {limits: {nvidia.com/gpu: 8}}}]
    Worker:
      replicas: WORKERS
      template:
        spec:
          containers: [{name: tensorflow, image: tf, resources: {limits: {nvidia.com/gpu: 8}}}]
"""
    # chief 1 + 3 workers = 32 GPUs fits; 4 workers = 40 never does
    assert _findings(tmp_path, QUEUE + "---\n" + tfjob.replace("WORKERS", "3"), "KP501") == []
    [hit] = _findings(tmp_path, QUEUE + "---\n" + tfjob.replace("WORKERS", "4"), "KP501")
    assert "TFJob" in hit.object and "nvidia.com/gpu" in hit.message and "40" in hit.message
    service = """\
apiVersion: ray.io/v1
kind: RayService
metadata:
  name: serve
  namespace: ml
  labels:
    kueue.x-k8s.io/queue-name: training
spec:
  rayClusterConfig:
    headGroupSpec:
      template:
        spec:
          containers: [{name: head, image: ray, resources: {requests: {cpu: "600"}}}]
"""
    [hit] = _findings(tmp_path, QUEUE + "---\n" + service, "KP501")
    assert "RayService" in hit.object and "cpu" in hit.message
