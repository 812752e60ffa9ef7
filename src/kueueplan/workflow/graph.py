"""The queue topology of a cluster as a renderer-neutral graph (Mermaid / DOT live in `report.graph`).

Nodes: ResourceFlavors, ClusterQueues (with their quotas), LocalQueues and namespaces, AdmissionChecks and what
stands behind them (MultiKueueConfig and its MultiKueueClusters, ProvisioningRequestConfig), and the Topologies
behind TAS flavors. Cohorts are groups that nest (a Cohort's parent), so renderers draw them as nested
subgraphs. Edges: ClusterQueue -> flavor (labelled with its quotas there), LocalQueue -> ClusterQueue,
namespace -> LocalQueue, ClusterQueue -> namespace for what a (non-empty) namespaceSelector selects,
ClusterQueue -> AdmissionCheck (labelled with its `onFlavors`), AdmissionCheck -> its parameters object,
MultiKueueConfig -> MultiKueueCluster and flavor -> Topology.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kueueplan.kube.objects import KUEUE_GROUP, Cluster, ClusterQueue, ResourceGroup, api_version_of, meta, \
    selector_matches
from kueueplan.workflow.quotas import amount_text


@dataclass
class Node:
    id: str
    kind: str  # ResourceFlavor, ClusterQueue, LocalQueue, Namespace, AdmissionCheck, Topology, MultiKueue...
    title: str
    lines: list[str] = field(default_factory=list)
    highlight: bool = False


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    label: str = ""
    dotted: bool = False
    highlight: bool = False


@dataclass
class Group:
    """A cohort: its ClusterQueue node ids and child cohorts."""

    id: str
    title: str
    lines: list[str] = field(default_factory=list)
    members: list[str] = field(default_factory=list)
    children: list["Group"] = field(default_factory=list)
    highlight: bool = False


@dataclass
class Topology:
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)  # root cohorts

    def grouped(self) -> set[str]:
        out: set[str] = set()
        stack = list(self.groups)
        while stack:
            g = stack.pop()
            out.update(g.members)
            stack.extend(g.children)
        return out


class _Ids:
    """Stable identifiers that every renderer accepts ([A-Za-z0-9_]), unique even when names sanitise alike."""

    def __init__(self) -> None:
        self._taken: dict[tuple[str, str], str] = {}
        self._used: set[str] = set()
        self._next: dict[str, int] = {}  # per base, the suffix to try first: n names alike cost n, not n²

    def __call__(self, prefix: str, name: str) -> str:
        key = (prefix, name)
        if key not in self._taken:
            base = f"{prefix}_{re.sub(r'[^A-Za-z0-9_]', '_', name)}"
            candidate, n = base, self._next.get(base, 2)
            while candidate in self._used:
                candidate, n = f"{base}_{n}", n + 1
            self._next[base] = n
            self._used.add(candidate)
            self._taken[key] = candidate
        return self._taken[key]


def quota_lines(groups: tuple[ResourceGroup, ...]) -> dict[str, str]:
    """flavor -> 'cpu 20, memory 64Gi (borrow ≤ 4)' for one owner's resource groups."""
    out: dict[str, str] = {}
    for group in groups:
        for flavor in group.flavors:
            parts = []
            for q in flavor.resources:
                text = f"{q.name} {amount_text(q.name, q.nominal_quota)}"
                extra = []
                if q.borrowing_limit is not None:
                    extra.append(f"borrow ≤ {amount_text(q.name, q.borrowing_limit, 'borrowing')}")
                if q.lending_limit is not None:
                    extra.append(f"lend ≤ {amount_text(q.name, q.lending_limit, 'lending')}")
                parts.append(f"{text} ({', '.join(extra)})" if extra else text)
            out[flavor.name] = ", ".join(parts)
    return out


def _cq_lines(cq: ClusterQueue) -> list[str]:
    lines = []
    if cq.namespace_selector is not None and not cq.namespace_selector.match_labels \
            and not cq.namespace_selector.match_expressions:
        lines.append("namespaces: all")
    elif cq.namespace_selector is None:
        lines.append("namespaces: none")
    if cq.stop_policy != "None":
        lines.append(f"stopPolicy: {cq.stop_policy}")
    return lines


