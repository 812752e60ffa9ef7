"""Existing Kueue / KubeRay manifests -> the typed spec, so a team adopts kueueplan without rewriting anything.

Input: hand-written files or `kubectl get -o yaml` exports (status, managedFields and other server fields are
stripped; `List` kinds are flattened; v1beta1 and v1beta2 are both read). Output: spec documents grouped
into files (`flavors.yaml`, `teams/<team>.yaml`, ...), plus the list of objects the spec cannot express.

Mapping: ClusterQueues whose LocalQueues live in the same namespaces become one Team (several: its
`clusterQueues` entries, fields they share on the team; one: a Team named like the queue) holding quotas and
policies as written (namespaceSelector verbatim), the LocalQueues with their ClusterQueue, and their namespaces
(`create: false` when no Namespace manifest was given; a namespace several teams use is listed by each). A
ClusterQueue without namespaceSelector is `lendOnly`. Cohort, ResourceFlavor, WorkloadPriorityClass (-> Priority),
Topology, MultiKueueCluster and AdmissionCheck (+ its ProvisioningRequestConfig or MultiKueueConfig) map one to
one; workloads of every kind Kueue integrates (kube/podsets.py) labelled for a LocalQueue become Workloads. Values
are copied as written (quantities keep their spelling) so the imported spec reads like the manifests.
"""

from __future__ import annotations

import re

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

from kueueplan.compile.kueue import generated_selector
from kueueplan.compile.workloads import API_VERSIONS
from kueueplan.errors import KueueplanError
from kueueplan.kube.apiversion import KUEUEPLAN_API, TEAM_LABEL
from kueueplan.kube.podsets import PRIORITY_LABEL, QUEUE_LABEL
from kueueplan.kube.configuration import CONFIGMAP_KEY, CONFIGMAP_NAME, DEFAULT_NAMESPACE
from kueueplan.kube.objects import KUEUE_GROUP, MULTIKUEUE_CONTROLLER, PROVISIONING_CONTROLLER, api_version_of, read_object
from kueueplan.simulate.load import ANNOTATIONS as LOAD_ANNOTATIONS
from kueueplan.spec.models import VERBATIM_KINDS
from kueueplan.workflow.manifests import MODELLED_SPEC, clean, key_of, key_text

NAME_LABEL = "kubernetes.io/metadata.name"
# (group, kind) of every job kind build writes: import turns these into spec Workloads.
WORKLOAD_KINDS = {(api_version.rpartition("/")[0], kind) for kind, api_version in API_VERSIONS.items()}
# Apps that are workloads only with a queue label (the pod integration); without one they are outside the spec.
SERVING_APPS = {"Deployment", "StatefulSet"}
# Kinds `import` turns into spec documents; what `build(import(x))` reproduces.
IMPORTED_KINDS = {"ResourceFlavor", "WorkloadPriorityClass", "Cohort", "ClusterQueue", "LocalQueue", "Topology",
                  "AdmissionCheck", "ProvisioningRequestConfig", "MultiKueueConfig", "MultiKueueCluster",
                  "Namespace"} | {kind for _, kind in WORKLOAD_KINDS}
# The spec fields of each Kueue kind that import carries (the rest: not carried, named).
CARRIED_SPEC = {**MODELLED_SPEC,
                "ProvisioningRequestConfig": MODELLED_SPEC["ProvisioningRequestConfig"] | {
                    "parameters", "retryStrategy", "podSetMergePolicy"},
                "Topology": {"levels"}, "MultiKueueConfig": {"clusters", "quotaManagement"},
                "MultiKueueCluster": {"clusterSource", "kubeConfig", "clusterProfileRef"}}
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


def _topology(obj: Mapping[str, Any]) -> dict[str, Any]:
    levels = [level["nodeLabel"] for level in (obj.get("spec") or {}).get("levels") or []]
    return _doc("Topology", obj["metadata"]["name"], {"levels": levels}, obj.get("metadata"))


