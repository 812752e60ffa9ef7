"""Existing Kueue / KubeRay manifests -> the typed spec, so a team adopts kueueplan without rewriting anything.

Input: hand-written files or `kubectl get -o yaml` exports (status, managedFields and other server fields are
stripped; `List` kinds are flattened; v1beta1 and v1beta2 are both read). Output: spec documents grouped
into files (`flavors.yaml`, `teams/<team>.yaml`, ...), plus the list of objects the spec cannot express.

Mapping: each ClusterQueue becomes a Team (named like the queue) holding its quotas and policies, the
LocalQueues that point at it, and their namespaces (`create: false` when no Namespace manifest was given);
Cohort, ResourceFlavor, WorkloadPriorityClass (-> Priority) and AdmissionCheck (+ its ProvisioningRequestConfig)
map one to one; RayJob / RayCluster / Job / Pod objects labelled for a LocalQueue become Workloads. Values are
copied as written (quantities keep their spelling) so the imported spec reads like the manifests.
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

from kueueplan.errors import KueueplanError
from kueueplan.kube.objects import KUEUE_GROUP, PROVISIONING_CONTROLLER, api_version_of, read_object
from kueueplan.workflow.manifests import KUEUEPLAN_API, clean, key_of, key_text

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
NAME_LABEL = "kubernetes.io/metadata.name"
WORKLOAD_KINDS = {("ray.io", "RayJob"), ("ray.io", "RayCluster"), ("batch", "Job"), ("", "Pod"),
                  ("jobset.x-k8s.io", "JobSet"), ("kubeflow.org", "PyTorchJob")}
# Kinds `import` turns into spec documents; what `build(import(x))` reproduces.
IMPORTED_KINDS = {"ResourceFlavor", "WorkloadPriorityClass", "Cohort", "ClusterQueue", "LocalQueue",
                  "AdmissionCheck", "ProvisioningRequestConfig", "Namespace", "RayJob", "RayCluster", "Job", "Pod",
                  "JobSet", "PyTorchJob"}
_OWN_LABELS = ("kueueplan.io/", "app.kubernetes.io/managed-by")
_OWN_ANNOTATIONS = ("kueueplan.io/", "argocd.argoproj.io/sync-wave")


@dataclass
class ImportResult:
    files: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # relative path -> documents
    skipped: list[str] = field(default_factory=list)  # Kueue objects and workloads not carried, with the reason
    outside: list[str] = field(default_factory=list)  # objects outside the spec's scope (RBAC, Services, ...)
    unresolved: list[str] = field(default_factory=list)  # references to objects the input does not contain

    @property
    def lossless(self) -> bool:
        """Every Kueue object and queued workload carried, every reference resolved (import exits 0)."""
        return not (self.skipped or self.unresolved)

    def add(self, path: str, doc: dict[str, Any]) -> None:
        self.files.setdefault(path, []).append(doc)


def _doc(kind: str, name: str, spec: dict[str, Any] | None, meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    labels = _user(meta, "labels", _OWN_LABELS)
    annotations = _user(meta, "annotations", _OWN_ANNOTATIONS)
    if labels:
        metadata["labels"] = labels
    if annotations:
        metadata["annotations"] = annotations
    out: dict[str, Any] = {"apiVersion": KUEUEPLAN_API, "kind": kind, "metadata": metadata}
    if spec:
        out["spec"] = spec
    return out


def _user(meta: Mapping[str, Any] | None, key: str, own: tuple[str, ...]) -> dict[str, str]:
    values = (meta or {}).get(key) or {}
    return {str(k): str(v) for k, v in values.items() if not str(k).startswith(own)}


def _compact(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v is not None and v != [] and v != {}}


# --------------------------------------------------------------------------- quotas


def quotas_of(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Kueue resourceGroups -> the spec's per-flavor quotas (a bare value when only nominalQuota is set)."""
    out = []
    for group in spec.get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            resources: dict[str, Any] = {}
            for r in flavor.get("resources") or []:
                limits = {k: r[k] for k in ("nominalQuota", "borrowingLimit", "lendingLimit") if r.get(k) is not None}
                resources[str(r.get("name"))] = limits["nominalQuota"] if list(limits) == ["nominalQuota"] else limits
            out.append({"flavor": flavor.get("name"), "resources": resources})
    return out


