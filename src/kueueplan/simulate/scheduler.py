"""One scheduling cycle, after Kueue's pkg/scheduler/scheduler.go `schedule` (semantics doc §5).

1. heads: one pending workload per active ClusterQueue;
2. nominate: admissibility checks, flavor assignment (resuming a scan that stopped early, LastAssignment),
   preemption targets;
3. order entries (classical: lower borrowing level, higher priority, older timestamp; fair sharing:
   see fairsharing.py);
4. process each against the shared state: entries that preempt or reserve capacity add their usage for the
   rest of the cycle only; admissions are real; the fit check removes every victim claimed so far;
5. requeue what was not admitted, then evict the victims (they release their quota now, per the time model).
"""

from __future__ import annotations

import heapq
from typing import Any, Iterator

from kueueplan.kube.objects import ANY, selector_matches
from kueueplan.simulate import fairsharing, preemption
from kueueplan.simulate.context import SchedulingContext as Simulation
from kueueplan.simulate.entry import (Entry, FAILED_AFTER_NOMINATION, GENERIC, NAMESPACE_MISMATCH, NO_CANDIDATES,
                                      NO_FIT, PENDING_PREEMPTION, WAITING_FOR_PODS_READY)
from kueueplan.simulate.flavorassigner import (Assignment, FlavorAssigner, MODE_FIT, MODE_NO_FIT, MODE_PREEMPT,
                                               fitting_assignment, quota_message, single_flavor_usage)
from kueueplan.simulate.resource_node import FR, Node, flat_available, flat_height
from kueueplan.simulate.workload import LastAssignment, SimWorkload

def make_assigner(sim: Simulation, wl: SimWorkload, cq_name: str) -> FlavorAssigner:
    cq = sim.cluster.cluster_queues[cq_name]
    node = sim.tree.cqs[cq_name]
    oracle = lambda fr, qty: sim.preemption_oracle(wl, cq, fr, qty)  # noqa: E731
    return FlavorAssigner(cq, node, sim.cluster.resource_flavors, oracle, sim.fair_sharing is not None,
                          wl.last_assignment)


def get_assignments(sim: Simulation, wl: SimWorkload, cq_name: str, plain: dict[FR, int] | None = None,
                    height: int | None = None) -> tuple[Assignment, list[preemption.Target]]:
    """getAssignments: drop an outdated LastAssignment, then getInitialAssignments (full size first, then
    partial admission when it has a minCount); the result is recorded as the new LastAssignment. `plain`: the
    head's _plain_request, when it has one; `height`: its _fit_height when it fits as it is."""
    if plain is not None and _scanless(wl):
        # One flavor per resource group: a scan state of -1s (or none) resumes nothing, and the scan leaves
        # -1s again, so no LastAssignment is the same LastAssignment.
        if height is not None:
            assignment, targets = _direct_fit(sim, wl, cq_name, height), []
        else:
            assignment, targets = _initial_assignments(sim, wl, cq_name, plain)
        wl.last_assignment = None
        return assignment, targets
    if wl.last_assignment is not None and _outdated(sim, wl, cq_name):
        wl.last_assignment = None
    assignment, targets = _initial_assignments(sim, wl, cq_name, plain)
    tried, pending = assignment.scan_state()
    wl.last_assignment = LastAssignment(tried, sim.cq_generation(cq_name), sim.cycle, wl.equivalence_hash(), pending)
    return assignment, targets


def _outdated(sim: Simulation, wl: SimWorkload, cq_name: str) -> bool:
    """lastAssignmentOutdated with FlavorFungibilityPreserveScanProgress (on in v0.19): a new shape starts
    over; progress from this or the previous cycle is kept; older progress only while the ClusterQueue's
    generation (bumped when a workload leaves it or its cohort tree's quotas change) stands."""
    last = wl.last_assignment
    assert last is not None
    if last.shape != wl.equivalence_hash():
        return True
    if sim.cycle - last.cycle <= 1:
        return False
    return sim.cq_generation(cq_name) > last.generation


