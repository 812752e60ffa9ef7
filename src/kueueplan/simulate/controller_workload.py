"""The Workload controller (pkg/controller/core/workload_controller.go) and the workload side of the scheduler's
admit/evict (pkg/scheduler/scheduler.go admit, pkg/workload/evict).

A mixin of `engine.Simulation`:
- quota reservation and admission; pods become ready `podsReadyAfter` after admission and `runFor` counts from
  then;
- waitForPodsReady: reconcileNotReadyTimeout evicts (reason PodsReadyTimeout) a workload whose pods are not ready
  `timeout` after its admission, UpdateRequeueState backs it off base*2^(n-1) (capped, no jitter), and
  triggerDeactivation deactivates it when requeueState.count+1 > backoffLimitCount; blockAdmission
  (scheduler.go waitForPodsReadyIfNeeded) admits nothing new while an admitted workload is not ready;
- reconcileMaxExecutionTime: kueue.x-k8s.io/max-exec-time-seconds counts admitted time, past admissions included
  (AccumulatedPastExecutionTimeSeconds), then deactivates (cause MaximumExecutionTimeExceeded);
- WorkloadPriorityClass value changes reach pending and admitted workloads (the job reconciler updates
  spec.priority of Workloads whose priority comes from a WorkloadPriorityClass);
- queue-order timestamps (pkg/workload/workload.go GetQueueOrderTimestamp): the eviction time after a
  PodsReadyTimeout (requeuingStrategy.timestamp Eviction) or an AdmissionCheck eviction, else creation.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kueueplan.simulate.flavorassigner import Assignment
from kueueplan.simulate.preemption import reserve_order, reserved_later_or_same
from kueueplan.simulate.resource_node import FR, Node
from kueueplan.simulate.scenario import NEVER
from kueueplan.simulate.workload import (ADMITTED, DEACTIVATED, PENDING, QUOTA_RESERVED, SimWorkload)

PODS_READY_TIMEOUT = "PodsReadyTimeout"
ADMISSION_CHECK = "AdmissionCheck"
DEACTIVATED_REASON = "Deactivated"
REQUEUING_LIMIT_EXCEEDED = "RequeuingLimitExceeded"
MAX_EXEC_EXCEEDED = "MaximumExecutionTimeExceeded"
_NO_HOLDERS: dict[Any, Any] = {}  # shared, never written


class WorkloadController:
    # ------------------------------------------------------------------ reservation and admission

    def admit(self, wl: SimWorkload, cq_name: str, assignment: Assignment) -> None:
        """Reserve quota; Admitted at once when no admission check applies."""
        wl.state = QUOTA_RESERVED
        wl.cluster_queue = cq_name
        wl.usage = dict(assignment.usage)
        wl.assignment, wl.counts = assignment.admitted_as()  # shared, read-only
        wl.reserved_at = self.now
        self._reserve_seq += 1
        wl.reserve_seq = self._reserve_seq
        wl.message = ""
        self.tree.cqs[cq_name].add_usages(wl.usage)
        holders = self.holders.get(cq_name)
        if holders is None:
            holders = self.holders[cq_name] = {}
        holders[wl.key] = wl
        self._count_usage(wl, +1)
        q = self.queues[cq_name]
        if q._sticky == wl.key:
            q.sticky = None
        self.emit("QuotaReserved", wl)
        if self.afs is not None and self._uses_afs(cq_name):
            self.afs.push_penalty((wl.spec.namespace, wl.spec.queue_name or ""), wl)  # updateEntryPenalty
        # its term in the holders' hash (read after the cycle) is made once, in its state after this call
        if self._start_checks(wl, cq_name):
            self._rehash_holder(wl, True)
        else:
            self._set_admitted(wl)

    def _set_admitted(self, wl: SimWorkload) -> None:
        """QuotaReserved -> Admitted (a holder: its term in the holders' hash follows its state)."""
        wl.state = ADMITTED
        wl.admitted_at = self.now
        self._rehash_holder(wl, True)
        wl.message = ""
        self.emit("Admitted", wl)
        # updateAfsConsumedUsage: decay to now, settle the penalty
        if self.afs is not None and self._uses_afs(wl.cluster_queue):
            lq = (wl.spec.namespace, wl.spec.queue_name or "")
            self.afs.settle(lq, wl, self._afs_admitted_usage(wl.cluster_queue, lq), self.now)
        token = wl.run_token
        if wl.max_exec is not None:
            self._push(self.now + max(0, wl.max_exec - wl.past_exec), self.P_TIMEOUT, "maxexec", (wl, token))
        if wl.pods_ready_after == 0:
            self._pods_ready(wl)
            return
        self._not_ready += 1
        if wl.pods_ready_after != NEVER:
            self._push(self.now + wl.pods_ready_after, self.P_PODS_READY, "podsready", (wl, token))
        policy = self.config.pods_ready
        if policy is not None:
            self._push(self.now + policy.timeout, self.P_TIMEOUT, "podsreadytimeout", (wl, token))

    def _pods_ready(self, wl: SimWorkload) -> None:
        if wl.pods_ready_after != 0:
            self._not_ready -= 1
            if self._not_ready == 0 and self.config.pods_ready is not None and self.config.pods_ready.block_admission:
                self._requeue_everything()
        wl.pods_ready = True
        self.emit("PodsReady", wl)
        if wl.run_for is not None:
            self._push(self.now + wl.run_for, self.P_COMPLETE, "complete", (wl, wl.run_token))

    def admission_blocked(self) -> bool:
        policy = self.config.pods_ready
        return policy is not None and policy.block_admission and self._not_ready > 0

    def _count_usage(self, wl: SimWorkload, sign: int) -> None:
        """Keep per ClusterQueue and priority the usage of its quota holders (usage_below)."""
        cq = wl.cluster_queue or ""
        prio = wl.spec.priority
        by_priority = self._usage_by_priority.get(cq)
        if by_priority is None:
            by_priority = self._usage_by_priority[cq] = {}
        acc = by_priority.get(prio)  # get, not setdefault: no empty dicts made for nothing
        if acc is None:
            acc = by_priority[prio] = {}
        for fr, v in wl.usage.items():
            acc[fr] = acc.get(fr, 0) + sign * v
        q = self.queues.get(cq)
        if q is not None and q.plan is not None:
            q.plan.usage_changed()  # its heads' numbers read this usage
        self._index_holder(wl, sign)

    def usage_below(self, cq: str, priority: int) -> dict[FR, int]:
        """The usage of a ClusterQueue's preemption candidates under withinClusterQueue LowerPriority: its quota
        holders below `priority` (none while it is inactive, as workloads_in)."""
        if self._active is None:
            self.active_cluster_queues()
        if cq not in self._active_set:
            return {}
        out: dict[FR, int] = {}
        for prio, usage in self._usage_by_priority.get(cq, {}).items():
            if prio < priority:
                for fr, v in usage.items():
                    out[fr] = out.get(fr, 0) + v
        return out

    # The cohort index: per cohort tree root, (flavor, resource) and priority, the quota holders of its active
    # ClusterQueues that use it, in the order of their reservation (preemption.reserve_order): CandidatesOrdering
    # among other queues is priority first, then the reverse of that order. A flat cohort's preemption search
    # reads it from the front and stops at the first targets that fit (preemption.Preemptor._flat_level)
    # instead of gathering and sorting every candidate. Reservations come in that order, so admission appends
    # and release deletes, in O(1) (a priority change goes through _count_usage: out, then in at the new
    # priority); an entry out of order, and a new tree or active set (configuration changes), make the index
    # stale, and its next read rebuilds it.

    def cohort_holders(self, root: Node, fr: FR) -> dict[int, dict[SimWorkload, None]]:
        """The holders under `root` that use fr (as workloads_in: active ClusterQueues only) per priority, each
        in reservation order. Read-only."""
        if self._active is None:
            self.active_cluster_queues()
        tree, active, index, _ = self._cohort_index
        if tree is not self.tree or active is not self._active_set:
            index = self._build_cohort_index()
        return index.get(root, {}).get(fr, _NO_HOLDERS)

    def _build_cohort_index(self) -> dict[Node, dict[FR, dict[int, dict[SimWorkload, None]]]]:
        lists: dict[Node, dict[FR, dict[int, list[SimWorkload]]]] = {}
        roots: dict[str, Node] = {}
        active = self._active_set
        for cq, node in self.tree.cqs.items():
            if cq in active:
                root = roots[cq] = node.root()
                per_fr = lists.setdefault(root, {})
                for w in self.holders.get(cq, {}).values():
                    for fr in w.usage:
                        per_fr.setdefault(fr, {}).setdefault(w.spec.priority, []).append(w)
        index = {root: {fr: {prio: dict.fromkeys(sorted(ws, key=reserve_order)) for prio, ws in groups.items()}
                        for fr, groups in per_fr.items()} for root, per_fr in lists.items()}
        by_cq = {cq: index.setdefault(root, {}) for cq, root in roots.items()}  # each one's root's
        self._cohort_index = (self.tree, active, index, by_cq)
        return index

    def _index_holder(self, wl: SimWorkload, sign: int) -> None:
        """wl starts (+1) or stops (-1) holding quota at its current priority: add or remove its entries."""
        index = self._cohort_index
        if index[0] is not self.tree or index[1] is not self._active_set or self._active is None:
            return  # stale: rebuilt on the next read
        per_fr = index[3].get(wl.cluster_queue)
        if per_fr is None:
            return  # not in the tree, or inactive
        prio = wl.spec.priority
        for fr in wl.usage:
            groups = per_fr.get(fr)
            if groups is None:
                groups = per_fr[fr] = {}
            group = groups.get(prio)
            if sign > 0:
                if group is None:
                    group = groups[prio] = {}
                elif reserved_later_or_same(next(reversed(group)), wl):
                    self._cohort_index = (None, None, {}, {})  # out of order: rebuild rather than insert
                    return
                group[wl] = None
            elif group is not None and wl in group:
                del group[wl]
                if not group:
                    del groups[prio]
            else:
                self._cohort_index = (None, None, {}, {})  # not where its priority says: rebuild
                return

    # ------------------------------------------------------------------ timers

    def _on_pods_ready(self, wl: SimWorkload, token: int) -> None:
        if wl.run_token == token and wl.state == ADMITTED and not wl.pods_ready:
            self._pods_ready(wl)

    def _on_pods_ready_timeout(self, wl: SimWorkload, token: int) -> None:
        """reconcileNotReadyTimeout: deactivate past the requeuing limit, else evict and back off."""
        if wl.run_token != token or wl.state != ADMITTED or wl.pods_ready:
            return
        policy = self.config.pods_ready
        if policy.backoff_limit is not None and wl.requeue_count + 1 > policy.backoff_limit:
            self.deactivate(wl, REQUEUING_LIMIT_EXCEEDED)
            return
        wl.requeue_count += 1
        self.evict(wl, reason=PODS_READY_TIMEOUT, backoff=policy.backoff_ms(wl.requeue_count))

    def _on_max_exec(self, wl: SimWorkload, token: int) -> None:
        if wl.run_token == token and wl.state == ADMITTED:
            self.deactivate(wl, MAX_EXEC_EXCEEDED)

    def _on_requeue(self, wl: SimWorkload) -> None:
        """The backoff is over: the Requeued condition turns true and the queue manager takes it back."""
        if wl.gone or wl.requeue_at != self.now or wl.holds_quota:
            return
        wl.requeue_at = None
        self.emit("Requeued", wl)
        cq = self._route(wl)
        wl.cluster_queue = cq if cq is not None else wl.cluster_queue
        wl.state = PENDING
        self._place(wl)

    # ------------------------------------------------------------------ losing quota

    def _release(self, wl: SimWorkload) -> None:
        cq = wl.cluster_queue
        state = wl.state
        if state == ADMITTED and wl.admitted_at is not None:
            wl.past_exec += self.now - wl.admitted_at
            if not wl.pods_ready and wl.pods_ready_after != 0:
                self._not_ready -= 1
                if self._not_ready == 0 and self.config.pods_ready is not None and \
                        self.config.pods_ready.block_admission:
                    self._requeue_everything()
        wl.pods_ready = False
        if state == QUOTA_RESERVED and self.afs is not None and self._uses_afs(cq):
            self.afs.drop_penalty((wl.spec.namespace, wl.spec.queue_name or ""), wl)
        if cq is not None and (state == ADMITTED or state == QUOTA_RESERVED):  # holds_quota
            self._removals[cq] = self._removals.get(cq, 0) + 1
            node = self.tree.cqs.get(cq)
            if node is not None:
                node.remove_usages(wl.usage)
        wl.last_assignment = None
        if cq is not None and self.holders.get(cq, _NO_HOLDERS).pop(wl.key, None) is not None:
            self._count_usage(wl, -1)
        self._rehash_holder(wl, False)
        wl.usage = {}
        wl.checks = {}
        wl.run_token += 1
        if self.ac.queues:  # only checks with a capacity hold anything
            self._release_checks(wl)

    def evict(self, wl: SimWorkload, preempted_by: SimWorkload | None = None, reason: str = "",
              backoff: int | None = None) -> None:
        """Loss of quota: preemption (with the preemptor) or eviction; back to the queue (after `backoff` ms)."""
        cq = wl.cluster_queue
        self._release(wl)
        wl.evictions += 1
        self.evicted += 1  # the run's bounds (engine._evicted_too_often)
        if self.most_evicted is None or wl.evictions > self.most_evicted.evictions:
            self.most_evicted = wl
        if preempted_by is not None:
            self.emit("Preempted", wl, by=preempted_by.key, reason=reason)
            wl.message = f"preempted by {preempted_by.key} ({reason})"
        else:
            self.emit("Evicted", wl, reason=reason)
            wl.message = f"evicted ({reason})"
        if (reason == PODS_READY_TIMEOUT and self.config.pods_ready.eviction_timestamp) or reason == ADMISSION_CHECK:
            wl.queue_ts = self.now
        elif preempted_by is not None and reason == "InCohortReclaimWhileBorrowing" and \
                not self.config.priority_sorting:
            wl.queue_ts = self.now + 1  # strictly after its preemptor (GetQueueOrderTimestamp, gate off)
        else:
            wl.queue_ts = wl.created_at
        if preempted_by is not None and wl.spec.kind == "Pod":
            self._end(wl, "Finished")  # Kueue deletes a preempted plain Pod
            self._resubmit(wl)
        elif backoff is not None:
            wl.state = PENDING
            wl.requeue_at = self.now + backoff
            wl.message += f"; requeued at t={(self.now + backoff) / 1000:g}s after its backoff"
            self._push(wl.requeue_at, self.P_REQUEUE, "requeue", wl)
        else:
            wl.state = PENDING
            self._place(wl)
        if cq is not None:
            self._requeue_tree(cq)
            self._finalize_deletions()

    def deactivate(self, wl: SimWorkload, cause: str) -> None:
        """spec.active=false (SetDeactivationTarget): evicted with reason Deactivated, never requeued."""
        cq = wl.cluster_queue
        holding = wl.holds_quota
        self._release(wl)
        wl.evictions += 1 if holding else 0
        self.emit("Evicted", wl, reason=DEACTIVATED_REASON, cause=cause)
        wl.state = DEACTIVATED
        wl.gone = True
        wl.requeue_at = None
        wl.message = f"deactivated ({cause})"
        if cq in self.queues:
            self.queues[cq].remove(wl.key)
        self.orphans.pop(wl.key, None)
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
        wl.state = "Finished"
        wl.finished_at = self.now
        wl.gone = True
        wl.requeue_at = None
        cq = wl.cluster_queue
        if cq in self.queues:
            self.queues[cq].remove(wl.key)
        self.orphans.pop(wl.key, None)
        self.emit(event, wl)

    # ------------------------------------------------------------------ priority

    def _refresh_priorities(self, wpc_name: str) -> None:
        """A WorkloadPriorityClass changed value: Workloads whose priority comes from it follow."""
        wpc = self.cluster.workload_priority_classes.get(wpc_name)
        if wpc is None:
            return
        for wl in self.workloads:
            spec = wl.spec
            if wl.gone or wl.unmanaged or spec.priority_source != "WorkloadPriorityClass" or \
                    spec.priority_class != wpc_name or spec.priority == wpc.value:
                continue
            queued = wl.cluster_queue in self.queues and not wl.holds_quota and wl.requeue_at is None \
                and wl.key not in self.orphans
            if queued:
                self.queues[wl.cluster_queue].remove(wl.key)
            if wl.holds_quota:
                self._count_usage(wl, -1)
            wl.spec = dataclasses.replace(spec, priority=wpc.value)
            if wl.holds_quota:
                self._count_usage(wl, +1)
                self._rehash_holder(wl, True)
            if queued:
                self._place(wl)


__all__ = ["WorkloadController", "PODS_READY_TIMEOUT", "ADMISSION_CHECK", "REQUEUING_LIMIT_EXCEEDED",
           "MAX_EXEC_EXCEEDED"]
