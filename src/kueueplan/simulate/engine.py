"""The discrete-event loop (the contract's time model).

Only workload creation times, run times, scenario events and admission-check delays move the clock.
At each instant: completions, `finish` and `delete` events, then admission checks turning Ready, then
`apply`, then new workloads; then scheduling cycles run until one changes nothing. Controllers take no
time: a victim frees its quota at the instant it is preempted, requeue-all is immediate.
"""

from __future__ import annotations

import dataclasses
import heapq
from typing import Any, Callable, Iterable

from kueueplan.errors import KueueplanError
from kueueplan.kube.objects import Cluster, ClusterQueue, read_object
from kueueplan.kube.podsets import derive_workload, SUPPORTED_KINDS
from kueueplan.simulate import preemption, scheduler
from kueueplan.simulate.admissibility import never_admissible_reason
from kueueplan.simulate.admissionchecks import AdmissionCheckController, applicable_checks
from kueueplan.simulate.flavorassigner import Assignment
from kueueplan.simulate.heap import without_cycle_collector
from kueueplan.simulate.queue import ClusterQueueQueue
from kueueplan.simulate.resource_node import FR, build_tree
from kueueplan.simulate.scenario import Scenario, WorkloadTemplate
from kueueplan.simulate.workload import (ADMITTED, FINISHED, INADMISSIBLE, PENDING, QUOTA_RESERVED, SimWorkload)

# timer phases at one instant
_COMPLETE, _CHECK_READY, _APPLY, _CREATE = 0, 1, 2, 3
MAX_CYCLES_PER_INSTANT = 1_000_000
_HASH_MASK = (1 << 64) - 1


