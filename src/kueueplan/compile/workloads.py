"""Spec -> the teams' workloads, labelled for their LocalQueue and priority.

RayJob, RayCluster, Job, Pod, JobSet and PyTorchJob are built from typed fields; MPIJob, TrainJob, AppWrapper,
LeaderWorkerSet, Deployment and StatefulSet carry their object's spec verbatim (WorkloadSpec.spec). Every kind
takes the queue and priority labels on the object itself: that is where Kueue reads them, also for Deployments (whose
webhook copies them onto the pod template for the pod integration: pkg/controller/jobs/deployment/
deployment_webhook.go Default) and StatefulSets (pkg/controller/jobs/statefulset, one pod-group Workload)."""

from __future__ import annotations

import copy
from typing import Any

from kueueplan.compile.context import PRIORITY_LABEL, QUEUE_LABEL, EnvContext, metadata
from kueueplan.compile.kueue import TeamPlan
from kueueplan.kube.quantity import canonical
from kueueplan.spec.load import Entry
from kueueplan.spec.models import PodTemplate, WorkloadSpec

Manifest = dict[str, Any]
# The API versions Kueue's integrations watch (its go.mod: mpi-operator v0.8 serves v2beta1, kubeflow/trainer v2
# v1alpha1, appwrapper v1.2 v1beta2, lws v0.10 v1). Insertion order is the order of the kinds in gen/.
API_VERSIONS = {"RayJob": "ray.io/v1", "RayCluster": "ray.io/v1", "Job": "batch/v1", "Pod": "v1",
                "JobSet": "jobset.x-k8s.io/v1alpha2", "PyTorchJob": "kubeflow.org/v1",
                "MPIJob": "kubeflow.org/v2beta1", "TrainJob": "trainer.kubeflow.org/v1alpha1",
                "AppWrapper": "workload.codeflare.dev/v1beta2", "LeaderWorkerSet": "leaderworkerset.x-k8s.io/v1",
                "Deployment": "apps/v1", "StatefulSet": "apps/v1"}
WORKLOAD_KINDS = tuple(API_VERSIONS)
# "pytorch": the training operator finds its default container by that name.
DEFAULT_CONTAINER = {"head": "ray-head", "worker": "ray-worker", "pod": "main", "pytorch": "pytorch"}


def _known(names: list[str]) -> str:
    return "known: " + (", ".join(names) if names else "none")


class WorkloadPlan:
    """Where a workload goes in one environment: namespace, LocalQueue, priority (all checked)."""

    def __init__(self, ctx: EnvContext, entry: Entry, plans: dict[str, TeamPlan]) -> None:
        spec: WorkloadSpec = entry.model.spec
        self.entry, self.spec = entry, spec
        team = plans.get(spec.team)
        if team is None:
            raise entry.error(f"unknown Team {spec.team!r} in environment {ctx.name!r}", ("team",), _known(list(plans)))
        self.team = team
        namespace = team.env_namespace(spec.namespace)
        if namespace is None and not team.base_namespaces:
            raise entry.error(f"team {spec.team!r} has no namespace to submit from (a lend-only team only lends "
                              "its quota)", ("team",), "name a team with a LocalQueue")
        if namespace is None:
            raise entry.error(f"namespace {spec.namespace!r} is not one of team {spec.team!r}'s namespaces",
                              ("namespace",), _known(list(team.base_namespaces)))
        self.namespace = namespace
        queues = team.queues_in(namespace)
        if spec.localQueue is None and not queues:
            raise entry.error(f"team {spec.team!r} has no LocalQueue in namespace {namespace!r}", ("team",))
        if spec.localQueue is not None and spec.localQueue not in queues:
            raise entry.error(f"LocalQueue {spec.localQueue!r} does not exist in namespace {namespace!r}",
                              ("localQueue",), _known(queues))
        self.local_queue = spec.localQueue or queues[0]
        self.priority = spec.priority
        if spec.priority is not None:
            check_priority(ctx, entry, team, spec.priority, ("priority",))


def check_priority(ctx: EnvContext, entry: Entry, team: TeamPlan, name: str, path: tuple[str | int, ...]) -> None:
    known = ctx.by_name("Priority")
    if name not in known:
        raise entry.error(f"unknown Priority {name!r} in environment {ctx.name!r}", path, _known(list(known)))
    allowed = team.spec.priorities
    if allowed is not None and name not in allowed:
        raise entry.error(f"team {team.entry.name!r} may not use priority {name!r}", path,
                          f"the team allows: {', '.join(allowed) or 'none'}")


