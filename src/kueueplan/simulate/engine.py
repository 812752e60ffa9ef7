"""The discrete-event loop (the contract's time model, first and second edition).

Only workload creation times, run times, scenario events, admission-check delays and the waits Kueue itself
makes (pods becoming ready, waitForPodsReady timeouts, backoffs, maximum execution time) move the clock.
At each instant: completions, `finish` and `delete` events, then admission-check attempts ending, then pods
becoming ready, then timeouts, then `apply`, then backoffs ending, then new workloads; then scheduling cycles run
until one changes nothing. Controllers take no time: a victim frees its quota at the instant it is preempted,
requeue-all is immediate.

The controllers around the scheduler live in their own modules, as Kueue splits pkg/controller from
pkg/scheduler: controller_job (jobframework), controller_workload, controller_queue,
controller_admissionchecks. The scheduler, fair sharing and preemption see this class only through
context.SchedulingContext.
"""

from __future__ import annotations

import heapq
from operator import itemgetter
from typing import Any, Callable

from kueueplan.errors import KueueplanError
from kueueplan.kube.objects import Cluster, ClusterQueue, read_object
from kueueplan.simulate import fairsharing, headplan, native, preemption, scheduler
from kueueplan.simulate.admissionfairsharing import AfsLedger
from kueueplan.kube.configuration import parse_configuration
from kueueplan.simulate.configuration import sim_configuration
from kueueplan.simulate.controller_admissionchecks import AdmissionCheckController, AdmissionCheckReconciler
from kueueplan.simulate.controller_job import JobController
from kueueplan.simulate.controller_queue import QueueController
from kueueplan.simulate.controller_workload import WorkloadController
from kueueplan.simulate.flavorassigner import Assignment
from kueueplan.simulate.heap import without_cycle_collector
from kueueplan.simulate.queue import ClusterQueueQueue
from kueueplan.simulate.resource_node import FR, build_tree
from kueueplan.simulate.scenario import Scenario
from kueueplan.simulate.workload import ADMITTED, PENDING, SimWorkload

# timer phases at one instant
_COMPLETE, _CHECK_READY, _PODS_READY, _TIMEOUT, _APPLY, _REQUEUE, _CREATE = range(7)
MAX_CYCLES_PER_INSTANT = 1_000_000
# Instants at which preemptions undid each other (each reported in `warnings`) before a run without `until` stops:
# such a run can otherwise go on forever (e.g. one workload preempted and re-admitted every second).
MAX_FLAPPING_INSTANTS = 1_000
# A run also stops once one workload has been evicted this many times: with `until` a horizon of years on a loop of
# seconds would run for days, and some loops keep timers alive that _only_repeating cannot tell from progress (pods
# ready only after their waitForPodsReady timeout); and any run stops after MAX_EVICTIONS.
MAX_EVICTIONS_PER_WORKLOAD = 1_000
MAX_EVICTIONS = 1_000_000
_HASH_MASK = headplan._MASK  # the signature sums are modulo 2**64
HEAD_PLANS = True  # headplan.py; off in tests that compare a run with the usual path
# compiled where setup.py built them (native.py)
HeadPlans = native.twin(headplan).HeadPlans
_term = native.twin(headplan).signature_term  # the terms of _signature's order-free sums


