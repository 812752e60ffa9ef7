"""From a job manifest to the pod sets, queue and priority of the Workload Kueue would create for it.

Follows ../shared/docs/workload-podsets.md (Kueue v0.19.2 with version switches):
- RayJob: `head`, one pod set per worker group (lower-cased `groupName`, count = replicas x numOfHosts,
  missing replicas = 0), then `submitter` (count 1) in K8sJobMode since Kueue v0.10 (500m / 200Mi unless
  `submitterPodTemplate` is given); SidecarMode adds the submitter container to the head since v0.17.
- RayCluster: head + workers; never finishes on its own.
- batch/v1 Job: one pod set `main`, count = min(parallelism, completions), minCount from
  `kueue.x-k8s.io/job-min-parallelism`.
- Pod: one pod set `main`, count 1.
- kueue.x-k8s.io Workload: its podSets as written; queue from `spec.queueName`.
- JobSet: one pod set per replicatedJob, replicas x min(parallelism, completions). MPIJob (Launcher, Worker) and
  the Kubeflow v1 jobs, PyTorchJob (Master, Worker), TFJob (Chief, Master, PS, Worker, Evaluator), XGBoostJob and
  PaddleJob (Master, Worker), JAXJob (Worker): one per replica type present, replicas (default 1); their
  runPolicy.schedulingPolicy.priorityClass comes before the templates' class. TrainJob: the JobSet its runtime
  (TrainingRuntime / ClusterTrainingRuntime, which must be among the inputs) builds. AppWrapper: one pod set per
  declared or inferred component podSet, named <appwrapper>-<i>. LeaderWorkerSet: one Workload per group
  (leader x1 + worker x(size-1)). StatefulSet: one pod-group Workload (`main` x replicas). Deployment: one Workload
  per pod (`main` x1), `workload_count` of them. RayService: its rayClusterConfig's RayCluster pod sets; serves
  until deleted. TFJob, XGBoostJob, PaddleJob, JAXJob and RayService are LOAD_ONLY_KINDS: simulated, not spec
  Workload kinds.

Per-pod requests: containers summed, init containers by max (sidecars additive), limits fill missing
requests, pod-level requests override cpu/memory/hugepages, overhead added; in Kueue units
(`resource_value`). Public API: `version_tuple`, `pod_requests`, `pod_sets_for`, `derive_workload`,
`total_requests`, `explain_requests`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from fractions import Fraction
from typing import Any

from kueueplan.errors import KueueplanError
from kueueplan.kube.objects import Cluster, Source, Toleration, meta, read_tolerations
from kueueplan.kube.quantity import format_resource_value, parse_quantity, resource_value

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
MIN_PARALLELISM_ANNOTATION = "kueue.x-k8s.io/job-min-parallelism"
NEWEST_VERSION = (0, 19)
# Job kinds of the integrations GPU platforms queue (pkg/controller/jobs/* in Kueue v0.19.2), see podsets_kinds.
INTEGRATION_KINDS = ("JobSet", "PyTorchJob", "MPIJob", "TrainJob", "AppWrapper", "LeaderWorkerSet", "Deployment",
                     "StatefulSet")
_CORE_KINDS = ("RayJob", "RayCluster", "Job", "Pod")
# The job kinds kueueplan models: a spec Workload's kind, a file in gen/, what build writes and import reads.
JOB_KINDS = _CORE_KINDS + INTEGRATION_KINDS
# Integrations whose pod sets derive, simulated as load, that are not spec Workload kinds (not in JOB_KINDS): the
# Kubeflow training-operator v1 jobs but PyTorchJob (deprecated upstream, still in repositories) and RayService.
LOAD_ONLY_KINDS = ("TFJob", "XGBoostJob", "PaddleJob", "JAXJob", "RayService")
# What pod sets derive from: the job kinds, Kueue's own Workload and the load-only kinds.
SUPPORTED_KINDS = _CORE_KINDS + ("Workload",) + INTEGRATION_KINDS + LOAD_ONLY_KINDS
# Workloads one simulation holds after count and replica expansion: a bound on memory, checked where the load
# is written (compile) and where it is read (simulate).
MAX_WORKLOADS = 1_000_000
# Kinds that serve until deleted: their Workloads never finish by themselves.
SERVING_KINDS = ("RayCluster", "LeaderWorkerSet", "Deployment", "StatefulSet", "RayService")

_SUBMITTER_REQUESTS = {"cpu": "500m", "memory": "200Mi"}
_SUBMITTER_LIMITS = {"cpu": "1", "memory": "1Gi"}
_AUTOSCALER_DEFAULT = {"cpu": "500m", "memory": "512Mi"}
_POD_LEVEL = re.compile(r"^(cpu|memory|hugepages-.*)$")


def version_tuple(version: str | None) -> tuple[int, int]:
    """'v0.19' / '0.19.2' / None (newest) -> (0, 19)."""
    if not version:
        return NEWEST_VERSION
    m = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?(?:-.*)?", str(version).strip())
    if not m:
        raise KueueplanError(f"kueueVersion {version!r} is not a version like v0.19",
                             hint="use the Kueue release, e.g. v0.8, v0.10 or v0.19")
    return int(m.group(1)), int(m.group(2))


@dataclass(frozen=True)
class PodSet:
    name: str
    count: int
    requests: tuple[tuple[str, int], ...]  # one pod, Kueue units, sorted by resource name
    min_count: int | None = None
    node_selector: tuple[tuple[str, str], ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    required_affinity: tuple[Any, ...] = ()  # nodeSelectorTerms (plain dicts) of required node affinity
    priority_class_name: str | None = None

    @property
    def per_pod(self) -> dict[str, int]:
        return dict(self.requests)

    def total(self, count: int | None = None) -> dict[str, int]:
        n = self.count if count is None else count
        return {r: v * n for r, v in self.requests}


@dataclass(frozen=True)
class WorkloadSpec:
    """What Kueue's Workload for one job object holds (before admission)."""

    kind: str
    namespace: str
    name: str
    pod_sets: tuple[PodSet, ...]
    queue_name: str | None
    priority: int
    priority_class: str | None
    priority_source: str | None  # "WorkloadPriorityClass", "PriorityClass" or None
    finishes: bool = True  # False for a RayCluster: it holds quota until deleted
    problem: str | None = None  # a reason Kueue would never create/admit it (e.g. missing priority class)

    @cached_property  # read in every queue and scheduler step of a simulation
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @cached_property  # one per `workloads` entry: its copies share it (simulate/controller_job.py _renamed)
    def scheduling_shape(self) -> tuple[Any, ...]:
        """What Kueue's scheduling equivalence hash reads: priority, queue, and each pod set's shape, selectors,
        tolerations and affinity."""
        return (self.priority, self.queue_name,
                tuple((p.name, p.count, p.min_count, p.requests, p.node_selector, p.tolerations,
                       repr(p.required_affinity)) for p in self.pod_sets))


