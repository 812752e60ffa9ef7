"""Spec -> Kueue objects: ResourceFlavors, WorkloadPriorityClasses, AdmissionChecks (+ ProvisioningRequestConfigs),
Cohorts, ClusterQueues, LocalQueues and the Namespaces their selectors pick.

Pure functions of an `EnvContext`; cross-references are checked here, each error pointing at the spec field.
"""

from __future__ import annotations

import difflib
from typing import Any

from kueueplan.compile.context import KUEUE_GROUP, TEAM_LABEL, EnvContext, metadata
from kueueplan.compile.served import api_version, served
from kueueplan.errors import KueueplanError
from kueueplan.kube.objects import MULTIKUEUE_CONTROLLER, PROVISIONING_CONTROLLER
from kueueplan.kube.quantity import canonical, parse_quantity
from kueueplan.spec.load import Entry, did_you_mean
from kueueplan.spec.models import ClusterQueueEntry, FlavorQuota, LocalQueueSpec, NamespaceSpec, TeamSpec

Manifest = dict[str, Any]


def _drop_none(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v is not None}


def _dump(model: Any) -> dict[str, Any]:
    return model.model_dump(exclude_none=True, mode="python")


# --------------------------------------------------------------------------- cluster-scoped building blocks


def resource_flavors(ctx: EnvContext) -> list[Manifest]:
    out = []
    for entry in ctx.docs["ResourceFlavor"]:
        spec = entry.model.spec
        if spec.topologyName and not spec.nodeLabels:
            raise entry.error("a flavor with topologyName needs at least one nodeLabel", ("topologyName",))
        if spec.topologyName and spec.topologyName not in ctx.by_name("Topology"):
            # Kueue would keep every ClusterQueue using the flavor inactive (TopologyNotFound)
            raise entry.error(_unknown("Topology", spec.topologyName, ctx), ("topologyName",),
                              _known(ctx.by_name("Topology")))
        if len(spec.nodeLabels) > 8:
            raise entry.error("at most 8 nodeLabels", ("nodeLabels",))
        body = _drop_none({
            "nodeLabels": dict(spec.nodeLabels) or None,
            "nodeTaints": [_dump(t) for t in spec.nodeTaints] or None,
            "tolerations": [_dump(t) for t in spec.tolerations] or None,
            "topologyName": spec.topologyName,
        })
        manifest: Manifest = {"apiVersion": ctx.kueue_api_version, "kind": "ResourceFlavor",
                              "metadata": metadata(entry.name, "ResourceFlavor", entry)}
        if body:
            manifest["spec"] = body
        out.append(served(ctx, entry, manifest))
    return out


def _unknown(kind: str, name: str, ctx: EnvContext) -> str:
    """`Topology 'x' is not declared for environment 'e'; did you mean 'y'?`"""
    message = f"{kind} {name!r} is not declared for environment {ctx.name!r}"
    close = did_you_mean(name, list(ctx.by_name(kind)))
    return f"{message}; {close}" if close else f"{message}: add a {kind} document or fix the name"


def topologies(ctx: EnvContext) -> list[Manifest]:
    """Topology objects (topology-aware scheduling): levels from the widest to the node."""
    out = []
    for entry in ctx.docs["Topology"]:
        levels = [{"nodeLabel": level.nodeLabel} for level in entry.model.spec.levels]
        if len(levels) > 8 and ctx.kueue_version[:2] < (0, 13):  # the CRD's maxItems: 8 until v0.12, then 16
            raise entry.error(f"{len(levels)} levels; Kueue {ctx.env.model.spec.kueueVersion} allows at most 8",
                              ("levels",))
        manifest = {"apiVersion": api_version(ctx, entry, "Topology"), "kind": "Topology",
                    "metadata": metadata(entry.name, "Topology", entry), "spec": {"levels": levels}}
        out.append(served(ctx, entry, manifest))
    return out


