"""The fields of a workload that Kueue (and KubeRay's autoscaler) write after Argo CD or Flux applied it.

GitOps tools must ignore exactly these and nothing Git owns. Derived per object from what Kueue does on
admission (pkg/controller/jobframework/reconciler.go `getPodSetsInfoFromStatus` + pkg/podset/podset.go `Merge`):

- every pod template gets the label `kueue.x-k8s.io/podset: <pod set name>` (Kueue >= v0.9);
- the assigned flavors' `nodeLabels` are merged into the template's `nodeSelector` and their `tolerations`
  appended (deduplicated, so a toleration Git already has is not Kueue's);
- with the TopologyAwareScheduling feature gate (default on from v0.14, alpha and off before) every pod set gets
  the `kueue.x-k8s.io/workload` annotation; a TAS flavor (`topologyName`) adds the `kueue.x-k8s.io/topology`
  scheduling gate and, without a topology request, `kueue.x-k8s.io/podset-unconstrained-topology` (v0.14+;
  before, the `kueue.x-k8s.io/tas` label);
- with AssignQueueLabelsForPods (default on from v0.17) every pod set gets the `kueue.x-k8s.io/local-queue-name`
  and `kueue.x-k8s.io/cluster-queue-name` labels;
- a ProvisioningRequest admission check adds two `cluster-autoscaler.kubernetes.io/*` annotations and the
  config's `podSetUpdates.nodeSelector` keys (pkg/controller/admissionchecks/provisioning/controller.go);
- `spec.suspend` is set by Kueue's webhook on create and flipped by Kueue on admission / eviction;
- a RayJob in K8sJobMode without a `submitterPodTemplate` gets one written by Kueue
  (pkg/controller/jobs/rayjob/rayjob_controller.go `RunWithPodSetsInfo`);
- a Job with `kueue.x-k8s.io/job-min-parallelism` gets `parallelism` set to the admitted count;
- with `enableInTreeAutoscaling` the Ray autoscaler owns each worker group's `replicas`.

Pod set names follow Kueue: `main` (Job, Pod), `head`, the worker `groupName`s and `submitter` (Ray).
Only the flavors the workload's ClusterQueue can assign count (its resource groups).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from kueueplan.compile.context import QUEUE_LABEL
from kueueplan.kube.configuration import gate_on
from kueueplan.kube.objects import PROVISIONING_CONTROLLER

PODSET_LABEL = "kueue.x-k8s.io/podset"
TAS_LABEL = "kueue.x-k8s.io/tas"  # before v0.14
TAS_GATE = "kueue.x-k8s.io/topology"
WORKLOAD_ANNOTATION = "kueue.x-k8s.io/workload"
UNCONSTRAINED_ANNOTATION = "kueue.x-k8s.io/podset-unconstrained-topology"
TOPOLOGY_REQUESTS = ("kueue.x-k8s.io/podset-required-topology", "kueue.x-k8s.io/podset-preferred-topology",
                     "kueue.x-k8s.io/podset-unconstrained-topology")
QUEUE_LABELS = ("kueue.x-k8s.io/local-queue-name", "kueue.x-k8s.io/cluster-queue-name")
MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"
# k8s.io/autoscaler/cluster-autoscaler/apis as vendored by Kueue up to v0.19 (go.mod: 2024-08 pseudo-version).
PROVREQ_ANNOTATIONS = ("cluster-autoscaler.kubernetes.io/consume-provisioning-request",
                       "cluster-autoscaler.kubernetes.io/provisioning-class-name")
WORKLOAD_KINDS = {"Job": "batch", "RayJob": "ray.io", "RayCluster": "ray.io", "Pod": ""}
Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Owned:
    """One field another controller writes. `key`: a map key under `path`; `element`: a list element (matched by
    value; `index` is where Kueue appends it, for tools that only take JSON pointers); neither: the whole field."""

    path: Path
    key: str | None = None
    element: Mapping[str, Any] | None = None
    index: int | None = None
    why: str = ""


@dataclass(frozen=True)
class Template:
    pod_set: str
    meta: Path  # the template's metadata
    spec: Path  # the template's pod spec
    body: Mapping[str, Any] | None  # the template as Git has it (None: Git does not write it)


def _get(obj: Any, path: Path) -> Any:
    for part in path:
        if part.__class__ is int:
            obj = obj[part] if obj.__class__ is list and part < len(obj) else None  # type: ignore[index]
        else:
            obj = obj.get(part) if isinstance(obj, dict) else None  # manifests are plain dicts (abc checks are slow)
        if obj is None:
            return None
    return obj


def _map(value: Any) -> dict[str, Any]:
    """A mapping field, or {} when Git wrote something else there (validate reports that; build must not fail)."""
    return value if isinstance(value, dict) else {}


def _items(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _ray_templates(obj: Mapping[str, Any], base: Path) -> list[Template]:
    out = [Template("head", base + ("headGroupSpec", "template", "metadata"),
                    base + ("headGroupSpec", "template", "spec"), _get(obj, base + ("headGroupSpec", "template")))]
    for i, group in enumerate(_items(_get(obj, base + ("workerGroupSpecs",)))):
        t = base + ("workerGroupSpecs", i, "template")
        out.append(Template(str(_map(group).get("groupName", "")), t + ("metadata",), t + ("spec",), _get(obj, t)))
    return out


def pod_templates(obj: Mapping[str, Any]) -> list[Template]:
    """The pod templates Kueue merges admission into, in pod-set order."""
    kind = obj.get("kind")
    spec = _map(obj.get("spec"))
    if kind == "Job":
        return [Template("main", ("spec", "template", "metadata"), ("spec", "template", "spec"),
                         _get(obj, ("spec", "template")))]
    if kind == "Pod":
        return [Template("main", ("metadata",), ("spec",), obj)]
    if kind == "RayCluster":
        return _ray_templates(obj, ("spec",))
    if kind == "RayJob":
        if spec.get("clusterSelector"):
            return []  # runs on an existing RayCluster: no pod sets of its own
        out = _ray_templates(obj, ("spec", "rayClusterSpec"))
        if spec.get("submissionMode", "K8sJobMode") == "K8sJobMode":
            out.append(Template("submitter", ("spec", "submitterPodTemplate", "metadata"),
                                ("spec", "submitterPodTemplate", "spec"), _get(obj, ("spec", "submitterPodTemplate"))))
        return out
    return []


@dataclass(frozen=True)
class Platform:
    """What decides Kueue's writes: flavors, queues and checks of one environment (from its manifests)."""

    flavors: Mapping[str, Mapping[str, Any]]
    queue_flavors: Mapping[tuple[str, str], tuple[str, ...]]  # (namespace, LocalQueue) -> flavor names
    queue_checks: Mapping[tuple[str, str], tuple[Mapping[str, Any], ...]]  # -> ProvisioningRequestConfig specs
    kueue_version: tuple[int, int, int] = (0, 19, 0)
    feature_gates: Mapping[str, bool] = field(default_factory=dict)  # from Kueue's Configuration, if rendered

    def gate(self, name: str) -> bool:
        return gate_on(self.feature_gates, name, self.kueue_version)

    @classmethod
    def of(cls, manifests: Iterable[Mapping[str, Any]], kueue_version: tuple[int, int, int] = (0, 19, 0)) -> Platform:
        by_kind: dict[str, dict[tuple[str, str], Mapping[str, Any]]] = {}
        for m in manifests:
            meta = m.get("metadata") or {}
            by_kind.setdefault(str(m.get("kind")), {})[(str(meta.get("namespace") or ""), str(meta.get("name")))] = m
        flavors = {name: (m.get("spec") or {}) for (_, name), m in by_kind.get("ResourceFlavor", {}).items()}
        checks = {name: (m.get("spec") or {}) for (_, name), m in by_kind.get("AdmissionCheck", {}).items()}
        configs = {name: (m.get("spec") or {}) for (_, name), m in by_kind.get("ProvisioningRequestConfig", {}).items()}
        queue_flavors: dict[tuple[str, str], tuple[str, ...]] = {}
        queue_checks: dict[tuple[str, str], tuple[Mapping[str, Any], ...]] = {}
        for (ns, name), lq in by_kind.get("LocalQueue", {}).items():
            cq = by_kind.get("ClusterQueue", {}).get(("", str((lq.get("spec") or {}).get("clusterQueue"))))
            if cq is None:
                continue
            cq_spec = cq.get("spec") or {}
            queue_flavors[(ns, name)] = tuple(str(f.get("name")) for g in cq_spec.get("resourceGroups") or []
                                              for f in g.get("flavors") or [])
            queue_checks[(ns, name)] = tuple(_provisioning_configs(cq_spec, checks, configs))
        return cls(flavors, queue_flavors, queue_checks, kueue_version, _feature_gates(by_kind.get("ConfigMap", {})))


