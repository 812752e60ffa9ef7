"""Classical preemption, after Kueue's pkg/scheduler/preemption (semantics doc §6.1-§6.3).

Candidates: same-CQ workloads allowed by `withinClusterQueue`, and (hierarchical reclaim) workloads of
CQs over nominal found while walking from the preemptor's parent to the root, classified as
hierarchical / reclaim-without-borrowing / reclaim-while-borrowing; ordered by CandidatesOrdering;
one or two greedy passes with or without borrowing; then the minimal set (fillBackWorkloads).
All trial removals are made on the live quota tree and undone before returning. Searches run only while a
cycle nominates, when holders and usage stay put, so cohort levels' candidate lists are cached per cycle; a
flat cohort's one-resource search instead reads its level lazily from the holders kept per priority in
reservation order (State.cohort_holders: candidate order, reversed within a priority), as far as its pass goes.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Iterable, Iterator, Protocol

from kueueplan.kube.objects import ClusterQueue, LOWER_OR_NEWER_EQUAL_PRIORITY, LOWER_PRIORITY, ANY, NEVER
from kueueplan.simulate.resource_node import (FR, Node, QuotaTree, find_height_of_lowest_subtree_that_fits,
                                              flat_available, flat_height)
from kueueplan.simulate.flavorassigner import NO_CANDIDATES, PREEMPT, RECLAIM
from kueueplan.simulate.workload import SimWorkload

IN_CLUSTER_QUEUE = "InClusterQueue"
IN_COHORT_RECLAMATION = "InCohortReclamation"
IN_COHORT_RECLAIM_WHILE_BORROWING = "InCohortReclaimWhileBorrowing"
IN_COHORT_FAIR_SHARING = "InCohortFairSharing"

# preemption variants (classical/hierarchical_preemption.go)
V_NEVER, V_WITHIN_CQ, V_HIERARCHICAL, V_RECLAIM_WITHOUT_BORROWING, V_RECLAIM_WHILE_BORROWING = range(5)
_REASON = {V_WITHIN_CQ: IN_CLUSTER_QUEUE, V_HIERARCHICAL: IN_COHORT_RECLAMATION,
           V_RECLAIM_WITHOUT_BORROWING: IN_COHORT_RECLAMATION,
           V_RECLAIM_WHILE_BORROWING: IN_COHORT_RECLAIM_WHILE_BORROWING}


class State(Protocol):
    tree: QuotaTree
    cluster_queues: dict[str, ClusterQueue]

    def workloads_in(self, cq: str) -> Iterable[SimWorkload]: ...

    def usage_below(self, cq: str, priority: int) -> dict[FR, int]: ...  # of workloads_in(cq) below a priority

    def preemption_cache(self) -> dict: ...  # emptied whenever holders or usage may have changed

    # workloads_in of every ClusterQueue under a root that use fr, per priority, each in reserve_order
    def cohort_holders(self, root: Node, fr: FR) -> dict[int, dict[SimWorkload, None]]: ...


@dataclass(slots=True)  # one per victim of every search
class Target:
    workload: SimWorkload
    reason: str


@dataclass(slots=True)  # created for every holder of every queue searched
class _Candidate:
    wl: SimWorkload
    lca: Node | None
    variant: int


def candidates_order_key(wl: SimWorkload, preemptor_cq: str) -> tuple:
    """CandidatesOrdering: other CQs first, lower priority, most recently reserved, then creation."""
    return (wl.cluster_queue == preemptor_cq,) + other_queue_order(wl)


def other_queue_order(wl: SimWorkload) -> tuple:
    """CandidatesOrdering among workloads on the same side of "other CQs first" (reserve_seq is unique)."""
    return (wl.spec.priority, -(wl.reserved_at or 0), -wl.reserve_seq, wl.seq)


def reserve_order(wl: SimWorkload) -> tuple[int, int]:
    """The order of reservation: among holders of one priority, other_queue_order is its reverse."""
    return (wl.reserved_at or 0, wl.reserve_seq)


def reserved_later_or_same(a: SimWorkload, b: SimWorkload) -> bool:
    """reserve_order(a) >= reserve_order(b), without building the two tuples (once per admission)."""
    at, b_at = a.reserved_at or 0, b.reserved_at or 0
    return at > b_at or at == b_at and a.reserve_seq >= b.reserve_seq


def satisfies_policy(preemptor: SimWorkload, candidate: SimWorkload, policy: str) -> bool:
    lower = preemptor.priority > candidate.priority
    if policy == LOWER_PRIORITY:
        return lower
    if policy == LOWER_OR_NEWER_EQUAL_PRIORITY:
        newer_equal = (preemptor.priority == candidate.priority and
                       (preemptor.queue_ts, preemptor.seq) < (candidate.queue_ts, candidate.seq))
        return lower or newer_equal
    return policy == ANY


def _cohort_variant(wprio: int, pprio: int, threshold: int | None) -> int:
    """classifyPreemptionVariant of another queue's candidate where borrowing within the cohort is allowed:
    without borrowing at or above the preemptor's priority or above the threshold (isAboveBorrowingThreshold)."""
    if wprio >= pprio or (threshold is not None and wprio > threshold):
        return V_RECLAIM_WITHOUT_BORROWING
    return V_RECLAIM_WHILE_BORROWING


