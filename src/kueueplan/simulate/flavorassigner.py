"""Flavor assignment, after Kueue's pkg/scheduler/flavorassigner/flavorassigner.go (semantics doc §3).

Pod sets are assigned in order; per resource group one flavor is chosen for all covered resources of the
pod set; flavors are scanned in the ClusterQueue's order with the FlavorFungibility stopping rule; per
(flavor, resource) the quota check yields fit / preempt / reclaim / no candidates / no fit, using a
single-resource preemption simulation (the "oracle") where Kueue does. A scan that stopped before the last
flavor records where (`tried`); the workload's next scan resumes after it (LastAssignment, kept by the
scheduler while it is current). Not modelled: TAS pod-set groups.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Mapping

from kueueplan.kube.objects import ClusterQueue, Requirement, ResourceFlavor, ResourceGroup, TRY_NEXT_FLAVOR
from kueueplan.kube.podsets import PodSet
from kueueplan.kube.quantity import format_resource_value
from kueueplan.simulate.resource_node import (FR, Node, find_height_of_lowest_subtree_that_fits, flat_available,
                                               flat_height)
from kueueplan.simulate.workload import LastAssignment

# preemption modes, worst to best (flavorassigner.go preemptionMode)
NO_FIT, NO_CANDIDATES, PREEMPT, RECLAIM, FIT = range(5)
# representative (FlavorAssignmentMode) values
MODE_NO_FIT, MODE_PREEMPT, MODE_FIT = "NoFit", "Preempt", "Fit"

# Quota messages are formatted for every head that does not fit, over and over with the same amounts:
# remember the strings (format_resource_value is a pure function of its two arguments).
_format = lru_cache(maxsize=4096)(format_resource_value)

Oracle = Callable[[FR, int], tuple[int, int]]  # (fr, quantity) -> (NO_CANDIDATES|PREEMPT|RECLAIM, borrow)


def assignment_mode(mode: int) -> str:
    if mode == NO_FIT:
        return MODE_NO_FIT
    if mode == FIT:
        return MODE_FIT
    return MODE_PREEMPT


def is_preferred(a: tuple[int, int], b: tuple[int, int], preference: str | None) -> bool:
    """isPreferred over (mode, borrowing level) pairs."""
    if a[0] == NO_FIT:
        return False
    if b[0] == NO_FIT:
        return True
    a_nc, b_nc = a[0] == NO_CANDIDATES, b[0] == NO_CANDIDATES
    if a_nc != b_nc:
        return not a_nc
    if preference == "PreemptionOverBorrowing":
        if a[1] != b[1]:
            return a[1] < b[1]
        return a[0] > b[0]
    if a[0] != b[0]:
        return a[0] > b[0]
    return a[1] < b[1]


def should_try_next_flavor(mode: tuple[int, int], when_can_preempt: str, when_can_borrow: str) -> bool:
    if mode[0] in (NO_FIT, NO_CANDIDATES):
        return True
    if mode[0] in (PREEMPT, RECLAIM) and when_can_preempt == TRY_NEXT_FLAVOR:
        return True
    if mode[1] > 0 and when_can_borrow == TRY_NEXT_FLAVOR:
        return True
    return False


@dataclass(slots=True)  # one per pod set of every assignment made
class PodSetAssignment:
    name: str
    count: int
    requests: dict[str, int]  # totals for the pod set
    flavors: dict[str, str] = field(default_factory=dict)
    modes: dict[str, str] = field(default_factory=dict)
    tried: dict[str, int] = field(default_factory=dict)  # resource -> flavor index the scan stopped at, or -1

    def mode(self) -> str:
        if self.requests and not self.flavors:
            return MODE_NO_FIT
        worst = MODE_FIT
        for m in self.modes.values():
            if m == MODE_NO_FIT:
                return MODE_NO_FIT
            if m == MODE_PREEMPT:
                worst = MODE_PREEMPT
        return worst


@dataclass(slots=True)  # one per nomination that scans
class Assignment:
    pod_sets: list[PodSetAssignment] = field(default_factory=list)
    usage: dict[FR, int] = field(default_factory=dict)
    borrowing: int = 0
    reasons: list["str | Callable[[], str]"] = field(default_factory=list)
    no_fit_reason: str = ""  # Kueue's QuotaReserved reason when NoFit
    failed: bool = False
    _mode: str | None = field(default=None, repr=False, compare=False)  # read several times per entry
    _tried: tuple[tuple[dict[str, int], ...], bool] | None = field(default=None, repr=False, compare=False)
    _admitted: tuple[dict[str, dict[str, str]], dict[str, int]] | None = field(default=None, repr=False,
                                                                               compare=False)

    def mode(self) -> str:
        """The representative mode; asked only once assign() has finished building the assignment."""
        if self._mode is None:
            self._mode = self._representative_mode()
        return self._mode

    def _representative_mode(self) -> str:
        if self.failed or not self.pod_sets:
            return MODE_NO_FIT
        worst = MODE_FIT
        for ps in self.pod_sets:
            m = ps.mode()
            if m == MODE_NO_FIT:
                return MODE_NO_FIT
            if m == MODE_PREEMPT:
                worst = MODE_PREEMPT
        return worst

    def tried(self) -> tuple[dict[str, int], ...]:
        """LastState.LastTriedFlavorIdx, per pod set in order."""
        return self.scan_state()[0]

    def scan_state(self) -> tuple[tuple[dict[str, int], ...], bool]:
        """(tried(), whether a scan stopped before the last flavor), made once: asked after assign() is done."""
        if self._tried is None:
            tried = tuple(ps.tried for ps in self.pod_sets)
            self._tried = tried, any(i != -1 for per_pod_set in tried for i in per_pod_set.values())
        return self._tried

    def frs_need_preemption(self) -> set[FR]:
        return {(f, r) for ps in self.pod_sets for r, f in ps.flavors.items() if ps.modes.get(r) == MODE_PREEMPT}

    def admitted_as(self) -> tuple[dict[str, dict[str, str]], dict[str, int]]:
        """(flavors per pod set, pods per pod set) as a workload admitted with it records them: made once, and
        shared read-only by the workloads admitted with one assignment (scheduler._direct_fit reuses them)."""
        if self._admitted is None:
            self._admitted = ({ps.name: dict(sorted(ps.flavors.items())) for ps in self.pod_sets},
                              {ps.name: ps.count for ps in self.pod_sets})
        return self._admitted

    def message(self) -> str:
        texts = [r() if callable(r) else r for r in self.reasons]
        return "; ".join(dict.fromkeys(texts))


def _node_matches(terms: tuple, labels: Mapping[str, str], allowed: set[str]) -> bool:
    """Required node affinity against a fake node with the flavor's labels, keys outside them ignored."""
    if not terms:
        return True
    any_term = False
    for term in terms:
        if not isinstance(term, Mapping):
            continue
        reqs = [Requirement(str(e.get("key", "")), str(e.get("operator", "")), tuple(str(v) for v in e.get("values") or []))
                for e in term.get("matchExpressions") or [] if isinstance(e, Mapping) and e.get("key") in allowed]
        if not reqs:
            return True  # an emptied OR-term: affinity ignored (flavorSelector)
        any_term = True
        if all(r.matches(labels) for r in reqs):
            return True
    return not any_term