def multikueue_clusters(ctx: EnvContext) -> list[Manifest]:
    """MultiKueueCluster objects: v1beta2 wraps the source in clusterSource and takes exactly one of kubeConfig
    and clusterProfileRef; v1alpha1/v1beta1 need kubeConfig (clusterProfileRef beside it from v0.15)."""
    out = []
    for entry in ctx.docs["MultiKueueCluster"]:
        spec = entry.model.spec
        source = _drop_none({"kubeConfig": _dump(spec.kubeConfig) if spec.kubeConfig else None,
                             "clusterProfileRef": _dump(spec.clusterProfileRef) if spec.clusterProfileRef else None})
        api = api_version(ctx, entry, "MultiKueueCluster")
        if api.endswith("/v1beta2"):
            if len(source) != 1:
                raise entry.error("Kueue's v1beta2 MultiKueueCluster takes exactly one of kubeConfig and "
                                  "clusterProfileRef", ("clusterProfileRef",), "remove one of them")
            body: dict[str, Any] = {"clusterSource": source}
        else:
            if spec.kubeConfig is None:
                raise entry.error(f"Kueue's {api.split('/')[1]} MultiKueueCluster needs kubeConfig", ("kubeConfig",),
                                  "add kubeConfig, or write the v1beta2 API (kueueAPIVersion: v1beta2)")
            body = source
        out.append(served(ctx, entry, {"apiVersion": api, "kind": "MultiKueueCluster",
                                       "metadata": metadata(entry.name, "MultiKueueCluster", entry), "spec": body}))
    return out


def priority_classes(ctx: EnvContext) -> list[Manifest]:
    out = []
    for entry in ctx.docs["Priority"]:
        spec = entry.model.spec
        manifest: Manifest = {"apiVersion": ctx.kueue_api_version, "kind": "WorkloadPriorityClass",
                              "metadata": metadata(entry.name, "WorkloadPriorityClass", entry), "value": spec.value}
        if spec.description is not None:
            manifest["description"] = spec.description
        out.append(served(ctx, entry, manifest))
    return out


def admission_checks(ctx: EnvContext) -> list[Manifest]:
    """Each AdmissionCheck, then the configurations generated for them (ProvisioningRequestConfigs, then
    MultiKueueConfigs), each named once."""
    checks: list[Manifest] = []
    configs: dict[str, list[Manifest]] = {"ProvisioningRequestConfig": [], "MultiKueueConfig": []}
    owner: dict[tuple[str, str], Entry] = {}

    def generated(entry: Entry, kind: str, name: str, field: str, controller: str) -> dict[str, Any]:
        if (kind, name) in owner:
            raise entry.error(f"{kind} {name!r} is also generated for {owner[kind, name].name!r}",
                              (field, "configName"))
        owner[kind, name] = entry
        build = _provisioning_config if kind == "ProvisioningRequestConfig" else _multikueue_config
        configs[kind].append(build(ctx, entry, name))
        return {"controllerName": controller, "parameters": {"apiGroup": KUEUE_GROUP, "kind": kind, "name": name}}

    for entry in ctx.docs["AdmissionCheck"]:
        spec = entry.model.spec
        check: Manifest = {"apiVersion": ctx.kueue_api_version, "kind": "AdmissionCheck",
                           "metadata": metadata(entry.name, "AdmissionCheck", entry)}
        if spec.provisioningRequest is not None:
            check["spec"] = generated(entry, "ProvisioningRequestConfig",
                                      spec.provisioningRequest.configName or f"{entry.name}-config",
                                      "provisioningRequest", PROVISIONING_CONTROLLER)
        elif spec.multiKueue is not None:
            check["spec"] = generated(entry, "MultiKueueConfig", spec.multiKueue.configName or entry.name,
                                      "multiKueue", MULTIKUEUE_CONTROLLER)
        else:
            check["spec"] = _drop_none({"controllerName": spec.controllerName,
                                        "parameters": _dump(spec.parameters) if spec.parameters else None})
        checks.append(served(ctx, entry, check))
    return checks + configs["ProvisioningRequestConfig"] + configs["MultiKueueConfig"]


def _multikueue_config(ctx: EnvContext, entry: Entry, name: str) -> Manifest:
    mk = entry.model.spec.multiKueue
    known = ctx.by_name("MultiKueueCluster")
    for j, cluster in enumerate(mk.clusters):
        if cluster not in known:
            raise entry.error(_unknown("MultiKueueCluster", cluster, ctx), ("multiKueue", "clusters", j), _known(known))
    if len(mk.clusters) > 10 and ctx.kueue_version[:2] < (0, 16):  # the CRD's maxItems: 10 until v0.15, then 20
        raise entry.error(f"{len(mk.clusters)} clusters; Kueue {ctx.env.model.spec.kueueVersion} allows at most 10",
                          ("multiKueue", "clusters"))
    api = api_version(ctx, entry, "MultiKueueConfig")
    if mk.quotaManagement is not None and (ctx.kueue_version[:2] < (0, 18) or not api.endswith("/v1beta2")):
        raise entry.error("MultiKueueConfig spec.quotaManagement needs Kueue v0.18 or newer and its v1beta2 API",
                          ("multiKueue", "quotaManagement"), "remove it, or raise the environment's kueueVersion")
    spec = _drop_none({"clusters": list(mk.clusters), "quotaManagement": mk.quotaManagement})
    return served(ctx, entry, {"apiVersion": api, "kind": "MultiKueueConfig",
                               "metadata": metadata(name, "MultiKueueConfig", entry), "spec": spec})