class Preemptor:
    """Finds preemption targets for one preemptor against the current state."""

    def __init__(self, state: State, wl: SimWorkload, cq: ClusterQueue, frs: set[FR], usage: dict[FR, int]) -> None:
        self.state = state
        self.wl = wl
        self.cq = cq
        self.node = state.tree.cqs[cq.name]
        self.frs = frs
        self.usage = usage
        self._pending: dict[str, dict[FR, int]] = {}  # per ClusterQueue: usage change not yet on the tree
        self._removed: dict[FR, int] = {}  # total removed so far (flat trees)
        self.flat = self.node.parent is None or self.node.parent.flat
        self.cache = state.preemption_cache()
        self._same: list[_Candidate] | None = None  # _own_candidates, made when first needed

    @property
    def _frs_key(self) -> tuple[FR, ...]:  # the gathered levels' cache keys
        return tuple(sorted(self.frs))

    # -- classification -----------------------------------------------------------

    def _bwc_forbidden(self) -> tuple[bool, int | None]:
        bwc = self.cq.preemption.borrow_within_cohort
        if bwc.policy == NEVER:
            return True, None
        return False, bwc.max_priority_threshold

    def _classify(self, holders: Iterable[SimWorkload], lca: Node | None, same: bool, hierarchical: bool
                  ) -> list[_Candidate]:
        """The candidates among one ClusterQueue's or cohort level's holders, with their variant
        (classifyPreemptionVariant), in the order of `holders`."""
        p = self.cq.preemption
        policy = p.within_cluster_queue if same else p.reclaim_within_cohort
        out: list[_Candidate] = []
        if policy == NEVER:
            return out
        threshold: int | None = None
        if same:
            fixed: int | None = V_WITHIN_CQ
        elif hierarchical:
            fixed = V_HIERARCHICAL
        else:
            forbidden, threshold = self._bwc_forbidden()
            fixed = V_RECLAIM_WITHOUT_BORROWING if forbidden else None
        pw = self.wl
        pprio = pw.priority
        lower_only = policy == LOWER_PRIORITY  # the common policies, checked inline (hot loop)
        any_policy = policy == ANY
        for w in holders:
            wprio = w.spec.priority
            if lower_only:
                if pprio <= wprio:
                    continue
            elif not any_policy and not satisfies_policy(pw, w, policy):
                continue
            out.append(_Candidate(w, lca, fixed if fixed is not None else _cohort_variant(wprio, pprio, threshold)))
        return out

    def _own_candidates(self) -> list[_Candidate]:
        """The preemptor's own queue's candidates (withinClusterQueue), in candidate order; made once per search,
        when a pass first needs them (most flat searches find their targets among other queues' first)."""
        if self._same is not None:
            return self._same
        if self.cq.preemption.within_cluster_queue == NEVER:
            self._same = []
            return self._same
        frs = self.frs
        holders = [w for w in self.state.workloads_in(self.node.name) if not frs.isdisjoint(w.usage)]
        same = self._classify(holders, None, True, False)
        same.sort(key=lambda c: other_queue_order(c.wl))
        self._same = same
        return same

    def _own_later(self) -> Iterator[_Candidate]:
        """_own_candidates, made only when a pass reaches them."""
        yield from self._own_candidates()

    # Cohort levels are cached per snapshot (state.preemption_cache): every head of a cohort searches the
    # same queues in a cycle, so a level's holders are gathered and sorted once, and classified once per
    # preemptor priority (unless the policy also reads the preemptor's queue time).

    def _level_candidates(self, current: Node, skip: Node | None, hierarchical: bool) -> list[_Candidate]:
        p = self.cq.preemption
        bwc = p.borrow_within_cohort
        key = ("candidates", id(current), id(skip), self._frs_key, hierarchical, self.wl.priority,
               p.reclaim_within_cohort, bwc.policy, bwc.max_priority_threshold)
        got = self.cache.get(key)
        if got is None:
            got = self._classify(self._level_holders(current, skip), current, False, hierarchical)
            if p.reclaim_within_cohort != LOWER_OR_NEWER_EQUAL_PRIORITY:
                self.cache[key] = got
        if skip is None and not self.node.within_nominal_in(self.frs):
            own = self.cq.name  # the level reaches the preemptor's own queue: its workloads are not cohort candidates
            got = [c for c in got if c.wl.cluster_queue != own]
        return got

    def _level_holders(self, current: Node, skip: Node | None) -> list[SimWorkload]:
        """collectCandidatesInSubtree's reach: the holders of every ClusterQueue over nominal in the
        resources under `current`, not below `skip` nor in cohorts within nominal, in candidate order."""
        key = ("holders", id(current), id(skip), self._frs_key)
        got = self.cache.get(key)
        if got is None:
            holders: list[SimWorkload] = []
            self._subtree_holders(current, skip, holders)
            got = self.cache[key] = sorted(holders, key=other_queue_order)
        return got

    def _subtree_holders(self, current: Node, skip: Node | None, out: list[SimWorkload]) -> None:
        frs = self.frs
        for child in current.child_cohorts:
            if child is not skip and not child.within_nominal_in(frs):
                self._subtree_holders(child, None, out)
        for child in current.child_cqs:
            if not child.within_nominal_in(frs):
                # WorkloadUsesResources
                out += (w for w in self.state.workloads_in(child.name) if not frs.isdisjoint(w.usage))

    def _collect_hierarchical(self, skip_priority: bool) -> tuple[list[_Candidate], list[_Candidate]]:
        """Cohort candidates in candidate order: hierarchical (the preemptor fits below that level) and
        priority-based."""
        hier: list[_Candidate] = []
        prio: list[_Candidate] = []
        if self.node.parent is None or self.cq.preemption.reclaim_within_cohort == NEVER:
            return hier, prio
        previous: Node | None = None
        advantage, remaining = self.node.quantities_fit_in_quota(self.usage)
        hier_levels = prio_levels = 0
        for current in self.node.path_parent_to_root():
            if advantage or not skip_priority:
                found = self._level_candidates(current, previous, advantage)
                if found and advantage:
                    hier += found
                    hier_levels += 1
                elif found:
                    prio += found
                    prio_levels += 1
            fits, remaining = current.quantities_fit_in_quota(remaining)
            advantage = advantage or fits
            previous = current
        order = lambda c: other_queue_order(c.wl)  # noqa: E731
        if hier_levels > 1:  # candidates from several levels: merge them
            hier.sort(key=order)
        if prio_levels > 1:
            prio.sort(key=order)
        return hier, prio

    # A flat cohort and one (flavor, resource), the shape of most searches: the root is the only level, and a
    # pass mostly stops at its first few candidates. The level is read lazily from the cohort index (holders
    # already in candidate order, but for a reversal), so a search costs what its pass reads, not the cohort's
    # size; like the gathered levels, it is shared by the cycle's searches with the same priority and rules.

    def _flat_level(self, skip_priority: bool) -> tuple[_Level | None, bool]:
        """_collect_hierarchical's one level in a flat cohort (None when it is not searched), with the
        preemptor's own queue's candidates (when it is over nominal: _level_candidates drops them, so the pass
        skips them), and whether it is hierarchical (the preemptor fits in its own nominal quota)."""
        p = self.cq.preemption
        root = self.node.parent
        if root is None or p.reclaim_within_cohort == NEVER:
            return None, False
        (fr, v), = self.usage.items()
        node = self.node
        advantage = node.subtree.get(fr, 0) >= node.usage.get(fr, 0) + v  # quantities_fit_in_quota, for one
        if not advantage and skip_priority:
            return None, False
        threshold: int | None = None
        if advantage:
            fixed: int | None = V_HIERARCHICAL
        else:
            forbidden, threshold = self._bwc_forbidden()
            fixed = V_RECLAIM_WITHOUT_BORROWING if forbidden else None
        key = ("flat", id(root), fr, fixed, threshold, self.wl.priority, p.reclaim_within_cohort)
        level = self.cache.get(key)
        if level is None:
            source = _flat_candidates(self.state, self.wl, p.reclaim_within_cohort, root, fr, fixed, threshold)
            level = _Level(source, fr, fixed)
            if p.reclaim_within_cohort != LOWER_OR_NEWER_EQUAL_PRIORITY:  # that one reads the preemptor's time
                self.cache[key] = level
        return level, advantage

    def _targets_flat_single(self, forbidden: bool, borrow_only: bool) -> list[Target]:
        level, hierarchical = self._flat_level(skip_priority=borrow_only)
        own = self.cq.name
        cohort = level is not None and next(level.others(own), None) is not None
        if not cohort and not self._own_candidates():
            return []
        for borrow in _attempts(cohort, cohort and hierarchical, forbidden, borrow_only):
            found = self._pass_flat_single(level if cohort else None, borrow)
            if found is not None:
                return [Target(c.wl, _REASON[c.variant]) for c in found]
        return []

    # -- the search -------------------------------------------------------------

    def _fits(self, allow_borrowing: bool) -> bool:
        """workloadFits, on the tree with the trial removals applied."""
        for fr, v in self.usage.items():
            if not allow_borrowing and self._own_usage(fr) + v > self.node.subtree.get(fr, 0):
                return False
            if v > self._avail(fr):
                return False
        return True

    # Reading quota with trial removals applied. In a flat cohort (every ClusterQueue a child of the root,
    # no lending limits) the root's usage is the plain sum of its children's, so availability follows from
    # two numbers and the trial removals never need to touch the tree.

    def _own_usage(self, fr: FR) -> int:
        if not self.flat:
            self._flush()
            return self.node.usage.get(fr, 0)
        return self.node.usage.get(fr, 0) + self._pending.get(self.node.name, {}).get(fr, 0)

    def _avail(self, fr: FR) -> int:
        """ClusterQueueSnapshot.Available (clamped at 0)."""
        if not self.flat:
            self._flush()
            return self.node.cq_available(fr)
        node = self.node
        own = node.usage.get(fr, 0) + self._pending.get(node.name, {}).get(fr, 0)
        root = node.parent
        if root is None:
            return max(0, node.subtree.get(fr, 0) - own)
        avail = root.subtree.get(fr, 0) - root.usage.get(fr, 0) + self._removed.get(fr, 0)
        bl = node.borrowing.get(fr)
        if bl is not None:
            avail = min(node.subtree.get(fr, 0) - own + bl, avail)
        return max(0, avail)

    def _shortfall(self, allow_borrowing: bool) -> tuple[dict[FR, int], dict[FR, int]]:
        """Lower bounds of the usage to remove before the preemptor can fit: anywhere (availability) and,
        without borrowing, from its own ClusterQueue (usage + request <= nominal)."""
        need_avail, need_own = {}, {}
        for fr, v in self.usage.items():
            need_avail[fr] = v - self._avail(fr)
            need_own[fr] = 0 if allow_borrowing else self._own_usage(fr) + v - self.node.subtree.get(fr, 0)
        return need_avail, need_own

    def _valid(self, c: _Candidate, borrow: bool) -> bool:
        if c.wl.cluster_queue == self.cq.name:
            return True
        if borrow and c.variant == V_RECLAIM_WITHOUT_BORROWING:
            return False
        node = self.state.tree.cqs[c.wl.cluster_queue]
        if node.parent is not c.lca:
            self._flush()  # the cohorts in between are checked on the real (updated) tree
        delta = self._pending.get(node.name, {})
        if all(node.subtree.get(fr, 0) >= node.usage.get(fr, 0) + delta.get(fr, 0) for fr in self.frs):
            return False
        for anc in node.path_parent_to_root():
            if anc is c.lca:
                break
            if anc.within_nominal_in(self.frs):
                return False
        return True

    def _under_nominal_in_needed(self) -> bool:
        return all(self.node.nominal(fr) > self.node.usage.get(fr, 0) for fr in self.frs)

    # Trial removals are first recorded per ClusterQueue and applied to the tree in one step when the tree
    # is read: a ClusterQueue's own usage changes exactly by what is removed from it, so candidate validity
    # at that level can be decided without touching the tree.

    def _defer(self, wl: SimWorkload, sign: int) -> None:
        acc = self._pending.setdefault(wl.cluster_queue or "", {})
        removed = self._removed
        for fr, v in wl.usage.items():
            acc[fr] = acc.get(fr, 0) + sign * v
            removed[fr] = removed.get(fr, 0) - sign * v

    def _flush(self) -> None:
        if self.flat:
            return  # flat trees are read arithmetically; the pending deltas net to zero at the end
        self._removed.clear()
        for cq, delta in self._pending.items():
            node = self.state.tree.cqs[cq]
            node.remove_usages({fr: -v for fr, v in delta.items() if v < 0})
            node.add_usages({fr: v for fr, v in delta.items() if v > 0})
        self._pending.clear()

    def targets(self) -> list[Target]:
        # No cannot_preempt here: it is the nomination's check before a search (scheduler._surely_parked, head
        # plans), so a search mostly finds targets, and one that fails costs about what the check would.
        forbidden, _ = self._bwc_forbidden()
        borrow_only = forbidden and not self._under_nominal_in_needed()
        # With borrowWithinCohort forbidden and the preemptor over nominal, Kueue makes one pass that
        # allows borrowing, in which every non-hierarchical cohort candidate is invalid: skip collecting them.
        if self.flat and len(self.usage) == 1 and self.usage.keys() == self.frs:
            return self._targets_flat_single(forbidden, borrow_only)
        hier, prio = self._collect_hierarchical(skip_priority=borrow_only)
        candidates = hier + prio + self._own_candidates()  # each already in candidate order
        if not candidates:
            return []
        for borrow in _attempts(bool(hier or prio), bool(hier), forbidden, borrow_only):
            found = self._pass(candidates, borrow)
            if found is not None:
                return [Target(c.wl, _REASON[c.variant]) for c in found]
        return []

    def _pass_flat_single(self, level: _Level | None, borrow: bool) -> list[_Candidate] | None:
        """`_pass` for the common case of one (flavor, resource) in a flat cohort: the same greedy pass and
        fill-back, on plain integers (a property test checks it against the general path), over the cohort
        level's candidates (other queues') and then the preemptor's own (_own_candidates)."""
        (fr, v), = self.usage.items()
        node = self.node
        root = node.parent
        own_name = self.cq.name
        nominal = node.subtree.get(fr, 0)
        own_used = node.usage.get(fr, 0)
        bl = node.borrowing.get(fr)
        root_room = (root.subtree.get(fr, 0) - root.usage.get(fr, 0)) if root is not None else 0
        cqs = self.state.tree.cqs
        removed_total = removed_own = 0
        over_left: dict[str, int] = {}  # per other ClusterQueue: its usage over nominal, less what was removed
        # avail() and fits() of the general path, on plain integers: availability is the root's room plus
        # what was removed, capped (with a borrowing limit) by nominal + limit - own usage; without a cohort,
        # nominal - own usage. `cap` is that own-usage bound before removals from the preemptor's queue.
        cap = nominal + bl - own_used if root is not None and bl is not None else None
        if root is None:
            cap = nominal - own_used

        def fits() -> bool:
            if not borrow and own_used - removed_own + v > nominal:
                return False
            if root is None:
                a = cap + removed_own
            else:
                a = root_room + removed_total
                if cap is not None and cap + removed_own < a:
                    a = cap + removed_own
            return v <= (a if a > 0 else 0)  # avail is clamped at 0

        need_own = 0 if borrow else own_used + v - nominal
        if v > 0 and (root is None or bl is not None):
            # The preemptor's own headroom (nominal + borrowing limit - own usage) caps availability, and
            # only its own queue's removals raise it: another lower bound on what they must remove.
            need_own = max(need_own, own_used + v - nominal - (0 if root is None else bl))
        if need_own > 0 and need_own > sum(c.wl.usage.get(fr, 0) for c in self._own_candidates()):
            return None  # even every own-queue candidate is not enough (usage is never negative)
        if root is None:
            need_avail = v - max(0, cap)
        else:
            a = root_room if cap is None else min(cap, root_room)
            need_avail = v - max(0, a)
        # every candidate of a pass with borrowing is invalid when the level's variant is reclaim-without-borrowing
        if borrow and level is not None and level.fixed == V_RECLAIM_WITHOUT_BORROWING:
            level = None
        chosen: list[_Candidate] = []
        cohort: Iterable[_Candidate] = ()
        if level is not None and need_own > 0 and root is not None:
            # Only own candidates lower need_own, so the pass cannot stop among the other queues' candidates:
            # it takes each one whose queue is still over nominal (_Level.walk; the preemptor's own queue's
            # candidates are left out, and no other queue's depend on them).
            entries, total, by_queue = level.walk(cqs, borrow)
            chosen = [c for c, cq in entries if cq != own_name]
            removed_total = total - by_queue.get(own_name, 0)
            need_avail -= removed_total
        elif level is not None:
            cohort = level.others(own_name)
        for c in chain(cohort, self._own_later()):
            w = c.wl
            cq = w.cluster_queue or ""
            u = w.usage.get(fr, 0)
            if cq == own_name:
                removed_own += u
                need_own -= u
            else:
                if borrow and c.variant == V_RECLAIM_WITHOUT_BORROWING:
                    continue
                left = _over_nominal(over_left, cqs, cq, fr)
                if left <= 0:
                    continue  # that queue is back within nominal
                over_left[cq] = left - u
            chosen.append(c)
            removed_total += u
            need_avail -= u
            if need_avail > 0 or need_own > 0 or not fits():
                continue
            # fill back (fillBackWorkloads), on the same integers. It fits now and keeps fitting after each
            # step, so putting back another queue's workload (own usage and the cap unchanged) fits again
            # exactly when the root's room stays at least v: that is a slack test, not a fits() call.
            for i in range(len(chosen) - 2, -1, -1):
                back = chosen[i]
                bu = back.wl.usage.get(fr, 0)
                if back.wl.cluster_queue != own_name and root is not None:
                    if v <= 0 or root_room + removed_total - bu >= v:
                        removed_total -= bu
                        chosen[i] = chosen[-1]
                        chosen.pop()
                    continue
                removed_total -= bu
                removed_own -= bu
                if fits():
                    chosen[i] = chosen[-1]
                    chosen.pop()
                else:
                    removed_total += bu
                    removed_own += bu
            return chosen
        return None

    def _pass(self, candidates: list[_Candidate], borrow: bool) -> list[_Candidate] | None:
        """One greedy pass (with or without borrowing); the tree is left as it was found."""
        chosen: list[_Candidate] = []
        need_avail, need_own = self._shortfall(borrow)
        own_total: dict[FR, int] = {}
        for c in candidates:
            if c.wl.cluster_queue == self.cq.name:
                for fr, v in c.wl.usage.items():
                    own_total[fr] = own_total.get(fr, 0) + v
        if any(v > own_total.get(fr, 0) for fr, v in need_own.items()):
            return None  # even every own-queue candidate cannot bring the preemptor back under nominal
        result = None
        for c in candidates:
            if not self._valid(c, borrow):
                continue
            self._defer(c.wl, -1)
            chosen.append(c)
            # Removing X of usage raises availability by at most X, and only the preemptor's own CQ's
            # removals lower its usage: skip the exact check until both shortfalls are covered.
            own = c.wl.cluster_queue == self.cq.name
            for fr, v in c.wl.usage.items():
                if fr in need_avail:
                    need_avail[fr] -= v
                    if own:
                        need_own[fr] -= v
            if any(v > 0 for v in need_avail.values()) or any(v > 0 for v in need_own.values()):
                continue
            self._flush()
            if self._fits(borrow):
                result = chosen = self._fill_back(chosen, borrow)
                break
        for t in chosen:
            self._defer(t.wl, +1)
        self._flush()
        if self.flat:
            self._pending.clear()
            self._removed.clear()
        return result

    def _fill_back(self, chosen: list[_Candidate], borrow: bool) -> list[_Candidate]:
        """fillBackWorkloads. Putting back X of another ClusterQueue's usage lowers availability by at most X
        and leaves the preemptor's own usage alone: within the known slack it surely still fits."""
        slack = {fr: self._avail(fr) - v for fr, v in self.usage.items()}
        for i in range(len(chosen) - 2, -1, -1):
            wl = chosen[i].wl
            if wl.cluster_queue != self.cq.name and all(wl.usage.get(fr, 0) <= sl for fr, sl in slack.items()):
                self._defer(wl, +1)
                for fr in slack:
                    slack[fr] -= wl.usage.get(fr, 0)
                chosen[i] = chosen[-1]
                chosen.pop()
                continue
            self._defer(wl, +1)
            if self._fits(borrow):
                slack = {fr: self._avail(fr) - v for fr, v in self.usage.items()}
                chosen[i] = chosen[-1]
                chosen.pop()
            else:
                self._defer(wl, -1)
        self._flush()
        return chosen