def flavor_matches(ps: PodSet, flavor: ResourceFlavor) -> str | None:
    """None if the pod set may run on the flavor's nodes, else the reason."""
    tolerations = ps.tolerations + flavor.tolerations
    for taint in flavor.node_taints:
        if taint.effect not in ("NoSchedule", "NoExecute"):
            continue
        if not any(t.tolerates(taint) for t in tolerations):
            return f"untolerated taint {taint.key}={taint.value}:{taint.effect} in flavor {flavor.name}"
    labels = flavor.labels
    for k, v in ps.node_selector:
        if k in labels and labels[k] != v:
            return f"flavor {flavor.name} doesn't match node affinity"
    if not _node_matches(ps.required_affinity, labels, set(labels)):
        return f"flavor {flavor.name} doesn't match node affinity"
    return None


class FlavorAssigner:
    def __init__(self, cq: ClusterQueue, node: Node, flavors: Mapping[str, ResourceFlavor], oracle: Oracle,
                 fair_sharing: bool = False, resume: LastAssignment | None = None) -> None:
        self.cq = cq
        self.resume = resume
        self.node = node
        self.flavors = flavors
        self.oracle = oracle
        self.fair_sharing = fair_sharing
        self.covers_pods = cq.group_for("pods") is not None
        self.last_reasons: list[str | Callable[[], str]] = []  # quota messages of the current run()
        self.last_no_fit = ""

    def assign(self, pod_sets: tuple[PodSet, ...], counts: list[int] | None = None) -> Assignment:
        result = Assignment()
        for i, ps in enumerate(pod_sets):
            count = ps.count if counts is None else counts[i]
            requests = ps.total(count)
            if self.covers_pods:
                requests["pods"] = count
            psa = PodSetAssignment(ps.name, count, requests)
            for res in sorted(requests):
                qty = requests[res]
                group = self.cq.group_for(res)
                if group is None:
                    if qty == 0:
                        continue
                    result.reasons.append(f"resource {res} unavailable in ClusterQueue")
                    result.no_fit_reason = "ResourceNotCovered"
                    result.failed = True
                    psa.flavors = {}
                    result.pod_sets.append(psa)
                    return result
                if res in psa.flavors:
                    continue
                start = self.resume.next_flavor(i, res) if self.resume is not None else 0
                chosen, tried = self._find_flavor(ps, requests, group, result, start)
                if chosen is None:
                    result.failed = True
                    psa.flavors, psa.tried = {}, {}
                    result.pod_sets.append(psa)
                    return result
                for r, (fname, mode, borrow) in chosen.items():
                    psa.flavors[r] = fname
                    psa.modes[r] = assignment_mode(mode)
                    psa.tried[r] = tried
                    result.borrowing = max(result.borrowing, borrow)
            result.pod_sets.append(psa)
            for r, f in psa.flavors.items():
                fr = (f, r)
                result.usage[fr] = result.usage.get(fr, 0) + requests[r]
        return result

    def _find_flavor(self, ps: PodSet, requests: dict[str, int], group: ResourceGroup, result: Assignment,
                     start: int = 0) -> tuple[dict[str, tuple[str, int, int]] | None, int]:
        """findFlavorForPodSets from flavor `start`: the assignment per covered resource, and the index of the
        flavor the scan stopped at (-1 when it reached the last one)."""
        covered = {r: v for r, v in requests.items() if r in group.covered_resources}
        ff = self.cq.flavor_fungibility
        best: dict[str, tuple[str, int, int]] | None = None
        best_mode = (NO_FIT, 1 << 30)
        last = len(group.flavors) - 1
        for idx in range(start, last + 1):
            fname = group.flavors[idx].name
            flavor = self.flavors.get(fname)
            if flavor is None:
                result.reasons.append(f"flavor {fname} not found")
                result.no_fit_reason = result.no_fit_reason or "NoMatchingFlavor"
                continue
            why = flavor_matches(ps, flavor)
            if why is not None:
                result.reasons.append(why)
                result.no_fit_reason = result.no_fit_reason or "NoMatchingFlavor"
                continue
            rep = (FIT, 0)
            assignments: dict[str, tuple[str, int, int]] = {}
            for r in sorted(covered):
                fr = (fname, r)
                mode, borrow = self._fits_resource_quota(fr, result.usage.get(fr, 0), covered[r])
                m = (mode, borrow)
                if is_preferred(rep, m, ff.preference):
                    rep = m
                if rep[0] == NO_FIT:
                    break
                assignments[r] = (fname, mode, borrow)
            if not should_try_next_flavor(rep, ff.when_can_preempt, ff.when_can_borrow):
                return assignments, (-1 if idx == last else idx)
            if is_preferred(rep, best_mode, ff.preference):
                best, best_mode = assignments, rep
        if best_mode[0] == NO_FIT:
            return None, -1
        return best, -1  # the scan reached the last flavor

    def _fits_resource_quota(self, fr: FR, assumed: int, request: int) -> tuple[int, int]:
        node = self.node
        val = assumed + request
        root = node.parent
        flat = root is None or root.flat  # the same numbers as the general path, read in O(1)
        max_capacity = _flat_potential(node, fr) if flat else node.potential_available(fr)
        res = fr[1]
        if val > max_capacity:
            self._reason(lambda: f"insufficient quota for {res} in flavor {fr[0]}, previously considered podsets "
                         f"requests ({_format(res, assumed)}) + current podset request "
                         f"({_format(res, request)}) > maximum capacity "
                         f"({_format(res, max_capacity)})", "ExceedsMaxQuota")
            return NO_FIT, 0
        if flat:
            borrow, may_reclaim, available = _flat_fit(node, fr, val)
        else:
            borrow, may_reclaim = find_height_of_lowest_subtree_that_fits(node, fr, val)
            available = node.cq_available(fr)
        if val <= available:
            return FIT, borrow
        self._reason(lambda: f"insufficient unused quota for {res} in flavor {fr[0]}, "
                     f"{_format(res, val - available)} more needed", "WaitingForQuota")
        if node.nominal(fr) >= val or may_reclaim or self._can_preempt_while_borrowing():
            return self.oracle(fr, val)
        return NO_FIT, borrow

    def _can_preempt_while_borrowing(self) -> bool:
        p = self.cq.preemption
        return p.borrow_within_cohort.policy != "Never" or (self.fair_sharing and p.reclaim_within_cohort != "Never")

    def _reason(self, text: "str | Callable[[], str]", reason: str) -> None:
        """Record why a flavor did not fit; messages are formatted only if someone reads them."""
        self.last_reasons.append(text)
        if reason == "ExceedsMaxQuota" or not self.last_no_fit:
            self.last_no_fit = reason

    def run_one(self, ps: PodSet, fr: FR) -> Assignment:
        """run() for a single pod set requesting a single resource of a one-flavor group whose flavor it
        matches, with no scan to resume (what scheduler._plain_request establishes): the same Assignment,
        without the generic scan."""
        self.last_reasons = []
        self.last_no_fit = ""
        result = Assignment()
        requests = ps.total(ps.count)
        if self.covers_pods:  # as assign(): the single resource may be `pods` itself
            requests["pods"] = ps.count
        psa = PodSetAssignment(ps.name, ps.count, requests)
        res = fr[1]
        mode, borrow = self._fits_resource_quota(fr, 0, requests[res])
        if mode == NO_FIT:
            result.failed = True
        else:
            psa.flavors[res] = fr[0]
            psa.modes[res] = assignment_mode(mode)
            psa.tried[res] = -1
            result.borrowing = borrow
            result.usage[fr] = requests[res]
        result.pod_sets.append(psa)
        result.reasons.extend(self.last_reasons)
        result.no_fit_reason = self.last_no_fit
        return result

    def run(self, pod_sets: tuple[PodSet, ...], counts: list[int] | None = None) -> Assignment:
        """assign() and attach the quota messages gathered on the way."""
        self.last_reasons = []
        self.last_no_fit = ""
        a = self.assign(pod_sets, counts)
        a.reasons.extend(self.last_reasons)
        if not a.no_fit_reason:
            a.no_fit_reason = self.last_no_fit
        return a