def build_topology(cluster: Cluster, changed: dict[str, list[str]] | None = None,
                   changed_flavors: dict[str, set[str]] | None = None) -> Topology:
    """The graph of `cluster`. `changed` maps a ClusterQueue or Cohort name to lines describing its quota changes;
    those nodes are highlighted and the lines shown. `changed_flavors` (owner -> flavors) picks the flavor edges
    to highlight; without it every flavor edge of a changed queue is."""
    changed = changed or {}
    ids = _Ids()
    topo = Topology()
    for name in sorted(cluster.resource_flavors):
        topo.nodes[ids("flavor", name)] = Node(ids("flavor", name), "ResourceFlavor", f"ResourceFlavor {name}")
    for name, cq in sorted(cluster.cluster_queues.items()):
        node_id = ids("cq", name)
        topo.nodes[node_id] = Node(node_id, "ClusterQueue", f"ClusterQueue {name}",
                                   _cq_lines(cq) + changed.get(name, []), highlight=name in changed)
        for flavor, text in quota_lines(cq.resource_groups).items():
            if ids("flavor", flavor) not in topo.nodes:  # referenced but not defined: still draw it
                topo.nodes[ids("flavor", flavor)] = Node(ids("flavor", flavor), "ResourceFlavor",
                                                         f"ResourceFlavor {flavor}", ["(not defined)"])
            hot = name in changed and (changed_flavors is None or flavor in changed_flavors.get(name, set()))
            topo.edges.append(Edge(node_id, ids("flavor", flavor), text, highlight=hot))
    _add_namespaces(cluster, topo, ids)
    _add_admission_checks(cluster, topo, ids)
    _add_topologies(cluster, topo, ids)
    topo.groups = _cohort_groups(cluster, ids, changed)
    return topo


# Kueue kinds kube.objects does not model: read from `Cluster.other` for drawing only.
EXTRA_KINDS = ("Topology", "MultiKueueConfig", "MultiKueueCluster")


def kueue_others(cluster: Cluster, kind: str) -> dict[str, Mapping[str, Any]]:
    """name -> manifest of the Kueue objects of `kind` that `Cluster` keeps unmodelled (in `other`)."""
    out: dict[str, Mapping[str, Any]] = {}
    for data in cluster.other:
        if isinstance(data, Mapping) and data.get("kind") == kind and api_version_of(data)[0] == KUEUE_GROUP:
            name = meta(data).get("name")
            if isinstance(name, str) and name:
                out[name] = data
    return out


def _spec(data: Mapping[str, Any] | None) -> Mapping[str, Any]:
    spec = data.get("spec") if data is not None else None
    return spec if isinstance(spec, Mapping) else {}


def _names(value: Any) -> list[str]:
    """A list of names as strings (any other shape, which the schema layer reports, as none)."""
    return [str(v) for v in value if isinstance(v, (str, int))] if isinstance(value, list) else []


def _ensure(topo: Topology, node_id: str, kind: str, name: str, lines: list[str] | None = None) -> None:
    """Add a node once; a referenced object that is not defined is still drawn, and says so."""
    if node_id not in topo.nodes:
        topo.nodes[node_id] = Node(node_id, kind, f"{kind} {name}", ["(not defined)"] if lines is None else lines)


def _add_admission_checks(cluster: Cluster, topo: Topology, ids: _Ids) -> None:
    for name, ac in sorted(cluster.admission_checks.items()):
        _ensure(topo, ids("ac", name), "AdmissionCheck", name, [f"controller: {ac.controller_name}"])
    for name, cq in sorted(cluster.cluster_queues.items()):
        for rule in cq.admission_checks:
            _ensure(topo, ids("ac", rule.name), "AdmissionCheck", rule.name)
            label = f"onFlavors: {', '.join(rule.on_flavors)}" if rule.on_flavors else ""
            topo.edges.append(Edge(ids("cq", name), ids("ac", rule.name), label))
    configs = kueue_others(cluster, "MultiKueueConfig")
    clusters = kueue_others(cluster, "MultiKueueCluster")
    for name, cfg in sorted(configs.items()):
        _ensure(topo, ids("mkconfig", name), "MultiKueueConfig", name, [])
        for worker in _names(_spec(cfg).get("clusters")):
            spec = _spec(clusters.get(worker))
            where = spec.get("clusterSource") or spec.get("kubeConfig")  # v1beta2 / v1beta1
            _ensure(topo, ids("mkcluster", worker), "MultiKueueCluster", worker,
                    None if worker not in clusters else _cluster_lines(where))
            topo.edges.append(Edge(ids("mkconfig", name), ids("mkcluster", worker)))
    for name, ac in sorted(cluster.admission_checks.items()):
        params = dict(ac.parameters)
        target = params.get("name")
        if not target:
            continue
        if params.get("kind") == "MultiKueueConfig":
            _ensure(topo, ids("mkconfig", target), "MultiKueueConfig", target)
            topo.edges.append(Edge(ids("ac", name), ids("mkconfig", target), "parameters"))
        elif params.get("kind") == "ProvisioningRequestConfig":
            prc = cluster.provisioning_request_configs.get(target)
            _ensure(topo, ids("provconfig", target), "ProvisioningRequestConfig", target,
                    None if prc is None else [f"class: {prc.provisioning_class_name}"])
            topo.edges.append(Edge(ids("ac", name), ids("provconfig", target), "parameters"))