def _flat_candidates(state: State, pw: SimWorkload, policy: str, root: Node, fr: FR, fixed: int | None,
                     threshold: int | None) -> Iterator[_Candidate]:
    """Preemptor._classify over Preemptor._level_holders(root, None), in the same order, for preemptor pw and
    reclaimWithinCohort `policy`. A function, not a method: a level kept in the cycle's cache holds it, and
    a reference back to the Preemptor (which holds that cache) would be a cycle the paused collector leaves."""
    pprio = pw.priority
    # CandidatesOrdering puts lower priorities first: past the preemptor's, no holder satisfies a Lower* policy
    if policy == ANY:
        stop: int | None = None
    elif policy == LOWER_PRIORITY:
        stop = pprio
    elif policy == LOWER_OR_NEWER_EQUAL_PRIORITY:
        stop = pprio + 1
    else:
        return
    newer_equal = policy == LOWER_OR_NEWER_EQUAL_PRIORITY
    cqs = state.tree.cqs
    over: dict[str | None, bool] = {}  # per ClusterQueue: over nominal in fr (in the level)
    # CandidatesOrdering among other queues: priority, then most recently reserved first. The index is read as
    # it stands, not copied (a copy cost more than the rest of a search): a level lives in the cycle's cache, and
    # searches run only while the cycle nominates, when no holder comes or goes (test_cohort_index checks it)
    groups = state.cohort_holders(root, fr)
    for wprio in sorted(groups):
        if stop is not None and wprio >= stop:
            return
        for w in reversed(groups[wprio]):
            cq = w.cluster_queue
            ok = over.get(cq)
            if ok is None:
                node = cqs[cq or ""]
                ok = over[cq] = node.subtree.get(fr, 0) < node.usage.get(fr, 0)
            if not ok or newer_equal and not satisfies_policy(pw, w, policy):
                continue
            yield _Candidate(w, root, fixed if fixed is not None else _cohort_variant(wprio, pprio, threshold))