# --------------------------------------------------------------------------- per-pod requests


def _q(value: Any, where: str) -> Fraction:
    try:
        return parse_quantity(value)
    except KueueplanError as err:
        raise KueueplanError(f"{where}: {err.message}") from None


def _container_requests(c: Mapping[str, Any], where: str) -> dict[str, Fraction]:
    res = c.get("resources") if isinstance(c.get("resources"), Mapping) else {}
    requests = res.get("requests") if isinstance(res.get("requests"), Mapping) else {}
    limits = res.get("limits") if isinstance(res.get("limits"), Mapping) else {}
    out = {str(k): _q(v, f"{where} request {k}") for k, v in requests.items()}
    for k, v in limits.items():  # limits fill in missing requests (AdjustResources)
        out.setdefault(str(k), _q(v, f"{where} limit {k}"))
    return out


def _add(a: dict[str, Fraction], b: Mapping[str, Fraction]) -> dict[str, Fraction]:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, Fraction(0)) + v
    return out


def _max(a: dict[str, Fraction], b: Mapping[str, Fraction]) -> dict[str, Fraction]:
    out = dict(a)
    for k, v in b.items():
        out[k] = max(out.get(k, Fraction(0)), v)
    return out


def pod_requests_exact(pod_spec: Mapping[str, Any], where: str = "pod") -> dict[str, Fraction]:
    """k8s PodRequests on a Kueue-adjusted template, as exact quantities."""
    containers = pod_spec.get("containers") or []
    total: dict[str, Fraction] = {}
    for c in containers if isinstance(containers, list) else []:
        if isinstance(c, Mapping):
            total = _add(total, _container_requests(c, f"{where} container {c.get('name', '?')}"))
    sidecars: dict[str, Fraction] = {}
    init_max: dict[str, Fraction] = {}
    inits = pod_spec.get("initContainers") or []
    for c in inits if isinstance(inits, list) else []:
        if not isinstance(c, Mapping):
            continue
        req = _container_requests(c, f"{where} init container {c.get('name', '?')}")
        if c.get("restartPolicy") == "Always":
            sidecars = _add(sidecars, req)
            init_max = _max(init_max, sidecars)
        else:
            init_max = _max(init_max, _add(req, sidecars))
    total = _max(_add(total, sidecars), init_max)
    pod_res = pod_spec.get("resources") if isinstance(pod_spec.get("resources"), Mapping) else {}
    pod_level = dict(_container_requests({"resources": pod_res}, f"{where} pod resources")) if pod_res else {}
    for k, v in pod_level.items():
        if _POD_LEVEL.match(k):
            total[k] = v
    overhead = pod_spec.get("overhead") if isinstance(pod_spec.get("overhead"), Mapping) else {}
    return _add(total, {str(k): _q(v, f"{where} overhead {k}") for k, v in overhead.items()})


def pod_requests(pod_spec: Mapping[str, Any], where: str = "pod") -> dict[str, int]:
    """One pod's requests in Kueue units (cpu millicores, others base units, rounded up); zeros dropped."""
    exact = pod_requests_exact(pod_spec, where)
    return {k: resource_value(k, max(v, Fraction(0))) for k, v in sorted(exact.items()) if v > 0}


# --------------------------------------------------------------------------- pod sets per kind


def _spec(obj: Any) -> Mapping[str, Any]:
    return obj if isinstance(obj, Mapping) else {}


def _template_spec(template: Any) -> Mapping[str, Any]:
    return _spec(_spec(template).get("spec"))