def _feature_gates(config_maps: Mapping[tuple[str, str], Mapping[str, Any]]) -> dict[str, bool]:
    """`featureGates` of the Kueue Configuration that build renders (compile/configuration.py)."""
    import yaml

    from kueueplan.kube.configuration import CONFIGMAP_KEY, CONFIGMAP_NAME

    for (_, name), cm in config_maps.items():
        text = _map(cm.get("data")).get(CONFIGMAP_KEY) if name == CONFIGMAP_NAME else None
        if isinstance(text, str):
            try:
                gates = _map(_map(yaml.safe_load(text)).get("featureGates"))
            except yaml.YAMLError:
                return {}
            return {str(k): v for k, v in gates.items() if isinstance(v, bool)}
    return {}


def _provisioning_configs(cq_spec: Mapping[str, Any], checks: Mapping[str, Mapping[str, Any]],
                          configs: Mapping[str, Mapping[str, Any]]) -> Iterable[Mapping[str, Any]]:
    names = [str(c) for c in cq_spec.get("admissionChecks") or []]
    names += [str(r.get("name")) for r in (cq_spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []]
    for name in names:
        check = checks.get(name) or {}
        if check.get("controllerName") == PROVISIONING_CONTROLLER:
            params = check.get("parameters") or {}
            yield configs.get(str(params.get("name")), {})


def _template_fields(t: Template, flavors: list[Mapping[str, Any]], prov: tuple[Mapping[str, Any], ...],
                     platform: Platform) -> list[Owned]:
    if not isinstance(t.body, dict):
        return []
    meta, pod = _map(t.body.get("metadata")), _map(t.body.get("spec"))  # a Pod is its own template
    labels, annotations = _map(meta.get("labels")), _map(meta.get("annotations"))
    selector, tolerations = _map(pod.get("nodeSelector")), _items(pod.get("tolerations"))
    out: list[Owned] = []
    version = platform.kueue_version
    if version >= (0, 9, 0) and PODSET_LABEL not in labels:
        out.append(Owned(t.meta + ("labels",), key=PODSET_LABEL, why=f"pod set {t.pod_set}"))
    if platform.gate("AssignQueueLabelsForPods"):
        out += [Owned(t.meta + ("labels",), key=k, why="AssignQueueLabelsForPods") for k in QUEUE_LABELS
                if k not in labels]
    keys = sorted({k for f in flavors for k in (f.get("nodeLabels") or {})} |
                  {str(s.get("key")) for c in prov for s in ((c.get("podSetUpdates") or {}).get("nodeSelector") or [])})
    out += [Owned(t.spec + ("nodeSelector",), key=k, why="flavor nodeLabels") for k in keys if k not in selector]
    appended = []
    for f in flavors:
        for tol in f.get("tolerations") or []:
            if tol not in tolerations and tol not in appended:
                appended.append(tol)
    out += [Owned(t.spec + ("tolerations",), element=tol, index=len(tolerations) + i, why="flavor tolerations")
            for i, tol in enumerate(appended)]
    tas = platform.gate("TopologyAwareScheduling")
    if tas and WORKLOAD_ANNOTATION not in annotations:
        out.append(Owned(t.meta + ("annotations",), key=WORKLOAD_ANNOTATION, why="TopologyAwareScheduling gate"))
    if tas and any(f.get("topologyName") for f in flavors):
        if not any(a in annotations for a in TOPOLOGY_REQUESTS):
            out.append(Owned(t.meta + ("annotations",), key=UNCONSTRAINED_ANNOTATION, why="topology-aware scheduling"))
        gates = _items(pod.get("schedulingGates"))
        if {"name": TAS_GATE} not in gates:
            out.append(Owned(t.spec + ("schedulingGates",), element={"name": TAS_GATE}, index=len(gates),
                             why="topology-aware scheduling"))
    if prov:
        out += [Owned(t.meta + ("annotations",), key=a, why="ProvisioningRequest check")
                for a in PROVREQ_ANNOTATIONS if a not in annotations]
    return out


def owned_fields(obj: Mapping[str, Any], platform: Platform) -> list[Owned]:
    """The fields of one workload object that Kueue or the Ray autoscaler write (empty for other kinds)."""
    kind = obj.get("kind")
    if kind not in WORKLOAD_KINDS:
        return []
    meta, spec = _map(obj.get("metadata")), _map(obj.get("spec"))
    labels = _map(meta.get("labels"))
    queue = (str(meta.get("namespace") or "default"), str(labels.get(QUEUE_LABEL) or ""))
    if not queue[1]:
        return []  # Kueue leaves objects without a queue alone (manageJobsWithoutQueueName aside)
    flavors = [platform.flavors[n] for n in platform.queue_flavors.get(queue, ()) if n in platform.flavors]
    prov = tuple(platform.queue_checks.get(queue, ()))
    out: list[Owned] = []
    if kind != "Pod" and "suspend" not in spec:
        out.append(Owned(("spec", "suspend"), why="Kueue suspends until admitted"))
    if kind == "Job" and MIN_PARALLELISM in _map(meta.get("annotations")):
        out.append(Owned(("spec", "parallelism"), why="partial admission"))
    if kind == "Pod":
        out.append(Owned(("spec", "schedulingGates"), element={"name": "kueue.x-k8s.io/admission"},
                         index=len(_items(spec.get("schedulingGates"))), why="Kueue gates the pod until admitted"))
        if "kueue.x-k8s.io/managed" not in labels:
            out.append(Owned(("metadata", "labels"), key="kueue.x-k8s.io/managed", why="Kueue's pod webhook"))
        out.append(Owned(("metadata", "finalizers"), element="kueue.x-k8s.io/managed",  # type: ignore[arg-type]
                         index=len(_items(meta.get("finalizers"))), why="Kueue's pod webhook"))
    for t in pod_templates(obj):
        if t.pod_set == "submitter" and t.body is None:
            out.append(Owned(("spec", "submitterPodTemplate"), why="Kueue writes the default submitter template"))
            continue
        out += _template_fields(t, flavors, prov, platform)
    ray = _map(spec.get("rayClusterSpec")) if kind == "RayJob" else spec if kind == "RayCluster" else {}
    if ray.get("enableInTreeAutoscaling") is True:
        base = ("spec", "rayClusterSpec") if kind == "RayJob" else ("spec",)
        out += [Owned(base + ("workerGroupSpecs", i, "replicas"), why="Ray autoscaler")
                for i, _ in enumerate(_items(ray.get("workerGroupSpecs")))]
    return _dedupe([_widen(obj, f) for f in out])


def _widen(obj: Mapping[str, Any], field: Owned) -> Owned:
    """A key or element in a map or list that Git does not write at all becomes the whole map or list (and so
    on up, while Git writes no parent either): all of it is Kueue's, and ignoring only the key would leave an
    empty `{}` that differs from Git's absent field in both tools' comparisons."""
    if field.key is None and field.element is None:
        path = field.path
    else:
        container = _get(obj, field.path)
        if container:  # Git writes this map / list: only Kueue's key or element is ignored
            return field
        path = field.path
    while len(path) > 2 and not _get(obj, path[:-1]):
        path = path[:-1]
    return Owned(path, why=field.why)


def _dedupe(fields: list[Owned]) -> list[Owned]:
    """Drop fields inside a whole field that is already ignored, keep first-seen order."""
    wholes = {f.path for f in fields if f.key is None and f.element is None}
    out: list[Owned] = []
    for f in fields:
        inside = any(f.path[:len(w)] == w and (len(f.path) > len(w) or f.key is not None or f.element is not None)
                     for w in wholes)
        if not inside and f not in out:
            out.append(f)
    return out


# --------------------------------------------------------------------------- renderings


def _escape_pointer(part: str | int) -> str:
    return str(part).replace("~", "~0").replace("/", "~1")


def json_pointer(field: Owned) -> str:
    """RFC 6901 pointer (what Flux's `spec.ignore` takes): list elements by the index Kueue appends them at."""
    parts: list[str | int] = list(field.path)
    if field.key is not None:
        parts.append(field.key)
    elif field.index is not None:
        parts.append(field.index)
    return "".join("/" + _escape_pointer(p) for p in parts)


def _jq_path(path: Path) -> str:
    import json

    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if part.isidentifier() else f"[{json.dumps(part)}]")
    return out or "."


def jq_path(field: Owned) -> str:
    """A gojq path expression (what Argo CD's `jqPathExpressions` take; Argo runs `del(<expr>)`): list elements
    by value, so the rule holds wherever Kueue appended them."""
    import json

    base = _jq_path(field.path)
    if field.key is not None:
        return f"{base}[{json.dumps(field.key)}]"
    if field.element is not None:
        return f"{base}[]? | select(. == {json.dumps(field.element, sort_keys=True, separators=(',', ':'))})"
    return base