class _Level:
    """A flat cohort level's candidates, pulled from their source (in candidate order) only as far as a pass
    reads them and kept for the next pass or search; `fixed` is every candidate's variant, unless it depends on
    one's priority."""

    __slots__ = ("_source", "got", "fr", "fixed", "_walks")

    def __init__(self, source: Iterator[_Candidate], fr: FR, fixed: int | None) -> None:
        self._source = source
        self.got: list[_Candidate] = []
        self.fr = fr
        self.fixed = fixed
        self._walks: dict[bool, tuple[list[tuple[_Candidate, str]], int, dict[str, int]]] = {}

    def __iter__(self) -> Iterator[_Candidate]:
        return self.others(None)  # a holder's queue is never None: every candidate

    def others(self, own: str | None) -> Iterator[_Candidate]:
        """The candidates of queues other than `own`, in order, pulled as far as the caller reads (the filter
        inside: one generator less per candidate on the pass's path than filtering the level's iterator)."""
        got = self.got
        i = 0
        while True:
            if i == len(got):
                c = next(self._source, None)
                if c is None:
                    return
                got.append(c)
            else:
                c = got[i]
            i += 1
            if c.wl.cluster_queue != own:
                yield c

    def walk(self, cqs: dict[str, Node], borrow: bool) -> tuple[list[tuple[_Candidate, str]], int, dict[str, int]]:
        """The candidates a pass takes when it cannot stop among them: each whose queue is still over nominal,
        in order (with its queue), their total usage, and that total per queue; remembered with the level."""
        got = self._walks.get(borrow)
        if got is not None:
            return got
        fr = self.fr
        over_left: dict[str, int] = {}
        taken: list[tuple[_Candidate, str]] = []
        by_queue: dict[str, int] = {}
        total = 0
        for c in self:
            if borrow and c.variant == V_RECLAIM_WITHOUT_BORROWING:
                continue
            cq = c.wl.cluster_queue or ""
            left = _over_nominal(over_left, cqs, cq, fr)
            if left <= 0:
                continue  # that queue is back within nominal
            u = c.wl.usage.get(fr, 0)
            over_left[cq] = left - u
            taken.append((c, cq))
            by_queue[cq] = by_queue.get(cq, 0) + u
            total += u
        got = self._walks[borrow] = (taken, total, by_queue)
        return got