def _fair(spec: Mapping[str, Any]) -> dict[str, Any] | None:
    weight = (spec.get("fairSharing") or {}).get("weight")
    return None if weight is None else {"weight": weight}


# --------------------------------------------------------------------------- per kind


def _flavor(obj: Mapping[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec") or {}
    return _doc("ResourceFlavor", obj["metadata"]["name"], _compact({
        "nodeLabels": spec.get("nodeLabels"), "nodeTaints": spec.get("nodeTaints"),
        "tolerations": spec.get("tolerations"), "topologyName": spec.get("topologyName")}), obj.get("metadata"))


def _priority(obj: Mapping[str, Any]) -> dict[str, Any]:
    return _doc("Priority", obj["metadata"]["name"],
                _compact({"value": obj.get("value", 0), "description": obj.get("description")}), obj.get("metadata"))


def _cohort(obj: Mapping[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec") or {}
    return _doc("Cohort", obj["metadata"]["name"], _compact({
        "parent": spec.get("parentName", spec.get("parent")), "quotas": quotas_of(spec),
        "fairSharing": _fair(spec)}), obj.get("metadata"))


def _admission_check(obj: Mapping[str, Any], configs: dict[str, Mapping[str, Any]], used: set[str]) -> dict[str, Any]:
    name = obj["metadata"]["name"]
    spec = obj.get("spec") or {}
    params = spec.get("parameters") or {}
    config = configs.get(str(params.get("name"))) if params.get("kind") == "ProvisioningRequestConfig" else None
    if spec.get("controllerName") == PROVISIONING_CONTROLLER and config is not None:
        used.add(str(params["name"]))
        cspec = config.get("spec") or {}
        prov = _compact({
            "configName": None if params["name"] == f"{name}-config" else params["name"],
            "provisioningClassName": cspec.get("provisioningClassName"),
            "managedResources": cspec.get("managedResources"), "parameters": cspec.get("parameters"),
            "retryStrategy": cspec.get("retryStrategy"), "podSetMergePolicy": cspec.get("podSetMergePolicy")})
        return _doc("AdmissionCheck", name, {"provisioningRequest": prov}, obj.get("metadata"))
    body: dict[str, Any] = {"controllerName": spec.get("controllerName")}
    if params:
        body["parameters"] = {k: params[k] for k in ("apiGroup", "kind", "name") if k in params}
    return _doc("AdmissionCheck", name, body, obj.get("metadata"))


def _team_checks(spec: Mapping[str, Any]) -> list[Any]:
    rules: list[Any] = [str(n) for n in spec.get("admissionChecks") or []]
    for rule in (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []:
        on = rule.get("onFlavors") or []
        rules.append({"name": rule.get("name"), "onFlavors": on} if on else str(rule.get("name")))
    return rules


def _team(cq: Mapping[str, Any], queues: list[Mapping[str, Any]], namespaces: dict[str, Mapping[str, Any]],
          result: ImportResult) -> dict[str, Any]:
    name = cq["metadata"]["name"]
    spec = cq.get("spec") or {}
    ns_names: list[str] = []
    for lq in queues:
        ns = lq["metadata"].get("namespace") or "default"
        if ns not in ns_names:
            ns_names.append(ns)
    team_namespaces = []
    for ns in ns_names:
        entry: dict[str, Any] = {"name": ns}
        obj = namespaces.get(ns)
        if obj is None:
            entry["create"] = False  # exists already (not among the imported manifests)
        else:
            labels = {k: v for k, v in _user(obj.get("metadata"), "labels", _OWN_LABELS).items() if k != NAME_LABEL}
            if labels:
                entry["labels"] = labels
        team_namespaces.append(entry)
    if spec.get("namespaceSelector") is None:
        result.skipped.append(f"ClusterQueue {name}: has no namespaceSelector (selects no namespace); the imported "
                              "team gets kueueplan's generated selector")
    body = {
        "namespaces": team_namespaces,
        "cohort": spec.get("cohortName", spec.get("cohort")),
        "namespaceSelector": spec.get("namespaceSelector"),
        "quotas": quotas_of(spec),
        "preemption": spec.get("preemption"),
        "queueingStrategy": spec.get("queueingStrategy"),
        "flavorFungibility": spec.get("flavorFungibility"),
        "stopPolicy": None if spec.get("stopPolicy") in (None, "None") else spec.get("stopPolicy"),
        "fairSharing": _fair(spec),
        "admissionChecks": _team_checks(spec) or None,
        "localQueues": _local_queues(queues),
    }
    out = {k: v for k, v in body.items() if v is not None}
    for key in ("namespaces", "localQueues"):  # empty lists are meaningful here: "none", not "the default"
        out.setdefault(key, [])
    return _doc("Team", name, out, cq.get("metadata"))


def _local_queues(queues: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """LocalQueues grouped by name and settings, each with the namespaces it lives in."""
    grouped: dict[tuple[str, str, str], dict[str, Any]] = {}
    for lq in queues:
        spec = lq.get("spec") or {}
        stop = spec.get("stopPolicy")
        fair = _fair(spec)
        key = (lq["metadata"]["name"], str(stop), str(fair))
        entry = grouped.get(key)
        if entry is None:
            entry = _compact({"name": lq["metadata"]["name"], "namespaces": [],
                              "stopPolicy": None if stop in (None, "None") else stop, "fairSharing": fair})
            entry["namespaces"] = []
            grouped[key] = entry
        entry["namespaces"].append(lq["metadata"].get("namespace") or "default")
    return list(grouped.values())


# --------------------------------------------------------------------------- workloads


def _pod_template(template: Mapping[str, Any], extra_keys: dict[str, Any] | None = None) -> dict[str, Any]:
    """A pod template -> the spec's PodTemplate: the first container typed, everything else verbatim."""
    pod = dict(template.get("spec") or {})
    containers = list(pod.pop("containers", None) or [])
    main = dict(containers[0]) if containers else {}
    out: dict[str, Any] = dict(extra_keys or {})
    if "name" in main:
        out["containerName"] = main.pop("name")
    if "image" in main:
        out["image"] = main.pop("image")
    for key in ("command", "args"):
        if key in main:
            out[key] = main.pop(key)
    resources = main.pop("resources", None)
    if resources:
        out["resources"] = _compact({"requests": resources.get("requests"), "limits": resources.get("limits")})
    if main:
        out["container"] = main
    if containers[1:]:
        pod["containers"] = containers[1:]
    if pod:
        out["pod"] = pod
    if "metadata" in template:
        out["metadata"] = template.get("metadata") or {}
    return out


def _ray_group(group: Mapping[str, Any], worker: bool) -> dict[str, Any]:
    group = dict(group)
    template = group.pop("template", None) or {}
    typed: dict[str, Any] = {}
    if worker:
        typed["groupName"] = group.pop("groupName")
        min_r = group.pop("minReplicas", 0)
        typed["replicas"] = group.pop("replicas", min_r)
        typed["minReplicas"] = min_r
        typed["maxReplicas"] = group.pop("maxReplicas", 2**31 - 1)
        if "numOfHosts" in group:
            typed["numOfHosts"] = group.pop("numOfHosts")
    params = group.pop("rayStartParams", None)
    if params:
        typed["rayStartParams"] = {str(k): str(v) for k, v in params.items()}
    out = _pod_template(template, typed)
    if group:
        out["group"] = group
    return out


def _replicated_job(rj: Mapping[str, Any]) -> dict[str, Any]:
    """A JobSet replicatedJob -> a spec Replica: name, replicas, parallelism, completions and the pod typed; the
    rest of the replicatedJob (and of its Job spec) kept verbatim in `group`."""
    rest = dict(rj)
    typed: dict[str, Any] = {"name": rest.pop("name")}
    if "replicas" in rest:
        typed["replicas"] = rest.pop("replicas")
    template = dict(rest.pop("template", None) or {})
    job = dict(template.pop("spec", None) or {})
    for key in ("parallelism", "completions"):
        if key in job:
            typed[key] = job.pop(key)
    out = _pod_template(job.pop("template", None) or {}, typed)
    if job:
        template["spec"] = job
    if template:
        rest["template"] = template
    if rest:
        out["group"] = rest
    return out


def _pytorch_replica(rtype: str, replica: Mapping[str, Any]) -> dict[str, Any]:
    """A pytorchReplicaSpecs entry -> a spec Replica named master / worker; restartPolicy etc. kept in `group`."""
    if rtype.lower() not in ("master", "worker"):
        raise ValueError(f"replica type {rtype!r} is not Master or Worker")
    rest = dict(replica)
    typed: dict[str, Any] = {"name": rtype.lower()}
    if "replicas" in rest:
        typed["replicas"] = rest.pop("replicas")
    out = _pod_template(rest.pop("template", None) or {}, typed)
    if rest:
        out["group"] = rest
    return out


_RAYJOB_FIELDS = ("entrypoint", "runtimeEnvYAML", "shutdownAfterJobFinishes", "ttlSecondsAfterFinished",
                  "activeDeadlineSeconds", "submissionMode")


def _workload(obj: Mapping[str, Any], team: str, namespace: str, queue: str) -> dict[str, Any]:
    kind = obj["kind"]
    meta = obj.get("metadata") or {}
    spec = dict(obj.get("spec") or {})
    labels = meta.get("labels") or {}
    body: dict[str, Any] = {"team": team, "kind": kind, "namespace": namespace, "localQueue": queue}
    if labels.get(PRIORITY_LABEL):
        body["priority"] = labels[PRIORITY_LABEL]
    name = meta.get("name")
    if not name:
        body["generateName"] = str(meta.get("generateName", ""))
        name = body["generateName"].rstrip("-")
    if kind in ("RayJob", "RayCluster"):
        cluster = dict(spec.pop("rayClusterSpec", None) or {}) if kind == "RayJob" else spec
        if kind == "RayJob":
            for key in _RAYJOB_FIELDS:
                if key in spec:
                    body[key] = spec.pop(key)
        if "rayVersion" in cluster:
            body["rayVersion"] = cluster.pop("rayVersion")
        body["head"] = _ray_group(cluster.pop("headGroupSpec", None) or {}, worker=False)
        workers = cluster.pop("workerGroupSpecs", None) or []
        if workers:
            body["workers"] = [_ray_group(g, worker=True) for g in workers]
        if kind == "RayJob" and cluster:
            spec["rayClusterSpec"] = cluster  # fields the typed spec does not cover, merged back verbatim
    elif kind == "Job":
        for key in ("parallelism", "completions"):
            if key in spec:
                body[key] = spec.pop(key)
        body["template"] = _pod_template(spec.pop("template", None) or {})
    elif kind == "JobSet":
        body["replicas"] = [_replicated_job(rj) for rj in spec.pop("replicatedJobs", None) or []]
    elif kind == "PyTorchJob":
        replicas = spec.pop("pytorchReplicaSpecs", None) or {}
        body["replicas"] = [_pytorch_replica(str(t), r) for t, r in replicas.items()]
    else:  # Pod: the object's spec is the pod
        body["template"] = _pod_template({"spec": spec})
        spec = {}
    if spec:
        body["spec"] = spec
    meta_labels = {k: v for k, v in labels.items() if k not in (QUEUE_LABEL, PRIORITY_LABEL)}
    return _doc("Workload", name, body, {**meta, "labels": meta_labels})


# --------------------------------------------------------------------------- the whole import


def _kueue_api(objs: Iterable[Mapping[str, Any]]) -> str | None:
    versions = {api_version_of(o)[1] for o in objs if api_version_of(o)[0] == KUEUE_GROUP}
    if not versions:
        return None
    return "v1beta1" if versions == {"v1beta1"} else "v1beta2"


class _ShapeError(Exception):
    """A workload whose fields are not the types KubeRay/Kubernetes define (a list where a mapping belongs, ...)."""

    def __init__(self, obj: Mapping[str, Any], cause: Exception) -> None:
        super().__init__(str(cause))
        self.obj, self.cause = obj, f"{type(cause).__name__}: {cause}"


def _metadata_problem(meta: Any) -> str | None:
    if not isinstance(meta, Mapping):
        return "metadata must be a mapping"
    if not meta.get("name") and not meta.get("generateName"):
        return "no metadata.name"
    for key in ("name", "generateName", "namespace"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            return f"metadata.{key} must be a string"
    for key in ("labels", "annotations"):
        value = meta.get(key)
        if value is not None and (not isinstance(value, Mapping)
                                  or not all(isinstance(v, (str, int, float, bool)) for v in value.values())):
            return f"metadata.{key} must map names to strings"
    return None


def _importable(group: str, kind: str) -> bool:
    if (group, kind) in WORKLOAD_KINDS or (group, kind) == ("", "Namespace"):
        return True
    return group == KUEUE_GROUP and kind in IMPORTED_KINDS


def import_manifests(docs: Iterable[Any], env: str = "default") -> ImportResult:
    """Manifests (dicts or yamlio Documents) -> spec documents by file, and what could not be imported."""
    result = ImportResult()
    by_kind: dict[str, list[dict[str, Any]]] = {}
    seen: dict[tuple[str, str, str], str] = {}
    sources: dict[int, tuple[str | None, int | None]] = {}
    for doc in docs:
        data = getattr(doc, "data", doc)
        if not isinstance(data, Mapping) or not data.get("kind") or not data.get("apiVersion"):
            where = f"{getattr(doc, 'file', '?')}:{getattr(doc, 'line', '?')}"
            result.skipped.append(f"{where}: not a Kubernetes object (no apiVersion/kind)")
            continue
        obj = clean(data)
        group, _ = api_version_of(obj)
        kind = str(obj["kind"])
        if not _importable(group, kind):
            lost = (group == KUEUE_GROUP or bool(((obj.get("metadata") or {}).get("labels") or {}).get(QUEUE_LABEL))
                    or (kind == "ConfigMap" and (obj.get("metadata") or {}).get("name") == "kueue-manager-config"))
            (result.skipped if lost else result.outside).append(f"{key_text(key_of(obj))}: kueueplan's spec has "
                                                                 f"no {kind}")
            continue
        problem = _metadata_problem(obj.get("metadata"))
        if problem:
            raise KueueplanError(f"{kind}: {problem}", file=getattr(doc, "file", None), line=getattr(doc, "line", None))
        read_object(obj, getattr(doc, "file", None), getattr(doc, "line", None))  # shape errors name file:line
        if kind in {k for _, k in WORKLOAD_KINDS} and not isinstance(obj.get("spec"), Mapping):
            raise KueueplanError(f"{kind} has no spec mapping", file=getattr(doc, "file", None),
                                 line=getattr(doc, "line", None))
        key = key_of(obj)
        sources[id(obj)] = (getattr(doc, "file", None), getattr(doc, "line", None))
        if key in seen:
            raise KueueplanError(f"{key_text(key)} is defined twice (first at {seen[key]})",
                                 file=getattr(doc, "file", None), line=getattr(doc, "line", None),
                                 hint="import one variant at a time: pass the files to import explicitly")
        seen[key] = f"{getattr(doc, 'file', '?')}:{getattr(doc, 'line', '?')}"
        by_kind.setdefault(kind, []).append(obj)
    kueue = [o for objs in by_kind.values() for o in objs]
    for obj in by_kind.get("ResourceFlavor", []):
        result.add("flavors.yaml", _flavor(obj))
    for obj in by_kind.get("WorkloadPriorityClass", []):
        result.add("priorities.yaml", _priority(obj))
    for obj in by_kind.get("Cohort", []):
        result.add("cohorts.yaml", _cohort(obj))
    configs = {o["metadata"]["name"]: o for o in by_kind.get("ProvisioningRequestConfig", [])}
    used: set[str] = set()
    for obj in by_kind.get("AdmissionCheck", []):
        result.add("admission-checks.yaml", _admission_check(obj, configs, used))
    result.skipped += [f"ProvisioningRequestConfig {n}: no AdmissionCheck uses it" for n in sorted(set(configs) - used)]
    try:
        accepted = _import_teams(by_kind, result)
        _import_workloads(by_kind, result, accepted)
    except (AttributeError, TypeError, KeyError, ValueError) as err:
        raise KueueplanError(f"cannot import: unexpected shape ({type(err).__name__}: {err})",
                             hint="check the objects against their CRDs (kueueplan validate)") from None
    except _ShapeError as err:
        file, line = sources.get(id(err.obj), (None, None))
        raise KueueplanError(f"cannot import {key_text(key_of(err.obj))}: unexpected shape ({err.cause})",
                             file=file, line=line, hint="check the object against its CRD") from None
    env_spec: dict[str, Any] = {}
    api = _kueue_api(kueue)
    if api is not None:
        env_spec["kueueAPIVersion"] = api
    result.add(f"env-{env}.yaml", _doc("Environment", env, env_spec))
    result.unresolved += _unresolved(by_kind, result)
    return result


def _unresolved(by_kind: dict[str, list[dict[str, Any]]], result: ImportResult) -> list[str]:
    """References of the imported spec to objects the input does not hold: `build` would refuse them, so
    import says so now, naming the referring object (Kueue itself tolerates some, e.g. an inactive queue)."""
    names = {kind: {o["metadata"]["name"] for o in by_kind.get(kind, [])}
             for kind in ("ResourceFlavor", "WorkloadPriorityClass", "AdmissionCheck")}
    out = []
    for kind in ("ClusterQueue", "Cohort"):
        for obj in by_kind.get(kind, []):
            spec = obj.get("spec") or {}
            for quota in quotas_of(spec):
                if quota["flavor"] not in names["ResourceFlavor"]:
                    out.append(f"{kind} {obj['metadata']['name']} uses ResourceFlavor {quota['flavor']}, which the "
                               "input does not contain")
            if kind == "ClusterQueue":
                for check in _team_checks(spec):
                    check_name = check["name"] if isinstance(check, dict) else check
                    if check_name not in names["AdmissionCheck"]:
                        out.append(f"ClusterQueue {obj['metadata']['name']} uses AdmissionCheck {check_name}, which "
                                   "the input does not contain")
    for docs in result.files.values():
        for doc in docs:
            priority = (doc.get("spec") or {}).get("priority") if doc.get("kind") == "Workload" else None
            if priority is not None and priority not in names["WorkloadPriorityClass"]:
                out.append(f"Workload {doc['metadata']['name']} uses WorkloadPriorityClass {priority}, which the "
                           "input does not contain")
    return out


def _import_teams(by_kind: dict[str, list[dict[str, Any]]], result: ImportResult) -> list[dict[str, Any]]:
    cqs = {o["metadata"]["name"]: o for o in by_kind.get("ClusterQueue", [])}
    namespaces = {o["metadata"]["name"]: o for o in by_kind.get("Namespace", [])}
    queues: dict[str, list[dict[str, Any]]] = {name: [] for name in cqs}
    for lq in by_kind.get("LocalQueue", []):
        target = (lq.get("spec") or {}).get("clusterQueue")
        if target in queues:
            queues[target].append(lq)
        else:
            result.skipped.append(f"{key_text(key_of(lq))}: its ClusterQueue {target!r} is not among the manifests")
    claimed: dict[str, str] = {}  # namespace -> team; the spec gives each namespace one team
    accepted: list[dict[str, Any]] = []
    for name, cq in cqs.items():
        mine = []
        for lq in queues[name]:
            ns = lq["metadata"].get("namespace") or "default"
            owner = claimed.setdefault(ns, name)
            if owner == name:
                mine.append(lq)
                accepted.append(lq)
            else:
                result.skipped.append(f"{key_text(key_of(lq))}: namespace {ns} already belongs to team {owner} "
                                      "(a namespace has one team in the spec)")
        result.add(f"teams/{name}.yaml", _team(cq, mine, namespaces, result))
    for ns in sorted(set(namespaces) - set(claimed)):
        result.skipped.append(f"Namespace {ns}: no LocalQueue in it, so it belongs to no team")
    return accepted


def _import_workloads(by_kind: dict[str, list[dict[str, Any]]], result: ImportResult,
                      accepted: list[dict[str, Any]]) -> None:
    owner = {(lq["metadata"].get("namespace") or "default", lq["metadata"]["name"]): lq["spec"]["clusterQueue"]
             for lq in accepted}  # LocalQueues the spec carries: a workload on a dropped one cannot be built
    cqs = {o["metadata"]["name"] for o in by_kind.get("ClusterQueue", [])}
    taken: set[str] = set()
    for kind in ("RayJob", "RayCluster", "Job", "Pod", "JobSet", "PyTorchJob"):
        for obj in by_kind.get(kind, []):
            meta = obj.get("metadata") or {}
            namespace = meta.get("namespace") or "default"
            queue = (meta.get("labels") or {}).get(QUEUE_LABEL)
            team = owner.get((namespace, queue))
            if queue is None or team not in cqs:
                why = ("has no queue-name label" if queue is None else
                       f"its LocalQueue {namespace}/{queue} is not among the imported queues")
                result.skipped.append(f"{key_text(key_of(obj))}: {why}")
                continue
            try:
                doc = _workload(obj, team, namespace, queue)
            except (AttributeError, TypeError, KeyError, ValueError) as err:
                raise _ShapeError(obj, err) from None
            name = doc["metadata"]["name"]
            if name in taken and "generateName" in doc["spec"]:
                # The spec names each Workload once; a generated object keeps its generateName under a new name.
                name = doc["metadata"]["name"] = f"{name[:62 - len(namespace)]}-{namespace}"
            if name in taken:
                result.skipped.append(f"{key_text(key_of(obj))}: another workload has the same name")
                continue
            taken.add(name)
            result.add(f"workloads/{doc['metadata']['name']}.yaml", doc)


# --------------------------------------------------------------------------- writing


class _Dumper(yaml.SafeDumper):
    """Block style, multi-line strings as literal blocks (entrypoints, runtimeEnvYAML stay readable)."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def dump(docs: list[dict[str, Any]]) -> str:
    return yaml.dump_all(docs, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True,
                         explicit_start=len(docs) > 1)


def build_problem(result: ImportResult, out_dir: Path) -> str | None:
    """The error `kueueplan build` would give on the imported spec (compiled in a scratch folder), or None.
    Import never leaves for build a refusal it can see itself."""
    import tempfile

    from kueueplan.compile import compile_platform

    with tempfile.TemporaryDirectory(prefix="kueueplan-import-") as tmp:
        scratch = Path(tmp) / "spec"
        for rel, docs in result.files.items():
            (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
            (scratch / rel).write_text(dump(docs), encoding="utf-8")
        try:
            compile_platform(scratch)
        except KueueplanError as err:
            where = (err.file or "").replace(str(scratch), str(out_dir))
            return f"{where}{':' + str(err.line) if err.line else ''}: {err.message}" if where else err.message
    return None


IMPORT_MARKER = "# Written by `kueueplan import` (yours to edit; `import --force` may rewrite it)."
_SAFE_PART = re.compile(r"^[a-z0-9]([-a-z0-9._]*[a-z0-9])?$")


def _safe_target(out_dir: Path, rel: str) -> Path:
    """OUT_DIR/rel, refused unless every part is a plain name (object names reach file names) and nothing on
    the way is a symlink: an object named `../../../x` must not write outside OUT_DIR."""
    parts = rel.split("/")
    if any(not _SAFE_PART.match(p) or ".." in p for p in parts):
        raise KueueplanError(f"refusing to write {rel!r}: an object or environment name is not a valid "
                             "Kubernetes name", file=str(out_dir),
                             hint="object names must be lower-case DNS names (no '/', '..' or spaces)")
    current = out_dir
    for part in parts:
        current = current / part
        if current.is_symlink():
            raise KueueplanError(f"refusing to write through the symlink {current}", file=str(current),
                                 hint="kueueplan import never writes through a symlink")
    return current


def write_spec(result: ImportResult, out_dir: Path, force: bool = False) -> list[Path]:
    """Write the spec files, each starting with IMPORT_MARKER and listed in the import record
    (workflow/importfiles.py). --force replaces, atomically, only files an earlier import wrote (recorded or
    marked); any other YAML file in the way, or a symlink, stops the import before a file is written."""
    from kueueplan.workflow.importfiles import write_files

    if out_dir.is_symlink():
        raise KueueplanError(f"refusing to write into {out_dir}: it is a symlink", file=str(out_dir))
    for rel in sorted(result.files):
        _safe_target(out_dir, rel)  # names that would leave OUT_DIR or pass through a symlink: refused
    texts = {rel: f"{IMPORT_MARKER}\n{dump(docs)}" for rel, docs in result.files.items()}
    try:
        return write_files(texts, out_dir, force, is_own=_imported)
    except OSError as err:
        where = err.filename or out_dir
        raise KueueplanError(f"cannot write {where}: {err.strerror or err}", file=str(where)) from None


def _imported(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.readline().rstrip("\n") == IMPORT_MARKER
    except OSError:
        return False
