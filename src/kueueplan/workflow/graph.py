"""The queue topology of a cluster as a renderer-neutral graph (Mermaid / DOT live in `report.graph`).

Nodes: ResourceFlavors, ClusterQueues (with their quotas), LocalQueues and namespaces. Cohorts are
groups that nest (a Cohort's parent), so renderers draw them as nested subgraphs. Edges: ClusterQueue ->
flavor (labelled with its quotas there), LocalQueue -> ClusterQueue, namespace -> LocalQueue, and
ClusterQueue -> namespace for what a (non-empty) namespaceSelector selects.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kueueplan.kube.objects import Cluster, ClusterQueue, ResourceGroup, selector_matches
from kueueplan.workflow.quotas import amount_text


@dataclass
class Node:
    id: str
    kind: str  # ResourceFlavor, ClusterQueue, LocalQueue, Namespace
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

    def __call__(self, prefix: str, name: str) -> str:
        key = (prefix, name)
        if key not in self._taken:
            base = f"{prefix}_{re.sub(r'[^A-Za-z0-9_]', '_', name)}"
            candidate, n = base, 2
            while candidate in self._used:
                candidate, n = f"{base}_{n}", n + 1
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
    topo.groups = _cohort_groups(cluster, ids, changed)
    return topo


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
    return out