def _provisioning_config(ctx: EnvContext, entry: Entry, name: str) -> Manifest:
    prov = entry.model.spec.provisioningRequest
    for key, value in prov.parameters.items():
        if len(value) > 255:
            raise entry.error(f"parameter {key!r} is longer than 255 characters", ("provisioningRequest", "parameters"))
    if len(set(prov.managedResources)) != len(prov.managedResources):
        raise entry.error("managedResources lists a resource twice", ("provisioningRequest", "managedResources"))
    spec = _drop_none({
        "provisioningClassName": prov.provisioningClassName,
        "parameters": dict(prov.parameters) or None,
        "managedResources": list(prov.managedResources) or None,
        "retryStrategy": _dump(prov.retryStrategy) if prov.retryStrategy else None,
        "podSetMergePolicy": prov.podSetMergePolicy,
    })
    return served(ctx, entry, {"apiVersion": ctx.kueue_api_version, "kind": "ProvisioningRequestConfig",
                               "metadata": metadata(name, "ProvisioningRequestConfig", entry), "spec": spec})


# --------------------------------------------------------------------------- quotas


def resource_groups(ctx: EnvContext, entry: Entry, quotas: list[FlavorQuota], has_parent: bool,
                    is_queue: bool, path: tuple[str | int, ...] = ("quotas",)) -> list[dict[str, Any]]:
    """Kueue resourceGroups from per-flavor quotas: flavors covering the same resources share a group.

    Flavor order is kept (Kueue tries flavors in order); groups appear in the order of their first flavor.
    """
    flavors = ctx.by_name("ResourceFlavor")
    groups: list[dict[str, Any]] = []
    group_of: dict[str, dict[str, Any]] = {}
    seen_flavors: set[str] = set()
    for i, quota in enumerate(quotas):
        if quota.flavor not in flavors:
            raise entry.error(missing_flavor(ctx, quota.flavor), path + (i, "flavor"), _known(flavors))
        if quota.flavor in seen_flavors:
            raise entry.error(f"flavor {quota.flavor!r} is listed twice", path + (i, "flavor"))
        seen_flavors.add(quota.flavor)
        if not quota.resources:
            raise entry.error("a flavor needs at least one resource", path + (i, "resources"))
        names = list(quota.resources)
        group = _group_for(names, groups, group_of, entry, path + (i, "resources"))
        resources = [_resource(entry, name, quota.resources[name], has_parent, is_queue, path + (i, "resources", name))
                     for name in group["coveredResources"]]
        group["flavors"].append({"name": quota.flavor, "resources": resources})
    _check_limits(entry, groups, path)
    return groups


def _check_limits(entry: Entry, groups: list[dict[str, Any]], path: tuple[str | int, ...]) -> None:
    """The CRD's list limits (v0.14+): ≤16 resource groups, ≤64 flavors and ≤64 resources per group."""
    if len(groups) > 16:
        raise entry.error(f"{len(groups)} resource groups; Kueue allows at most 16", path)
    for group in groups:
        if len(group["flavors"]) > 64 or len(group["coveredResources"]) > 64:
            raise entry.error(f"a resource group has {len(group['flavors'])} flavors and "
                              f"{len(group['coveredResources'])} resources; Kueue allows at most 64 of each", path)


def _group_for(names: list[str], groups: list[dict[str, Any]], group_of: dict[str, dict[str, Any]],
               entry: Entry, path: tuple[str | int, ...]) -> dict[str, Any]:
    existing = group_of.get(names[0])
    if existing is not None:
        if set(existing["coveredResources"]) != set(names):
            raise entry.error(
                f"resources {names} overlap the group {existing['coveredResources']} without matching it; in Kueue "
                "a resource belongs to one resource group, and every flavor of a group covers the same resources",
                path, "give every flavor that shares a resource exactly the same resources")
        return existing
    for name in names:
        if name in group_of:
            raise entry.error(f"resource {name!r} is already covered by the group {group_of[name]['coveredResources']}",
                              path, "give every flavor that shares a resource exactly the same resources")
    group = {"coveredResources": list(names), "flavors": []}
    groups.append(group)
    for name in names:
        group_of[name] = group
    return group