def _affinity_terms(pod_spec: Mapping[str, Any]) -> tuple[Any, ...]:
    na = _spec(_spec(pod_spec.get("affinity")).get("nodeAffinity"))
    req = _spec(na.get("requiredDuringSchedulingIgnoredDuringExecution"))
    terms = req.get("nodeSelectorTerms")
    return tuple(terms) if isinstance(terms, list) else ()


def _pod_set(name: str, count: int, pod_spec: Mapping[str, Any], where: str, min_count: int | None = None,
             extra: Mapping[str, Fraction] | None = None, floor: Mapping[str, Fraction] | None = None) -> PodSet:
    exact = pod_requests_exact(pod_spec, where)
    if floor:
        exact = _max(exact, floor)
    if extra:
        exact = _add(exact, extra)
    requests = tuple((k, resource_value(k, v)) for k, v in sorted(exact.items()) if v > 0)
    ns = pod_spec.get("nodeSelector")
    pcn = pod_spec.get("priorityClassName")
    return PodSet(name=name, count=max(0, int(count)), requests=requests, min_count=min_count,
                  node_selector=tuple(sorted((str(k), str(v)) for k, v in _spec(ns).items())),
                  tolerations=read_tolerations(pod_spec.get("tolerations"), Source()),
                  required_affinity=_affinity_terms(pod_spec),
                  priority_class_name=str(pcn) if pcn else None)


def _exact_map(values: Mapping[str, Any]) -> dict[str, Fraction]:
    return {k: parse_quantity(v) for k, v in values.items()}


def _ray_cluster_pod_sets(cluster_spec: Mapping[str, Any], where: str, version: tuple[int, int],
                          head_extra: Mapping[str, Fraction] | None = None) -> list[PodSet]:
    head = _spec(cluster_spec.get("headGroupSpec"))
    head_pod = _template_spec(head.get("template"))
    extra: dict[str, Fraction] = dict(head_extra or {})
    floor: dict[str, Fraction] = {}
    if version >= (0, 19) and cluster_spec.get("enableInTreeAutoscaling") is True:
        opts = _spec(cluster_spec.get("autoscalerOptions"))
        res = _spec(opts.get("resources"))
        auto = _container_requests({"resources": res}, f"{where} autoscalerOptions") if res else _exact_map(_AUTOSCALER_DEFAULT)
        extra = _add(extra, auto)
    if version >= (0, 17) and cluster_spec.get("gcsFaultToleranceOptions") is not None:
        floor = _exact_map({"cpu": "200m", "memory": "256Mi"})
    sets = [_pod_set("head", 1, head_pod, f"{where} head", extra=extra or None, floor=floor or None)]
    for i, group in enumerate(cluster_spec.get("workerGroupSpecs") or []):
        group = _spec(group)
        name = str(group.get("groupName") or f"group-{i}").lower()
        replicas = group.get("replicas")
        replicas = 0 if replicas is None else int(replicas)
        hosts = int(group.get("numOfHosts") or 1)
        count = replicas * hosts if hosts > 1 else replicas
        sets.append(_pod_set(name, count, _template_spec(group.get("template")), f"{where} worker group {name}"))
    return sets


def _rayjob_pod_sets(spec: Mapping[str, Any], where: str, version: tuple[int, int]) -> list[PodSet]:
    mode = spec.get("submissionMode") or "K8sJobMode"
    head_extra = None
    if mode == "SidecarMode" and version >= (0, 17):
        head_extra = _exact_map(_SUBMITTER_REQUESTS)
    sets = _ray_cluster_pod_sets(_spec(spec.get("rayClusterSpec")), where, version, head_extra)
    if mode == "K8sJobMode" and version >= (0, 10):
        template = spec.get("submitterPodTemplate")
        if isinstance(template, Mapping):
            sets.append(_pod_set("submitter", 1, _template_spec(template), f"{where} submitter"))
        else:
            default = {"containers": [{"name": "ray-job-submitter",
                                       "resources": {"requests": _SUBMITTER_REQUESTS, "limits": _SUBMITTER_LIMITS}}]}
            sets.append(_pod_set("submitter", 1, default, f"{where} submitter"))
    return sets


def _job_pod_sets(data: Mapping[str, Any], spec: Mapping[str, Any], where: str) -> list[PodSet]:
    parallelism = spec.get("parallelism")
    parallelism = 1 if parallelism is None else int(parallelism)
    completions = spec.get("completions")
    count = parallelism if completions is None else min(parallelism, int(completions))
    ann = _spec(meta(data).get("annotations")).get(MIN_PARALLELISM_ANNOTATION)
    min_count = None
    if ann is not None:
        try:
            min_count = int(str(ann))
        except ValueError:
            raise KueueplanError(f"{where}: annotation {MIN_PARALLELISM_ANNOTATION} must be an integer") from None
    return [_pod_set("main", count, _template_spec(spec.get("template")), where, min_count=min_count)]


def _workload_pod_sets(spec: Mapping[str, Any], where: str) -> list[PodSet]:
    sets = []
    for i, ps in enumerate(spec.get("podSets") or []):
        ps = _spec(ps)
        name = str(ps.get("name") or ("main" if i == 0 else f"podset-{i}"))
        count = ps.get("count")
        sets.append(_pod_set(name, 1 if count is None else int(count), _template_spec(ps.get("template")),
                             f"{where} pod set {name}", min_count=ps.get("minCount")))
    return sets