def _multikueue_cluster(obj: Mapping[str, Any]) -> dict[str, Any]:
    """v1beta2 nests the source under spec.clusterSource; v1beta1 has kubeConfig / clusterProfileRef on spec."""
    spec = obj.get("spec") or {}
    source = spec.get("clusterSource") if isinstance(spec.get("clusterSource"), Mapping) else spec
    return _doc("MultiKueueCluster", obj["metadata"]["name"], _compact({
        "kubeConfig": source.get("kubeConfig"), "clusterProfileRef": source.get("clusterProfileRef")}),
        obj.get("metadata"))


def _multikueue(name: str, params: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    cspec = config.get("spec") or {}
    return _compact({"configName": None if params["name"] == name else params["name"],
                     "clusters": _cluster_names(config), "quotaManagement": cspec.get("quotaManagement")})


def _admission_check(obj: Mapping[str, Any], configs: dict[str, Mapping[str, Any]], used: set[str],
                     mk_configs: dict[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    name = obj["metadata"]["name"]
    spec = obj.get("spec") or {}
    params = spec.get("parameters") or {}
    mk_config = (mk_configs or {}).get(str(params.get("name"))) if params.get("kind") == "MultiKueueConfig" else None
    if spec.get("controllerName") == MULTIKUEUE_CONTROLLER and mk_config is not None \
            and params.get("apiGroup", KUEUE_GROUP) == KUEUE_GROUP:
        used.add(f"MultiKueueConfig/{params['name']}")
        return _doc("AdmissionCheck", name, {"multiKueue": _multikueue(name, params, mk_config)}, obj.get("metadata"))
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


def _queue_fields(cq: Mapping[str, Any]) -> dict[str, Any]:
    """A ClusterQueue's fields in the spec's words (QueueFields). No namespaceSelector is a lend-only queue (Kueue:
    a nil selector matches no namespace, pkg/cache/scheduler clusterqueue.go), so it becomes `lendOnly`."""
    spec = cq.get("spec") or {}
    selector = spec.get("namespaceSelector")
    body = {
        "cohort": spec.get("cohortName", spec.get("cohort")),
        "namespaceSelector": selector,  # verbatim: what the manifests select, whatever kueueplan would generate
        "lendOnly": True if selector is None else None,
        "quotas": quotas_of(spec) or None,
        "preemption": spec.get("preemption"),
        "queueingStrategy": spec.get("queueingStrategy"),
        "flavorFungibility": spec.get("flavorFungibility"),
        "stopPolicy": None if spec.get("stopPolicy") in (None, "None") else spec.get("stopPolicy"),
        "fairSharing": _fair(spec),
        "admissionChecks": _team_checks(spec) or None,
    }
    return {k: v for k, v in body.items() if v is not None}


def _team_namespaces(queues: list[Mapping[str, Any]], namespaces: dict[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for ns in dict.fromkeys(lq["metadata"].get("namespace") or "default" for lq in queues):
        entry: dict[str, Any] = {"name": ns}
        obj = namespaces.get(ns)
        if obj is None:
            entry["create"] = False  # exists already (not among the imported manifests)
        else:
            labels = {k: v for k, v in _user(obj.get("metadata"), "labels", _OWN_LABELS).items() if k != NAME_LABEL}
            if labels:
                entry["labels"] = labels
        out.append(entry)
    return out


_MISSING = object()


def _team(name: str, cqs: list[Mapping[str, Any]], queues: dict[str, list[Mapping[str, Any]]],
          namespaces: dict[str, Mapping[str, Any]], shared: bool = False) -> dict[str, Any]:
    """One Team for these ClusterQueues. One queue: the team is named like it and holds its fields. Several: the
    fields all of them share are the team's, the rest each entry's (an entry's field replaces the team's). A
    namespaceSelector is written only where it differs from the one build generates."""
    fields = [_queue_fields(cq) for cq in cqs]
    mine = [lq for cq in cqs for lq in queues[cq["metadata"]["name"]]]
    spaces = _team_namespaces(mine, namespaces)
    generated = generated_selector(name, [ns["name"] for ns in spaces],
                                   shared or any(ns.get("create") is False for ns in spaces))
    for f in fields:
        if f.get("namespaceSelector") == generated:
            del f["namespaceSelector"]
    if len(cqs) == 1:
        out: dict[str, Any] = {} if cqs[0]["metadata"]["name"] == name else {"clusterQueue": cqs[0]["metadata"]["name"]}
        out.update(fields[0])
    else:
        common = {k: v for k, v in fields[0].items() if all(f.get(k, _MISSING) == v for f in fields[1:])}
        out = dict(common)
        out["clusterQueues"] = [{"name": cq["metadata"]["name"], **{k: v for k, v in f.items() if k not in common}}
                                for cq, f in zip(cqs, fields)]
    if not all(f.get("lendOnly") for f in fields):
        # empty lists are meaningful here: "none", not "the default"
        out["namespaces"] = spaces
        out["localQueues"] = _local_queues(mine, with_queue=len(cqs) > 1)
    # the spec has one metadata per team: the queues' labels and annotations when they agree (the build-check
    # names any queue whose own differ)
    metas = [(_user(cq.get("metadata"), "labels", _OWN_LABELS), _user(cq.get("metadata"), "annotations",
                                                                      _OWN_ANNOTATIONS)) for cq in cqs]
    return _doc("Team", name, out, cqs[0].get("metadata") if metas.count(metas[0]) == len(metas) else None)


def _local_queues(queues: list[Mapping[str, Any]], with_queue: bool = False) -> list[dict[str, Any]]:
    """LocalQueues grouped by name, ClusterQueue and settings, each with the namespaces it lives in."""
    grouped: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for lq in queues:
        spec = lq.get("spec") or {}
        stop = spec.get("stopPolicy")
        fair = _fair(spec)
        key = (lq["metadata"]["name"], str(spec.get("clusterQueue")), str(stop), str(fair))
        entry = grouped.get(key)
        if entry is None:
            entry = _compact({"name": lq["metadata"]["name"], "namespaces": [],
                              "clusterQueue": spec.get("clusterQueue") if with_queue else None,
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
    elif kind in VERBATIM_KINDS:
        pass  # the whole spec, verbatim (WorkloadSpec.spec)
    else:  # Pod: the object's spec is the pod
        body["template"] = _pod_template({"spec": spec})
        spec = {}
    if spec:
        body["spec"] = spec
    if kind != "TrainJob":  # its pod sets come from its runtime, outside the spec: simulate could not derive them
        body["load"] = [_load(meta)]
    meta_labels = {k: v for k, v in labels.items() if k not in (QUEUE_LABEL, PRIORITY_LABEL)}
    return _doc("Workload", name, body, {**meta, "labels": meta_labels})


def _load(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The object as load, as `simulate` takes plain manifests (scenario-format.md, second edition): created at 0
    unless its kueueplan.io/* annotations say otherwise; so the spec's environment simulates what the input does."""
    entry: dict[str, Any] = {"at": 0}
    for annotation, key in LOAD_ANNOTATIONS.items():
        value = (meta.get("annotations") or {}).get(annotation)
        if value is not None:
            entry[key] = int(value) if key == "count" and str(value).strip().isdigit() else value
    return entry


# --------------------------------------------------------------------------- Kueue's Configuration


def _configuration(obj: Mapping[str, Any], result: ImportResult) -> dict[str, Any] | None:
    """kueue-manager-config -> the Environment's `configuration`: build renders that merged over the release's
    shipped file (compile/configuration.py), so import writes the merge patch from the shipped file to the input's
    (null: a field the input's file leaves out). Kueue reads the file as a whole, so that is what it keeps."""
    from kueueplan.compile.configuration import shipped_file
    from kueueplan.compile.context import parse_version
    from kueueplan.spec.models import EnvironmentSpec

    text = (obj.get("data") or {}).get(CONFIGMAP_KEY)
    try:
        data = yaml.safe_load(text) if isinstance(text, str) else None
    except yaml.YAMLError:
        data = None
    where = key_text(key_of(obj))
    if not isinstance(data, dict) or data.get("kind") != "Configuration":
        result.skipped.append(f"{where}: its data.{CONFIGMAP_KEY} is not a Kueue Configuration")
        return None
    namespace = (obj.get("metadata") or {}).get("namespace") or "default"
    if namespace != (data.get("namespace") or DEFAULT_NAMESPACE):
        result.skipped.append(f"{where}: Kueue reads its Configuration in {data.get('namespace') or DEFAULT_NAMESPACE}"
                              f" (the Configuration's namespace), not in {namespace}")
        return None
    base = shipped_file(parse_version(EnvironmentSpec.model_fields["kueueVersion"].default))
    patch = {k: v for k, v in _inverse_patch(base, data).items() if k not in ("apiVersion", "kind")}
    return {"apiVersion": data.get("apiVersion") or base["apiVersion"], "kind": "Configuration", **patch}


def _inverse_patch(base: Mapping[str, Any], target: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON merge patch (RFC 7386) that turns `base` into `target`."""
    out: dict[str, Any] = {key: None for key in base if key not in target}
    for key, value in target.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), Mapping):
            sub = _inverse_patch(base[key], value)
            if sub:
                out[key] = sub
        elif key not in base or base[key] != value:
            out[key] = value
    return out


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


def _importable(group: str, kind: str, name: Any = None) -> bool:
    if (group, kind) in WORKLOAD_KINDS or (group, kind) == ("", "Namespace"):
        return True
    if (group, kind, name) == ("", "ConfigMap", CONFIGMAP_NAME):
        return True  # Kueue's own Configuration -> the Environment's `configuration`
    return group == KUEUE_GROUP and kind in IMPORTED_KINDS


def import_manifests(docs: Iterable[Any], env: str = "default", kueue_version: str | None = None) -> ImportResult:
    """Manifests (dicts or yamlio Documents) -> spec documents by file, and what could not be imported.
    `kueue_version`: the release the cluster runs, written as the Environment's kueueVersion (its default
    Configuration decides which integrations Kueue manages; without it the spec targets the newest release)."""
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
        meta = obj.get("metadata")
        if not _importable(group, kind, meta.get("name") if isinstance(meta, Mapping) else None):
            labels = meta.get("labels") if isinstance(meta, Mapping) else None
            lost = group == KUEUE_GROUP or isinstance(labels, Mapping) and bool(labels.get(QUEUE_LABEL))
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
    try:
        _map(by_kind, result, env)
    except (AttributeError, TypeError, KeyError, ValueError) as err:
        raise KueueplanError(f"cannot import: unexpected shape ({type(err).__name__}: {err})",
                             hint="check the objects against their CRDs (kueueplan validate)") from None
    except _ShapeError as err:
        file, line = sources.get(id(err.obj), (None, None))
        raise KueueplanError(f"cannot import {key_text(key_of(err.obj))}: unexpected shape ({err.cause})",
                             file=file, line=line, hint="check the object against its CRD") from None
    if kueue_version:
        for doc in result.files.get(f"env-{env}.yaml", []):
            doc["spec"] = {"kueueVersion": kueue_version, **(doc.get("spec") or {})}
    return result


def _one(fn: Any, obj: Mapping[str, Any], *args: Any) -> Any:
    """fn(obj, ...), a wrong shape in obj (a list where its CRD has a mapping, ...) named with the object."""
    try:
        return fn(obj, *args)
    except (AttributeError, TypeError, KeyError, ValueError) as err:
        raise _ShapeError(obj, err) from None


def _map(by_kind: dict[str, list[dict[str, Any]]], result: ImportResult, env: str) -> None:
    for kind, carried in CARRIED_SPEC.items():
        for obj in by_kind.get(kind, []):
            spec = obj.get("spec")
            extra = sorted(str(k) for k in spec if k not in carried) if isinstance(spec, Mapping) else []
            if extra:
                result.skipped.append(f"{key_text(key_of(obj))}: kueueplan's spec has no {kind} "
                                      f"{'field' if len(extra) == 1 else 'fields'} {', '.join(extra)}")
    for obj in by_kind.get("Topology", []):
        result.add("topologies.yaml", _one(_topology, obj))
    for obj in by_kind.get("ResourceFlavor", []):
        result.add("flavors.yaml", _one(_flavor, obj))
    for obj in by_kind.get("WorkloadPriorityClass", []):
        result.add("priorities.yaml", _one(_priority, obj))
    for obj in by_kind.get("Cohort", []):
        result.add("cohorts.yaml", _one(_cohort, obj))
    configs = {o["metadata"]["name"]: o for o in by_kind.get("ProvisioningRequestConfig", [])}
    mk_configs = {o["metadata"]["name"]: o for o in by_kind.get("MultiKueueConfig", [])}
    for obj in mk_configs.values():
        _one(_cluster_names, obj)
    used: set[str] = set()
    for obj in by_kind.get("AdmissionCheck", []):
        result.add("admission-checks.yaml", _one(_admission_check, obj, configs, used, mk_configs))
    result.skipped += [f"ProvisioningRequestConfig {n}: no AdmissionCheck uses it" for n in sorted(set(configs) - used)]
    result.skipped += [f"MultiKueueConfig {n}: no MultiKueue AdmissionCheck uses it" for n in sorted(mk_configs)
                       if f"MultiKueueConfig/{n}" not in used]
    for obj in by_kind.get("MultiKueueCluster", []):
        result.add("multikueue-clusters.yaml", _one(_multikueue_cluster, obj))
    owner = _import_teams(by_kind, result)
    _import_workloads(by_kind, result, owner)
    env_spec: dict[str, Any] = {}
    for obj in by_kind.get("ConfigMap", []):
        configuration = _one(_configuration, obj, result)
        if configuration is not None:
            env_spec["configuration"] = configuration
    api = _kueue_api(o for objs in by_kind.values() for o in objs)
    if api is not None:
        env_spec["kueueAPIVersion"] = api
    result.add(f"env-{env}.yaml", _doc("Environment", env, env_spec))
    result.unresolved += _unresolved(by_kind, result)


def _cluster_names(config: Mapping[str, Any]) -> list[str]:
    """A MultiKueueConfig's clusters (names, as its CRD has them)."""
    clusters = list((config.get("spec") or {}).get("clusters") or [])
    if not all(isinstance(c, str) for c in clusters):
        raise TypeError("spec.clusters must be a list of names")
    return clusters


def _unresolved(by_kind: dict[str, list[dict[str, Any]]], result: ImportResult) -> list[str]:
    """References of the imported spec to objects the input does not hold: `build` would refuse them, so
    import says so now, naming the referring object (Kueue itself tolerates some, e.g. an inactive queue)."""
    names = {kind: {o["metadata"]["name"] for o in by_kind.get(kind, [])}
             for kind in ("ResourceFlavor", "WorkloadPriorityClass", "AdmissionCheck", "Topology",
                          "MultiKueueConfig", "MultiKueueCluster")}
    out = []
    for obj in by_kind.get("ResourceFlavor", []):
        topology = (obj.get("spec") or {}).get("topologyName")
        if topology is not None and topology not in names["Topology"]:
            out.append(f"ResourceFlavor {obj['metadata']['name']} uses Topology {topology}, which the input does "
                       "not contain")
    for obj in by_kind.get("AdmissionCheck", []):
        params = (obj.get("spec") or {}).get("parameters") or {}
        if params.get("kind") == "MultiKueueConfig" and str(params.get("name")) not in names["MultiKueueConfig"]:
            out.append(f"AdmissionCheck {obj['metadata']['name']} uses MultiKueueConfig {params.get('name')}, which "
                       "the input does not contain")
    for obj in by_kind.get("MultiKueueConfig", []):
        for cluster in _cluster_names(obj):
            if cluster not in names["MultiKueueCluster"]:
                out.append(f"MultiKueueConfig {obj['metadata']['name']} uses MultiKueueCluster {cluster}, which the "
                           "input does not contain")
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


def _import_teams(by_kind: dict[str, list[dict[str, Any]]], result: ImportResult) -> dict[tuple[str, str], str]:
    """Teams from ClusterQueues and LocalQueues; returns (namespace, LocalQueue) -> team for the carried queues.
    ClusterQueues whose LocalQueues live in the same namespaces (a team's high/low-priority and compact queues in
    its namespace) make one team."""
    cqs = {o["metadata"]["name"]: o for o in by_kind.get("ClusterQueue", [])}
    namespaces = {o["metadata"]["name"]: o for o in by_kind.get("Namespace", [])}
    queues: dict[str, list[dict[str, Any]]] = {name: [] for name in cqs}
    for lq in by_kind.get("LocalQueue", []):
        target = (lq.get("spec") or {}).get("clusterQueue")
        if target not in queues:
            result.skipped.append(f"{key_text(key_of(lq))}: its ClusterQueue {target!r} is not among the manifests")
        elif (cqs[target].get("spec") or {}).get("namespaceSelector") is None:
            result.skipped.append(f"{key_text(key_of(lq))}: its ClusterQueue {target} has no namespaceSelector "
                                  "(lend-only: no workload can reach it), and a lendOnly queue has no LocalQueues")
        else:
            queues[target].append(lq)
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for name, cq in cqs.items():
        groups.setdefault(_group_key(name, queues[name], namespaces), []).append(cq)
    team_of: dict[str, str] = {}
    taken = set(cqs)
    spaces_of = {key: sorted({lq["metadata"].get("namespace") or "default" for cq in members
                              for lq in queues[cq["metadata"]["name"]]}) for key, members in groups.items()}
    teams_in = Counter(ns for spaces in spaces_of.values() for ns in spaces)  # namespace -> teams listing it
    for key, members in groups.items():
        team = members[0]["metadata"]["name"] if len(members) == 1 else _group_name(key, members, taken)
        taken.add(team)
        team_of.update((cq["metadata"]["name"], team) for cq in members)
        shared = any(teams_in[ns] > 1 for ns in spaces_of[key])
        result.add(f"teams/{team}.yaml", _team(team, members, queues, namespaces, shared))
    used = {lq["metadata"].get("namespace") or "default" for lqs in queues.values() for lq in lqs}
    for ns in sorted(set(namespaces) - used):
        result.skipped.append(f"Namespace {ns}: no LocalQueue in it, so it belongs to no team")
    # LocalQueues the spec carries, by (namespace, name) -> team: a workload on a dropped one cannot be built
    return {(lq["metadata"].get("namespace") or "default", lq["metadata"]["name"]): team_of[cq]
            for cq, lqs in queues.items() for lq in lqs}


def _group_key(cq: str, queues: list[Mapping[str, Any]], namespaces: dict[str, Mapping[str, Any]]) -> tuple[str, ...]:
    """ClusterQueues with the same key make one team: kueueplan's team label on all their namespaces (an output of
    `kueueplan build`, imported back), else the namespaces their LocalQueues live in; a queue without LocalQueues
    stays alone."""
    spaces = sorted({lq["metadata"].get("namespace") or "default" for lq in queues})
    labels = {(((namespaces.get(ns) or {}).get("metadata") or {}).get("labels") or {}).get(TEAM_LABEL)
              for ns in spaces}
    if spaces and len(labels) == 1 and None not in labels:
        return ("label", str(labels.pop()))
    return ("namespaces", *spaces) if spaces else ("alone", cq)


def _group_name(key: tuple[str, ...], members: list[Mapping[str, Any]], taken: set[str]) -> str:
    """The team of several ClusterQueues: their team label, or their namespace's name, else the queues' common
    prefix, else the first's."""
    names = [cq["metadata"]["name"] for cq in members]
    prefix = re.sub(r"[-.]+$", "", _common_prefix(names))
    own = [key[1]] if len(key) == 2 else []  # a label, or the one namespace
    for candidate in own + [prefix, f"{names[0]}-team"]:
        if candidate and _DNS_LABEL.match(candidate) and len(candidate) <= 63 \
                and (candidate not in taken or candidate in names):
            return candidate
    return f"{names[0][:50]}-team-{len(taken)}"


_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def _common_prefix(names: list[str]) -> str:
    first, last = min(names), max(names)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]


def _import_workloads(by_kind: dict[str, list[dict[str, Any]]], result: ImportResult,
                      owner: dict[tuple[str, str], str]) -> None:
    taken: set[str] = set()
    for kind in API_VERSIONS:
        for obj in by_kind.get(kind, []):
            meta = obj.get("metadata") or {}
            namespace = meta.get("namespace") or "default"
            queue = (meta.get("labels") or {}).get(QUEUE_LABEL)
            team = owner.get((namespace, queue))
            why = _not_carried(obj, queue, namespace, team)
            if why == "":
                result.outside.append(f"{key_text(key_of(obj))}: no queue-name label, not a Kueue workload")
                continue
            if why is not None:
                result.skipped.append(f"{key_text(key_of(obj))}: {why}")
                continue
            try:
                doc = _workload(obj, str(team), namespace, str(queue))
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


def _not_carried(obj: Mapping[str, Any], queue: str | None, namespace: str, team: str | None) -> str | None:
    """Why a workload object cannot become a Workload document ("" : it is no Kueue workload at all), or None."""
    kind = str(obj["kind"])
    if queue is None:
        template_labels = (((obj.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {}
        if kind == "Deployment" and template_labels.get(QUEUE_LABEL):
            # pod_controller.go queues each pod by its own label; build writes the label on the Deployment,
            # whose webhook copies it to the pods (deployment_webhook.go): the same queue, one label more
            return ("the queue-name label is on its pod template only (Kueue queues each pod by it); kueueplan "
                    "writes it on the Deployment, which Kueue copies to the pods: add it to metadata.labels")
        if kind == "StatefulSet" and template_labels.get(QUEUE_LABEL):
            return ("the queue-name label is on its pod template only, where Kueue ignores it for a StatefulSet "
                    "(it reads the StatefulSet's own labels, KP440): move it to metadata.labels")
        return "" if kind in SERVING_APPS else "has no queue-name label"
    if team is None:
        return f"its LocalQueue {namespace}/{queue} is not among the imported queues"
    if kind in VERBATIM_KINDS and obj.get("apiVersion") != API_VERSIONS[kind]:
        return f"kueueplan writes {kind} as {API_VERSIONS[kind]}, not {obj.get('apiVersion')}"
    return None


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


def build_problem(result: ImportResult, out_dir: Path, docs: Iterable[Any] = ()) -> str | None:
    """The error `kueueplan build` would give on the imported spec (compiled in a scratch folder), or None.
    Import never leaves for build a refusal it can see itself. With the input `docs`, what build would not
    reproduce of them (or would add) goes into result.skipped: import is lossless or says so."""
    import tempfile

    from kueueplan.compile import compile_platform

    with tempfile.TemporaryDirectory(prefix="kueueplan-import-") as tmp:
        scratch = Path(tmp) / "spec"
        for rel, file_docs in result.files.items():
            try:
                (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
                (scratch / rel).write_text(dump(file_docs), encoding="utf-8")
            except OSError as err:  # a 253-character object name makes a file name over the file system's 255
                raise KueueplanError(f"cannot write {rel!r}: {err.strerror or err}", file=str(out_dir),
                                     hint="an object's name makes this file name (file systems take up to 255 "
                                     "bytes): shorten that name") from None
        try:
            built = compile_platform(scratch)
        except KueueplanError as err:
            where = (err.file or "").replace(str(scratch), str(out_dir))
            return f"{where}{':' + str(err.line) if err.line else ''}: {err.message}" if where else err.message
    for manifests in built.values():
        result.skipped += reproduction_losses(docs, manifests, result.skipped)
    return None


def reproduction_losses(docs: Iterable[Any], built: list[dict[str, Any]], reported: list[str] = ()) -> list[str]:
    """What `build` of the imported spec would not give back as the input has it (compared as `kueueplan diff`
    compares: semantically, after API-version conversion), minus objects already `reported` as not carried."""
    from kueueplan.workflow.manifests import changed_paths, index

    def ours(doc: Any) -> bool:
        data = getattr(doc, "data", doc)
        if not isinstance(data, Mapping):
            return False
        group, _ = api_version_of(data)
        meta = data.get("metadata")
        return str(data.get("kind")) in IMPORTED_KINDS or _importable(
            group, str(data.get("kind")), meta.get("name") if isinstance(meta, Mapping) else None)

    before = index(d for d in docs if ours(d))
    after = index(built)
    known = {r.split(":", 1)[0] for r in reported}
    out = []
    for key in sorted(set(before) | set(after)):
        text = key_text(key)
        if text in known:
            continue
        if key not in after:
            out.append(f"{text}: the imported spec does not build it")
        elif key not in before:
            out.append(f"{text}: the imported spec builds it, the input has no such object")
        elif before[key] != after[key]:
            out.append(f"{text}: the imported spec builds it differently "
                       f"({', '.join(changed_paths(before[key], after[key])) or 'changed'})")
    return out


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

    from kueueplan.emit.writer import refuse_symlinked_out

    refuse_symlinked_out(out_dir, "write")  # OUT_DIR or a folder above it within the working directory
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