def _attempts(cohort: bool, hier: bool, forbidden: bool, borrow_only: bool) -> list[bool]:
    """The passes, with (True) or without borrowing: one with borrowing without cohort candidates or when
    borrowWithinCohort is forbidden and the preemptor is over nominal; without borrowing first when it is
    forbidden and no candidate is hierarchical."""
    if not cohort or borrow_only:
        return [True]
    if forbidden and not hier:
        return [False, True]
    return [True, False]


def _over_nominal(over_left: dict[str, int], cqs: dict[str, Node], cq: str, fr: FR) -> int:
    """A queue's usage over nominal in fr, less what a pass took from it so far (`over_left`)."""
    left = over_left.get(cq)
    if left is None:
        other = cqs[cq]
        left = other.usage.get(fr, 0) - other.subtree.get(fr, 0)
    return left


def cannot_preempt(state: State, wl: SimWorkload, cq: ClusterQueue, node: Node, usage: dict[FR, int]) -> bool:
    """True when the search surely finds no targets, told in O(resources) for a ClusterQueue alone or in a
    flat cohort with borrowWithinCohort Never: even with every own candidate gone the preemptor would be over
    its nominal quota, so the pass without borrowing fails and only own candidates are valid in the pass
    with borrowing (cohort candidates are then reclaim-without-borrowing); and the free room (the cohort's,
    capped by the borrowing limit; alone, its nominal) plus those candidates' usage is below the request."""
    p = cq.preemption
    root = node.parent
    if root is not None and (not root.flat or root.parent is not None or p.borrow_within_cohort.policy != NEVER):
        return False
    if p.within_cluster_queue not in (NEVER, LOWER_PRIORITY):
        return False
    rooms: dict[FR, int] = {}
    for fr, v in usage.items():
        room = flat_available(node, fr)
        if room < v:
            rooms[fr] = room
    if not rooms:
        return False  # it fits, or only removals could make it: the usual cheap case is answered first
    own = state.usage_below(node.name, wl.priority) if p.within_cluster_queue == LOWER_PRIORITY else {}
    over = short = False
    for fr, v in usage.items():
        removable = own.get(fr, 0)
        if node.usage.get(fr, 0) - removable + v > node.subtree.get(fr, 0):
            over = True
        room = rooms.get(fr)
        if room is not None and room + removable < v:
            short = True
    return over and short


