"""Pod sets of the integrations GPU platforms queue, each against Kueue v0.19.2's own PodSets()
(pkg/controller/jobs/<kind>/...): JobSet, PyTorchJob, MPIJob, TrainJob (with its runtime), AppWrapper,
LeaderWorkerSet, StatefulSet and Deployment. The manifests are shaped like each project's public examples."""

from __future__ import annotations

import pytest
import yaml

from kueueplan.errors import KueueplanError
from kueueplan.kube.objects import read_cluster
from kueueplan.kube.podsets import derive_workload, pod_sets_for, total_requests, workload_count

GI = 2**30
MI = 2**20


def _load(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d]


def _shape(sets) -> dict:
    return {ps.name: (ps.count, ps.per_pod) for ps in sets}


JOBSET = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: llama-pretrain
  namespace: team-a
  labels:
    kueue.x-k8s.io/queue-name: team-a-queue
spec:
  replicatedJobs:
  - name: Driver          # upper case: Kueue lower-cases pod-set names (NewPodSetReference)
    template:
      spec:
        template:
          spec:
            containers:
            - name: driver
              image: python:3.12
              resources: {requests: {cpu: "2", memory: 4Gi}}
  - name: workers
    replicas: 2           # two slices
    template:
      spec:
        parallelism: 4
        completions: 3    # min(parallelism, completions) = 3 pods per Job
        backoffLimit: 0
        template:
          spec:
            containers:
            - name: trainer
              image: nvcr.io/nvidia/pytorch:24.05-py3
              resources:
                limits: {nvidia.com/gpu: 8, cpu: "32", memory: 256Gi}
"""


def test_jobset_one_pod_set_per_replicated_job() -> None:
    sets = pod_sets_for(_load(JOBSET)[0])
    # jobset_controller.go: count = replicas (default 1) x min(parallelism (default 1), completions)
    assert _shape(sets) == {
        "driver": (1, {"cpu": 2000, "memory": 4 * GI}),
        "workers": (6, {"cpu": 32000, "memory": 256 * GI, "nvidia.com/gpu": 8}),
    }
    assert total_requests(sets)["nvidia.com/gpu"] == 48


PYTORCHJOB = """
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: pytorch-dist-mnist
  namespace: team-b
  labels:
    kueue.x-k8s.io/queue-name: team-b-queue
spec:
  pytorchReplicaSpecs:
    Worker:               # written before Master: Kueue orders Master, Worker
      replicas: 3
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: pytorch
            image: kubeflow/pytorch-dist-mnist:latest
            resources: {limits: {nvidia.com/gpu: 1}, requests: {cpu: "4", memory: 16Gi}}
    Master:
      restartPolicy: OnFailure   # replicas omitted: 1
      template:
        spec:
          containers:
          - name: pytorch
            image: kubeflow/pytorch-dist-mnist:latest
            resources: {requests: {cpu: "2", memory: 8Gi}}
"""


def test_pytorchjob_master_then_worker() -> None:
    sets = pod_sets_for(_load(PYTORCHJOB)[0])
    assert [ps.name for ps in sets] == ["master", "worker"]
    assert _shape(sets) == {"master": (1, {"cpu": 2000, "memory": 8 * GI}),
                            "worker": (3, {"cpu": 4000, "memory": 16 * GI, "nvidia.com/gpu": 1})}


MPIJOB = """
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: tensorflow-benchmarks
  namespace: team-b
  labels:
    kueue.x-k8s.io/queue-name: team-b-queue
spec:
  slotsPerWorker: 1
  runPolicy:
    cleanPodPolicy: Running
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - image: mpioperator/tensorflow-benchmarks:latest
            name: tensorflow-benchmarks
            resources: {limits: {cpu: "1", memory: 1Gi}}
    Worker:
      replicas: 4
      template:
        spec:
          containers:
          - image: mpioperator/tensorflow-benchmarks:latest
            name: tensorflow-benchmarks
            resources: {limits: {nvidia.com/gpu: 2}}