def workload_plans(ctx: EnvContext, plans: list[TeamPlan]) -> list[WorkloadPlan]:
    by_team = {p.entry.name: p for p in plans}
    out = [WorkloadPlan(ctx, entry, by_team) for entry in ctx.docs["Workload"]]
    seen: dict[tuple[str, str, str], Entry] = {}
    for plan in out:
        key = (plan.spec.kind, plan.namespace, plan.entry.name)
        if key in seen and not plan.spec.generateName:
            raise plan.entry.error(f"{plan.spec.kind} {plan.entry.name!r} also comes from another Workload in "
                                   f"namespace {plan.namespace!r}", ())
        seen[key] = plan.entry
    return out


def workload_manifest(plan: WorkloadPlan, name: str | None = None, priority: str | None = None,
                      generate: bool | None = None) -> Manifest:
    """The object for a workload; `name`/`priority` override the spec's (used for simulator arrivals)."""
    spec, entry = plan.spec, plan.entry
    labels = {QUEUE_LABEL: plan.local_queue}
    chosen_priority = priority or plan.priority
    if chosen_priority is not None:
        labels[PRIORITY_LABEL] = chosen_priority
    gen = spec.generateName if generate is None or generate else None
    meta = metadata(name or entry.name, spec.kind, entry, namespace=plan.namespace, labels=labels, generate_name=gen)
    body = _BODIES[spec.kind](entry, spec) if spec.kind in _BODIES else {}  # the others: `spec` verbatim
    merged = _merge_under(copy.deepcopy(spec.spec), body)
    return {"apiVersion": API_VERSIONS[spec.kind], "kind": spec.kind, "metadata": meta, "spec": merged}


def _merge_under(extra: Any, typed: Any) -> Any:
    """Typed fields win; verbatim extras fill in what the typed fields do not say (recursively for mappings)."""
    if isinstance(extra, dict) and isinstance(typed, dict):
        out = {key: _merge_under(extra[key], value) if key in extra else value for key, value in typed.items()}
        out.update((key, value) for key, value in extra.items() if key not in typed)
        return out
    return typed


def _container(entry: Entry, spec: WorkloadSpec, pod: PodTemplate, role: str,
               path: tuple[str | int, ...]) -> dict[str, Any]:
    image = pod.image or spec.image
    if image is None and "image" not in pod.container:
        raise entry.error("no image: set 'image' here or on the workload", path + ("image",))
    typed: dict[str, Any] = {"name": pod.containerName or pod.container.get("name") or DEFAULT_CONTAINER[role]}
    if image is not None:
        typed["image"] = image
    if pod.command is not None:
        typed["command"] = list(pod.command)
    if pod.args is not None:
        typed["args"] = list(pod.args)
    if pod.resources is not None:
        resources: dict[str, Any] = {}
        if pod.resources.limits:
            resources["limits"] = {k: canonical(v) for k, v in pod.resources.limits.items()}
        if pod.resources.requests:
            resources["requests"] = {k: canonical(v) for k, v in pod.resources.requests.items()}
        for key in ("requests", "limits"):
            if "pods" in (getattr(pod.resources, key) or {}):
                raise entry.error("the resource 'pods' is reserved for Kueue", path + ("resources", key, "pods"))
        typed["resources"] = resources
    return _merge_under(copy.deepcopy(pod.container), typed)


def _pod_template(entry: Entry, spec: WorkloadSpec, pod: PodTemplate, role: str,
                  path: tuple[str | int, ...], restart_policy: str | None = None) -> dict[str, Any]:
    pod_spec = copy.deepcopy(pod.pod)
    containers = pod_spec.pop("containers", None) or []
    main = _container(entry, spec, pod, role, path)
    pod_spec_out: dict[str, Any] = {"containers": [main] + [c for c in containers if c.get("name") != main["name"]]}
    pod_spec_out.update(pod_spec)
    if restart_policy is not None and "restartPolicy" not in pod_spec_out:
        pod_spec_out["restartPolicy"] = restart_policy
    template: dict[str, Any] = {}
    if pod.metadata is not None:
        template["metadata"] = copy.deepcopy(pod.metadata)
    template["spec"] = pod_spec_out
    return template