def _resource(entry: Entry, name: str, quota: Any, has_parent: bool, is_queue: bool,
              path: tuple[str | int, ...]) -> dict[str, Any]:
    owner = "cohort" if is_queue else "parent"
    out: dict[str, Any] = {"name": name, "nominalQuota": canonical(quota.nominalQuota)}
    for field_name in ("borrowingLimit", "lendingLimit"):
        value = getattr(quota, field_name)
        if value is None:
            continue
        if not has_parent:
            raise entry.error(f"{field_name} needs a {owner}: without one there is nothing to borrow from or lend to",
                              path + (field_name,), f"set '{owner}' or remove {field_name}")
        out[field_name] = canonical(value)
    if is_queue and quota.lendingLimit is not None and \
            parse_quantity(quota.lendingLimit) > parse_quantity(quota.nominalQuota):
        raise entry.error("lendingLimit must be less than or equal to nominalQuota", path + ("lendingLimit",))
    return out


def missing_flavor(ctx: EnvContext, name: str) -> str:
    """`flavor 'x' does not exist; did you mean 'y'?` (the closest flavor defined for the environment)."""
    known = list(ctx.by_name("ResourceFlavor"))
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f"flavor {name!r} does not exist" + (
        f"; did you mean {close[0]!r}?" if close else f" in environment {ctx.name!r}; define a ResourceFlavor "
                                                      "with that name or fix the name")


def _known(names: dict[str, Any] | list[str]) -> str:
    return "known: " + (", ".join(names) if names else "none")


# --------------------------------------------------------------------------- cohorts


def _cohort_api(ctx: EnvContext, entry: Entry) -> tuple[str, str]:
    """Cohort objects exist from Kueue v0.9 (v1alpha1, `parent`); v1beta1 with `parentName` from v0.13."""
    if ctx.api == "v1beta2" or ctx.kueue_version >= (0, 13, 0):
        return ctx.kueue_api_version, "parentName"
    if ctx.kueue_version >= (0, 9, 0):
        return f"{KUEUE_GROUP}/v1alpha1", "parent"
    raise entry.error(f"Kueue {ctx.env.model.spec.kueueVersion} (environment {ctx.name!r}) has no Cohort API; "
                      "its cohorts are implicit (named by ClusterQueues)", (),
                      "limit this document to newer environments with metadata.environments")


def cohorts(ctx: EnvContext) -> list[Manifest]:
    out = []
    declared = ctx.by_name("Cohort")
    for entry in ctx.docs["Cohort"]:
        spec = entry.model.spec
        _check_cohort_cycle(entry, declared)
        api_version, parent_field = _cohort_api(ctx, entry)
        body = _drop_none({
            parent_field: spec.parent,
            "resourceGroups": resource_groups(ctx, entry, spec.quotas, spec.parent is not None, False) or None,
            "fairSharing": {"weight": canonical(spec.fairSharing.weight)} if spec.fairSharing else None,
        })
        manifest: Manifest = {"apiVersion": api_version, "kind": "Cohort",
                              "metadata": metadata(entry.name, "Cohort", entry)}
        if body:
            manifest["spec"] = body
        out.append(served(ctx, entry, manifest))
    return out


def _check_cohort_cycle(entry: Entry, declared: dict[str, Entry]) -> None:
    seen = [entry.name]
    parent = entry.model.spec.parent
    while parent is not None:
        if parent in seen:
            raise entry.error(f"cohort cycle: {' -> '.join(seen + [parent])}", ("parent",),
                              "Kueue deactivates every ClusterQueue in a cohort cycle")
        seen.append(parent)
        parent = declared[parent].model.spec.parent if parent in declared else None


# --------------------------------------------------------------------------- teams


class QueuePlan:
    """One ClusterQueue of a team: its fields (the entry's where it sets them, else the team's), and where each
    was written, for errors at the field."""

    def __init__(self, entry: Entry, spec: ClusterQueueEntry, index: int | None) -> None:
        self.entry, self.spec, self.index = entry, spec, index
        self.name = spec.name
        own = entry.model.spec.clusterQueues[index] if index is not None else None
        self._own = own.model_fields_set if own is not None else set()

    def path(self, *loc: str | int) -> tuple[str | int, ...]:
        """`loc` inside the entry of `clusterQueues` when the entry sets that field, else inside the team."""
        if self.index is not None and loc and loc[0] in self._own:
            return ("clusterQueues", self.index) + loc
        return loc

    def error(self, message: str, path: tuple[str | int, ...] = (), hint: str | None = None) -> KueueplanError:
        if self.index is not None and not path:
            return self.entry.error(message, ("clusterQueues", self.index), hint)
        return self.entry.error(message, self.path(*path), hint)