"""


def test_mpijob_launcher_then_worker_limits_fill_requests() -> None:
    sets = pod_sets_for(_load(MPIJOB)[0])
    assert _shape(sets) == {"launcher": (1, {"cpu": 1000, "memory": GI}), "worker": (4, {"nvidia.com/gpu": 2})}


TRAINJOB = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-distributed
spec:
  mlPolicy:
    numNodes: 1
    torch:
      numProcPerNode: auto
  template:
    spec:
      replicatedJobs:
      - name: dataset-initializer
        template:
          metadata:
            labels:
              trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer
          spec:
            template:
              spec:
                containers:
                - name: dataset-initializer
                  image: ghcr.io/kubeflow/trainer/dataset-initializer
                  resources: {requests: {cpu: "1", memory: 2Gi}}
      - name: node
        template:
          metadata:
            labels:
              trainer.kubeflow.org/trainjob-ancestor-step: trainer
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
                  resources: {requests: {cpu: "1"}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: fine-tune-llama
  namespace: team-a
  labels:
    kueue.x-k8s.io/queue-name: team-a-queue
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    numNodes: 4
    resourcesPerNode:
      requests: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 4}
      limits: {nvidia.com/gpu: 4}
"""


def test_trainjob_reads_its_runtime() -> None:
    runtime, job = _load(TRAINJOB)
    cluster = read_cluster([runtime])
    spec = derive_workload(job, cluster)
    # trainingruntime.go: the trainer ancestor counts numNodes (TrainJob over mlPolicy), resourcesPerNode
    # replaces the `node` container's resources; the initializer counts its parallelism (1).
    assert _shape(spec.pod_sets) == {
        "dataset-initializer": (1, {"cpu": 1000, "memory": 2 * GI}),
        "node": (4, {"cpu": 8000, "memory": 64 * GI, "nvidia.com/gpu": 4}),
    }
    assert spec.queue_name == "team-a-queue"


def test_trainjob_without_numnodes_takes_the_runtime_policy() -> None:
    runtime, job = _load(TRAINJOB)
    del job["spec"]["trainer"]
    sets = pod_sets_for(job, related={("ClusterTrainingRuntime", "", "torch-distributed"): runtime})
    assert _shape(sets)["node"] == (1, {"cpu": 1000})


def test_trainjob_without_its_runtime_says_so() -> None:
    _, job = _load(TRAINJOB)
    with pytest.raises(KueueplanError, match="runtime ClusterTrainingRuntime torch-distributed is not among the inputs"):
        derive_workload(job, read_cluster([]))


APPWRAPPER = """
apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata:
  name: mnist-training
  namespace: team-c
  labels:
    kueue.x-k8s.io/queue-name: team-c-queue
spec:
  components:
  - template:                      # no podSets: AppWrapper infers Master then Worker
      apiVersion: kubeflow.org/v1
      kind: PyTorchJob
      metadata: {name: mnist}
      spec:
        pytorchReplicaSpecs:
          Master:
            replicas: 1
            template:
              spec:
                containers:
                - {name: pytorch, image: mnist, resources: {requests: {cpu: "1"}}}
          Worker:
            replicas: 2
            template:
              spec:
                containers:
                - {name: pytorch, image: mnist, resources: {requests: {cpu: "2", nvidia.com/gpu: 1}}}
  - podSets:                       # declared
    - path: template.spec.template
      replicas: 3
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: tensorboard}
      spec:
        replicas: 3
        template:
          spec:
            containers:
            - {name: tb, image: tensorboard, resources: {requests: {cpu: 500m, memory: 1Gi}}}
"""


def test_appwrapper_components_in_order_named_by_index() -> None:
    sets = pod_sets_for(_load(APPWRAPPER)[0])
    assert _shape(sets) == {
        "mnist-training-0": (1, {"cpu": 1000}),
        "mnist-training-1": (2, {"cpu": 2000, "nvidia.com/gpu": 1}),
        "mnist-training-2": (3, {"cpu": 500, "memory": GI}),
    }


LWS = """
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: vllm
  namespace: serving
  labels:
    kueue.x-k8s.io/queue-name: serving-queue
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 4
    leaderTemplate:
      spec:
        containers:
        - {name: vllm-leader, image: vllm/vllm-openai, resources: {limits: {nvidia.com/gpu: "8"}, requests: {cpu: "16"}}}
    workerTemplate:
      spec:
        containers:
        - {name: vllm-worker, image: vllm/vllm-openai, resources: {limits: {nvidia.com/gpu: "8"}, requests: {cpu: "8"}}}
"""