def _flat_potential(node: Node, fr: FR) -> int:
    """Node.potential_available of a ClusterQueue alone (its nominal quota) or in a flat cohort (the root's
    quota, capped by nominal + borrowing limit: its lending limits, none there, do not count)."""
    root = node.parent
    if root is None:
        return node.subtree.get(fr, 0)
    avail = root.subtree.get(fr, 0)
    bl = node.borrowing.get(fr)
    if bl is not None:
        avail = min(node.subtree.get(fr, 0) + bl, avail)
    return avail


def _flat_fit(node: Node, fr: FR, val: int) -> tuple[int, bool, int]:
    """find_height_of_lowest_subtree_that_fits and Node.cq_available of a ClusterQueue alone or in a flat
    cohort, in O(1): the height is 0 within nominal quota or alone, else the root's (whole tree)."""
    borrow = flat_height(node, fr, node.usage.get(fr, 0) + val)
    # within nominal in a cohort (a root's height is at least 1): a smaller subtree than the whole tree fits
    may_reclaim = borrow == 0 and node.parent is not None
    available = flat_available(node, fr)
    return borrow, may_reclaim, available if available > 0 else 0


def single_flavor_usage(cq: ClusterQueue, pod_sets: tuple[PodSet, ...]) -> dict[FR, int] | None:
    """The usage of a full assignment when each resource group a pod set needs has one flavor (there is then
    nothing to choose); None otherwise, or when a requested resource is not covered."""
    covers_pods = cq.group_for("pods") is not None
    out: dict[FR, int] = {}
    for ps in pod_sets:
        requests = ps.total(ps.count)
        if covers_pods:
            requests["pods"] = ps.count
        for res, qty in requests.items():
            group = cq.group_for(res)
            if group is None:
                if qty:
                    return None
                continue
            if len(group.flavors) != 1:
                return None
            fr = (group.flavors[0].name, res)
            out[fr] = out.get(fr, 0) + qty
    return out