class TeamPlan:
    """A team's names in one environment: ClusterQueues, namespaces, LocalQueues per namespace."""

    def __init__(self, ctx: EnvContext, entry: Entry) -> None:
        self.entry = entry
        self.spec: TeamSpec = entry.model.spec
        specs = self.spec.queue_specs(entry.name)
        indexes: list[int | None] = list(range(len(specs))) if self.spec.clusterQueues is not None else [None]
        self.queues = [QueuePlan(entry, spec, i) for spec, i in zip(specs, indexes)]
        self.cluster_queue = self.queues[0].name
        # (name in this environment, NamespaceSpec or None for the default one named like the team)
        self.namespaces: list[tuple[str, NamespaceSpec | None]] = self._namespaces(ctx)
        self.namespace_names = [name for name, _ in self.namespaces]
        # spec name -> name in this environment (namespaceTemplate applied)
        self.base_namespaces = {(ns.name if ns else entry.name): name for name, ns in self.namespaces}
        # (LocalQueue name, namespaces it is created in, LocalQueueSpec or None for the default one, ClusterQueue)
        self.local_queues: list[tuple[str, list[str], LocalQueueSpec | None, str]] = self._local_queues()
        self.shares_namespaces = False  # set by team_plans: a namespace of this team is another team's too

    def _namespaces(self, ctx: EnvContext) -> list[tuple[str, NamespaceSpec | None]]:
        name = self.entry.name
        lend_only = self.spec.all_lend_only()
        if self.spec.namespaces is None:
            return [] if lend_only else [(ctx.namespace(name, name, self.entry, ("namespaces",)), None)]
        if lend_only and self.spec.namespaces:
            raise self.entry.error("a team whose ClusterQueues are all lendOnly has no namespaces: no workload "
                                   "can reach a queue that selects no namespace", ("namespaces",),
                                   "remove the namespaces, or give the team a queue that is not lendOnly")
        return [(ctx.namespace(ns.name, name, self.entry, ("namespaces", i)), ns)
                for i, ns in enumerate(self.spec.namespaces)]

    def _default_queue(self) -> QueuePlan | None:
        return next((q for q in self.queues if not q.spec.lendOnly), None)

    def _local_queues(self) -> list[tuple[str, list[str], LocalQueueSpec | None, str]]:
        default = self._default_queue()
        if self.spec.localQueues is None:
            return [] if default is None else [(self.entry.name, list(self.namespace_names), None, default.name)]
        out = []
        for i, lq in enumerate(self.spec.localQueues):
            where = list(self.namespace_names)
            if lq.namespaces is not None:
                for j, ns in enumerate(lq.namespaces):
                    if ns not in self.base_namespaces:
                        raise self.entry.error(f"namespace {ns!r} is not one of the team's namespaces",
                                               ("localQueues", i, "namespaces", j), _known(list(self.base_namespaces)))
                where = [self.base_namespaces[ns] for ns in lq.namespaces]
            out.append((lq.name, where, lq, self._target(i, lq, default)))
        return out

    def _target(self, i: int, lq: LocalQueueSpec, default: QueuePlan | None) -> str:
        """The ClusterQueue a LocalQueue points at: one of the team's, never a lend-only one."""
        names = [q.name for q in self.queues]
        if lq.clusterQueue is None:
            if default is None:
                raise self.entry.error("every ClusterQueue of the team is lendOnly: a LocalQueue has nothing to "
                                       "point at", ("localQueues", i), "remove the team's localQueues")
            return default.name
        queue = next((q for q in self.queues if q.name == lq.clusterQueue), None)
        if queue is None:
            message = f"ClusterQueue {lq.clusterQueue!r} is not one of team {self.entry.name!r}'s ClusterQueues"
            close = did_you_mean(lq.clusterQueue, names)
            raise self.entry.error(f"{message}; {close}" if close else message,
                                   ("localQueues", i, "clusterQueue"), _known(names))
        if queue.spec.lendOnly:
            raise self.entry.error(f"ClusterQueue {queue.name!r} is lendOnly: it selects no namespace, so a "
                                   "LocalQueue pointing at it could never admit anything",
                                   ("localQueues", i, "clusterQueue"), "point the LocalQueue at another queue")
        return queue.name

    def env_namespace(self, base: str | None) -> str | None:
        """The environment name of a team namespace written `base` (None: the team's first namespace)."""
        if base is None:
            return self.namespace_names[0] if self.namespace_names else None
        return self.base_namespaces.get(base)

    def queues_in(self, namespace: str) -> list[str]:
        return [name for name, where, _, _ in self.local_queues if namespace in where]