# --------------------------------------------------------------------------- the other integrations
# Each reads like Kueue v0.19.2's PodSets() for the kind (cited per function); counts apply the CRDs' defaults.


def _int(value: Any, default: int, where: str) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise KueueplanError(f"{where} must be an integer, got {value!r}")
    return value


def _job_template_count(job_spec: Mapping[str, Any], where: str) -> int:
    """min(parallelism, completions) of a Job template, parallelism defaulted to 1
    (jobset_controller.go PodsCountPerReplica; the same rule as job_controller.go podsCount)."""
    parallelism = _int(job_spec.get("parallelism"), 1, f"{where} parallelism")
    completions = _int(job_spec.get("completions"), parallelism, f"{where} completions")
    return min(parallelism, completions)


def _jobset_pod_sets(spec: Mapping[str, Any], where: str) -> list[PodSet]:
    """pkg/controller/jobs/jobset/jobset_controller.go PodSets: one pod set per replicatedJob, named after it
    (lower-cased, NewPodSetReference), count = replicas (CRD default 1) x PodsCountPerReplica."""
    sets = []
    for i, rj in enumerate(spec.get("replicatedJobs") or []):
        rj = _spec(rj)
        name = str(rj.get("name") or f"replicatedjob-{i}").lower()
        at = f"{where} replicatedJob {name}"
        job_spec = _spec(_spec(rj.get("template")).get("spec"))
        count = _int(rj.get("replicas"), 1, f"{at} replicas") * _job_template_count(job_spec, at)
        sets.append(_pod_set(name, count, _template_spec(job_spec.get("template")), at))
    return sets


def _replica_type_sets(specs: Any, order: tuple[str, ...], where: str) -> list[PodSet]:
    """Kubeflow replica specs in the integration's fixed order; a type that is absent is skipped; count =
    replicas (default 1). Keys match case-insensitively: the operators' defaulting webhooks camel-case them."""
    by_lower = {str(k).lower(): _spec(v) for k, v in _spec(specs).items()}
    sets = []
    for rtype in order:
        rs = by_lower.get(rtype.lower())
        if rs is None:
            continue
        at = f"{where} {rtype}"
        sets.append(_pod_set(rtype.lower(), _int(rs.get("replicas"), 1, f"{at} replicas"),
                             _template_spec(rs.get("template")), at))
    return sets


# Kubeflow training-operator v1 kinds: the replica specs field and OrderedReplicaTypes of
# pkg/controller/jobs/kubeflow/jobs/<kind>/<kind>_controller.go (Kueue v0.8-v0.19.2 alike; jaxjob from v0.12).
# TFJobReplicaTypeEval is "Evaluator" (kubeflow/training-operator pkg/apis/kubeflow.org/v1/tensorflow_types.go).
KUBEFLOW_REPLICA_TYPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "PyTorchJob": ("pytorchReplicaSpecs", ("Master", "Worker")),
    "TFJob": ("tfReplicaSpecs", ("Chief", "Master", "PS", "Worker", "Evaluator")),
    "XGBoostJob": ("xgbReplicaSpecs", ("Master", "Worker")),
    "PaddleJob": ("paddleReplicaSpecs", ("Master", "Worker")),
    "JAXJob": ("jaxReplicaSpecs", ("Worker",)),
}


def _kubeflow_pod_sets(kind: str, spec: Mapping[str, Any], where: str) -> list[PodSet]:
    """pkg/controller/jobs/kubeflow/kubeflowjob/kubeflowjob_controller.go PodSets: one pod set per replica type
    present, in the kind's OrderedReplicaTypes, named lower-cased (NewPodSetReference), count =
    ptr.Deref(replicas, 1) (podsCount)."""
    field, order = KUBEFLOW_REPLICA_TYPES[kind]
    return _replica_type_sets(spec.get(field), order, where)


def _mpijob_pod_sets(spec: Mapping[str, Any], where: str) -> list[PodSet]:
    """pkg/controller/jobs/mpijob/mpijob_controller.go PodSets / orderedReplicaTypes (Launcher, Worker) of
    mpi-operator v2beta1 mpiReplicaSpecs; count = ptr.Deref(replicas, 1)."""
    return _replica_type_sets(spec.get("mpiReplicaSpecs"), ("Launcher", "Worker"), where)


TRAINER_ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"


RUNTIME_KINDS = ("TrainingRuntime", "ClusterTrainingRuntime")  # trainer.kubeflow.org


def runtime_objects(objects: Any) -> dict[tuple[str, str, str], Mapping[str, Any]]:
    """The Trainer runtimes among input objects, keyed as trainjob_runtime_key names them."""
    out: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for o in objects or ():
        if isinstance(o, Mapping) and o.get("kind") in RUNTIME_KINDS \
                and str(o.get("apiVersion", "")).startswith("trainer.kubeflow.org/"):
            kind = str(o["kind"])
            ns = "" if kind == "ClusterTrainingRuntime" else str(meta(o).get("namespace") or "default")
            out[(kind, ns, str(meta(o).get("name") or ""))] = o
    return out