def test_leaderworkerset_one_workload_per_group() -> None:
    lws = _load(LWS)[0]
    assert workload_count(lws) == 2
    sets = pod_sets_for(lws)
    assert _shape(sets) == {"leader": (1, {"cpu": 16000, "nvidia.com/gpu": 8}),
                            "worker": (3, {"cpu": 8000, "nvidia.com/gpu": 8})}
    del lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]
    assert _shape(pod_sets_for(lws)) == {"main": (4, {"cpu": 8000, "nvidia.com/gpu": 8})}


STATEFULSET = """
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: triton
  namespace: serving
  labels:
    kueue.x-k8s.io/queue-name: serving-queue
spec:
  serviceName: triton
  replicas: 3
  selector: {matchLabels: {app: triton}}
  template:
    metadata:
      labels: {app: triton}
    spec:
      containers:
      - {name: triton, image: nvcr.io/nvidia/tritonserver, resources: {requests: {cpu: "4", nvidia.com/gpu: 1}}}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: embedder
  namespace: serving
spec:
  replicas: 3
  selector: {matchLabels: {app: embedder}}
  template:
    metadata:
      labels: {app: embedder, kueue.x-k8s.io/queue-name: serving-queue}
    spec:
      containers:
      - {name: embed, image: embedder, resources: {requests: {cpu: "2", memory: 4Gi}}}
"""


def test_statefulset_is_one_pod_group_workload() -> None:
    sts = _load(STATEFULSET)[0]
    assert workload_count(sts) == 1
    spec = derive_workload(sts, read_cluster([]))
    assert _shape(spec.pod_sets) == {"main": (3, {"cpu": 4000, "nvidia.com/gpu": 1})}
    assert not spec.finishes and spec.queue_name == "serving-queue"


def test_deployment_each_pod_its_own_workload_reading_the_pod_label() -> None:
    dep = _load(STATEFULSET)[1]
    assert workload_count(dep) == 3
    spec = derive_workload(dep, read_cluster([]))
    assert _shape(spec.pod_sets) == {"main": (1, {"cpu": 2000, "memory": 4 * GI})}
    assert spec.queue_name == "serving-queue" and not spec.finishes


def test_bad_replicas_is_a_clear_error() -> None:
    js = _load(JOBSET)[0]
    js["spec"]["replicatedJobs"][1]["replicas"] = "two"
    with pytest.raises(KueueplanError, match="replicatedJob workers replicas must be an integer"):
        pod_sets_for(js)


MPI_RUNTIME = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: deepspeed-distributed
spec:
  mlPolicy:
    numNodes: 1
    mpi:
      numProcPerNode: 1
      mpiImplementation: OpenMPI
      runLauncherAsNode: true
  template:
    spec:
      replicatedJobs:
      - name: launcher
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                containers:
                - {name: node, image: ghcr.io/kubeflow/trainer/deepspeed-runtime, resources: {requests: {cpu: "1"}}}
      - name: node
        template:
          spec:
            template:
              spec:
                containers:
                - {name: node, image: ghcr.io/kubeflow/trainer/deepspeed-runtime, command: [/usr/sbin/sshd]}
"""


def test_trainjob_mpi_launcher_as_node_counts_one_node_less() -> None:
    runtime = _load(MPI_RUNTIME)[0]
    job = _load(TRAINJOB)[1]
    job["spec"]["runtimeRef"]["name"] = "deepspeed-distributed"
    sets = pod_sets_for(job, related={("ClusterTrainingRuntime", "", "deepspeed-distributed"): runtime})
    # As Trainer v2.2.1's deepspeed-distributed runtime: the launcher is the trainer step and keeps the runtime's
    # mlPolicy.numNodes (1; the mpi plugin does not move it); plugins/mpi/mpi.go gives `node` numNodes - 1 = 3
    # (the launcher is the 4th node), and resourcesPerNode reaches both.
    assert _shape(sets) == {"launcher": (1, {"cpu": 8000, "memory": 64 * GI, "nvidia.com/gpu": 4}),
                            "node": (3, {"cpu": 8000, "memory": 64 * GI, "nvidia.com/gpu": 4})}
    runtime["spec"]["mlPolicy"]["mpi"]["runLauncherAsNode"] = False
    sets = pod_sets_for(job, related={("ClusterTrainingRuntime", "", "deepspeed-distributed"): runtime})
    assert {ps.name: ps.count for ps in sets} == {"launcher": 1, "node": 4}