def team_plans(ctx: EnvContext) -> list[TeamPlan]:
    plans = [TeamPlan(ctx, entry) for entry in ctx.docs["Team"]]
    _check_queue_names(plans)
    listed: dict[str, list[tuple[TeamPlan, int, NamespaceSpec | None]]] = {}
    for plan in plans:
        for i, (ns, ns_spec) in enumerate(plan.namespaces):
            others = listed.setdefault(ns, [])
            if any(other is plan for other, _, _ in others):
                raise plan.entry.error(f"namespace {ns!r} is listed twice", ("namespaces", i))
            for other, j, other_spec in others:
                _check_shared_namespace(ns, plan, i, ns_spec, other, other_spec)
            others.append((plan, i, ns_spec))
    for teams in listed.values():
        if len(teams) > 1:
            for plan, _, _ in teams:
                plan.shares_namespaces = True
    _check_local_queue_names(plans)
    return plans


def _check_queue_names(plans: list[TeamPlan]) -> None:
    owner: dict[str, TeamPlan] = {}
    for plan in plans:
        for queue in plan.queues:
            other = owner.get(queue.name)
            if other is not None:
                whose = "also belongs to this team" if other is plan else f"already belongs to team {other.entry.name!r}"
                path = ("clusterQueues", queue.index, "name") if queue.index is not None else ("clusterQueue",)
                raise plan.entry.error(f"ClusterQueue {queue.name!r} {whose}", path,
                                       "give each ClusterQueue its own name")
            owner[queue.name] = plan


def _check_shared_namespace(ns: str, plan: TeamPlan, i: int, spec: NamespaceSpec | None, other: TeamPlan,
                            other_spec: NamespaceSpec | None) -> None:
    """Two teams may list one namespace; it is created once, so they must agree on how."""
    create, other_create = (spec.create if spec else True), (other_spec.create if other_spec else True)
    if create != other_create:
        raise plan.entry.error(f"namespace {ns!r} has create: {str(create).lower()} here and "
                               f"create: {str(other_create).lower()} in team {other.entry.name!r}",
                               ("namespaces", i, "create"), "a namespace shared by teams is created once: agree on "
                                                            "'create'")
    labels, other_labels = (spec.labels if spec else {}), (other_spec.labels if other_spec else {})
    for key, value in labels.items():
        if key in other_labels and other_labels[key] != value:
            raise plan.entry.error(f"namespace {ns!r} label {key}={value} conflicts with {key}="
                                   f"{other_labels[key]} in team {other.entry.name!r}",
                                   ("namespaces", i, "labels", key), "a namespace shared by teams has one set of "
                                                                     "labels: give the label one value")


def _check_local_queue_names(plans: list[TeamPlan]) -> None:
    seen: dict[tuple[str, str], TeamPlan] = {}
    for plan in plans:
        for i, (name, where, _, _) in enumerate(plan.local_queues):
            for ns in where:
                other = seen.get((ns, name))
                if other is not None:
                    also = "" if other is plan else f" (also by team {other.entry.name!r})"
                    raise plan.entry.error(f"LocalQueue {name!r} is defined twice in namespace {ns!r}{also}",
                                           ("localQueues", i))
                seen[(ns, name)] = plan


def namespaces(ctx: EnvContext, plans: list[TeamPlan]) -> list[Manifest]:
    """Each namespace once, in the order teams list them; a shared one carries every team's labels but no team
    label (it cannot name two teams)."""
    listed: dict[str, list[tuple[TeamPlan, NamespaceSpec | None]]] = {}
    for plan in plans:
        for name, ns_spec in plan.namespaces:
            listed.setdefault(name, []).append((plan, ns_spec))
    out = []
    for name, teams in listed.items():
        if any(ns_spec is not None and not ns_spec.create for _, ns_spec in teams):
            continue
        labels = {"kubernetes.io/metadata.name": name}
        if len(teams) == 1:
            labels[TEAM_LABEL] = teams[0][0].entry.name
        for _, ns_spec in teams:
            labels.update(ns_spec.labels if ns_spec is not None else {})
        out.append({"apiVersion": "v1", "kind": "Namespace",
                    "metadata": metadata(name, "Namespace", None, labels=labels)})
    return out