def trainjob_runtime_key(manifest: Mapping[str, Any]) -> tuple[str, str, str]:
    """(kind, namespace, name) of the runtime a TrainJob refers to; ClusterTrainingRuntime is the default kind."""
    ref = _spec(_spec(manifest.get("spec")).get("runtimeRef"))
    kind = str(ref.get("kind") or "ClusterTrainingRuntime")
    ns = "" if kind == "ClusterTrainingRuntime" else str(meta(manifest).get("namespace") or "default")
    return kind, ns, str(ref.get("name") or "")


def _trainjob_pod_sets(manifest: Mapping[str, Any], spec: Mapping[str, Any], where: str,
                       related: Mapping[tuple[str, str, str], Mapping[str, Any]]) -> list[PodSet]:
    """pkg/controller/jobs/trainjob/trainjob_controller.go PodSets: the JobSet pod sets of the child JobSet that
    the Trainer (v2.2.1, Kueue v0.19.2's dependency) builds from the runtime. Runtime side
    (kubeflow/trainer pkg/runtime/core/trainingruntime.go, plugins/jobset/builder.go, plugins/torch, plainml): each
    replicatedJob counts its Job's parallelism (default 1); the one labelled
    trainjob-ancestor-step=trainer counts mlPolicy.numNodes (default 1), overridden by spec.trainer.numNodes, with
    replicas 1, and spec.trainer.resourcesPerNode replaces the resources of its container named `node` (also of
    the `node` job of an MPI runtime with runLauncherAsNode); counts per _trainjob_count."""
    key = trainjob_runtime_key(manifest)
    runtime = related.get(key)
    if runtime is None:
        raise KueueplanError(f"{where}: its runtime {key[0]} {key[2]} is not among the inputs, so its pod sets "
                             "are unknown (Kueue reads them from the runtime's JobSet template)",
                             hint=f"add the {key[0]} {key[2]} manifest to the inputs")
    rt_spec = _spec(runtime.get("spec"))
    ml_policy = rt_spec.get("mlPolicy")
    trainer = _spec(spec.get("trainer"))
    jobset_spec = _spec(_spec(_spec(rt_spec.get("template")).get("spec")))
    sets = []
    for i, rj in enumerate(jobset_spec.get("replicatedJobs") or []):
        rj = _spec(rj)
        name = str(rj.get("name") or f"replicatedjob-{i}").lower()
        at = f"{where} (runtime {key[2]}) replicatedJob {name}"
        job_tpl = _spec(rj.get("template"))
        job_spec = _spec(job_tpl.get("spec"))
        pod_spec = _template_spec(job_spec.get("template"))
        is_trainer = _spec(meta(job_tpl).get("labels")).get(TRAINER_ANCESTOR_LABEL) == "trainer"
        count = _trainjob_count(rj, job_spec, name, is_trainer, ml_policy, trainer.get("numNodes"), at, where)
        per_node = trainer.get("resourcesPerNode")
        mpi = _spec(_spec(ml_policy).get("mpi"))
        as_node = mpi.get("runLauncherAsNode") is True and name == "node"
        if isinstance(per_node, Mapping) and isinstance(ml_policy, Mapping) and (is_trainer or as_node):
            pod_spec = dict(pod_spec)
            pod_spec["containers"] = [dict(c, resources=per_node) if _spec(c).get("name") == "node" else c
                                      for c in pod_spec.get("containers") or []]
        sets.append(_pod_set(name, count, pod_spec, at))
    return sets


def _trainjob_count(rj: Mapping[str, Any], job_spec: Mapping[str, Any], name: str, is_trainer: bool,
                    ml_policy: Any, num_nodes: Any, at: str, where: str) -> int:
    """Pods of one replicatedJob of a TrainJob's JobSet. trainingruntime.go: parallelism (default 1), the trainer
    step mlPolicy.numNodes (default 1) with replicas 1; then the plugin of the policy: torch, jax and plainml set
    the trainer step to the TrainJob's numNodes; mpi sets the job named `node` to numNodes, or numNodes - 1 (at
    least 1) with runLauncherAsNode (plugins/mpi/mpi.go EnforceMLPolicy)."""
    policy = _spec(ml_policy)
    nodes = None if num_nodes is None else _int(num_nodes, 1, f"{where} spec.trainer.numNodes")
    mpi = policy.get("mpi")
    if isinstance(mpi, Mapping) and nodes is not None and name == "node":
        return max(nodes - 1, 1) if _spec(mpi).get("runLauncherAsNode") is True else nodes
    if is_trainer and isinstance(ml_policy, Mapping):
        if nodes is not None and not isinstance(mpi, Mapping):
            return nodes
        return _int(policy.get("numNodes"), 1, f"{at} numNodes")
    replicas = 1 if is_trainer else _int(rj.get("replicas"), 1, f"{at} replicas")
    return replicas * _int(job_spec.get("parallelism"), 1, f"{at} parallelism")


