"""The quota tree: ClusterQueues and cohorts with per-(flavor, resource) quota and usage.

Mirrors Kueue's pkg/cache/scheduler/resource_node.go (semantics doc §2.3): SubtreeQuota, localQuota,
Usage that only spills the overflow above a child's guaranteed part into its parent, `available`,
`potential_available`, and the borrowing height of pkg/scheduler/preemption/classical.
Amounts are ints in Kueue units; absent limits are None.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator

from kueueplan.kube.objects import Cluster, ClusterQueue, ResourceGroup

FR = tuple[str, str]  # (flavor, resource)


@dataclass
class Quota:
    nominal: int = 0
    borrowing_limit: int | None = None
    lending_limit: int | None = None


@dataclass(eq=False)
class Node:
    """A ClusterQueue (is_cq) or a cohort (object or implicit)."""

    name: str
    is_cq: bool
    parent: "Node | None" = None
    quotas: dict[FR, Quota] = field(default_factory=dict)
    subtree: dict[FR, int] = field(default_factory=dict)
    usage: dict[FR, int] = field(default_factory=dict)
    child_cqs: list["Node"] = field(default_factory=list)
    child_cohorts: list["Node"] = field(default_factory=list)
    height: int = 0
    flat: bool = False  # a root cohort whose children are all ClusterQueues without lending limits
    lending: dict[FR, int] = field(default_factory=dict)  # lending limits, only where set
    borrowing: dict[FR, int] = field(default_factory=dict)  # borrowing limits, only where set

    def set_quotas(self, quotas: dict[FR, Quota]) -> None:
        self.quotas = quotas
        self.lending = {fr: q.lending_limit for fr, q in quotas.items() if q.lending_limit is not None}
        self.borrowing = {fr: q.borrowing_limit for fr, q in quotas.items() if q.borrowing_limit is not None}

    def __repr__(self) -> str:
        return f"{'CQ' if self.is_cq else 'Cohort'}({self.name})"

    # -- quota arithmetic (resource_node.go) ---------------------------------

    def local_quota(self, fr: FR) -> int:
        ll = self.lending.get(fr)
        if ll is None:
            return 0
        return max(0, self.subtree.get(fr, 0) - ll)

    def local_available(self, fr: FR) -> int:
        ll = self.lending.get(fr)
        if ll is None:
            return 0
        return max(0, max(0, self.subtree.get(fr, 0) - ll) - self.usage.get(fr, 0))

    def available(self, fr: FR) -> int:
        # Iterative form of resource_node.go `available`: walk to the root, then fold back down.
        path = []
        node: Node | None = self
        while node is not None:
            path.append(node)
            node = node.parent
        root = path[-1]
        avail = root.subtree.get(fr, 0) - root.usage.get(fr, 0)
        for n in reversed(path[:-1]):
            bl = n.borrowing.get(fr)
            if bl is not None:
                lq = n.local_quota(fr)
                stored = n.subtree.get(fr, 0) - lq
                used = max(0, n.usage.get(fr, 0) - lq)
                avail = min(stored - used + bl, avail)
            avail = n.local_available(fr) + avail
        return avail

    def cq_available(self, fr: FR) -> int:
        """ClusterQueueSnapshot.Available: clamped at zero."""
        return max(0, self.available(fr))

    def potential_available(self, fr: FR) -> int:
        if self.parent is None:
            return self.subtree.get(fr, 0)
        avail = self.local_quota(fr) + self.parent.potential_available(fr)
        bl = self.borrowing.get(fr)
        if bl is not None:
            avail = min(self.subtree.get(fr, 0) + bl, avail)
        return avail

    # add_usages/remove_usages walk up the tree themselves, local_available/local_quota inline: they are the
    # hottest loops of a run (every admission, release, preemption trial and temporary reservation).
    def add_usages(self, usage: dict[FR, int]) -> None:
        for fr, val in usage.items():
            node: Node | None = self
            while node is not None:
                used = node.usage.get(fr, 0)
                ll = node.lending.get(fr) if node.lending else None  # most nodes have no lending limits
                local_available = 0 if ll is None else max(0, max(0, node.subtree.get(fr, 0) - ll) - used)
                node.usage[fr] = used + val
                if val <= local_available:
                    break
                val -= local_available
                node = node.parent

    def remove_usages(self, usage: dict[FR, int]) -> None:
        for fr, val in usage.items():
            node: Node | None = self
            while node is not None:
                used = node.usage.get(fr, 0)
                ll = node.lending.get(fr) if node.lending else None
                stored_in_parent = used if ll is None else used - max(0, node.subtree.get(fr, 0) - ll)
                node.usage[fr] = used - val
                if stored_in_parent <= 0:
                    break
                if stored_in_parent < val:  # min(), without the call
                    val = stored_in_parent
                node = node.parent

    def borrowing_with(self, fr: FR, val: int) -> bool:
        return self.usage.get(fr, 0) + val > self.subtree.get(fr, 0)

    def is_borrowing(self, fr: FR) -> bool:
        return self.borrowing_with(fr, 0)

    def within_nominal_in(self, frs: Iterable[FR]) -> bool:
        subtree, usage = self.subtree, self.usage
        for fr in frs:  # a plain loop: called for every queue of a cohort on each preemption search
            if subtree.get(fr, 0) < usage.get(fr, 0):
                return False
        return True

    def quantities_fit_in_quota(self, requests: dict[FR, int]) -> tuple[bool, dict[FR, int]]:
        fits = True
        remaining = {}
        for fr, v in requests.items():
            if self.subtree.get(fr, 0) < self.usage.get(fr, 0) + v:
                fits = False
            remaining[fr] = max(0, v - self.local_available(fr))
        return fits, remaining

    def path_parent_to_root(self) -> Iterator["Node"]:
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def root(self) -> "Node":
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    def nominal(self, fr: FR) -> int:
        q = self.quotas.get(fr)
        return q.nominal if q is not None else 0

    def subtree_nodes(self) -> Iterator["Node"]:
        yield self
        for c in self.child_cohorts:
            yield from c.subtree_nodes()
        for c in self.child_cqs:
            yield c

    def subtree_cqs(self) -> Iterator["Node"]:
        for n in self.subtree_nodes():
            if n.is_cq:
                yield n


def flat_available(node: Node, fr: FR) -> int:
    """Node.available (before ClusterQueueSnapshot's clamp at zero) of a ClusterQueue alone (nominal - usage)
    or in a flat cohort (the root's free quota, capped by nominal + borrowing limit - usage), in O(1)."""
    used, nominal = node.usage.get(fr, 0), node.subtree.get(fr, 0)
    root = node.parent
    if root is None:
        return nominal - used
    room = root.subtree.get(fr, 0) - root.usage.get(fr, 0)
    limit = node.borrowing.get(fr)
    if limit is not None and nominal + limit - used < room:
        return nominal + limit - used
    return room


def flat_height(node: Node, fr: FR, used: int) -> int:
    """find_height_of_lowest_subtree_that_fits of a ClusterQueue alone or in a flat cohort, in O(1), where its
    usage with the request would be `used`: 0 within nominal quota or alone, else the root's (the whole tree)."""
    root = node.parent
    return 0 if root is None or used <= node.subtree.get(fr, 0) else root.height


def find_height_of_lowest_subtree_that_fits(cq: Node, fr: FR, val: int) -> tuple[int, bool]:
    """Borrowing level (semantics §2.4) and whether a smaller subtree than the whole tree fits."""
    if not cq.borrowing_with(fr, val) or cq.parent is None:
        return 0, cq.parent is not None
    remaining = val - cq.local_available(fr)
    for node in cq.path_parent_to_root():
        if not node.borrowing_with(fr, remaining):
            return node.height, node.parent is not None
        remaining -= node.local_available(fr)
    return cq.root().height, False


def _quotas(groups: tuple[ResourceGroup, ...]) -> dict[FR, Quota]:
    out: dict[FR, Quota] = {}
    for g in groups:
        for f in g.flavors:
            for r in f.resources:
                out[(f.name, r.name)] = Quota(r.nominal_quota, r.borrowing_limit, r.lending_limit)
    return out


@dataclass
class QuotaTree:
    cqs: dict[str, Node]
    cohorts: dict[str, Node]
    cyclic: set[str]  # CQ names inside a cohort cycle (inactive, reason HasCycle)

    def cq(self, name: str) -> Node | None:
        return self.cqs.get(name)


def build_tree(cluster: Cluster) -> QuotaTree:
    """Build the tree (without usage) from the cluster's ClusterQueues and Cohorts."""
    cohorts: dict[str, Node] = {}

    def cohort(name: str) -> Node:
        node = cohorts.get(name)
        if node is None:
            node = cohorts[name] = Node(name, False)
            obj = cluster.cohorts.get(name)
            if obj is not None:
                node.set_quotas(_quotas(obj.resource_groups))
        return node

    for name in sorted(cluster.cohorts):
        cohort(name)
    parent_of: dict[str, str | None] = {n: o.parent_name for n, o in cluster.cohorts.items()}
    cyclic_cohorts = _cycles(parent_of)
    for name in sorted(cluster.cohorts):
        p = parent_of.get(name)
        if p and name not in cyclic_cohorts:
            node, parent = cohort(name), cohort(p)
            node.parent = parent
            parent.child_cohorts.append(node)
    cqs: dict[str, Node] = {}
    cyclic_cqs: set[str] = set()
    for name in sorted(cluster.cluster_queues):
        obj: ClusterQueue = cluster.cluster_queues[name]
        node = Node(name, True)
        node.set_quotas(_quotas(obj.resource_groups))
        cqs[name] = node
        if obj.cohort_name:
            if obj.cohort_name in cyclic_cohorts:
                cyclic_cqs.add(name)
                continue
            parent = cohort(obj.cohort_name)
            node.parent = parent
            parent.child_cqs.append(node)
    for node in cqs.values():
        node.subtree = {fr: q.nominal for fr, q in node.quotas.items()}
    for node in cohorts.values():
        if node.parent is None:
            _update_cohort(node)
            node.flat = not node.child_cohorts and not any(c.lending for c in node.child_cqs)
    return QuotaTree(cqs, cohorts, cyclic_cqs)


def _cycles(parent_of: dict[str, str | None]) -> set[str]:
    cyclic: set[str] = set()
    for start in parent_of:
        seen: list[str] = []
        node: str | None = start
        while node is not None and node not in seen:
            seen.append(node)
            node = parent_of.get(node)
        if node is not None and node in seen:
            cyclic.update(seen[seen.index(node):])
    # Anything whose ancestry reaches a cycle is part of the broken tree too.
    for start in parent_of:
        node = start
        path = []
        while node is not None and node not in cyclic and node not in path:
            path.append(node)
            node = parent_of.get(node)
        if node in cyclic:
            cyclic.update(path)
    return cyclic


def _update_cohort(node: Node) -> None:
    node.subtree = {fr: q.nominal for fr, q in node.quotas.items()}
    height = min(len(node.child_cqs) + len(node.child_cohorts), 1)
    for child in node.child_cohorts:
        _update_cohort(child)
        height = max(height, child.height + 1)
        _accumulate(node, child)
    for child in node.child_cqs:
        _accumulate(node, child)
    node.height = height


def _accumulate(parent: Node, child: Node) -> None:
    for fr, q in child.subtree.items():
        parent.subtree[fr] = parent.subtree.get(fr, 0) + q - child.local_quota(fr)