def cluster_queues(ctx: EnvContext, plans: list[TeamPlan]) -> list[Manifest]:
    return [_cluster_queue(ctx, plan, queue) for plan in plans for queue in plan.queues]


def _cluster_queue(ctx: EnvContext, plan: TeamPlan, queue: QueuePlan) -> Manifest:
    entry, spec = plan.entry, queue.spec
    _check_allowed_flavors(ctx, plan, queue)
    groups = resource_groups(ctx, entry, spec.quotas, spec.cohort is not None, True, queue.path("quotas"))
    body: dict[str, Any] = {}
    if spec.cohort is not None:
        body["cohortName" if ctx.api == "v1beta2" else "cohort"] = spec.cohort
    selector = _namespace_selector(plan, queue)
    if selector is not None:
        body["namespaceSelector"] = selector
    if spec.queueingStrategy is not None:
        body["queueingStrategy"] = spec.queueingStrategy
    body["resourceGroups"] = groups
    if spec.preemption is not None:
        body["preemption"] = _preemption(queue)
    if spec.flavorFungibility is not None:
        body["flavorFungibility"] = _fungibility(ctx, queue)
    body.update(_checks(ctx, queue))
    if spec.stopPolicy is not None:
        body["stopPolicy"] = spec.stopPolicy
    if spec.fairSharing is not None:
        body["fairSharing"] = {"weight": canonical(spec.fairSharing.weight)}
    return served(ctx, queue, {"apiVersion": ctx.kueue_api_version, "kind": "ClusterQueue",  # type: ignore[arg-type]
                               "metadata": metadata(queue.name, "ClusterQueue", entry), "spec": body})


def _namespace_selector(plan: TeamPlan, queue: QueuePlan) -> dict[str, Any] | None:
    """The queue's own selector; none for a lend-only queue (Kueue: a nil namespaceSelector selects no namespace,
    metav1.LabelSelectorAsSelector(nil) is labels.Nothing(), pkg/cache/scheduler/clusterqueue.go); else the
    team's namespaces: by the team label, or by name when some carry no team label (not created by kueueplan,
    or shared with another team)."""
    if queue.spec.lendOnly:
        if queue.spec.namespaceSelector is not None:
            raise queue.error("a lendOnly ClusterQueue has no namespaceSelector: it selects no namespace",
                              ("namespaceSelector",), "remove namespaceSelector or lendOnly")
        return None
    if queue.spec.namespaceSelector is not None:
        return _dump(queue.spec.namespaceSelector)
    unlabelled = [name for name, ns in plan.namespaces if ns is not None and not ns.create]
    return generated_selector(plan.entry.name, plan.namespace_names, bool(unlabelled or plan.shares_namespaces))


def generated_selector(team: str, namespaces: list[str], by_name: bool) -> dict[str, Any]:
    """The selector build writes for a team's queues: by the team label, or by name when some namespaces carry no
    team label (not created by kueueplan, or shared with another team). Import omits a selector equal to it."""
    if by_name:
        return {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In",
                                      "values": sorted(namespaces)}]}
    return {"matchLabels": {TEAM_LABEL: team}}


def _check_allowed_flavors(ctx: EnvContext, plan: TeamPlan, queue: QueuePlan) -> None:
    """Every flavor the team names exists; its quotas use only the flavors its list allows. The list is shared
    by all environments, so a flavor defined for another environment only may be listed."""
    allowed = plan.spec.flavors
    if allowed is None:
        return
    everywhere = {e.name for e in ctx.platform.entries["ResourceFlavor"]}
    for i, name in enumerate(allowed):
        if name not in everywhere:
            raise plan.entry.error(missing_flavor(ctx, name), ("flavors", i), _known(ctx.by_name("ResourceFlavor")))
    for i, quota in enumerate(queue.spec.quotas):
        if quota.flavor not in ctx.by_name("ResourceFlavor"):
            raise queue.error(missing_flavor(ctx, quota.flavor), ("quotas", i, "flavor"),
                              _known(ctx.by_name("ResourceFlavor")))
        if quota.flavor not in allowed:
            raise queue.error(f"the team may not use flavor {quota.flavor!r} (its 'flavors' allow "
                              f"{', '.join(allowed) or 'none'})", ("quotas", i, "flavor"))