def _cluster_lines(source: Any) -> list[str]:
    """Where a MultiKueueCluster's kubeconfig comes from (v1beta2 clusterSource.kubeConfig, v1beta1 kubeConfig)."""
    kubeconfig = source.get("kubeConfig", source) if isinstance(source, Mapping) else None
    if not isinstance(kubeconfig, Mapping) or not kubeconfig.get("location"):
        return []
    return [f"kubeconfig: {kubeconfig.get('locationType') or 'Secret'} {kubeconfig['location']}"]


def _add_topologies(cluster: Cluster, topo: Topology, ids: _Ids) -> None:
    topologies = kueue_others(cluster, "Topology")
    for name, data in sorted(topologies.items()):
        raw = _spec(data).get("levels")
        levels = [str(lv.get("nodeLabel")) for lv in (raw if isinstance(raw, list) else []) if isinstance(lv, Mapping)]
        _ensure(topo, ids("topology", name), "Topology", name, [" > ".join(levels)] if levels else [])
    for name, flavor in sorted(cluster.resource_flavors.items()):
        if flavor.topology_name:
            _ensure(topo, ids("topology", flavor.topology_name), "Topology", flavor.topology_name)
            topo.edges.append(Edge(ids("flavor", name), ids("topology", flavor.topology_name), "topologyName"))


def _add_namespaces(cluster: Cluster, topo: Topology, ids: _Ids) -> None:
    names = set(cluster.namespaces) | {ns for ns, _ in cluster.local_queues}
    for ns in sorted(names):
        topo.nodes[ids("ns", ns)] = Node(ids("ns", ns), "Namespace", f"Namespace {ns}")
    for (ns, name), lq in sorted(cluster.local_queues.items()):
        node_id = ids("lq", f"{ns}/{name}")
        topo.nodes[node_id] = Node(node_id, "LocalQueue", f"LocalQueue {ns}/{name}")
        topo.edges.append(Edge(ids("ns", ns), node_id))
        cq = cluster.cluster_queues.get(lq.cluster_queue)
        if cq is None:
            topo.nodes[node_id].lines.append(f"ClusterQueue {lq.cluster_queue} not defined")
            continue
        labels = cluster.namespace_labels(ns) or {"kubernetes.io/metadata.name": ns}
        admitted = selector_matches(cq.namespace_selector, labels)
        topo.edges.append(Edge(node_id, ids("cq", cq.name), "" if admitted else "namespace not selected",
                               dotted=not admitted))
    labels_of = {ns: cluster.namespace_labels(ns) or {"kubernetes.io/metadata.name": ns} for ns in names}
    by_pair: dict[tuple[str, str], set[str]] = {}
    for ns, labels in labels_of.items():
        for pair in labels.items():
            by_pair.setdefault(pair, set()).add(ns)
    for name, cq in sorted(cluster.cluster_queues.items()):
        sel = cq.namespace_selector
        if sel is None or (not sel.match_labels and not sel.match_expressions):
            continue  # "none" / "all" is shown on the queue itself
        # matchLabels narrow the candidates through the index (platforms have thousands of namespaces).
        candidates = set(names)
        for pair in sel.match_labels:
            candidates &= by_pair.get(pair, set())
        for ns in sorted(candidates):
            if selector_matches(sel, labels_of[ns]):
                topo.edges.append(Edge(ids("cq", name), ids("ns", ns), "selects", dotted=True))