def _appwrapper_pod_sets(manifest: Mapping[str, Any], spec: Mapping[str, Any], where: str) -> list[PodSet]:
    """pkg/controller/jobs/appwrapper/appwrapper_controller.go PodSets: over all components, each declared
    podSet (or, none declared, the ones appwrapper v1.2 infers for known kinds: project-codeflare/appwrapper
    pkg/utils/utils.go InferPodSets), named <appwrapper>-<index>, count = replicas (default 1)."""
    aw_name = str(meta(manifest).get("name") or "appwrapper")
    sets: list[PodSet] = []
    for ci, comp in enumerate(spec.get("components") or []):
        comp = _spec(comp)
        template = _spec(comp.get("template"))
        declared = comp.get("podSets")
        pod_sets = [_spec(p) for p in declared] if isinstance(declared, list) and declared else \
            _appwrapper_infer(template)
        for ps in pod_sets:
            path = str(ps.get("path") or "")
            at = f"{where} component {ci} podSet {path}"
            pts = _aw_path(template, path)
            if not isinstance(pts, Mapping) or not isinstance(pts.get("spec"), Mapping):
                continue  # GetComponentPodSpecs skips a path that holds no pod template
            count = _int(ps.get("replicas"), 1, f"{at} replicas")
            sets.append(_pod_set(f"{aw_name}-{len(sets)}".lower(), count, _spec(pts["spec"]), at))
    return sets


_AW_PATH = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def _aw_path(template: Mapping[str, Any], path: str) -> Any:
    """appwrapper utils.go getValueAtPath: 'template' then .field and [index] steps."""
    if not path.startswith("template"):
        return None
    cursor: Any = template
    rest = path[len("template"):]
    pos = 0
    while pos < len(rest):
        m = _AW_PATH.match(rest, pos)
        if m is None:
            return None
        if m.group(1) is not None:
            cursor = cursor.get(m.group(1)) if isinstance(cursor, Mapping) else None
        else:
            idx = int(m.group(2))
            cursor = cursor[idx] if isinstance(cursor, list) and idx < len(cursor) else None
        if cursor is None:
            return None
        pos = m.end()
    return cursor


def _appwrapper_infer(template: Mapping[str, Any]) -> list[dict[str, Any]]:
    """appwrapper utils.go InferPodSets for the kinds it knows (by apiVersion and kind)."""
    gvk = (str(template.get("apiVersion")), str(template.get("kind")))
    t = _spec(template.get("spec"))

    def count_at(path: str) -> int | None:
        v = _aw_path(template, path)
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    if gvk == ("batch/v1", "Job"):
        return [{"path": "template.spec.template", "replicas": _job_template_count(t, "Job")}]
    if gvk == ("jobset.x-k8s.io/v1alpha2", "JobSet"):
        out = []
        for i, rj in enumerate(t.get("replicatedJobs") or []):
            p = f"template.spec.replicatedJobs[{i}]."
            if _aw_path(template, p + "template") is None:
                continue
            pods = count_at(p + "template.spec.parallelism") or 1
            comp = count_at(p + "template.spec.completions")
            pods = comp if comp is not None and comp < pods else pods
            out.append({"path": p + "template.spec.template", "replicas": (count_at(p + "replicas") or 1) * pods})
        return out
    if gvk == ("kubeflow.org/v1", "PyTorchJob"):
        return [{"path": f"template.spec.pytorchReplicaSpecs.{r}.template",
                 "replicas": count_at(f"template.spec.pytorchReplicaSpecs.{r}.replicas") or 1}
                for r in ("Master", "Worker") if _aw_path(template, f"template.spec.pytorchReplicaSpecs.{r}.template")]
    if gvk in (("ray.io/v1", "RayCluster"), ("ray.io/v1", "RayJob")):
        prefix = "template.spec." if gvk[1] == "RayCluster" else "template.spec.rayClusterSpec."
        out = [{"path": prefix + "headGroupSpec.template", "replicas": 1}]
        workers = _aw_path(template, prefix + "workerGroupSpecs")
        for i in range(len(workers) if isinstance(workers, list) else 0):
            p = f"{prefix}workerGroupSpecs[{i}]."
            if _aw_path(template, p + "template") is not None:
                out.append({"path": p + "template", "replicas": count_at(p + "replicas") or 1})
        return out
    if gvk == ("v1", "Pod"):
        return [{"path": "template", "replicas": 1}]
    if gvk in (("apps/v1", "Deployment"), ("apps/v1", "StatefulSet")):
        return [{"path": "template.spec.template", "replicas": count_at("template.spec.replicas") or 1}]
    return []


def _leaderworkerset_pod_sets(spec: Mapping[str, Any], where: str) -> list[PodSet]:
    """pkg/controller/jobs/leaderworkerset/leaderworkerset_reconciler.go podSets (one Workload per group): with a
    leaderTemplate, `leader` x1 and `worker` x(size-1); without, `main` x size (size default 1)."""
    lwt = _spec(spec.get("leaderWorkerTemplate"))
    size = _int(lwt.get("size"), 1, f"{where} leaderWorkerTemplate.size")
    worker = _template_spec(lwt.get("workerTemplate"))
    if isinstance(lwt.get("leaderTemplate"), Mapping):
        return [_pod_set("leader", 1, _template_spec(lwt["leaderTemplate"]), f"{where} leader"),
                _pod_set("worker", size - 1, worker, f"{where} worker")]
    return [_pod_set("main", size, worker, f"{where} worker")]


