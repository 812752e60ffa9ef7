"""Fair sharing (scenario `spec.fairSharing`), after Kueue's fair_sharing.go, fair_sharing_iterator.go and
pkg/scheduler/preemption/fairsharing (semantics doc §8 and §6.4).

- Dominant resource share (DRS) per node: borrowed amount over what the parent could lend, x1000, divided by
  the node's `fairSharing.weight`.
- Admission order: a tournament from each cohort root; non-borrowing entries first, then lower DRS after
  admission, higher priority, older timestamp. Kueue picks the first cohort tree in Go map order; here the
  trees are visited in ClusterQueue name order, so runs are deterministic.
- Preemption: candidates from the preemptor's CQ (withinClusterQueue) and from every borrowing CQ of the
  tree (reclaimWithinCohort); target CQs chosen by highest DRS; strategies LessThanOrEqualToFinalShare /
  LessThanInitialShare; then the minimal set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Iterator

from kueueplan.kube.objects import ClusterQueue, NEVER
from kueueplan.simulate.preemption import (IN_CLUSTER_QUEUE, IN_COHORT_FAIR_SHARING, IN_COHORT_RECLAMATION, Target,
                                           candidates_order_key, possibility, satisfies_policy)
from kueueplan.simulate.resource_node import FR, Node
from kueueplan.simulate.workload import SimWorkload

if TYPE_CHECKING:
    from kueueplan.simulate.context import SchedulingContext as Simulation
    from kueueplan.simulate.entry import Entry

LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = "LessThanOrEqualToFinalShare"
LESS_THAN_INITIAL_SHARE = "LessThanInitialShare"


@dataclass(frozen=True)
class DRS:
    weight: float = 1.0
    ratio: float = 0.0
    resource: str = ""
    borrowing: bool = False
    borrowed_frs: tuple[FR, ...] = ()

    def share(self) -> float:
        if self.ratio == 0:
            return 0.0
        if self.weight == 0:
            return math.inf
        return self.ratio / self.weight

    def zero_weight_borrows(self) -> bool:
        return self.weight == 0 and self.ratio != 0

    def borrowing_on(self, requested: dict[FR, int]) -> bool:
        return any(requested.get(fr, 0) > 0 for fr in self.borrowed_frs)


NEGATIVE = DRS(ratio=-1.0)


def compare(a: DRS, b: DRS) -> int:
    """CompareDRS."""
    if a.zero_weight_borrows() and b.zero_weight_borrows():
        return (a.ratio > b.ratio) - (a.ratio < b.ratio)
    if a.zero_weight_borrows():
        return 1
    if b.zero_weight_borrows():
        return -1
    x, y = a.share(), b.share()
    return (x > y) - (x < y)


def weight_of(sim: "Simulation", node: Node) -> float:
    obj = sim.cluster.cluster_queues.get(node.name) if node.is_cq else sim.cluster.cohorts.get(node.name)
    w: Fraction | None = getattr(obj, "fair_sharing_weight", None) if obj is not None else None
    return 1.0 if w is None else float(w)


def dominant_resource_share(sim: "Simulation", node: Node, extra: dict[FR, int] | None = None) -> DRS:
    weight = weight_of(sim, node)
    if node.parent is None:
        return DRS(weight)
    extra = extra or {}
    borrowed: dict[str, int] = {}
    frs = []
    for fr, quota in sorted(node.subtree.items()):
        amount = extra.get(fr, 0) + node.usage.get(fr, 0) - quota
        if amount > 0:
            borrowed[fr[1]] = borrowed.get(fr[1], 0) + amount
            frs.append(fr)
    if not borrowed:
        return DRS(weight)
    root = node.root()
    lendable: dict[str, int] = {}
    for fr in root.subtree:
        lendable[fr[1]] = lendable.get(fr[1], 0) + node.parent.potential_available(fr)
    ratio, resource = 0.0, ""
    for r in sorted(borrowed):
        lr = lendable.get(r, 0)
        if lr > 0:
            value = borrowed[r] * 1000.0 / lr
            if value > ratio or (value == ratio and r < resource):
                ratio, resource = value, r
    return DRS(weight, ratio, resource, True, tuple(frs))


# ------------------------------------------------------------------ admission order


def order_entries(sim: "Simulation", entries: list["Entry"]) -> Iterator["Entry"]:
    """The fair-sharing iterator; lazy, because DRS values are recomputed after each processed entry."""
    by_cq = {e.cq: e for e in entries}
    while by_cq:
        name = sorted(by_cq)[0]
        node = sim.tree.cqs[name]
        if node.parent is None:
            yield by_cq.pop(name)
            continue
        root = node.root()
        values, requested = _compute(sim, root, by_cq)
        best = _tournament(root, by_cq, values, requested, sim.config.priority_sorting)
        assert best is not None
        del by_cq[best.cq]
        yield best


def _compute(sim: "Simulation", root: Node, by_cq: dict[str, "Entry"]) -> tuple[dict, dict]:
    values: dict[tuple[str, str], DRS] = {}
    requested: dict[str, dict[FR, int]] = {}
    for cq in root.subtree_cqs():
        e = by_cq.get(cq.name)
        if e is None or e.assignment is None:
            continue
        usage = e.assignment.usage
        cq.add_usages(usage)
        requested[e.wl.key] = usage
        drs = dominant_resource_share(sim, cq)
        for anc in cq.path_parent_to_root():
            values[(anc.name, e.wl.key)] = drs
            drs = dominant_resource_share(sim, anc)
        cq.remove_usages(usage)
    return values, requested


def _less(a: "Entry", b: "Entry", parent: str, values: dict, requested: dict, by_priority: bool = True) -> bool:
    da, db = values.get((parent, a.wl.key), DRS()), values.get((parent, b.wl.key), DRS())
    ba, bb = da.borrowing_on(requested.get(a.wl.key, {})), db.borrowing_on(requested.get(b.wl.key, {}))
    if ba != bb:
        return not ba
    c = compare(da, db)
    if c != 0:
        return c < 0
    if by_priority and a.wl.priority != b.wl.priority:  # gated by PrioritySortingWithinCohort
        return a.wl.priority > b.wl.priority
    return (a.wl.queue_ts, a.wl.seq) < (b.wl.queue_ts, b.wl.seq)


def _tournament(cohort: Node, by_cq: dict[str, "Entry"], values: dict, requested: dict,
                by_priority: bool = True) -> "Entry | None":
    candidates = []
    for child in cohort.child_cohorts:
        winner = _tournament(child, by_cq, values, requested, by_priority)
        if winner is not None:
            candidates.append(winner)
    for child in cohort.child_cqs:
        if child.name in by_cq:
            candidates.append(by_cq[child.name])
    if not candidates:
        return None
    best = candidates[0]
    for cur in candidates[1:]:
        if _less(cur, best, cohort.name, values, requested, by_priority):
            best = cur
    return best


# ------------------------------------------------------------------ preemption


@dataclass
class _Ordering:
    sim: "Simulation"
    preemptor_cq: Node
    by_cq: dict[str, list[SimWorkload]]
    pruned_cqs: set[str] = field(default_factory=set)
    pruned_cohorts: set[str] = field(default_factory=set)

    def ancestors(self) -> set[str]:
        return {n.name for n in self.preemptor_cq.path_parent_to_root()}

    def has(self, name: str) -> bool:
        return bool(self.by_cq.get(name))

    def targets(self) -> Iterator[Node]:
        if self.preemptor_cq.parent is None:
            while self.preemptor_cq.name not in self.pruned_cqs and self.has(self.preemptor_cq.name):
                yield self.preemptor_cq
            return
        root = self.preemptor_cq.root()
        ancestors = self.ancestors()
        while root.name not in self.pruned_cohorts:
            t = self._next(root, ancestors)
            if t is not None:
                yield t

    def _next(self, cohort: Node, ancestors: set[str]) -> Node | None:
        best_cq: Node | None = None
        best_cq_drs = NEGATIVE
        for cq in cohort.child_cqs:
            if cq.name in self.pruned_cqs:
                continue
            drs = dominant_resource_share(self.sim, cq)
            if (not drs.borrowing and cq is not self.preemptor_cq) or not self.has(cq.name):
                self.pruned_cqs.add(cq.name)
            elif best_cq is not None and compare(drs, best_cq_drs) == 0:
                pc = self.preemptor_cq.name
                if candidates_order_key(self.by_cq[cq.name][0], pc) < candidates_order_key(self.by_cq[best_cq.name][0], pc):
                    best_cq = cq
            elif compare(drs, best_cq_drs) == 1:
                best_cq, best_cq_drs = cq, drs
        best_cohort: Node | None = None
        best_cohort_drs = NEGATIVE
        for child in cohort.child_cohorts:
            if child.name in self.pruned_cohorts:
                continue
            drs = dominant_resource_share(self.sim, child)
            if not drs.borrowing and child.name not in ancestors:
                self.pruned_cohorts.add(child.name)
            elif compare(drs, best_cohort_drs) >= 0:
                best_cohort, best_cohort_drs = child, drs
        if best_cohort is None and best_cq is None:
            self.pruned_cohorts.add(cohort.name)
            return None
        if best_cohort is not None and compare(best_cohort_drs, best_cq_drs) >= 0:
            return self._next(best_cohort, ancestors)
        return best_cq


def _almost_lcas(preemptor: Node, target: Node) -> tuple[Node, Node]:
    ancestors = {id(n) for n in preemptor.path_parent_to_root()}
    lca = next(a for a in target.path_parent_to_root() if id(a) in ancestors)

    def almost(node: Node) -> Node:
        prev = node
        for anc in node.path_parent_to_root():
            if anc is lca:
                return prev
            prev = anc
        raise AssertionError("no almost-LCA")

    return almost(preemptor), almost(target)


class FairPreemptor:
    def __init__(self, sim: "Simulation", wl: SimWorkload, cq: ClusterQueue, frs: set[FR], usage: dict[FR, int]) -> None:
        self.sim = sim
        self.wl = wl
        self.cq = cq
        self.node = sim.tree.cqs[cq.name]
        self.frs = frs
        self.usage = usage
        strategies = (sim.fair_sharing or {}).get("preemptionStrategies") or [LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
                                                                             LESS_THAN_INITIAL_SHARE]
        self.strategies = list(strategies)

    def _uses(self, w: SimWorkload) -> bool:
        return any(fr in self.frs for fr in w.usage)

    def _candidates(self) -> list[SimWorkload]:
        out = []
        p = self.cq.preemption
        if p.within_cluster_queue != NEVER:
            out += [w for w in self.sim.workloads_in(self.cq.name)
                    if self._uses(w) and satisfies_policy(self.wl, w, p.within_cluster_queue)]
        if self.node.parent is not None and p.reclaim_within_cohort != NEVER:
            for other in self.node.root().subtree_cqs():
                if other is self.node or not any(other.is_borrowing(fr) for fr in self.frs):
                    continue
                out += [w for w in self.sim.workloads_in(other.name)
                        if self._uses(w) and satisfies_policy(self.wl, w, p.reclaim_within_cohort)]
        return sorted(out, key=lambda w: candidates_order_key(w, self.cq.name))

    def _remove(self, w: SimWorkload) -> None:
        self.sim.tree.cqs[w.cluster_queue].remove_usages(w.usage)

    def _restore(self, w: SimWorkload) -> None:
        self.sim.tree.cqs[w.cluster_queue].add_usages(w.usage)

    def _fits(self) -> bool:
        """workloadFitsForFairSharing: the preemptor's own usage is taken out while checking."""
        self.node.remove_usages(self.usage)
        try:
            return all(v <= self.node.cq_available(fr) for fr, v in self.usage.items())
        finally:
            self.node.add_usages(self.usage)

    def _fits_plain(self) -> bool:
        return all(v <= self.node.cq_available(fr) for fr, v in self.usage.items())

    def _shares(self, target: Node) -> tuple[DRS, DRS]:
        p, t = _almost_lcas(self.node, target)
        return dominant_resource_share(self.sim, p), dominant_resource_share(self.sim, t)

    def _target_share_after(self, target: Node, w: SimWorkload) -> DRS:
        target.remove_usages(w.usage)
        try:
            _, t = _almost_lcas(self.node, target)
            return dominant_resource_share(self.sim, t)
        finally:
            target.add_usages(w.usage)

    def targets(self) -> list[Target]:
        candidates = self._candidates()
        if not candidates:
            return []
        self.node.add_usages(self.usage)
        try:
            fits, targets, retry = self._first(candidates, self.strategies[0])
            if not fits and len(self.strategies) > 1:
                fits, targets = self._second(retry, targets)
        finally:
            self.node.remove_usages(self.usage)
        if not fits:
            for t in targets:
                self._restore(t.workload)
            return []
        targets = self._fill_back(targets)
        for t in targets:
            self._restore(t.workload)
        return targets

    def _passes(self, strategy: str, new: DRS, old: DRS, target_new: DRS) -> bool:
        if strategy == LESS_THAN_OR_EQUAL_TO_FINAL_SHARE:
            return compare(new, target_new) <= 0
        return compare(new, old) < 0

    def _first(self, candidates: list[SimWorkload], strategy: str) -> tuple[bool, list[Target], list[SimWorkload]]:
        by_cq: dict[str, list[SimWorkload]] = {}
        for w in candidates:
            by_cq.setdefault(w.cluster_queue or "", []).append(w)
        ordering = _Ordering(self.sim, self.node, by_cq)
        targets: list[Target] = []
        retry: list[SimWorkload] = []
        within_nominal = not any(self.node.is_borrowing(fr) for fr in self.frs)
        # The preemptor's usage is already added, so "borrowing" here includes it, as in Kueue.
        for target in ordering.targets():
            if target is self.node:
                w = by_cq[target.name].pop(0)
                self._remove(w)
                targets.append(Target(w, IN_CLUSTER_QUEUE))
                if self._fits():
                    return True, targets, []
                continue
            if within_nominal:
                w = by_cq[target.name].pop(0)
                self._remove(w)
                targets.append(Target(w, IN_COHORT_RECLAMATION))
                if self._fits():
                    return True, targets, []
                continue
            new, old = self._shares(target)
            if math.isinf(new.share()) and not math.isinf(old.share()):
                retry.extend(by_cq[target.name])
                by_cq[target.name] = []
                continue
            while by_cq[target.name]:
                w = by_cq[target.name].pop(0)
                if self._passes(strategy, new, old, self._target_share_after(target, w)):
                    self._remove(w)
                    targets.append(Target(w, IN_COHORT_FAIR_SHARING))
                    if self._fits():
                        return True, targets, []
                    break
                retry.append(w)
        return False, targets, retry

    def _second(self, retry: list[SimWorkload], targets: list[Target]) -> tuple[bool, list[Target]]:
        by_cq: dict[str, list[SimWorkload]] = {}
        for w in retry:
            by_cq.setdefault(w.cluster_queue or "", []).append(w)
        ordering = _Ordering(self.sim, self.node, by_cq)
        for target in ordering.targets():
            new, old = self._shares(target)
            passed = compare(new, old) < 0
            w = by_cq[target.name].pop(0)
            if passed:
                self._remove(w)
                targets.append(Target(w, IN_COHORT_FAIR_SHARING))
                if self._fits():
                    return True, targets
            ordering.pruned_cqs.add(target.name)
        return False, targets

    def _fill_back(self, targets: list[Target]) -> list[Target]:
        for i in range(len(targets) - 2, -1, -1):
            self._restore(targets[i].workload)
            if self._fits_plain():
                targets[i] = targets[-1]
                targets.pop()
            else:
                self._remove(targets[i].workload)
        return targets


def get_targets(sim: "Simulation", wl: SimWorkload, cq: ClusterQueue, frs: set[FR], usage: dict[FR, int]) -> list[Target]:
    return FairPreemptor(sim, wl, cq, frs, usage).targets()


def simulate_preemption(sim: "Simulation", wl: SimWorkload, cq: ClusterQueue, fr: FR, quantity: int) -> tuple[int, int]:
    """The preemption oracle under fair sharing: the classical verdict on the fair-sharing targets."""
    return possibility(sim, cq, fr, quantity, get_targets(sim, wl, cq, {fr}, {fr: quantity}))