def _cohort_groups(cluster: Cluster, ids: _Ids, changed: dict[str, list[str]]) -> list[Group]:
    parent: dict[str, str | None] = {}
    for cq in cluster.cluster_queues.values():
        if cq.cohort_name:
            parent.setdefault(cq.cohort_name, None)
    for name, cohort in cluster.cohorts.items():
        parent[name] = cohort.parent_name
        if cohort.parent_name:
            parent.setdefault(cohort.parent_name, None)
    groups = {}
    for name in sorted(parent):
        cohort = cluster.cohorts.get(name)
        lines = [f"{flavor}: {text}" for flavor, text in quota_lines(cohort.resource_groups).items()] if cohort else []
        groups[name] = Group(ids("cohort", name), f"Cohort {name}", lines + changed.get(name, []),
                             highlight=name in changed)
    for name, cq in sorted(cluster.cluster_queues.items()):
        if cq.cohort_name:
            groups[cq.cohort_name].members.append(ids("cq", name))
    roots = []
    for name in sorted(parent):
        # A cycle in the cohort tree is a validation error; draw such cohorts as roots rather than loop here.
        if parent[name] and parent[name] in groups and not _in_cycle(name, parent):
            groups[parent[name]].children.append(groups[name])
        else:
            roots.append(groups[name])
    return roots


def _in_cycle(name: str, parent: dict[str, str | None]) -> bool:
    seen = {name}
    current = parent.get(name)
    while current:
        if current in seen:
            return True
        seen.add(current)
        current = parent.get(current)
    return False


def _root(cohort: str | None, parent: dict[str, str | None]) -> str | None:
    seen: set[str] = set()
    while cohort is not None and parent.get(cohort) and cohort not in seen:
        seen.add(cohort)
        cohort = parent[cohort]
    return cohort


def _ancestors(cohort: str | None, parent: dict[str, str | None]) -> set[str]:
    out: set[str] = set()
    while cohort is not None and cohort not in out:
        out.add(cohort)
        cohort = parent.get(cohort)
    return out


def focus(cluster: Cluster, changed: set[str], limit: int = 40) -> Cluster:
    """The part of `cluster` around the changed ClusterQueues/Cohorts, for a diagram that stays readable (and
    within a PR comment's size): their whole cohort trees with LocalQueues, namespaces and flavors; when that is
    more than `limit` ClusterQueues, only the changed queues and the cohorts above them."""
    parent = {name: c.parent_name for name, c in cluster.cohorts.items()}
    roots = {_root(cluster.cluster_queues[n].cohort_name, parent) for n in changed if n in cluster.cluster_queues}
    roots |= {_root(n, parent) for n in changed if n in cluster.cohorts}
    roots.discard(None)
    queues = {n for n, cq in cluster.cluster_queues.items()
              if n in changed or (cq.cohort_name and _root(cq.cohort_name, parent) in roots)}
    if len(queues) > limit:
        queues = {n for n in queues if n in changed}
    cohorts: set[str] = set()
    for n in queues:
        cohorts |= _ancestors(cluster.cluster_queues[n].cohort_name, parent)
    for n in changed & set(cluster.cohorts):
        cohorts |= _ancestors(n, parent)
    out = Cluster()
    out.cluster_queues = {n: cq for n, cq in cluster.cluster_queues.items() if n in queues}
    out.cohorts = {n: c for n, c in cluster.cohorts.items() if n in cohorts}
    out.local_queues = {k: lq for k, lq in cluster.local_queues.items() if lq.cluster_queue in queues}
    spaces = {ns for ns, _ in out.local_queues}
    out.namespaces = {n: ns for n, ns in cluster.namespaces.items() if n in spaces}
    used = {f.name for owner in [*out.cluster_queues.values(), *out.cohorts.values()]
            for g in owner.resource_groups for f in g.flavors}
    out.resource_flavors = {n: f for n, f in cluster.resource_flavors.items() if n in used}
    checks = {r.name for cq in out.cluster_queues.values() for r in cq.admission_checks}
    out.admission_checks = {n: ac for n, ac in cluster.admission_checks.items() if n in checks}
    out.provisioning_request_configs = dict(cluster.provisioning_request_configs)
    out.other = _reachable_extras(cluster, out)
    return out


def _reachable_extras(cluster: Cluster, out: Cluster) -> list[Mapping[str, Any]]:
    """The Topologies behind the kept flavors and the MultiKueue objects behind the kept checks."""
    topologies = {f.topology_name for f in out.resource_flavors.values() if f.topology_name}
    configs = {dict(ac.parameters).get("name") for ac in out.admission_checks.values()
               if dict(ac.parameters).get("kind") == "MultiKueueConfig"}
    all_configs = kueue_others(cluster, "MultiKueueConfig")
    workers = {w for c in configs if c in all_configs for w in _names(_spec(all_configs[c]).get("clusters"))}
    keep = {("Topology", n) for n in topologies} | {("MultiKueueConfig", n) for n in configs if n} \
        | {("MultiKueueCluster", n) for n in workers}
    return [d for kind in EXTRA_KINDS for n, d in kueue_others(cluster, kind).items() if (kind, n) in keep]