def _preemption(queue: QueuePlan) -> dict[str, Any]:
    pre = queue.spec.preemption
    out: dict[str, Any] = _drop_none({"reclaimWithinCohort": pre.reclaimWithinCohort,
                                      "withinClusterQueue": pre.withinClusterQueue})
    if pre.borrowWithinCohort is not None:
        bwc = pre.borrowWithinCohort
        if bwc.policy != "Never" and (pre.reclaimWithinCohort or "Never") == "Never":
            raise queue.error("borrowWithinCohort needs reclaimWithinCohort other than Never (Kueue rejects "
                              "reclaimWithinCohort=Never with borrowWithinCohort.policy!=Never)",
                              ("preemption", "borrowWithinCohort", "policy"),
                              "set reclaimWithinCohort: LowerPriority or Any")
        out["borrowWithinCohort"] = _drop_none({"policy": bwc.policy, "maxPriorityThreshold": bwc.maxPriorityThreshold})
    return out


_TO_V1BETA1 = {"whenCanBorrow": {"MayStopSearch": "Borrow"}, "whenCanPreempt": {"MayStopSearch": "Preempt"}}
_TO_V1BETA2 = {"whenCanBorrow": {"Borrow": "MayStopSearch"}, "whenCanPreempt": {"Preempt": "MayStopSearch"}}


def _fungibility(ctx: EnvContext, queue: QueuePlan) -> dict[str, Any]:
    fung = _dump(queue.spec.flavorFungibility)
    table = _TO_V1BETA1 if ctx.api == "v1beta1" else _TO_V1BETA2
    for key, mapping in table.items():
        if key in fung:
            fung[key] = mapping.get(fung[key], fung[key])
    if "preference" in fung and not (fung.get("whenCanBorrow") == "TryNextFlavor"
                                     and fung.get("whenCanPreempt") == "TryNextFlavor"):
        raise queue.error("preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor",
                          ("flavorFungibility", "preference"))
    return fung


def _checks(ctx: EnvContext, queue: QueuePlan) -> dict[str, Any]:
    spec = queue.spec
    if not spec.admissionChecks:
        return {}
    known = ctx.by_name("AdmissionCheck")
    flavors = [q.flavor for q in spec.quotas]
    rules = []
    for i, check in enumerate(spec.admissionChecks):
        if check.name not in known:
            raise queue.error(f"unknown AdmissionCheck {check.name!r} in environment {ctx.name!r}",
                              ("admissionChecks", i, "name"), _known(known))
        for j, flavor in enumerate(check.onFlavors):
            if flavor not in flavors:
                raise queue.error(f"onFlavors names {flavor!r}, which is not one of the queue's quota flavors",
                                  ("admissionChecks", i, "onFlavors", j), _known(flavors))
        rule: dict[str, Any] = {"name": check.name}
        if check.onFlavors:
            rule["onFlavors"] = list(check.onFlavors)
        rules.append(rule)
    if len({r["name"] for r in rules}) != len(rules):
        raise queue.error("an admission check is listed twice", ("admissionChecks",))
    if ctx.api == "v1beta1" and all("onFlavors" not in r for r in rules):
        return {"admissionChecks": [r["name"] for r in rules]}
    return {"admissionChecksStrategy": {"admissionChecks": rules}}


def local_queues(ctx: EnvContext, plans: list[TeamPlan]) -> list[Manifest]:
    out = []
    for plan in plans:
        for name, where, lq, cluster_queue in plan.local_queues:
            for ns in where:
                body: dict[str, Any] = {"clusterQueue": cluster_queue}
                if lq is not None and lq.stopPolicy is not None:
                    body["stopPolicy"] = lq.stopPolicy
                if lq is not None and lq.fairSharing is not None:
                    body["fairSharing"] = {"weight": canonical(lq.fairSharing.weight)}
                out.append(served(ctx, plan.entry, {
                    "apiVersion": ctx.kueue_api_version, "kind": "LocalQueue",
                    "metadata": metadata(name, "LocalQueue", plan.entry, namespace=ns), "spec": body}))
    return out


def check_priorities(ctx: EnvContext) -> None:
    """Teams may only allow priorities that exist."""
    known = ctx.by_name("Priority")
    for entry in ctx.docs["Team"]:
        for i, name in enumerate(entry.model.spec.priorities or []):
            if name not in known:
                raise entry.error(f"unknown Priority {name!r} in environment {ctx.name!r}", ("priorities", i),
                                  _known(known))