def _initial_assignments(sim: Simulation, wl: SimWorkload, cq_name: str, plain: dict[FR, int] | None = None
                         ) -> tuple[Assignment, list[preemption.Target]]:
    assigner = make_assigner(sim, wl, cq_name)
    if plain is not None and len(plain) == 1 and len(wl.spec.pod_sets) == 1 and not _resumes(wl):
        full = assigner.run_one(wl.spec.pod_sets[0], next(iter(plain)))
    else:
        full = assigner.run(wl.spec.pod_sets)
    mode = full.mode()
    if mode == MODE_FIT:
        return full, []
    if mode == MODE_PREEMPT:
        targets = sim.get_targets(wl, cq_name, full)
        if targets:
            return full, targets
    reducible = [i for i, ps in enumerate(wl.spec.pod_sets) if ps.min_count is not None and ps.min_count < ps.count]
    if reducible and sim.version >= (0, 5) and sim.config.partial_admission:
        found = _partial_search(sim, wl, cq_name, assigner, reducible)
        if found is not None:
            return found
    return full, []


def _partial_search(sim: Simulation, wl: SimWorkload, cq_name: str, assigner: FlavorAssigner,
                    reducible: list[int]) -> tuple[Assignment, list[preemption.Target]] | None:
    """PodSetReducer.Search: the smallest reduction step i in [0, totalDelta] that fits (or can preempt);
    pod set j then runs count_j - delta_j * i // totalDelta pods."""
    pod_sets = wl.spec.pod_sets
    deltas = [ps.count - (ps.min_count if ps.min_count is not None else ps.count) for ps in pod_sets]
    total = sum(deltas)
    if total <= 0:
        return None
    found: dict[int, tuple[Assignment, list[preemption.Target]]] = {}

    def fits(i: int) -> bool:
        counts = [ps.count - d * i // total for ps, d in zip(pod_sets, deltas)]
        a = assigner.run(pod_sets, counts)
        if a.mode() == MODE_FIT:
            found[i] = (a, [])
        elif a.mode() == MODE_PREEMPT:
            targets = sim.get_targets(wl, cq_name, a)
            if targets:
                found[i] = (a, targets)
        return i in found

    lo, hi = 0, total + 1  # sort.Search over [0, total]
    while lo < hi:
        mid = (lo + hi) // 2
        if fits(mid):
            hi = mid
        else:
            lo = mid + 1
    return found.get(lo)


def run_cycle(sim: Simulation) -> bool:
    """One cycle; True if it changed anything (admission, preemption, a workload parked)."""
    heads: list[tuple[str, SimWorkload]] = []
    queues = sim.queues
    plans = sim.plans
    names = sim.queues_with_heads()
    if plans.enabled and names:
        names = plans.adopt(names)
    for name in names:
        wl = queues[name].pop_head()
        if wl is not None:
            heads.append((name, wl))
    # the heads of queues with a HeadPlan: those that park are parked now (as _surely_parked below)
    planned, progress, live, groups = plans.nominate(sim.cycle + 1) if plans.active else (False, False, (), ())
    if not heads and not planned:
        return False
    sim.cycle += 1
    entries: list[Entry] = []
    inadmissible: list[Entry] = []
    for cq_name, wl in heads:
        problem = sim.admissibility_problem(wl, cq_name)
        if problem is not None:
            e = Entry(wl, cq_name)
            e.message, e.requeue_reason = problem
            inadmissible.append(e)
            continue
        plain = _plain_request(sim, wl, cq_name)
        height = _fit_height(sim, cq_name, plain) if plain is not None else None
        if plain is not None and height is None and _surely_parked(sim, wl, cq_name, plain):
            # Parked now rather than after the cycle's entries are processed: processing touches only other
            # queues (one head per queue and cycle) and holders, and its victims are evicted after requeues.
            wl.last_assignment = None  # what its scan would record: one flavor per group, nothing to resume
            progress = sim.requeue(wl, cq_name, NO_CANDIDATES, None, sim.deferred.defer(wl, cq_name, sim)) or progress
            continue
        e = Entry(wl, cq_name)
        e.assignment, e.targets = get_assignments(sim, wl, cq_name, plain, height)
        entries.append(e)
    fitting = _plan_entries(sim, live, entries)
    ordered = _ordered(sim, entries, fitting)

    claimed = _Claimed()
    temporary: list[tuple[str, dict[FR, int]]] = []  # usage added to the cycle's snapshot only
    preemptions: list[tuple[Entry, list[preemption.Target]]] = []
    for e in _in_turn(sim, ordered, groups, claimed) if groups else ordered:
        if type(e) is tuple:  # a plan head that fitted the snapshot, at its turn
            e = _plan_entry(sim, *e[1:])
            entries.append(e)
        outcome = _process(sim, e, claimed, temporary)
        if outcome == "preempt":
            preemptions.append((e, e.targets))
            progress = True
        elif outcome == "admit":
            progress = True
    for cq_name, usage in temporary:
        sim.tree.cqs[cq_name].remove_usages(usage)

    for e in entries + inadmissible:
        if e.admitted:
            continue
        if e.plan is not None:
            parked = e.plan.requeue_live(e.wl, e.requeue_reason, e.message)
            if parked is not None:
                progress = progress or parked
                continue
        if sim.requeue(e.wl, e.cq, e.requeue_reason, e.assignment, e.message):
            progress = True
    for e, targets in preemptions:
        for t in targets:
            if t.workload.holds_quota:
                sim.evict(t.workload, preempted_by=e.wl, reason=t.reason)
    return progress


def _plan_entries(sim: Simulation, live: Any, entries: list[Entry]) -> list[tuple[tuple, Any, Any, int]]:
    """The live heads of head plans: those that may preempt become entries (added to `entries`); those that fit
    the cycle's snapshot are returned as (sort key, plan, head, borrowing height), to become entries only at
    their turn (_plan_entry): on a busy cohort most lose their fit to an earlier entry."""
    fitting = []
    for plan, head, height in live:
        if height is not None:
            fitting.append((head.key, plan, head, height))
        else:
            entries.append(_plan_entry(sim, plan, head, None))
    return fitting


def _plan_entry(sim: Simulation, plan: Any, head: Any, height: int | None) -> Entry:
    """The Entry of a plan's live head (`height`: its borrowing height where it fits the snapshot, None where
    it may preempt), assigned as get_assignments assigns its plain request."""
    e = Entry(head.wl, plan.name, plan=plan)
    e.assignment, e.targets = get_assignments(sim, head.wl, plan.name, head.plain, height)
    return e


def _ordered(sim: Simulation, entries: list[Entry], fitting: list[tuple[tuple, Any, Any, int]]) -> list[Any]:
    """The cycle's order (step 3); fitting plan heads take the place their Entry would (keys are unique)."""
    if sim.fair_sharing is not None:
        return fairsharing.order_entries(sim, entries)  # no head plans with fair sharing
    sort_key = Entry.sort_key if sim.config.priority_sorting else Entry.fifo_key
    if not fitting:
        return sorted(entries, key=sort_key)
    return [item[-1] if len(item) == 2 else item for item in sorted([(sort_key(e), e) for e in entries] + fitting)]


def _in_turn(sim: Simulation, ordered: list[Any], groups: list[Any], claimed: "_Claimed") -> Iterator[Any]:
    """`ordered` with the heads of `groups` (headplan.FittingHeads) in their turns: those that take it as a
    tuple of _plan_entries; the others lose theirs (FittingHeads.finish). One heap holds the groups by the key of
    their next turn as of their last look: a look is made again only when that key comes up after an entry was
    processed (the cohort's free quota may have gone down since), so a group whose turn is not near costs
    nothing per entry."""
    sort_key = Entry.sort_key if sim.config.priority_sorting else Entry.fifo_key
    heap = [(g.key, n, -1) for n, g in enumerate(groups)]  # (key, group, the entry count it was looked at)
    for looked, item in enumerate(ordered):
        key = item[0] if type(item) is tuple else sort_key(item)
        if heap and heap[0][0] < key:  # _group_turns' own test, without a generator per entry when no turn is due
            yield from _group_turns(groups, heap, looked, claimed, key)
        count = len(claimed)
        yield item
        if len(claimed) != count:
            _claims(groups, heap, claimed, key)
    yield from _group_turns(groups, heap, len(ordered), claimed, None)
    for g in groups:
        if g.lost:
            g.finish(NO_LONGER_FITS)


def _group_turns(groups: list[Any], heap: list[tuple], looked: int, claimed: "_Claimed",
                 before: tuple | None) -> Iterator[tuple]:
    """The turns of the groups' heads that come before the sort key `before` (None: the end), in key order:
    as tuples of _plan_entries. `looked`: the number of entries processed so far (a look made since stands: a
    head's turn changes only its own cohort's quota, as it claims no victims, so other groups' looks stand)."""
    while heap and (before is None or heap[0][0] < before):
        _, n, at = heap[0]
        g = groups[n]
        if at == looked:  # its look stands: its head takes the turn
            h = g.take()
            count = len(claimed)
            yield h.key, h.plan, h, h.height
            if len(claimed) != count:  # its own turn may claim victims (a scan that resumes)
                _claims(groups, heap, claimed, h.key)
                continue
        g.look()  # (again) as its cohort's quota stands now: its key can only go up
        if g.key is None:
            heapq.heappop(heap)
        else:
            heapq.heapreplace(heap, (g.key, n, looked))


def _claims(groups: list[Any], heap: list[tuple], claimed: "_Claimed", after: tuple) -> None:
    """Victims were claimed at the turn of key `after`: the groups of their cohorts take their later turns as
    entries, one by one (FittingHeads.claimed)."""
    for g in groups:
        if not g.exact and g.root in claimed.by_root:
            g.claimed(after)
    heap[:] = [(g.key, n, -1) for n, g in enumerate(groups) if g.key is not None]
    heapq.heapify(heap)


def _plain_request(sim: Simulation, wl: SimWorkload, cq_name: str) -> dict[FR, int] | None:
    """The head's full request where its flavor scan has nothing to choose and quota is plain arithmetic:
    classical preemption, a ClusterQueue alone or in a flat cohort, one flavor per resource group, and a
    workload that is not never-admissible (so every pod set matches the flavor and no request exceeds what
    the queue could ever hold). None otherwise: the full path runs. Remembered per pod sets and ClusterQueue
    until the configuration changes (sim.plain_requests)."""
    pod_sets = wl.spec.pod_sets
    key = (id(pod_sets), cq_name)
    got = sim.plain_requests.get(key)
    if got is None or got[0] is not pod_sets:
        got = sim.plain_requests[key] = (pod_sets, _plain(sim, wl, cq_name))
    return got[1]


def _plain(sim: Simulation, wl: SimWorkload, cq_name: str) -> dict[FR, int] | None:
    if sim.fair_sharing is not None:
        return None
    root = sim.tree.cqs[cq_name].parent
    if root is not None and (not root.flat or root.parent is not None):
        return None
    usage = single_flavor_usage(sim.cluster.cluster_queues[cq_name], wl.spec.pod_sets)
    if usage is None or sim.never_admissible(wl, cq_name) is not None:
        return None
    return usage


def _direct_fit(sim: Simulation, wl: SimWorkload, cq_name: str, borrowing: int) -> Assignment:
    """The assignment of a head with a _plain_request that fits as it is (at `borrowing`, its _fit_height),
    built without the scan (flavorassigner.fitting_assignment, the same object for the same pod sets, queue
    and borrowing); the caller has made sure there is no earlier scan to resume."""
    key = (id(wl.spec.pod_sets), cq_name, borrowing)
    got = sim.fitting.get(key)
    if got is None or got[0] is not wl.spec.pod_sets:
        got = sim.fitting[key] = (wl.spec.pod_sets, fitting_assignment(sim.cluster.cluster_queues[cq_name],
                                                                        wl.spec.pod_sets, borrowing))
    return got[1]


def _scanless(wl: SimWorkload) -> bool:
    """A head with a _plain_request whose LastAssignment is none or all -1s (see get_assignments)."""
    return not _resumes(wl)


def _resumes(wl: SimWorkload) -> bool:
    """Its next flavor scan resumes after the first flavor of some resource (LastAssignment)."""
    last = wl.last_assignment
    return last is not None and any(i >= 0 for tried in last.tried for i in tried.values())


def _fit_height(sim: Simulation, cq_name: str, usage: dict[FR, int]) -> int | None:
    """The borrowing height of a plain request that fits as it is (resource_node.flat_available), None if it
    does not fit: 0 within nominal or without a cohort, else the flat root's (find_height_of_lowest_subtree_
    that_fits for such a queue)."""
    node = sim.tree.cqs[cq_name]
    borrowing = 0
    for fr, v in usage.items():
        if v > flat_available(node, fr) and v > 0:
            return None
        borrowing = max(borrowing, flat_height(node, fr, node.usage.get(fr, 0) + v))
    return borrowing


def _surely_parked(sim: Simulation, wl: SimWorkload, cq_name: str, usage: dict[FR, int]) -> bool:
    """The head can neither be admitted nor preempt, told without its flavor assignment and preemption search:
    a _plain_request (`usage`), no partial admission, and preemption.cannot_preempt on that full request
    (which is below what it needs, so it does not fit either). Such a nomination only parks the head with its
    quota message, which DeferredMessages computes if it is still shown at the end. Not for fair sharing (the
    search differs), a reclaimWithinCohort other than Any (a head without candidates reserves quota for the
    rest of the cycle) or a never-admissible head (its verdict depends on the outcome: NoFit or
    no candidates)."""
    cq = sim.cluster.cluster_queues[cq_name]
    if cq.preemption.reclaim_within_cohort != ANY:
        return False
    if sim.config.partial_admission and sim.version >= (0, 5) and \
            any(ps.min_count is not None and ps.min_count < ps.count for ps in wl.spec.pod_sets):
        return False
    return preemption.cannot_preempt(sim, wl, cq, sim.tree.cqs[cq_name], usage)


class DeferredMessages:
    """The quota messages of heads parked by _surely_parked: each is a flavor assignment run, so it is made
    only for a message still shown at the end of the run (or when a configuration change is about to
    replace the objects it reads), from copies of the usage the nomination saw."""

    def __init__(self) -> None:
        self._pending: dict[str, tuple[str, SimWorkload, Any, Node, dict[FR, int], dict[FR, int] | None, Any]] = {}
        self._count = 0
        self._shared_key: tuple[int, int] | None = None
        self._shared: dict[FR, int] = {}

    def defer(self, wl: SimWorkload, cq_name: str, sim: Simulation) -> str:
        node = sim.tree.cqs[cq_name]
        shared = None
        if node.parent is not None:  # one copy per cohort and cycle: nominations do not change usage
            key = (sim.cycle, id(node.parent))
            if self._shared_key != key:
                self._shared_key, self._shared = key, dict(node.parent.usage)
            shared = self._shared
        return self.defer_copies(wl, sim.cluster.cluster_queues[cq_name], node, dict(node.usage), shared,
                                 sim.flavors_of(cq_name))

    def defer_copies(self, wl: SimWorkload, cq: Any, node: Node, usage: dict[FR, int],
                     shared: dict[FR, int] | None, flavors: Any) -> str:
        """The message token of a head parked without its scan: the ClusterQueue, its node and flavors the
        nomination read (a configuration change may replace them before the end) and copies of the usage it saw
        (a HeadPlan keeps those itself, headplan.py)."""
        self._count += 1
        token = f"\0deferred quota message {self._count}"
        self._pending[wl.key] = (token, wl, cq, node, usage, shared, flavors)
        return token

    def resolve(self) -> None:
        for token, wl, cq, node, usage, shared, flavors in self._pending.values():
            if wl.message is token:
                wl.message = quota_message(cq, node, flavors, wl.spec.pod_sets, usage, shared)
        self._pending.clear()


class _Claimed(dict[str, SimWorkload]):
    """The victims claimed so far in a cycle (by key), also grouped by cohort tree root: a victim's quota
    only moves nodes of its own tree, so the fit check need only remove those of the entry's tree
    (usage is a function of the set of holders, so the result is the same as removing all)."""

    def __init__(self) -> None:
        super().__init__()
        self.by_root: dict[Node, list[SimWorkload]] = {}
        # per ClusterQueue (by name) or cohort root (the Node): the claimed victims' usage
        self.removed: dict[str | Node, dict[FR, int]] = {}

    def claim(self, wl: SimWorkload, root: Node) -> None:
        if wl.key not in self:
            self[wl.key] = wl
            self.by_root.setdefault(root, []).append(wl)
            for name in (wl.cluster_queue or "", root):
                acc = self.removed.setdefault(name, {})
                for fr, v in wl.usage.items():
                    acc[fr] = acc.get(fr, 0) + v

    def fits_flat(self, node: Node, root: Node, usage: dict[FR, int], new: list[SimWorkload]) -> bool:
        """ClusterQueueSnapshot.Available >= usage with every victim claimed in the tree and `new` removed, for a
        ClusterQueue without a cohort or in a flat cohort (every child a ClusterQueue without lending limits),
        where the root's usage is the plain sum of its children's: arithmetic instead of trial removals (the
        general path, `Node.available` on the updated tree, gives the same numbers)."""
        if not self.removed and not new:  # nothing claimed yet (most entries): the quota as it stands
            for fr, v in usage.items():
                if v > 0 and v > flat_available(node, fr):
                    return False
            return True
        own_removed = self.removed.get(node.name, {})
        root_removed = self.removed.get(root, {})
        for fr, v in usage.items():
            own = node.usage.get(fr, 0) - own_removed.get(fr, 0)
            removed = root_removed.get(fr, 0)
            for w in new:
                u = w.usage.get(fr, 0)
                removed += u
                if w.cluster_queue == node.name:
                    own -= u
            if node.parent is None:
                avail = node.subtree.get(fr, 0) - own
            else:
                avail = root.subtree.get(fr, 0) - root.usage.get(fr, 0) + removed
                bl = node.borrowing.get(fr)
                if bl is not None:
                    avail = min(node.subtree.get(fr, 0) - max(0, own) + bl, avail)
            if max(0, avail) < v:
                return False
        return True


def fits_on_tree(cqs: dict[str, Node], node: Node, victims: list[SimWorkload], usage: dict[FR, int]) -> bool:
    """ClusterQueueSnapshot.Available >= usage with `victims` removed from the quota tree (put back after)."""
    for v in victims:
        cqs[v.cluster_queue].remove_usages(v.usage)
    fits = all(node.cq_available(fr) >= v for fr, v in usage.items())
    for v in victims:
        cqs[v.cluster_queue].add_usages(v.usage)
    return fits


NO_LONGER_FITS = "Workload no longer fits after processing another workload"


def _process(sim: Simulation, e: Entry, claimed: _Claimed,
             temporary: list[tuple[str, dict[FR, int]]]) -> str:
    assert e.assignment is not None
    node = sim.tree.cqs[e.cq]
    mode = e.assignment.mode()
    usage = e.assignment.usage
    if mode == MODE_NO_FIT:
        e.requeue_reason = NO_FIT
        e.message = e.assignment.message()
        return "nofit"
    if mode == MODE_PREEMPT and not e.targets:
        e.requeue_reason = NO_CANDIDATES
        e.message = e.assignment.message() or "waiting for quota"
        if sim.cluster.cluster_queues[e.cq].preemption.reclaim_within_cohort != ANY:
            reserve = _to_reserve(e, node)
            node.add_usages(reserve)
            temporary.append((e.cq, reserve))
        return "nocandidates"
    targets = e.targets
    if targets and any(t.workload.key in claimed for t in targets):
        e.requeue_reason = FAILED_AFTER_NOMINATION
        e.message = "Workload has overlapping preemption targets with another workload"
        return "skipped"
    parent = node.parent
    root = node if parent is None else parent if parent.parent is None else node.root()
    cqs = sim.tree.cqs
    new = [t.workload for t in targets
           if t.workload.key not in claimed and cqs[t.workload.cluster_queue].root() is root] if targets else []
    if parent is None or root.flat:
        fits = claimed.fits_flat(node, root, usage, new)
    else:
        fits = fits_on_tree(cqs, node, claimed.by_root.get(root, []) + new, usage)
    if not fits:
        e.requeue_reason = FAILED_AFTER_NOMINATION
        e.message = NO_LONGER_FITS
        return "skipped"
    for t in targets:
        claimed.claim(t.workload, cqs[t.workload.cluster_queue].root())
    e.wl.last_assignment = None  # markPreemptionOutcome / admission: the next scan (if any) starts over
    if mode == MODE_PREEMPT:
        node.add_usages(usage)
        temporary.append((e.cq, dict(usage)))
        e.requeue_reason = PENDING_PREEMPTION
        e.message = f"waiting for {len(e.targets)} preempted workload(s)"
        return "preempt"
    if sim.admission_blocked():
        # waitForPodsReadyIfNeeded (scheduler.go): with blockAdmission nothing new is admitted while an admitted
        # workload's pods are not all ready; Kueue's scheduler waits there, so the entry is retried afterwards.
        e.requeue_reason = WAITING_FOR_PODS_READY
        e.message = "waiting for all admitted workloads to be in PodsReady condition"
        return "blocked"
    if e.plan is not None:
        e.plan.admit_head(e.wl)
    sim.admit(e.wl, e.cq, e.assignment)
    e.admitted = True
    return "admit"


def _to_reserve(e: Entry, node) -> dict[FR, int]:
    """quotaResourcesToReserve for a preempting entry that found no victims."""
    assert e.assignment is not None
    out = {}
    for fr, v in e.assignment.usage.items():
        q = node.quotas.get(fr)
        nominal = q.nominal if q else 0
        used = node.usage.get(fr, 0)
        if e.assignment.borrowing > 0:
            if q is None or q.borrowing_limit is None:
                out[fr] = v
            else:
                out[fr] = min(v, nominal + q.borrowing_limit - used)
        else:
            out[fr] = max(0, min(v, nominal - used))
    return {fr: v for fr, v in out.items() if v > 0}


def namespace_ok(sim: Simulation, wl: SimWorkload, cq_name: str) -> bool:
    cq = sim.cluster.cluster_queues[cq_name]
    labels = sim.namespace_labels(wl.spec.namespace)
    return selector_matches(cq.namespace_selector, labels)


__all__ = ["run_cycle", "get_assignments", "Entry", "MODE_FIT", "MODE_NO_FIT", "MODE_PREEMPT", "NO_FIT", "NO_CANDIDATES",
           "FAILED_AFTER_NOMINATION", "PENDING_PREEMPTION", "NAMESPACE_MISMATCH", "GENERIC", "WAITING_FOR_PODS_READY"]