def _statefulset_pod_sets(spec: Mapping[str, Any], where: str) -> list[PodSet]:
    """pkg/controller/jobs/statefulset/statefulset_reconciler.go constructWorkload (v0.17+): one pod group
    Workload, pod set `main` x replicas (default 1). (v0.16 built the same group through the pod webhook, the pod
    set named by the pods' role hash: same arithmetic.)"""
    return [_pod_set("main", _int(spec.get("replicas"), 1, f"{where} replicas"),
                     _template_spec(spec.get("template")), where)]


def _deployment_pod_sets(spec: Mapping[str, Any], where: str) -> list[PodSet]:
    """The pod integration (pod_controller.go constructPodSet) for each of the Deployment's pods: `main` x1.
    workload_count gives the number of pods (replicas)."""
    return [_pod_set("main", 1, _template_spec(spec.get("template")), where)]


_INTEGRATION_POD_SETS: dict[str, Any] = {
    "JobSet": lambda m, s, w, v, r: _jobset_pod_sets(s, w),
    **dict.fromkeys(KUBEFLOW_REPLICA_TYPES, lambda m, s, w, v, r: _kubeflow_pod_sets(str(m["kind"]), s, w)),
    "MPIJob": lambda m, s, w, v, r: _mpijob_pod_sets(s, w),
    "TrainJob": lambda m, s, w, v, r: _trainjob_pod_sets(m, s, w, r),
    "AppWrapper": lambda m, s, w, v, r: _appwrapper_pod_sets(m, s, w),
    "LeaderWorkerSet": lambda m, s, w, v, r: _leaderworkerset_pod_sets(s, w),
    "StatefulSet": lambda m, s, w, v, r: _statefulset_pod_sets(s, w),
    "Deployment": lambda m, s, w, v, r: _deployment_pod_sets(s, w),
    # pkg/controller/jobs/rayservice/rayservice_controller.go PodSets (v0.17+): raycluster.BuildPodSets of
    # Spec.RayClusterSpec (JSON rayClusterConfig), the RayCluster's pod sets; UpdatePodSets only follows a running
    # autoscaled cluster.
    "RayService": lambda m, s, w, v, r: _ray_cluster_pod_sets(_spec(s.get("rayClusterConfig")), w, v),
}


def pod_sets_for(manifest: Mapping[str, Any], kueue_version: str | tuple[int, int] | None = None,
                 related: Mapping[tuple[str, str, str], Mapping[str, Any]] | None = None) -> tuple[PodSet, ...]:
    """The pod sets of the Workload Kueue builds for this object (version-aware).

    For a kind that makes one Workload per group or pod (LeaderWorkerSet, Deployment) these are the pod sets of
    each of its Workloads; `workload_count` says how many. `related` holds other input objects by
    (kind, namespace, name) (a TrainJob's runtime); namespace "" for cluster-scoped ones."""
    version = kueue_version if isinstance(kueue_version, tuple) else version_tuple(kueue_version)
    kind = manifest.get("kind")
    name = meta(manifest).get("name") or meta(manifest).get("generateName") or "?"
    where = f"{kind} {name}"
    spec = _spec(manifest.get("spec"))
    try:
        if kind == "RayJob":
            return tuple(_rayjob_pod_sets(spec, where, version))
        if kind == "RayCluster":
            return tuple(_ray_cluster_pod_sets(spec, where, version))
        if kind == "Job":
            return tuple(_job_pod_sets(manifest, spec, where))
        if kind == "Pod":
            return (_pod_set("main", 1, spec, where),)
        if kind == "Workload":
            return tuple(_workload_pod_sets(spec, where))
        if kind in _INTEGRATION_POD_SETS:
            return tuple(_INTEGRATION_POD_SETS[kind](manifest, spec, where, version, related or {}))
    except (TypeError, ValueError) as err:
        raise KueueplanError(f"{where}: {err}") from None
    raise KueueplanError(f"{where}: kind {kind!r} is not a workload kind this tool models",
                         hint=f"use one of {', '.join(SUPPORTED_KINDS)}")


def queue_name_of(manifest: Mapping[str, Any]) -> str | None:
    if manifest.get("kind") == "Workload":
        q = _spec(manifest.get("spec")).get("queueName")
        return str(q) if q else None
    q = _spec(meta(manifest).get("labels")).get(QUEUE_LABEL)
    if not q and manifest.get("kind") == "Deployment":
        # Each pod is its own Workload through the pod integration, and the pod reads its own label: the
        # deployment webhook only copies the Deployment's label onto the template (deployment_webhook.go Default).
        q = _spec(meta(_spec(_spec(manifest.get("spec")).get("template"))).get("labels")).get(QUEUE_LABEL)
    return str(q) if q else None


def workload_count(manifest: Mapping[str, Any]) -> int:
    """How many Workloads Kueue makes for this object: one per LeaderWorkerSet group
    (leaderworkerset_reconciler.go: one per index below spec.replicas, default 1), one per Deployment pod (the pod
    integration; replicas default 1), else one."""
    kind = manifest.get("kind")
    if kind in ("LeaderWorkerSet", "Deployment"):
        replicas = _spec(manifest.get("spec")).get("replicas")
        return max(0, int(replicas)) if isinstance(replicas, int) and not isinstance(replicas, bool) else 1
    return 1