class Simulation(JobController, WorkloadController, QueueController, AdmissionCheckReconciler):
    P_COMPLETE, P_CHECK_READY, P_PODS_READY, P_TIMEOUT = _COMPLETE, _CHECK_READY, _PODS_READY, _TIMEOUT
    P_REQUEUE, P_CREATE = _REQUEUE, _CREATE

    def __init__(self, scenario: Scenario, progress: Callable[[int, int], None] | None = None) -> None:
        self.scenario = scenario
        self.version = scenario.kueue_version
        self.fair_sharing = scenario.fair_sharing
        configuration = scenario.configuration or parse_configuration(None, scenario.kueue_version)
        self.config = sim_configuration(configuration, scenario.kueue_version,
                                        scenario.configuration_source, scenario.fair_sharing)
        self.afs = AfsLedger(self.config.afs_half_life, self.config.afs_interval, self.config.afs_weights) \
            if self.config.afs_half_life is not None else None
        self.cluster = Cluster()
        for data, file, line in scenario.manifests:
            obj = read_object(data, file, line)
            if obj is None:
                self.cluster.other.append(data)
            else:
                self.cluster.apply(obj)
        self.tree = build_tree(self.cluster)
        self.queues: dict[str, ClusterQueueQueue] = {}
        self.holders: dict[str, dict[str, SimWorkload]] = {}
        self.workloads: list[SimWorkload] = []
        self.by_ref: dict[tuple[str, str, str], SimWorkload] = {}
        self.orphans: dict[str, SimWorkload] = {}
        self.events: list[dict[str, Any]] = []
        # the Configuration's, then the objects the simulator does not run (simulate/load.py, one per kind)
        self.warnings: list[str] = list(self.config.warnings) + list(scenario.warnings)
        self._managed_cache: dict[tuple[str, str, bool, int], tuple[str | None, bool]] = {}
        self._not_ready = 0  # admitted workloads whose pods are not all ready (blockAdmission)
        self._active_set: frozenset[str] = frozenset()
        self.now = 0
        self._at: tuple[int, Any] = (0, 0)  # (now, now in seconds) for emit
        self.cycle = 0
        self._timers: list[tuple[int, int, int, str, Any]] = []
        # The scenario's creations: timers too, but in a list of their own, latest first, that run() merges with the
        # heap. In the heap, 50,000 of them made every pop of a large run walk a heap of that size, mostly out of the
        # CPU's caches (the pops were 3.8% of large-jitter's simulation time, 2.1% without them).
        self._arrivals: list[tuple[int, int, int, str, Any]] = []
        self._flapping = 0  # instants at which flapping was reported (MAX_FLAPPING_INSTANTS)
        # _settle's instant: (its time, the states seen, its first event, the cycles run)
        self._instant: tuple[int, set[Any], int, list[int]] = (-1, set(), 0, [0])
        self.evicted = 0  # evictions so far (MAX_EVICTIONS)
        self.most_evicted: SimWorkload | None = None  # the workload evicted most often (MAX_EVICTIONS_PER_WORKLOAD)
        self._timer_seq = 0
        self._reserve_seq = 0
        self._deleting_cqs: set[str] = set()
        self._deleting_rfs: set[str] = set()
        self._active: list[str] | None = None
        self._config_generation = 0
        self._removals: dict[str, int] = {}  # per ClusterQueue: workloads that left it (see cq_generation)
        self._scan_marks: list[tuple[str, Any]] = []  # flavor scans that moved on in the current cycle
        self._memo_key: Any = None
        self._preemption_cache: tuple[int, dict] = (-1, {})
        self._memo: list[preemption.Target] = []
        self._derived: dict[tuple[int, int], Any] = {}
        # verdicts that read objects only, emptied on every configuration change (controller_queue)
        self._verdicts: dict[tuple[int, str], tuple[Any, str | None]] = {}
        self._problems: dict[tuple[str, str | None, str], tuple[str, str] | None] = {}
        # the scheduler's shortcuts: per pod sets and ClusterQueue, the plain request and fitting assignments
        self.plain_requests: dict[tuple[int, str], tuple[Any, dict[FR, int] | None]] = {}
        self.fitting: dict[tuple[int, str, int], tuple[Any, Assignment]] = {}
        self._root_keys: dict[str, str] = {}  # ClusterQueue -> its cohort tree's key in _parked
        self._cq_flavors: dict[str, dict[str, Any]] = {}
        self.deferred = scheduler.DeferredMessages()  # quota messages of heads parked without a flavor scan
        self._parked: dict[str, set[str]] = {}  # cohort tree -> ClusterQueues with parked workloads
        # The holders' part of _signature, kept up to date on every change instead of walking all holders
        # after every cycle: a sum of per-holder hashes (order-free), and each holder's term.
        self._usage_by_priority: dict[str, dict[int, dict[FR, int]]] = {}  # per ClusterQueue (usage_below)
        # preemption's cohort index (controller_workload.cohort_holders): the tree and active set it was built for,
        # the holders per root, and each ClusterQueue's root's
        self._cohort_index: tuple[Any, Any, dict[Any, Any], dict[str, Any]] = (None, None, {}, {})
        self._holding_hash = 0
        self._holding_terms: dict[str, int] = {}
        # The queues' part, likewise: each ClusterQueue queue names itself in _dirty_queues when its fields
        # change, and only those terms are rehashed (a cycle touches a few of the 1,000 queues of a large run).
        self._queues_hash = 0
        self._queue_terms: dict[str, int] = {}
        self._dirty_queues: set[str] = set()
        self._ready_queues: set[str] = set()  # ClusterQueue queues that may have a head (queues_with_heads)
        self.plans = HeadPlans(self, HEAD_PLANS)  # nominations that only park a head, by arithmetic
        self.ac = AdmissionCheckController(scenario.admission_checks)
        self.progress = progress
        self._sync_queues()

    # ------------------------------------------------------------------ public

    def run(self) -> "Simulation":
        # timers numbered first, as if pushed now; sorted by (time, number) (a stable sort by time), latest first
        arrivals = self._arrivals = [(t.at, _CREATE, seq, "create", t)
                                     for seq, t in enumerate(self.scenario.workloads, 1)]
        arrivals.sort(key=itemgetter(0))
        arrivals.reverse()
        self._timer_seq += len(arrivals)
        timers = self._timers
        if self.afs is not None:
            self._push(0, _TIMEOUT, "afssample", None)  # sampling starts at 0 (second edition)
        for e in sorted(self.scenario.events, key=lambda e: e.order):
            phase = _APPLY if e.action == "apply" else _COMPLETE
            self._push(e.at, phase, e.action, e)
        until = self.scenario.until
        total = len(self.scenario.workloads)
        while timers or arrivals:
            t = arrivals[-1][0] if arrivals and (not timers or arrivals[-1] < timers[0]) else timers[0][0]
            if until is not None and t > until:
                break
            if until is None and self._only_repeating():
                self.warnings.append(f"t={ms_to_seconds(self.now)}s: stopped here: from now on Kueue would evict and "
                                     "requeue the same workloads forever (pods never ready, backoff at "
                                     "backoffMaxSeconds, no backoffLimitCount); set `until` to follow it further")
                break
            self.now = t
            while True:  # the timers at t, in order: the next creation or the heap's first, whichever is first
                if arrivals and arrivals[-1][0] == t and (not timers or arrivals[-1] < timers[0]):
                    timer = arrivals.pop()
                elif timers and timers[0][0] == t:
                    timer = heapq.heappop(timers)
                else:
                    break
                self._handle(timer[3], timer[4])
            self._settle()
            if self.progress is not None:
                self.progress(len(self.workloads), total)
            if until is None and self._flapping >= MAX_FLAPPING_INSTANTS:
                self.warnings.append(f"t={ms_to_seconds(self.now)}s: stopped here: preemptions undid each other at "
                                     f"{MAX_FLAPPING_INSTANTS:,} instants, and Kueue would go on evicting and "
                                     "re-admitting the same workloads; set `until` to follow it further")
                break
            if self._evicted_too_often(until):
                until = None  # the run ends here, not at its horizon
                break
        if until is not None:
            self.now = max(self.now, until)
        self.plans.materialize_all()
        self.deferred.resolve()
        self._explain_waiting()
        return self

    def _evicted_too_often(self, until: int | None) -> bool:
        """Stop (with a warning) once a workload has been evicted MAX_EVICTIONS_PER_WORKLOAD times, or past
        MAX_EVICTIONS evictions: the bounds on a run that evicts and requeues the same workloads."""
        at = ms_to_seconds(self.now)
        most = self.most_evicted
        if most is not None and most.evictions >= MAX_EVICTIONS_PER_WORKLOAD:
            where = "stopped here, before `until`" if until is not None else "stopped here"
            self.warnings.append(f"t={at}s: {where}: {most.key} was evicted {most.evictions:,} times, and Kueue "
                                 "would go on evicting and requeueing it")
            return True
        if self.evicted >= MAX_EVICTIONS:
            self.warnings.append(f"t={at}s: stopped here: {self.evicted:,} evictions; simulate a shorter span "
                                 "(`until`) or fewer workloads")
            return True
        return False

    def _only_repeating(self) -> bool:
        """Only waitForPodsReady timeouts and backoffs at their cap are left: the run would repeat forever."""
        policy = self.config.pods_ready
        if policy is None or policy.backoff_limit is not None or self._arrivals:
            return False
        live = 0
        for _, _, _, kind, payload in self._timers:
            if kind == "afssample":
                continue
            if kind in ("podsreadytimeout", "podsready", "maxexec", "complete"):
                wl, token = payload
                if wl.run_token != token:
                    continue  # outdated by an eviction
                if kind != "podsreadytimeout":
                    return False
            elif kind == "requeue":
                wl = payload
            else:
                return False
            # the backoff last started (count) is at its cap: every later cycle is timeout + cap long
            if wl.requeue_count < 1 or policy.backoff_ms(wl.requeue_count) < policy.backoff_max * 1000:
                return False
            live += 1
        return live > 0

    def _explain_waiting(self) -> None:
        """Give workloads still waiting in an inactive ClusterQueue the reason, as Kueue's status would."""
        for wl in self.workloads:
            if wl.state == PENDING and wl.cluster_queue and not wl.message:
                reason = self.inactive_reason(wl.cluster_queue)
                if reason is not None:
                    wl.message = reason

    # ------------------------------------------------------------------ timers

    def _push(self, at: int, phase: int, kind: str, payload: Any) -> None:
        self._timer_seq += 1
        heapq.heappush(self._timers, (at, phase, self._timer_seq, kind, payload))

    def _handle(self, kind: str, payload: Any) -> None:
        if kind == "create":
            self._create(payload)
        elif kind == "complete":
            wl, token = payload
            if wl.run_token == token and wl.state == ADMITTED:
                self._complete(wl)
        elif kind == "ready":
            self._on_attempt_done(*payload)
        elif kind == "podsready":
            self._on_pods_ready(*payload)
        elif kind == "podsreadytimeout":
            self._on_pods_ready_timeout(*payload)
        elif kind == "maxexec":
            self._on_max_exec(*payload)
        elif kind == "afssample":
            self._afs_sample()
        elif kind == "requeue":
            self._on_requeue(payload)
        elif kind == "apply":
            self._apply(payload)
        elif kind in ("finish", "delete"):
            self._finish_or_delete(kind, payload)

    def _settle(self) -> None:
        # Every productive cycle admits, preempts or parks something; far more cycles than workloads and
        # queues at one instant means a flapping loop, reported instead of spinning forever. The states seen and
        # the cycles run are the instant's, kept across the returns for zero-time follow-ups (a loop can pass
        # through them, e.g. an admission check that is Ready at once).
        limit = min(MAX_CYCLES_PER_INSTANT, 20 * (len(self.workloads) + len(self.queues)) + 1000)
        if self._instant[0] != self.now:
            self._instant = (self.now, set(), len(self.events), [0])
        _, seen, first_event, cycles = self._instant
        while cycles[0] < limit:
            cycles[0] += 1
            self._scan_marks = []
            progress = scheduler.run_cycle(self)
            if progress:
                # A state seen before at this instant means preemptions undo each other (Kueue would flap
                # here, evicting the same workloads over and over): report it and leave the instant.
                signature = self._signature()
                if signature in seen:
                    self._report_flapping(first_event)
                    seen.clear()
                    return
                seen.add(signature)
            if not progress or (self._timers and self._timers[0][0] == self.now):
                return  # done, or zero-time follow-ups (Ready checks, zero runFor) first: the loop comes back
        raise KueueplanError(f"the simulation did not settle at t={self.now / 1000}s",
                             hint="please report this scenario")

    def _signature(self) -> Any:
        return hash((self._holding_hash, self._queues_signature(), tuple(self._scan_marks)))

    def _queues_signature(self) -> int:
        """A sum of per-queue hashes of (name, sticky, members, parked one by one, parked buckets), order-free
        like the holders' part; only queues named in _dirty_queues since the last call are rehashed."""
        total = self._queues_hash
        terms = self._queue_terms
        for name in self._dirty_queues:
            old = terms.pop(name, None)
            if old is not None:
                total -= old
            q = self.queues.get(name)
            if q is not None:
                term = _term((name, q.sticky, len(q.members), len(q.inadmissible), q.parked_buckets))
                terms[name] = term
                total += term
        self._dirty_queues.clear()
        self._queues_hash = total & _HASH_MASK
        return (self._queues_hash + self.plans.total) & _HASH_MASK  # queues with a HeadPlan: their terms there

    def forget_queue_term(self, name: str) -> None:
        """A queue's term leaves _queues_signature (its HeadPlan keeps it from now on)."""
        old = self._queue_terms.pop(name, None)
        if old is not None:
            self._queues_hash = (self._queues_hash - old) & _HASH_MASK
        self._dirty_queues.discard(name)

    def _rehash_holder(self, wl: SimWorkload, holding: bool) -> None:
        """Replace wl's term in the holders' hash (call after its state, usage or holding changed)."""
        key = wl.key
        old = self._holding_terms.pop(key, None)
        if old is not None:
            self._holding_hash = (self._holding_hash - old) & _HASH_MASK
        if holding:
            usage = wl.usage
            items = tuple(usage.items()) if len(usage) < 2 else tuple(sorted(usage.items()))
            term = _term((key, wl.state, items))
            self._holding_terms[key] = term
            self._holding_hash = (self._holding_hash + term) & _HASH_MASK

    def _report_flapping(self, first_event: int) -> None:
        """Say so, and park the preemptors until the next requeue-all so that the run can go on (Kueue
        itself would keep evicting the victims)."""
        self._flapping += 1
        at = ms_to_seconds(self.now)
        pairs = sorted({(e["by"], e["workload"]) for e in self.events[first_event:] if e["type"] == "Preempted"})
        by_key = {w.key: w for w in self.workloads}
        for preemptor in sorted({by for by, _ in pairs}):
            wl = by_key.get(preemptor)
            q = self.queues.get(wl.cluster_queue or "") if wl is not None else None
            if wl is not None and q is not None and not wl.holds_quota and not wl.gone:
                q.remove(wl.key)
                q.park(wl, bulk=False)
                self._parked.setdefault(self._root_key(wl.cluster_queue or ""), set()).add(wl.cluster_queue or "")
        text = "; ".join(f"{by} preempts {victim}" for by, victim in pairs)
        self.warnings.append(f"t={at}s: preemptions undo each other and Kueue would repeat them forever "
                             f"(victims are re-admitted before their preemptor): {text}")
        for by, victim in pairs:
            for key, other in ((by, victim), (victim, by)):
                wl = by_key.get(key)
                if wl is not None:
                    wl.note = f"flapping at t={at}s with {other}: Kueue would keep preempting and re-admitting"

    # ------------------------------------------------------------------ events

    def emit(self, type_: str, wl: SimWorkload, **extra: Any) -> None:
        at = self._at
        if at[0] != self.now:  # one conversion per instant, not per event
            at = self._at = (self.now, ms_to_seconds(self.now))
        ev: dict[str, Any] = {"at": at[1], "type": type_, "workload": wl.key}
        if wl.cluster_queue:
            ev["clusterQueue"] = wl.cluster_queue
        if extra:  # most events have none
            ev.update(extra)
        self.events.append(ev)

    # ------------------------------------------------------------------ preemption hooks

    def preemption_cache(self) -> dict:
        """Preemption's cache for this cycle: it is only searched while the cycle nominates, when neither
        holders nor usage change (trial removals are undone before each search ends)."""
        if self._preemption_cache[0] != self.cycle:
            self._preemption_cache = (self.cycle, {})
        return self._preemption_cache[1]

    def cq_generation(self, cq: str) -> tuple[int, int]:
        """AllocatableResourceGeneration, ordered: Kueue bumps a ClusterQueue's when a workload leaves it and
        when its cohort tree's quotas change (here: any configuration change)."""
        return self._config_generation, self._removals.get(cq, 0)

    @property
    def cluster_queues(self) -> dict[str, ClusterQueue]:
        return self.cluster.cluster_queues

    def preemption_oracle(self, wl: SimWorkload, cq: ClusterQueue, fr: FR, qty: int) -> tuple[int, int]:
        if self.fair_sharing is None:
            # The oracle's search equals get_targets for a one-resource workload: remember it for this
            # nomination (usage does not change while a cycle nominates).
            targets = self._targets_memo(wl, cq, {fr}, {fr: qty})
            return preemption.possibility(self, cq, fr, qty, targets)
        return fairsharing.simulate_preemption(self, wl, cq, fr, qty)

    def get_targets(self, wl: SimWorkload, cq_name: str, assignment: Assignment) -> list[preemption.Target]:
        cq = self.cluster.cluster_queues[cq_name]
        if self.fair_sharing is not None:
            return fairsharing.get_targets(self, wl, cq, assignment.frs_need_preemption(), assignment.usage)
        return self._targets_memo(wl, cq, assignment.frs_need_preemption(), assignment.usage)

    def _targets_memo(self, wl: SimWorkload, cq: ClusterQueue, frs: set[FR], usage: dict[FR, int]
                      ) -> list[preemption.Target]:
        memo = self._memo_key  # (workload, cycle, frs, usage) of the last search
        if memo is None or memo[0] != wl.key or memo[1] != self.cycle or memo[2] != frs or memo[3] != usage:
            self._memo_key = (wl.key, self.cycle, set(frs), dict(usage))  # copies: the caller's may change
            self._memo = preemption.get_targets(self, wl, cq, frs, usage)
        return self._memo


def ms_to_seconds(ms: int | None) -> int | float | None:
    if ms is None:
        return None
    return ms // 1000 if ms % 1000 == 0 else ms / 1000


@without_cycle_collector
def simulate(scenario: Scenario, progress: Callable[[int, int], None] | None = None) -> Simulation:
    return Simulation(scenario, progress).run()


__all__ = ["Simulation", "simulate", "ms_to_seconds"]
