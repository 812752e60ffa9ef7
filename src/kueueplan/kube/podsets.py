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

Per-pod requests: containers summed, init containers by max (sidecars additive), limits fill missing
requests, pod-level requests override cpu/memory/hugepages, overhead added; in Kueue units
(`resource_value`). Public API: `version_tuple`, `pod_requests`, `pod_sets_for`, `derive_workload`,
`total_requests`, `explain_requests`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from fractions import Fraction
from typing import Any, Mapping

from kueueplan.errors import KueueplanError
from kueueplan.kube.objects import Cluster, Source, Toleration, meta, read_tolerations
from kueueplan.kube.quantity import format_resource_value, parse_quantity, resource_value

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
MIN_PARALLELISM_ANNOTATION = "kueue.x-k8s.io/job-min-parallelism"
NEWEST_VERSION = (0, 19)
SUPPORTED_KINDS = ("RayJob", "RayCluster", "Job", "Pod", "Workload")

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


def pod_sets_for(manifest: Mapping[str, Any], kueue_version: str | tuple[int, int] | None = None) -> tuple[PodSet, ...]:
    """The pod sets of the Workload Kueue builds for this object (version-aware)."""
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
    except (TypeError, ValueError) as err:
        raise KueueplanError(f"{where}: {err}") from None
    raise KueueplanError(f"{where}: kind {kind!r} is not a workload kind this tool models",
                         hint=f"use one of {', '.join(SUPPORTED_KINDS)}")


def queue_name_of(manifest: Mapping[str, Any]) -> str | None:
    if manifest.get("kind") == "Workload":
        q = _spec(manifest.get("spec")).get("queueName")
        return str(q) if q else None
    q = _spec(meta(manifest).get("labels")).get(QUEUE_LABEL)
    return str(q) if q else None


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
    for ps in pod_sets:
        if ps.priority_class_name:
            pc = cluster.priority_classes.get(ps.priority_class_name)
            if pc is None:
                return 0, ps.priority_class_name, "PriorityClass", f"PriorityClass {ps.priority_class_name} not found"
            return pc.value, pc.name, "PriorityClass", None
    default = cluster.global_default_priority()
    if default is not None:
        return default.value, default.name, "PriorityClass", None
    return 0, None, None, None


def derive_workload(manifest: Mapping[str, Any], cluster: Cluster,
                    kueue_version: str | tuple[int, int] | None = None) -> WorkloadSpec:
    """Pod sets, queue and priority of the Workload for one job object."""
    if not isinstance(manifest, Mapping):
        raise KueueplanError("a workload manifest must be a mapping")
    kind = str(manifest.get("kind"))
    pod_sets = pod_sets_for(manifest, kueue_version)
    priority, pclass, source, problem = resolve_priority(manifest, pod_sets, cluster)
    m = meta(manifest)
    return WorkloadSpec(kind=kind, namespace=str(m.get("namespace") or "default"), name=str(m.get("name") or ""),
                        pod_sets=pod_sets, queue_name=queue_name_of(manifest), priority=priority,
                        priority_class=pclass, priority_source=source, finishes=kind != "RayCluster",
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