def workload_names(manifest: Mapping[str, Any], name: str) -> list[str]:
    """The Workloads of this object when it is named `name`: one per LeaderWorkerSet group / Deployment pod,
    named <name>-<index> (index from 0), else `name` itself."""
    if manifest.get("kind") in ("LeaderWorkerSet", "Deployment"):
        return [f"{name}-{index}" for index in range(workload_count(manifest))]
    return [name]


def resolve_priority(manifest: Mapping[str, Any], pod_sets: tuple[PodSet, ...], cluster: Cluster
                     ) -> tuple[int, str | None, str | None, str | None]:
    """(priority, class name, source kind, problem) following ExtractPriority."""
    if manifest.get("kind") == "Workload":
        spec = _spec(manifest.get("spec"))
        ref = _spec(spec.get("priorityClassRef"))
        pcname = ref.get("name") or spec.get("priorityClassName")
        if spec.get("priority") is not None:
            return int(spec["priority"]), pcname, ref.get("kind") or spec.get("priorityClassSource"), None
        if pcname:
            wpc = cluster.workload_priority_classes.get(str(pcname))
            if wpc is not None:
                return wpc.value, wpc.name, "WorkloadPriorityClass", None
    label = _spec(meta(manifest).get("labels")).get(PRIORITY_LABEL)
    if label:
        wpc = cluster.workload_priority_classes.get(str(label))
        if wpc is None:
            return 0, str(label), "WorkloadPriorityClass", f"WorkloadPriorityClass {label} not found"
        return wpc.value, wpc.name, "WorkloadPriorityClass", None
    custom = _scheduling_policy_class(manifest)
    for name in [custom] if custom else [ps.priority_class_name for ps in pod_sets]:
        if name:
            pc = cluster.priority_classes.get(name)
            if pc is None:
                return 0, name, "PriorityClass", f"PriorityClass {name} not found"
            return pc.value, pc.name, "PriorityClass", None
    default = cluster.global_default_priority()
    if default is not None:
        return default.value, default.name, "PriorityClass", None
    return 0, None, None, None


def _scheduling_policy_class(manifest: Mapping[str, Any]) -> str | None:
    """The Kubeflow jobs' PriorityClass() (kubeflowjob_controller.go, mpijob_controller.go; ExtractPriority's
    customPriorityClassFunc): spec.runPolicy.schedulingPolicy.priorityClass before the pod templates' class."""
    if manifest.get("kind") not in KUBEFLOW_REPLICA_TYPES and manifest.get("kind") != "MPIJob":
        return None
    policy = _spec(_spec(_spec(manifest.get("spec")).get("runPolicy")).get("schedulingPolicy"))
    name = policy.get("priorityClass")
    return str(name) if name else None


def derive_workload(manifest: Mapping[str, Any], cluster: Cluster,
                    kueue_version: str | tuple[int, int] | None = None,
                    related: Mapping[tuple[str, str, str], Mapping[str, Any]] | None = None) -> WorkloadSpec:
    """Pod sets, queue and priority of the Workload for one job object (of each, for LeaderWorkerSet groups and
    Deployment pods)."""
    if not isinstance(manifest, Mapping):
        raise KueueplanError("a workload manifest must be a mapping")
    kind = str(manifest.get("kind"))
    if related is None and kind == "TrainJob":
        related = runtime_objects(cluster.other)
    pod_sets = pod_sets_for(manifest, kueue_version, related)
    priority, pclass, source, problem = resolve_priority(manifest, pod_sets, cluster)
    m = meta(manifest)
    return WorkloadSpec(kind=kind, namespace=str(m.get("namespace") or "default"), name=str(m.get("name") or ""),
                        pod_sets=pod_sets, queue_name=queue_name_of(manifest), priority=priority,
                        priority_class=pclass, priority_source=source, finishes=kind not in SERVING_KINDS,
                        problem=problem)


def total_requests(pod_sets: tuple[PodSet, ...] | list[PodSet]) -> dict[str, int]:
    """Sum over pod sets of per-pod requests x count (Kueue units)."""
    out: dict[str, int] = {}
    for ps in pod_sets:
        for r, v in ps.total().items():
            out[r] = out.get(r, 0) + v
    return dict(sorted(out.items()))


def explain_requests(pod_sets: tuple[PodSet, ...] | list[PodSet], resource: str) -> str:
    """How a workload's total of one resource adds up, e.g. 'head 2 + RayJob submitter 500m = 2500m'."""
    parts = []
    total = 0
    for ps in pod_sets:
        v = ps.per_pod.get(resource, 0) * ps.count
        if v == 0:
            continue
        total += v
        label = "RayJob submitter" if ps.name == "submitter" else ps.name
        per = format_resource_value(resource, ps.per_pod[resource])
        parts.append(f"{label} {format_resource_value(resource, v)}" if ps.count == 1
                     else f"{label} {ps.count}x{per}")
    if not parts:
        return f"no {resource} requested"
    text = " + ".join(parts)
    return text if len(parts) == 1 else f"{text} = {format_resource_value(resource, total)}"