def fitting_assignment(cq: ClusterQueue, pod_sets: tuple[PodSet, ...], borrowing: int) -> Assignment:
    """What assign() builds for pod sets that fit a ClusterQueue with one flavor per resource group, in the
    same order (a group's resources together, when its first one comes up in sorted order)."""
    covers_pods = cq.group_for("pods") is not None
    result = Assignment(borrowing=borrowing)
    for ps in pod_sets:
        requests = ps.total(ps.count)
        if covers_pods:
            requests["pods"] = ps.count
        psa = PodSetAssignment(ps.name, ps.count, requests)
        for res in sorted(requests):
            group = cq.group_for(res)
            if group is None or res in psa.flavors:
                continue
            fname = group.flavors[0].name
            for r in sorted(r for r in requests if r in group.covered_resources):
                psa.flavors[r] = fname
                psa.modes[r] = MODE_FIT
                psa.tried[r] = -1
        result.pod_sets.append(psa)
        for r, f in psa.flavors.items():
            fr = (f, r)
            result.usage[fr] = result.usage.get(fr, 0) + requests[r]
    return result


def quota_message(cq: ClusterQueue, node: Node, flavors: Mapping[str, ResourceFlavor], pod_sets: tuple[PodSet, ...],
                  usage: dict[FR, int], shared: dict[FR, int] | None) -> str:
    """The message of a nomination that neither fits nor preempts, with the ClusterQueue's usage and its cohort
    root's (`shared`) as they were then: the reasons do not depend on the preemption oracle's answers."""
    root = node.parent
    saved = node.usage, root.usage if root is not None else None
    node.usage = usage
    if root is not None and shared is not None:
        root.usage = shared
    try:
        a = FlavorAssigner(cq, node, flavors, lambda fr, qty: (NO_CANDIDATES, 0)).run(pod_sets)
    finally:
        node.usage = saved[0]
        if root is not None and saved[1] is not None:
            root.usage = saved[1]
    if a.mode() == MODE_NO_FIT:
        return a.message()
    return a.message() or "waiting for quota"


__all__ = ["FlavorAssigner", "Assignment", "fitting_assignment", "single_flavor_usage", "quota_message", "PodSetAssignment", "flavor_matches", "MODE_FIT", "MODE_PREEMPT",
           "MODE_NO_FIT", "NO_FIT", "NO_CANDIDATES", "PREEMPT", "RECLAIM", "FIT"]
