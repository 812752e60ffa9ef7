"""Kueue (and a few core Kubernetes) objects, read from manifest dicts of either API version.

Every reader takes the plain dict of one manifest (as loaded by `kueueplan.kube.yamlio`) and returns a
frozen dataclass whose field names follow Kueue's Go names in snake_case. Both `kueue.x-k8s.io/v1beta1`
and `v1beta2` are accepted; v1beta1 spellings are converted the way Kueue's conversion webhooks do
(`cohort` -> `cohort_name`, a flat `admissionChecks` list -> strategy rules, flavorFungibility
`Borrow`/`Preempt` -> `MayStopSearch`).

Quotas are ints in Kueue units (`kueueplan.kube.quantity.quota_value`: cpu in millicores, everything
else in base units); an absent limit is `None` ("unbounded").

Public API:
- `read_object(data, file=None, line=None)` -> one of the dataclasses below, or None for kinds this
  module does not model (they are kept in `Cluster.other`).
- `read_cluster(docs)` -> `Cluster`: an inventory keyed by name (namespaced kinds by (namespace, name)).
  `docs` may be plain dicts or `yamlio.Document`s (then errors name file:line).
- `Cluster.apply(obj)` / `Cluster.delete(kind, namespace, name)` for changes during a simulation.
- `LabelSelector.matches(labels)` (namespaceSelector semantics: `None` selects nothing, `{}` everything),
  `Toleration.tolerates(taint)`.

Bad input raises `KueueplanError` naming the file and line when known.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kueueplan.errors import KueueplanError
from kueueplan.kube.quantity import quota_value

KUEUE_GROUP = "kueue.x-k8s.io"
UNLIMITED = 2**63 - 1  # Kueue's saturating "Unlimited" amount

NEVER = "Never"
LOWER_PRIORITY = "LowerPriority"
LOWER_OR_NEWER_EQUAL_PRIORITY = "LowerOrNewerEqualPriority"
ANY = "Any"
MAY_STOP_SEARCH = "MayStopSearch"
TRY_NEXT_FLAVOR = "TryNextFlavor"
BEST_EFFORT_FIFO = "BestEffortFIFO"
STRICT_FIFO = "StrictFIFO"


# --------------------------------------------------------------------------- helpers


@dataclass(frozen=True)
class Source:
    """Where an object came from, for error messages."""

    file: str | None = None
    line: int | None = None

    def error(self, message: str, hint: str | None = None) -> KueueplanError:
        return KueueplanError(message, file=self.file, line=self.line, hint=hint)


def _mapping(value: Any, what: str, src: Source) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise src.error(f"{what} must be a mapping, got {type(value).__name__}")
    return value


def _list(value: Any, what: str, src: Source) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise src.error(f"{what} must be a list, got {type(value).__name__}")
    return value


def _str_map(value: Any, what: str, src: Source) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((str(k), "" if v is None else str(v)) for k, v in _mapping(value, what, src).items()))


def _amount(resource: str, value: Any, src: Source) -> int:
    try:
        return quota_value(resource, value)  # Kueue's Unlimited (UNLIMITED) at or above int64
    except KueueplanError as err:
        raise src.error(f"resource {resource}: {err.message}", err.hint) from None


def _int(value: Any, what: str, src: Source, default: int = 0) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise src.error(f"{what} must be an integer, got {value!r}")
    return value


def _weight(value: Any, src: Source) -> Fraction | None:
    if value is None:
        return None
    from kueueplan.kube.quantity import parse_quantity

    try:
        return parse_quantity(value)
    except KueueplanError as err:
        raise src.error(f"fairSharing.weight: {err.message}") from None


def api_version_of(data: Mapping[str, Any]) -> tuple[str, str]:
    """(group, version) of a manifest; core objects have group ''."""
    av = str(data.get("apiVersion") or "")
    if "/" in av:
        group, version = av.split("/", 1)
        return group, version
    return "", av


def list_items(data: Any) -> list[Any] | None:
    """The items of a list document (kubectl's `kind: List` export, or an API list such as ClusterQueueList),
    or None when `data` is a single object."""
    if isinstance(data, Mapping) and str(data.get("kind", "")).endswith("List") and isinstance(data.get("items"), list):
        return data["items"]
    return None


def meta(data: Mapping[str, Any]) -> Mapping[str, Any]:
    value = data.get("metadata")
    return value if isinstance(value, Mapping) else {}


# --------------------------------------------------------------------------- scheduling primitives


@dataclass(frozen=True)
class Taint:
    key: str
    value: str = ""
    effect: str = ""


@dataclass(frozen=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: Taint) -> bool:
        """core/v1 Toleration.ToleratesTaint."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("", "Equal"):
            # An empty key with Equal matches nothing but an empty-key taint; mirror k8s exactly.
            return self.key == taint.key and self.value == taint.value
        return False


def read_taints(value: Any, src: Source) -> tuple[Taint, ...]:
    out = []
    for t in _list(value, "nodeTaints", src):
        t = _mapping(t, "taint", src)
        out.append(Taint(str(t.get("key", "")), str(t.get("value", "") or ""), str(t.get("effect", "") or "")))
    return tuple(out)


def read_tolerations(value: Any, src: Source) -> tuple[Toleration, ...]:
    out = []
    for t in _list(value, "tolerations", src):
        t = _mapping(t, "toleration", src)
        out.append(Toleration(str(t.get("key", "") or ""), str(t.get("operator", "Equal") or "Equal"),
                              str(t.get("value", "") or ""), str(t.get("effect", "") or "")))
    return tuple(out)


@dataclass(frozen=True)
class Requirement:
    """One label/field selector requirement (In, NotIn, Exists, DoesNotExist, Gt, Lt)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        present = self.key in labels
        if op == "In":
            return present and labels[self.key] in self.values
        if op == "NotIn":
            return not present or labels[self.key] not in self.values
        if op == "Exists":
            return present
        if op == "DoesNotExist":
            return not present
        if op in ("Gt", "Lt") and present and self.values:
            try:
                have, want = int(labels[self.key]), int(self.values[0])
            except ValueError:
                return False
            return have > want if op == "Gt" else have < want
        return False


@dataclass(frozen=True)
class LabelSelector:
    """metav1.LabelSelector. An empty selector matches everything."""

    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if any(labels.get(k) != v for k, v in self.match_labels):
            return False
        return all(r.matches(labels) for r in self.match_expressions)


def read_label_selector(value: Any, src: Source) -> LabelSelector | None:
    if value is None:
        return None
    value = _mapping(value, "selector", src)
    reqs = []
    for e in _list(value.get("matchExpressions"), "matchExpressions", src):
        e = _mapping(e, "matchExpression", src)
        reqs.append(Requirement(str(e.get("key", "")), str(e.get("operator", "")),
                                tuple(str(v) for v in _list(e.get("values"), "values", src))))
    return LabelSelector(_str_map(value.get("matchLabels"), "matchLabels", src), tuple(reqs))


def selector_matches(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """namespaceSelector semantics: absent/null selects nothing (Kueue), `{}` selects everything."""
    return selector is not None and selector.matches(labels)


# --------------------------------------------------------------------------- Kueue objects


@dataclass(frozen=True)
class ResourceFlavor:
    name: str
    node_labels: tuple[tuple[str, str], ...] = ()
    node_taints: tuple[Taint, ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    topology_name: str | None = None
    kind: str = "ResourceFlavor"

    @property
    def labels(self) -> dict[str, str]:
        return dict(self.node_labels)


@dataclass(frozen=True)
class ResourceQuota:
    name: str
    nominal_quota: int
    borrowing_limit: int | None = None
    lending_limit: int | None = None


@dataclass(frozen=True)
class FlavorQuotas:
    name: str
    resources: tuple[ResourceQuota, ...]


@dataclass(frozen=True)
class ResourceGroup:
    covered_resources: tuple[str, ...]
    flavors: tuple[FlavorQuotas, ...]


@dataclass(frozen=True)
class BorrowWithinCohort:
    policy: str = NEVER
    max_priority_threshold: int | None = None


@dataclass(frozen=True)
class Preemption:
    within_cluster_queue: str = NEVER
    reclaim_within_cohort: str = NEVER
    borrow_within_cohort: BorrowWithinCohort = BorrowWithinCohort()


@dataclass(frozen=True)
class FlavorFungibility:
    when_can_borrow: str = MAY_STOP_SEARCH
    when_can_preempt: str = TRY_NEXT_FLAVOR
    preference: str | None = None


@dataclass(frozen=True)
class AdmissionCheckRule:
    name: str
    on_flavors: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClusterQueue:
    name: str
    cohort_name: str | None = None
    resource_groups: tuple[ResourceGroup, ...] = ()
    preemption: Preemption = Preemption()
    queueing_strategy: str = BEST_EFFORT_FIFO
    flavor_fungibility: FlavorFungibility = FlavorFungibility()
    stop_policy: str = "None"
    namespace_selector: LabelSelector | None = None
    admission_checks: tuple[AdmissionCheckRule, ...] = ()
    fair_sharing_weight: Fraction | None = None
    kind: str = "ClusterQueue"
    admission_mode: str | None = None  # spec.admissionScope.admissionMode (UsageBasedAdmissionFairSharing)

    def flavor_names(self) -> tuple[str, ...]:
        return tuple(f.name for g in self.resource_groups for f in g.flavors)

    def group_for(self, resource: str) -> ResourceGroup | None:
        for g in self.resource_groups:
            if resource in g.covered_resources:
                return g
        return None


@dataclass(frozen=True)
class Cohort:
    name: str
    parent_name: str | None = None
    resource_groups: tuple[ResourceGroup, ...] = ()
    fair_sharing_weight: Fraction | None = None
    kind: str = "Cohort"


@dataclass(frozen=True)
class LocalQueue:
    namespace: str
    name: str
    cluster_queue: str
    stop_policy: str = "None"
    fair_sharing_weight: Fraction | None = None
    kind: str = "LocalQueue"


@dataclass(frozen=True)
class WorkloadPriorityClass:
    name: str
    value: int
    kind: str = "WorkloadPriorityClass"


@dataclass(frozen=True)
class PriorityClass:
    """scheduling.k8s.io/v1 PriorityClass."""

    name: str
    value: int
    global_default: bool = False
    kind: str = "PriorityClass"


@dataclass(frozen=True)
class AdmissionCheck:
    name: str
    controller_name: str
    parameters: tuple[tuple[str, str], ...] = ()  # apiGroup, kind, name
    kind: str = "AdmissionCheck"

    @property
    def parameters_name(self) -> str | None:
        return dict(self.parameters).get("name")


PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
# apis/kueue/v1beta2/multikueue_types.go MultiKueueControllerName
MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"


@dataclass(frozen=True)
class ProvisioningRequestConfig:
    name: str
    provisioning_class_name: str = ""
    managed_resources: tuple[str, ...] = ()
    backoff_limit_count: int = 3  # retryStrategy defaults (apis/kueue/v1beta2/provisioningrequestconfig_types.go)
    kind: str = "ProvisioningRequestConfig"
    backoff_base_seconds: int = 60
    backoff_max_seconds: int = 1800


@dataclass(frozen=True)
class Namespace:
    name: str
    labels: tuple[tuple[str, str], ...] = ()
    kind: str = "Namespace"

    @property
    def label_map(self) -> dict[str, str]:
        # Every namespace carries its own name label (set by the API server since 1.21).
        out = dict(self.labels)
        out.setdefault("kubernetes.io/metadata.name", self.name)
        return out


KueueObject = (ResourceFlavor | ClusterQueue | Cohort | LocalQueue | WorkloadPriorityClass | PriorityClass
               | AdmissionCheck | ProvisioningRequestConfig | Namespace)


# --------------------------------------------------------------------------- readers


def _read_resource_groups(value: Any, src: Source, owner: str) -> tuple[ResourceGroup, ...]:
    groups = []
    for gi, g in enumerate(_list(value, "resourceGroups", src)):
        g = _mapping(g, "resourceGroup", src)
        covered = tuple(str(r) for r in _list(g.get("coveredResources"), "coveredResources", src))
        flavors = []
        for f in _list(g.get("flavors"), "flavors", src):
            f = _mapping(f, "flavor", src)
            fname = f.get("name")
            if not isinstance(fname, str) or not fname:
                raise src.error(f"{owner}: resourceGroups[{gi}] has a flavor without a name")
            quotas = []
            for r in _list(f.get("resources"), "resources", src):
                r = _mapping(r, "resource", src)
                rname = str(r.get("name", ""))
                if "nominalQuota" not in r:
                    raise src.error(f"{owner}: flavor {fname} resource {rname} has no nominalQuota")
                quotas.append(ResourceQuota(
                    rname, _amount(rname, r["nominalQuota"], src),
                    None if r.get("borrowingLimit") is None else _amount(rname, r["borrowingLimit"], src),
                    None if r.get("lendingLimit") is None else _amount(rname, r["lendingLimit"], src)))
            flavors.append(FlavorQuotas(fname, tuple(quotas)))
        groups.append(ResourceGroup(covered, tuple(flavors)))
    return tuple(groups)


_FUNGIBILITY_V1BETA1 = {"Borrow": MAY_STOP_SEARCH, "Preempt": MAY_STOP_SEARCH}


def _read_fungibility(value: Any, src: Source) -> FlavorFungibility:
    value = _mapping(value, "flavorFungibility", src)
    borrow = str(value.get("whenCanBorrow") or MAY_STOP_SEARCH)
    preempt = str(value.get("whenCanPreempt") or TRY_NEXT_FLAVOR)
    pref = value.get("preference")
    return FlavorFungibility(_FUNGIBILITY_V1BETA1.get(borrow, borrow), _FUNGIBILITY_V1BETA1.get(preempt, preempt),
                             str(pref) if pref else None)


def _read_preemption(value: Any, src: Source) -> Preemption:
    value = _mapping(value, "preemption", src)
    bwc = _mapping(value.get("borrowWithinCohort"), "borrowWithinCohort", src)
    threshold = bwc.get("maxPriorityThreshold")
    return Preemption(
        str(value.get("withinClusterQueue") or NEVER),
        str(value.get("reclaimWithinCohort") or NEVER),
        BorrowWithinCohort(str(bwc.get("policy") or NEVER),
                           None if threshold is None else _int(threshold, "maxPriorityThreshold", src)))


def _fair_weight(spec: Mapping[str, Any], src: Source) -> Fraction | None:
    return _weight(_mapping(spec.get("fairSharing"), "fairSharing", src).get("weight"), src)


def read_cluster_queue(data: Mapping[str, Any], src: Source = Source()) -> ClusterQueue:
    name = _name(data, src)
    spec = _mapping(data.get("spec"), "spec", src)
    rules = [AdmissionCheckRule(str(n)) for n in _list(spec.get("admissionChecks"), "admissionChecks", src)]
    strategy = _mapping(spec.get("admissionChecksStrategy"), "admissionChecksStrategy", src)
    for r in _list(strategy.get("admissionChecks"), "admissionChecksStrategy.admissionChecks", src):
        r = _mapping(r, "admission check rule", src)
        rules.append(AdmissionCheckRule(str(r.get("name", "")),
                                        tuple(str(f) for f in _list(r.get("onFlavors"), "onFlavors", src))))
    cohort = spec.get("cohortName", spec.get("cohort"))
    return ClusterQueue(
        name=name,
        cohort_name=str(cohort) if cohort else None,
        resource_groups=_read_resource_groups(spec.get("resourceGroups"), src, f"ClusterQueue {name}"),
        preemption=_read_preemption(spec.get("preemption"), src),
        queueing_strategy=str(spec.get("queueingStrategy") or BEST_EFFORT_FIFO),
        flavor_fungibility=_read_fungibility(spec.get("flavorFungibility"), src),
        stop_policy=str(spec.get("stopPolicy") or "None"),
        namespace_selector=read_label_selector(spec.get("namespaceSelector"), src),
        admission_checks=tuple(rules),
        fair_sharing_weight=_fair_weight(spec, src),
        admission_mode=_str_or_none(_mapping(spec.get("admissionScope"), "admissionScope", src).get("admissionMode")),
    )


def _str_or_none(value: Any) -> str | None:
    return str(value) if value else None


def read_cohort(data: Mapping[str, Any], src: Source = Source()) -> Cohort:
    name = _name(data, src)
    spec = _mapping(data.get("spec"), "spec", src)
    parent = spec.get("parentName", spec.get("parent"))
    return Cohort(name, str(parent) if parent else None,
                  _read_resource_groups(spec.get("resourceGroups"), src, f"Cohort {name}"), _fair_weight(spec, src))


def read_resource_flavor(data: Mapping[str, Any], src: Source = Source()) -> ResourceFlavor:
    spec = _mapping(data.get("spec"), "spec", src)
    topo = spec.get("topologyName")
    return ResourceFlavor(_name(data, src), _str_map(spec.get("nodeLabels"), "nodeLabels", src),
                          read_taints(spec.get("nodeTaints"), src), read_tolerations(spec.get("tolerations"), src),
                          str(topo) if topo else None)


def read_local_queue(data: Mapping[str, Any], src: Source = Source()) -> LocalQueue:
    spec = _mapping(data.get("spec"), "spec", src)
    cq = spec.get("clusterQueue")
    if not isinstance(cq, str) or not cq:
        raise src.error(f"LocalQueue {_name(data, src)} has no spec.clusterQueue")
    return LocalQueue(str(meta(data).get("namespace") or "default"), _name(data, src), cq,
                      str(spec.get("stopPolicy") or "None"), _fair_weight(spec, src))


def read_admission_check(data: Mapping[str, Any], src: Source = Source()) -> AdmissionCheck:
    spec = _mapping(data.get("spec"), "spec", src)
    params = _mapping(spec.get("parameters"), "parameters", src)
    return AdmissionCheck(_name(data, src), str(spec.get("controllerName") or ""),
                          tuple(sorted((str(k), str(v)) for k, v in params.items())))


def read_provisioning_request_config(data: Mapping[str, Any], src: Source = Source()) -> ProvisioningRequestConfig:
    spec = _mapping(data.get("spec"), "spec", src)
    retry = _mapping(spec.get("retryStrategy"), "retryStrategy", src)
    return ProvisioningRequestConfig(
        _name(data, src), str(spec.get("provisioningClassName") or ""),
        tuple(str(r) for r in _list(spec.get("managedResources"), "managedResources", src)),
        _int(retry.get("backoffLimitCount"), "backoffLimitCount", src, 3),
        backoff_base_seconds=_int(retry.get("backoffBaseSeconds"), "backoffBaseSeconds", src, 60),
        backoff_max_seconds=_int(retry.get("backoffMaxSeconds"), "backoffMaxSeconds", src, 1800))


def _name(data: Mapping[str, Any], src: Source) -> str:
    name = meta(data).get("name")
    if not isinstance(name, str) or not name:
        raise src.error(f"{data.get('kind', 'object')} has no metadata.name")
    return name


def read_object(data: Mapping[str, Any], file: str | None = None, line: int | None = None) -> KueueObject | None:
    """Read one manifest; None for kinds not modelled here (Deployments, RayJobs, ...)."""
    src = Source(file, line)
    if not isinstance(data, Mapping):
        raise src.error("a manifest must be a mapping")
    group, _version = api_version_of(data)
    kind = data.get("kind")
    if group == KUEUE_GROUP:
        reader = {
            "ClusterQueue": read_cluster_queue, "Cohort": read_cohort, "ResourceFlavor": read_resource_flavor,
            "LocalQueue": read_local_queue, "AdmissionCheck": read_admission_check,
            "ProvisioningRequestConfig": read_provisioning_request_config,
        }.get(str(kind))
        if reader is not None:
            return reader(data, src)
        if kind == "WorkloadPriorityClass":
            return WorkloadPriorityClass(_name(data, src), _int(data.get("value"), "value", src))
        return None
    if group == "scheduling.k8s.io" and kind == "PriorityClass":
        return PriorityClass(_name(data, src), _int(data.get("value"), "value", src), bool(data.get("globalDefault")))
    if group == "" and kind == "Namespace":
        return Namespace(_name(data, src), _str_map(meta(data).get("labels"), "labels", src))
    return None


# --------------------------------------------------------------------------- the inventory

_PLURAL = {
    "ResourceFlavor": "resource_flavors", "ClusterQueue": "cluster_queues", "Cohort": "cohorts",
    "LocalQueue": "local_queues", "WorkloadPriorityClass": "workload_priority_classes",
    "PriorityClass": "priority_classes", "AdmissionCheck": "admission_checks",
    "ProvisioningRequestConfig": "provisioning_request_configs", "Namespace": "namespaces",
}


@dataclass
class Cluster:
    """Every Kueue object of a cluster, keyed by name ((namespace, name) for LocalQueues)."""

    resource_flavors: dict[str, ResourceFlavor] = field(default_factory=dict)
    cluster_queues: dict[str, ClusterQueue] = field(default_factory=dict)
    cohorts: dict[str, Cohort] = field(default_factory=dict)
    local_queues: dict[tuple[str, str], LocalQueue] = field(default_factory=dict)
    workload_priority_classes: dict[str, WorkloadPriorityClass] = field(default_factory=dict)
    priority_classes: dict[str, PriorityClass] = field(default_factory=dict)
    admission_checks: dict[str, AdmissionCheck] = field(default_factory=dict)
    provisioning_request_configs: dict[str, ProvisioningRequestConfig] = field(default_factory=dict)
    namespaces: dict[str, Namespace] = field(default_factory=dict)
    other: list[Mapping[str, Any]] = field(default_factory=list)

    def apply(self, obj: KueueObject) -> None:
        table: dict[Any, Any] = getattr(self, _PLURAL[obj.kind])
        key = (obj.namespace, obj.name) if isinstance(obj, LocalQueue) else obj.name
        table[key] = obj

    def delete(self, kind: str, namespace: str | None, name: str) -> bool:
        """Remove an object; True if it existed."""
        attr = _PLURAL.get(kind)
        if attr is None:
            return False
        table: dict[Any, Any] = getattr(self, attr)
        key = (namespace or "default", name) if kind == "LocalQueue" else name
        return table.pop(key, None) is not None

    def namespace_labels(self, namespace: str) -> dict[str, str] | None:
        ns = self.namespaces.get(namespace)
        if ns is not None:
            return ns.label_map
        return None

    def global_default_priority(self) -> PriorityClass | None:
        """The globalDefault PriorityClass (lowest value if several, as Kueue's priority util does)."""
        defaults = sorted((pc for pc in self.priority_classes.values() if pc.global_default),
                          key=lambda pc: (pc.value, pc.name))
        return defaults[0] if defaults else None

    def copy(self) -> "Cluster":
        return Cluster(**{k: (dict(v) if isinstance(v, dict) else list(v)) for k, v in self.__dict__.items()})


def read_cluster(docs: Iterable[Any]) -> Cluster:
    """Read manifests (dicts or yamlio Documents; a `List` kind is flattened) into one inventory."""
    cluster = Cluster()
    for doc in docs:
        data = getattr(doc, "data", doc)
        file = getattr(doc, "file", None)
        line = getattr(doc, "line", None)
        if data is None:
            continue
        if isinstance(data, Mapping) and str(data.get("kind", "")).endswith("List") and "items" in data:
            for item in _list(data.get("items"), "items", Source(file, line)):
                _add(cluster, item, file, line)
            continue
        _add(cluster, data, file, line)
    return cluster


def _add(cluster: Cluster, data: Any, file: str | None, line: int | None) -> None:
    obj = read_object(data, file, line)
    if obj is None:
        cluster.other.append(data)
    else:
        cluster.apply(obj)