class Simulation:
    def __init__(self, scenario: Scenario, progress: Callable[[int, int], None] | None = None) -> None:
        self.scenario = scenario
        self.version = scenario.kueue_version
        self.fair_sharing = scenario.fair_sharing
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
        self.warnings: list[str] = list(scenario.warnings)
        self.now = 0
        self.cycle = 0
        self._timers: list[tuple[int, int, int, str, Any]] = []
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
        self._parked: dict[str, set[str]] = {}  # cohort tree -> ClusterQueues with parked workloads
        # The holders' part of _signature, kept up to date on every change instead of walking all holders
        # after every cycle: a sum of per-holder hashes (order-free), and each holder's term.
        self._holding_hash = 0
        self._holding_terms: dict[str, int] = {}
        self.ac = AdmissionCheckController(scenario.admission_checks)
        self.progress = progress
        self._sync_queues()

    # ------------------------------------------------------------------ public

    def run(self) -> "Simulation":
        for i, t in enumerate(self.scenario.workloads):
            self._push(t.at, _CREATE, "create", t)
        for e in sorted(self.scenario.events, key=lambda e: e.order):
            phase = _APPLY if e.action == "apply" else _COMPLETE
            self._push(e.at, phase, e.action, e)
        until = self.scenario.until
        total = len(self.scenario.workloads)
        while self._timers:
            t = self._timers[0][0]
            if until is not None and t > until:
                break
            self.now = t
            while self._timers and self._timers[0][0] == t:
                _, _, _, kind, payload = heapq.heappop(self._timers)
                self._handle(kind, payload)
            self._settle()
            if self.progress is not None:
                self.progress(len(self.workloads), total)
        if until is not None:
            self.now = max(self.now, until)
        self._explain_waiting()
        return self

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
            wl, check, token = payload
            if wl.run_token == token and wl.state == QUOTA_RESERVED and check in wl.checks:
                wl.checks[check] = "Ready"
                if all(s == "Ready" for s in wl.checks.values()):
                    self._set_admitted(wl)
        elif kind == "apply":
            self._apply(payload)
        elif kind in ("finish", "delete"):
            self._finish_or_delete(kind, payload)

    def _settle(self) -> None:
        # Every productive cycle admits, preempts or parks something; far more cycles than workloads and
        # queues at one instant means a flapping loop, reported instead of spinning forever.
        limit = min(MAX_CYCLES_PER_INSTANT, 20 * (len(self.workloads) + len(self.queues)) + 1000)
        seen: set[Any] = set()
        first_event = len(self.events)
        for _ in range(limit):
            self._scan_marks = []
            progress = scheduler.run_cycle(self)
            if self._timers and self._timers[0][0] == self.now:
                return  # zero-time follow-ups (Ready checks, zero runFor) first; the loop comes back here
            if not progress:
                return
            # A state seen before at this instant means preemptions undo each other (Kueue would flap
            # here, evicting the same workloads over and over): report it and leave the instant.
            signature = self._signature()
            if signature in seen:
                self._report_flapping(first_event)
                return
            seen.add(signature)
        raise KueueplanError(f"the simulation did not settle at t={self.now / 1000}s",
                             hint="please report this scenario")

    def _signature(self) -> Any:
        holding = self._holding_hash
        queues = tuple((n, q.sticky, len(q.members), len(q.inadmissible), sum(b.parked for b in q.buckets.values()))
                       for n, q in sorted(self.queues.items()))
        return hash((holding, queues, tuple(self._scan_marks)))

    def _rehash_holder(self, wl: SimWorkload, holding: bool) -> None:
        """Replace wl's term in the holders' hash (call after its state, usage or holding changed)."""
        key = wl.key
        old = self._holding_terms.pop(key, None)
        if old is not None:
            self._holding_hash = (self._holding_hash - old) & _HASH_MASK
        if holding:
            term = hash((key, wl.state, tuple(sorted(wl.usage.items())))) & _HASH_MASK
            self._holding_terms[key] = term
            self._holding_hash = (self._holding_hash + term) & _HASH_MASK

    def _report_flapping(self, first_event: int) -> None:
        """Say so, and park the preemptors until the next requeue-all so that the run can go on (Kueue
        itself would keep evicting the victims)."""
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
        ev: dict[str, Any] = {"at": ms_to_seconds(self.now), "type": type_, "workload": wl.key}
        if wl.cluster_queue:
            ev["clusterQueue"] = wl.cluster_queue
        ev.update(extra)
        self.events.append(ev)

    # ------------------------------------------------------------------ workloads

    def _create(self, t: WorkloadTemplate) -> None:
        try:
            spec = self._derive(t)
        except KueueplanError as err:
            if err.file is None:
                err.file, err.line = self.scenario.file, t.line
            raise
        wl = SimWorkload(len(self.workloads), spec, self.now, t.run_for, t.manifest)
        wl.queue_ts = self.now
        if not spec.finishes and t.run_for is not None:
            wl.run_for = None  # a RayCluster holds its quota until it is deleted
            wl.note = "runFor ignored: a RayCluster never finishes by itself; end it with a delete event"
        self.workloads.append(wl)
        self.by_ref[(spec.kind, spec.namespace, spec.name)] = wl
        cq = self._route(wl)
        wl.cluster_queue = cq
        self.emit("Created", wl)
        self._place(wl)

    def _derive(self, t: WorkloadTemplate) -> Any:
        """derive_workload, once per `workloads` entry and configuration (copies differ only in name)."""
        if t.group is None:
            return derive_workload(t.manifest, self.cluster, self.version)
        key = (t.group, self._config_generation)
        cached = self._derived.get(key)
        if cached is None:
            cached = self._derived[key] = derive_workload(t.manifest, self.cluster, self.version)
        return dataclasses.replace(cached, name=t.name)

    def _route(self, wl: SimWorkload) -> str | None:
        """The ClusterQueue of a workload's LocalQueue, or None (with wl.message set)."""
        spec = wl.spec
        if spec.problem:
            wl.message = spec.problem
            return None
        if not spec.queue_name:
            wl.message = "no kueue.x-k8s.io/queue-name label: Kueue does not manage it"
            return None
        lq = self.cluster.local_queues.get((spec.namespace, spec.queue_name))
        if lq is None:
            wl.message = f"LocalQueue {spec.namespace}/{spec.queue_name} doesn't exist"
            return None
        if lq.cluster_queue not in self.cluster.cluster_queues or lq.cluster_queue in self._deleting_cqs:
            wl.message = f"ClusterQueue {lq.cluster_queue} doesn't exist"
            return lq.cluster_queue if lq.cluster_queue in self._deleting_cqs else None
        return lq.cluster_queue

    def _place(self, wl: SimWorkload) -> None:
        """Queue a pending workload in its ClusterQueue, or keep it aside as inadmissible."""
        cq = wl.cluster_queue
        if cq is None or cq not in self.queues or cq in self._deleting_cqs:
            self.orphans[wl.key] = wl
            self._mark_inadmissible(wl, wl.message)
            return
        self.orphans.pop(wl.key, None)
        verdict = self.queues[cq].push(wl)
        if verdict is not None:
            self._mark_inadmissible(wl, verdict)

    def _mark_inadmissible(self, wl: SimWorkload, message: str) -> None:
        wl.message = message
        if wl.state != INADMISSIBLE:
            wl.state = INADMISSIBLE
            self.emit("Inadmissible", wl, message=message)

    def requeue(self, wl: SimWorkload, cq: str, reason: str, assignment: Assignment | None, message: str) -> bool:
        """Put a head back after a cycle; True when it was parked (a change)."""
        if wl.gone or wl.holds_quota:
            return False
        if cq not in self.queues:
            self._place(wl)
            return True
        wl.message = message
        never = None
        if reason == scheduler.NO_FIT:
            never = never_admissible_reason(self.cluster, self.tree, wl.spec, cq)
            if never is not None:
                self._mark_inadmissible(wl, never)
            elif wl.state == INADMISSIBLE:
                wl.state = PENDING
        elif wl.state == INADMISSIBLE and reason not in (scheduler.NAMESPACE_MISMATCH, "Stopped"):
            wl.state = PENDING
        if reason == scheduler.NAMESPACE_MISMATCH:
            self._mark_inadmissible(wl, message)
        q = self.queues[cq]
        if reason == scheduler.PENDING_PREEMPTION and not q.strict_fifo:
            q.sticky = wl.key
        elif q.sticky == wl.key:
            q.sticky = None  # no longer waiting for its preemptions
        if reason == "Stopped":
            immediate = False
        elif q.strict_fifo:
            immediate = reason != scheduler.NAMESPACE_MISMATCH
        else:
            immediate = reason in (scheduler.FAILED_AFTER_NOMINATION, scheduler.PENDING_PREEMPTION)
        # A scan that stopped before the last flavor goes straight back (PendingFlavors): the next cycle
        # resumes it from the following flavor, so that is a change too.
        last = wl.last_assignment
        pending = last is not None and last.pending_flavors() and reason != "Stopped"
        if immediate or pending:
            q.push(wl)
            if pending:
                self._scan_marks.append((wl.key, tuple(tuple(sorted(d.items())) for d in last.tried)))
            return pending
        bulk = not q.strict_fifo and reason in (scheduler.NO_FIT, scheduler.NO_CANDIDATES)
        self._parked.setdefault(self._root_key(cq), set()).add(cq)
        for other in q.park(wl, bulk, never):
            self._mark_inadmissible(other, never or "")
        return True

    def admit(self, wl: SimWorkload, cq_name: str, assignment: Assignment) -> None:
        """Reserve quota; Admitted at once when no admission check applies."""
        wl.state = QUOTA_RESERVED
        wl.cluster_queue = cq_name
        wl.usage = dict(assignment.usage)
        wl.assignment = assignment.flavors_by_pod_set()
        wl.counts = {ps.name: ps.count for ps in assignment.pod_sets}
        wl.reserved_at = self.now
        self._reserve_seq += 1
        wl.reserve_seq = self._reserve_seq
        wl.message = ""
        self.tree.cqs[cq_name].add_usages(wl.usage)
        self.holders.setdefault(cq_name, {})[wl.key] = wl
        self._rehash_holder(wl, True)
        q = self.queues[cq_name]
        if q.sticky == wl.key:
            q.sticky = None
        self.emit("QuotaReserved", wl)
        cq = self.cluster.cluster_queues[cq_name]
        flavors = {f for fr in wl.usage for f in (fr[0],)}
        checks = applicable_checks(cq, flavors)
        wl.checks = {c: "Pending" for c in checks}
        if not checks:
            self._set_admitted(wl)
            return
        wl.message = "waiting for admission checks: " + ", ".join(checks)
        for c in checks:
            for w, check, at in self.ac.start(self.cluster, wl, c, self.now):
                self._push(at, _CHECK_READY, "ready", (w, check, w.run_token))

    def _set_admitted(self, wl: SimWorkload) -> None:
        wl.state = ADMITTED
        wl.admitted_at = self.now
        if wl.key in self._holding_terms:
            self._rehash_holder(wl, True)
        wl.message = ""
        self.emit("Admitted", wl)
        if wl.run_for is not None:
            self._push(self.now + wl.run_for, _COMPLETE, "complete", (wl, wl.run_token))

    def _release(self, wl: SimWorkload) -> None:
        cq = wl.cluster_queue
        if cq is not None and wl.holds_quota:
            self._removals[cq] = self._removals.get(cq, 0) + 1
        if cq is not None and cq in self.tree.cqs and wl.holds_quota:
            self.tree.cqs[cq].remove_usages(wl.usage)
        wl.last_assignment = None
        if cq is not None:
            self.holders.get(cq, {}).pop(wl.key, None)
        self._rehash_holder(wl, False)
        wl.usage = {}
        wl.checks = {}
        wl.run_token += 1
        for w, check, at in self.ac.release(self.cluster, wl, self.now):
            self._push(at, _CHECK_READY, "ready", (w, check, w.run_token))

    def evict(self, wl: SimWorkload, preempted_by: SimWorkload | None = None, reason: str = "") -> None:
        """Loss of quota: preemption (with the preemptor) or eviction; back to the queue."""
        cq = wl.cluster_queue
        self._release(wl)
        wl.evictions += 1
        if preempted_by is not None:
            self.emit("Preempted", wl, by=preempted_by.key, reason=reason)
            wl.message = f"preempted by {preempted_by.key} ({reason})"
        else:
            self.emit("Evicted", wl, reason=reason)
            wl.message = f"evicted ({reason})"
        if preempted_by is not None and wl.spec.kind == "Pod":
            self._end(wl, "Finished")  # Kueue deletes a preempted plain Pod
        else:
            wl.state = PENDING
            self._place(wl)
        if cq is not None:
            self._requeue_tree(cq)
            self._finalize_deletions()

    def _complete(self, wl: SimWorkload) -> None:
        cq = wl.cluster_queue
        self._release(wl)
        self._end(wl, "Finished")
        if cq is not None:
            self._requeue_tree(cq)
        self._finalize_deletions()

    def _end(self, wl: SimWorkload, event: str) -> None:
        wl.state = FINISHED
        wl.finished_at = self.now
        wl.gone = True
        cq = wl.cluster_queue
        if cq in self.queues:
            self.queues[cq].remove(wl.key)
        self.orphans.pop(wl.key, None)
        self.emit(event, wl)

    def _find(self, target: dict[str, Any]) -> SimWorkload | None:
        return self.by_ref.get((str(target.get("kind")), str(target.get("namespace") or "default"),
                                str(target.get("name"))))

    def _finish_or_delete(self, action: str, event: Any) -> None:
        target = event.target
        kind = str(target.get("kind"))
        if kind in SUPPORTED_KINDS:
            wl = self._find(target)
            if wl is None or wl.gone:
                return
            was_holding = wl.holds_quota
            cq = wl.cluster_queue
            self._release(wl)
            if action == "finish":
                self._end(wl, "Finished")
            else:
                self._end(wl, "Deleted")
            if was_holding and cq is not None:
                self._requeue_tree(cq)
            self._finalize_deletions()
            return
        if action == "finish":
            raise KueueplanError(f"finish applies to workloads, not {kind}", file=self.scenario.file, line=event.line)
        self._delete_object(kind, target.get("namespace"), str(target.get("name")))

    def _delete_object(self, kind: str, namespace: Any, name: str) -> None:
        if kind == "ClusterQueue" and self.holders.get(name):
            self._deleting_cqs.add(name)  # finalizer: wait for its admitted workloads
        elif kind == "ResourceFlavor" and any(fr[0] == name for ws in self.holders.values()
                                               for w in ws.values() for fr in w.usage):
            self._deleting_rfs.add(name)
        else:
            self.cluster.delete(kind, str(namespace) if namespace else None, name)
        self._config_changed()

    def _finalize_deletions(self) -> None:
        done = False
        for name in sorted(self._deleting_cqs):
            if not self.holders.get(name):
                self._deleting_cqs.discard(name)
                self.cluster.delete("ClusterQueue", None, name)
                done = True
        for name in sorted(self._deleting_rfs):
            if not any(fr[0] == name for ws in self.holders.values() for w in ws.values() for fr in w.usage):
                self._deleting_rfs.discard(name)
                self.cluster.delete("ResourceFlavor", None, name)
                done = True
        if done:
            self._config_changed()

    def _apply(self, event: Any) -> None:
        data = event.target
        kind = data.get("kind")
        if kind in SUPPORTED_KINDS:
            md = data.get("metadata") or {}
            existing = self._find({"kind": kind, "namespace": md.get("namespace"), "name": md.get("name")})
            if existing is not None and not existing.gone:
                raise KueueplanError(f"apply of an existing {kind} {existing.key} is not supported",
                                     file=self.scenario.file, line=event.line,
                                     hint="delete it first, or give the new one another name")
            self._create(WorkloadTemplate(self.now, None, dict(data), str(md.get("name")), event.line))
            return
        obj = read_object(data, self.scenario.file, event.line)
        if obj is None:
            self.cluster.other.append(data)
            return
        if obj.kind == "ClusterQueue":
            self._deleting_cqs.discard(obj.name)
        self.cluster.apply(obj)
        self._config_changed()

    # ------------------------------------------------------------------ configuration

    def _sync_queues(self) -> None:
        for name, cq in self.cluster.cluster_queues.items():
            q = self.queues.get(name)
            if q is None:
                q = self.queues[name] = ClusterQueueQueue(name)
            q.strict_fifo = cq.queueing_strategy == "StrictFIFO"
            self.holders.setdefault(name, {})
        for name in sorted(set(self.queues) - set(self.cluster.cluster_queues)):
            q = self.queues.pop(name)
            for wl in q.pending():
                wl.cluster_queue = None
                wl.message = f"ClusterQueue {name} doesn't exist"
                self.orphans[wl.key] = wl

    def _config_changed(self) -> None:
        self._active = None
        self._config_generation += 1
        self.tree = build_tree(self.cluster)
        for cq, ws in self.holders.items():
            node = self.tree.cqs.get(cq)
            for w in ws.values():
                if node is not None:
                    node.add_usages(w.usage)
        self._sync_queues()
        # workloads whose queue or priority class may now exist
        for wl in sorted(self.orphans.values(), key=lambda w: w.seq):
            if wl.spec.problem:
                wl.spec = derive_workload(wl.manifest, self.cluster, self.version)
            cq = self._route(wl)
            if cq is not None and cq in self.queues and cq not in self._deleting_cqs:
                wl.cluster_queue = cq
                wl.state = PENDING
                self._place(wl)
            else:
                self._mark_inadmissible(wl, wl.message)
        self._enforce_stop_policies()
        self._parked.clear()
        for q in self.queues.values():
            q.requeue_all()
        for wl in self.workloads:
            if wl.state == INADMISSIBLE and wl.key not in self.orphans and wl.cluster_queue in self.queues:
                problem = self.admissibility_problem(wl, wl.cluster_queue)
                if (problem is None or problem[1] != scheduler.NAMESPACE_MISMATCH) and \
                        never_admissible_reason(self.cluster, self.tree, wl.spec, wl.cluster_queue) is None:
                    wl.state = PENDING  # it may fit now; the next cycles decide

    def _enforce_stop_policies(self) -> None:
        for name in sorted(self.holders):
            cq = self.cluster.cluster_queues.get(name)
            for wl in sorted(self.holders[name].values(), key=lambda w: w.reserve_seq):
                lq = self.cluster.local_queues.get((wl.spec.namespace, wl.spec.queue_name or ""))
                if cq is not None and cq.stop_policy != "None":
                    if wl.state == QUOTA_RESERVED or cq.stop_policy == "HoldAndDrain":
                        self.evict(wl, reason="ClusterQueueStopped")
                elif lq is not None and lq.stop_policy != "None":
                    if wl.state == QUOTA_RESERVED or lq.stop_policy == "HoldAndDrain":
                        self.evict(wl, reason="LocalQueueStopped")

    def active_cluster_queues(self) -> list[str]:
        if self._active is None:
            self._active = [n for n in sorted(self.queues) if self.inactive_reason(n) is None]
        return self._active

    def inactive_reason(self, name: str) -> str | None:
        cq = self.cluster.cluster_queues.get(name)
        if cq is None:
            return f"ClusterQueue {name} doesn't exist"
        if name in self._deleting_cqs:
            return f"ClusterQueue {name} is being deleted"
        if cq.stop_policy != "None":
            return f"ClusterQueue {name} is stopped ({cq.stop_policy})"
        if name in self.tree.cyclic:
            return f"ClusterQueue {name}'s cohort tree has a cycle"
        for f in cq.flavor_names():
            if f not in self.cluster.resource_flavors or f in self._deleting_rfs:
                return f"ClusterQueue {name} references ResourceFlavor {f}, which doesn't exist"
        for rule in cq.admission_checks:
            if rule.name not in self.cluster.admission_checks:
                return f"ClusterQueue {name} references AdmissionCheck {rule.name}, which doesn't exist"
        return None

    def admissibility_problem(self, wl: SimWorkload, cq_name: str) -> tuple[str, str] | None:
        lq = self.cluster.local_queues.get((wl.spec.namespace, wl.spec.queue_name or ""))
        if lq is not None and lq.stop_policy != "None":
            return f"LocalQueue {lq.namespace}/{lq.name} is stopped", "Stopped"
        if not scheduler.namespace_ok(self, wl, cq_name):
            return (f"namespace {wl.spec.namespace} doesn't match the namespaceSelector of ClusterQueue {cq_name}",
                    scheduler.NAMESPACE_MISMATCH)
        return None

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        labels = self.cluster.namespace_labels(namespace)
        return labels if labels is not None else {"kubernetes.io/metadata.name": namespace}

    def _root_key(self, cq: str) -> str:
        node = self.tree.cqs.get(cq)
        if node is None or node.parent is None:
            return f"cq/{cq}"
        return f"cohort/{node.root().name}"

    def _requeue_tree(self, cq: str) -> None:
        """Requeue-all for every ClusterQueue of the cohort tree (only those that parked something)."""
        for name in sorted(self._parked.pop(self._root_key(cq), ())):
            q = self.queues.get(name)
            if q is not None:
                q.requeue_all()

    # ------------------------------------------------------------------ preemption hooks

    def workloads_in(self, cq: str) -> Iterable[SimWorkload]:
        return self.holders.get(cq, {}).values()

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
        from kueueplan.simulate import fairsharing
        return fairsharing.simulate_preemption(self, wl, cq, fr, qty)

    def get_targets(self, wl: SimWorkload, cq_name: str, assignment: Assignment) -> list[preemption.Target]:
        cq = self.cluster.cluster_queues[cq_name]
        if self.fair_sharing is not None:
            from kueueplan.simulate import fairsharing
            return fairsharing.get_targets(self, wl, cq, assignment.frs_need_preemption(), assignment.usage)
        return self._targets_memo(wl, cq, assignment.frs_need_preemption(), assignment.usage)

    def _targets_memo(self, wl: SimWorkload, cq: ClusterQueue, frs: set[FR], usage: dict[FR, int]
                      ) -> list[preemption.Target]:
        key = (wl.key, self.cycle, tuple(sorted(frs)), tuple(sorted(usage.items())))
        if self._memo_key != key:
            self._memo_key = key
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