def _ray_cluster_spec(entry: Entry, spec: WorkloadSpec, base: tuple[str | int, ...] = ()) -> dict[str, Any]:
    head = spec.head
    head_group: dict[str, Any] = copy.deepcopy(head.group)
    if head.rayStartParams is not None:
        head_group["rayStartParams"] = dict(head.rayStartParams)
    head_group["template"] = _pod_template(entry, spec, head, "head", ("head",))
    out: dict[str, Any] = {}
    if spec.rayVersion is not None:
        out["rayVersion"] = spec.rayVersion
    out["headGroupSpec"] = head_group
    groups = []
    seen: set[str] = set()
    for i, worker in enumerate(spec.workers):
        if worker.groupName in seen:
            raise entry.error(f"worker group {worker.groupName!r} is defined twice", ("workers", i, "groupName"))
        seen.add(worker.groupName)
        group: dict[str, Any] = copy.deepcopy(worker.group)
        group["groupName"] = worker.groupName
        group["replicas"] = worker.replicas
        group["minReplicas"] = worker.minReplicas if worker.minReplicas is not None else worker.replicas
        group["maxReplicas"] = worker.maxReplicas if worker.maxReplicas is not None else worker.replicas
        if not group["minReplicas"] <= worker.replicas <= group["maxReplicas"]:
            raise entry.error("replicas must lie between minReplicas and maxReplicas", ("workers", i, "replicas"))
        if worker.numOfHosts is not None:
            group["numOfHosts"] = worker.numOfHosts
        if worker.rayStartParams is not None:
            group["rayStartParams"] = dict(worker.rayStartParams)
        group["template"] = _pod_template(entry, spec, worker, "worker", ("workers", i))
        groups.append(group)
    if groups:
        out["workerGroupSpecs"] = groups
    return out


def _ray_job(entry: Entry, spec: WorkloadSpec) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("entrypoint", "runtimeEnvYAML", "shutdownAfterJobFinishes", "ttlSecondsAfterFinished",
                "activeDeadlineSeconds", "submissionMode"):
        value = getattr(spec, key)
        if value is not None:
            out[key] = value
    out["rayClusterSpec"] = _ray_cluster_spec(entry, spec)
    return out


def _ray_cluster(entry: Entry, spec: WorkloadSpec) -> dict[str, Any]:
    for key in ("runtimeEnvYAML", "shutdownAfterJobFinishes", "ttlSecondsAfterFinished", "activeDeadlineSeconds",
                "submissionMode"):
        if getattr(spec, key) is not None:
            raise entry.error(f"'{key}' is for RayJob, not RayCluster", (key,))
    return _ray_cluster_spec(entry, spec)


def _job(entry: Entry, spec: WorkloadSpec) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if spec.parallelism is not None:
        out["parallelism"] = spec.parallelism
    if spec.completions is not None:
        out["completions"] = spec.completions
    out["template"] = _pod_template(entry, spec, spec.template, "pod", ("template",), restart_policy="Never")
    return out


def _pod(entry: Entry, spec: WorkloadSpec) -> dict[str, Any]:
    if spec.parallelism is not None or spec.completions is not None:
        raise entry.error("parallelism and completions are for Job", ("parallelism",))
    template = _pod_template(entry, spec, spec.template, "pod", ("template",))
    return template["spec"]


def _jobset(entry: Entry, spec: WorkloadSpec) -> dict[str, Any]:
    jobs = []
    for i, r in enumerate(spec.replicas):
        job: dict[str, Any] = {}
        if r.parallelism is not None:
            job["parallelism"] = r.parallelism
        if r.completions is not None:
            job["completions"] = r.completions
        job["template"] = _pod_template(entry, spec, r, "pod", ("replicas", i), restart_policy="Never")
        typed: dict[str, Any] = {"name": r.name}
        if r.replicas is not None:
            typed["replicas"] = r.replicas
        typed["template"] = {"spec": job}
        jobs.append(_merge_under(copy.deepcopy(r.group), typed))  # group: the rest of the replicatedJob
    return {"replicatedJobs": jobs}


def _pytorchjob(entry: Entry, spec: WorkloadSpec) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, r in sorted(enumerate(spec.replicas), key=lambda ir: ir[1].name):  # Master before Worker, as Kueue
        typed: dict[str, Any] = {} if r.replicas is None else {"replicas": r.replicas}
        if "restartPolicy" not in r.group:
            typed["restartPolicy"] = "OnFailure"
        typed["template"] = _pod_template(entry, spec, r, "pytorch", ("replicas", i))
        out[r.name.capitalize()] = _merge_under(copy.deepcopy(r.group), typed)
    return {"pytorchReplicaSpecs": out}


_BODIES = {"RayJob": _ray_job, "RayCluster": _ray_cluster, "Job": _job, "Pod": _pod, "JobSet": _jobset,
           "PyTorchJob": _pytorchjob}