def get_targets(state: State, wl: SimWorkload, cq: ClusterQueue, frs: set[FR], usage: dict[FR, int]) -> list[Target]:
    return Preemptor(state, wl, cq, frs, usage).targets()


def possibility(state: State, cq: ClusterQueue, fr: FR, quantity: int, targets: list[Target]) -> tuple[int, int]:
    """PreemptionOracle.SimulatePreemption's verdict from the targets found for (fr, quantity)."""
    node = state.tree.cqs[cq.name]
    if not targets:
        borrow, _ = find_height_of_lowest_subtree_that_fits(node, fr, quantity)
        return NO_CANDIDATES, borrow
    if node.parent is None or node.parent.flat:
        return _flat_possibility(node, fr, quantity, targets)
    return _possibility_on_tree(state, node, fr, quantity, targets)


def _possibility_on_tree(state: State, node: Node, fr: FR, quantity: int, targets: list[Target]) -> tuple[int, int]:
    """The verdict with the targets removed from the tree (put back after)."""
    for t in targets:
        state.tree.cqs[t.workload.cluster_queue].remove_usages(t.workload.usage)
    borrow, _ = find_height_of_lowest_subtree_that_fits(node, fr, quantity)
    for t in targets:
        state.tree.cqs[t.workload.cluster_queue].add_usages(t.workload.usage)
    if any(t.workload.cluster_queue == node.name for t in targets):
        return PREEMPT, borrow
    return RECLAIM, borrow


def _flat_possibility(node: Node, fr: FR, quantity: int, targets: list[Target]) -> tuple[int, int]:
    """_possibility_on_tree for a ClusterQueue alone or in a flat cohort, without trial removals: the height
    (flat_height) of the request on the queue's usage once its own targets are gone."""
    own = False
    used = node.usage.get(fr, 0)
    for t in targets:
        if t.workload.cluster_queue == node.name:
            own = True
            used -= t.workload.usage.get(fr, 0)
    return (PREEMPT if own else RECLAIM), flat_height(node, fr, used + quantity)
