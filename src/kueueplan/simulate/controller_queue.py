"""The ClusterQueue and LocalQueue controllers and the queue manager (pkg/controller/core/clusterqueue_controller.go,
localqueue_controller.go, pkg/cache/queue/manager.go, pkg/cache/scheduler/clusterqueue.go).

A mixin of `engine.Simulation`: which ClusterQueues are active (stopped, terminating, missing flavors or checks,
inactive admission checks, cohort cycles), where a pending workload waits, requeue-all after configuration
changes, stop policies, object deletion with Kueue's finalizers, and LocalQueue deletion.
"""

from __future__ import annotations

from typing import Any, Iterable

from kueueplan.simulate import scheduler
from kueueplan.simulate.admissibility import never_admissible_reason
from kueueplan.simulate.flavorassigner import Assignment
from kueueplan.simulate.queue import ClusterQueueQueue
from kueueplan.simulate.resource_node import FR, build_tree
from kueueplan.simulate.workload import INADMISSIBLE, PENDING, QUOTA_RESERVED, SimWorkload

_EMPTY: tuple[SimWorkload, ...] = ()
_PLAIN_REASONS = frozenset((scheduler.NO_CANDIDATES, scheduler.FAILED_AFTER_NOMINATION))  # _requeue_plain
_UNKNOWN = object()


class QueueController:
    # ------------------------------------------------------------------ where a workload waits

    def _route(self, wl: SimWorkload) -> str | None:
        """The ClusterQueue of a workload's LocalQueue, or None (with wl.message set)."""
        spec = wl.spec
        if spec.problem:
            wl.message = spec.problem
            return None
        if not spec.queue_name:
            wl.message = "no kueue.x-k8s.io/queue-name label and no LocalQueue named default: Kueue manages it " \
                         "(manageJobsWithoutQueueName) but cannot queue it"
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
        if wl.state == PENDING and wl.last_assignment is None and reason in _PLAIN_REASONS:
            return self._requeue_plain(wl, cq, reason, message)
        wl.message = message
        never = None
        if reason == scheduler.NO_FIT:
            never = self.never_admissible(wl, cq)
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
        elif q._sticky == wl.key:
            q.sticky = None  # no longer waiting for its preemptions
        if reason in ("Stopped", scheduler.WAITING_FOR_PODS_READY):
            immediate = False
        elif q.strict_fifo:
            immediate = reason != scheduler.NAMESPACE_MISMATCH
        else:
            immediate = reason in (scheduler.FAILED_AFTER_NOMINATION, scheduler.PENDING_PREEMPTION)
        # A scan that stopped before the last flavor goes straight back (PendingFlavors): the next cycle
        # resumes it from the following flavor, so that is a change too.
        last = wl.last_assignment
        pending = last is not None and last.pending and reason not in ("Stopped", scheduler.WAITING_FOR_PODS_READY)
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

    def _requeue_plain(self, wl: SimWorkload, cq: str, reason: str, message: str) -> bool:
        """requeue()'s path for a pending head without scan progress that found no candidates (parked) or
        lost its fit to an earlier entry of the cycle (straight back): the same steps, without the branches
        that cannot apply."""
        wl.message = message
        q = self.queues[cq]
        if q._sticky == wl.key:
            q.sticky = None  # no longer waiting for its preemptions
        if q.strict_fifo or reason == scheduler.FAILED_AFTER_NOMINATION:
            q.push(wl)
            return False
        self._parked.setdefault(self._root_key(cq), set()).add(cq)
        q.park(wl, True, None)
        return True

    # ------------------------------------------------------------------ configuration changes

    def _sync_queues(self) -> None:
        for name, cq in self.cluster.cluster_queues.items():
            q = self.queues.get(name)
            if q is None:
                q = self.queues[name] = ClusterQueueQueue(name, dirty=self._dirty_queues, ready=self._ready_queues)
                self._dirty_queues.add(name)
            q.strict_fifo = cq.queueing_strategy == "StrictFIFO"
            q.usage_of = self._lq_usage if self._uses_afs(name) else None
            self.holders.setdefault(name, {})
        for name in sorted(set(self.queues) - set(self.cluster.cluster_queues)):
            q = self.queues.pop(name)
            self._dirty_queues.add(name)
            for wl in q.pending():
                wl.cluster_queue = None
                wl.message = f"ClusterQueue {name} doesn't exist"
                self.orphans[wl.key] = wl

    def _config_changed(self) -> None:
        self.plans.materialize_all()  # plans read the tree and the objects, replaced below
        self.deferred.resolve()  # before the objects and the tree its messages read are replaced
        self._active = None
        self._verdicts.clear()
        self.plain_requests.clear()
        self.fitting.clear()
        self._root_keys.clear()
        self._cq_flavors.clear()
        self._problems.clear()
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
                wl.spec = self._effective_spec(wl.manifest)
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

    def _local_queue_deleted(self, namespace: str, name: str) -> None:
        """localqueue_controller.go Delete -> queue manager DeleteLocalQueue: its pending workloads leave the
        ClusterQueue's queue (admitted ones keep running); they wait until a LocalQueue of that name exists."""
        for wl in list(self.workloads):
            if wl.gone or wl.holds_quota or wl.spec.namespace != namespace or wl.spec.queue_name != name:
                continue
            if wl.cluster_queue in self.queues:
                self.queues[wl.cluster_queue].remove(wl.key)
            wl.cluster_queue = None
            if wl.requeue_at is None:
                wl.message = f"LocalQueue {namespace}/{name} doesn't exist"
                self.orphans[wl.key] = wl

    # ------------------------------------------------------------------ active ClusterQueues

    def active_cluster_queues(self) -> list[str]:
        if self._active is None:
            self._active = [n for n in sorted(self.queues) if self.inactive_reason(n) is None]
            self._active_set = frozenset(self._active)
        return self._active

    def queues_with_heads(self) -> list[str]:
        """The active ClusterQueues that may have a head, in active_cluster_queues' (name) order: the others
        have every bucket parked (or none), so a cycle need not look at them (O(changed queues), not O(all))."""
        active = self.active_cluster_queues()
        ready = self._ready_queues
        if len(ready) * 8 > len(active):
            names = [n for n in active if n in ready]
        else:
            names = sorted(ready & self._active_set)
        out = []
        for name in names:
            q = self.queues[name]
            if q.parked_buckets == len(q.buckets):
                ready.discard(name)  # every bucket parked (or none left): no head until a push or requeue-all
            else:
                out.append(name)
        return out

    def inactive_reason(self, name: str) -> str | None:
        """clusterqueue.go updateQueueStatus: stopped, terminating, missing flavors / checks, inactive checks."""
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
            inactive = self.inactive_check_reason(rule.name)
            if inactive is not None:
                return f"ClusterQueue {name} references inactive AdmissionCheck {rule.name}: {inactive}"
        return None

    def workloads_in(self, cq: str) -> Iterable[SimWorkload]:
        """Preemption candidates: an inactive ClusterQueue is not in Kueue's scheduling snapshot
        (pkg/cache/scheduler/snapshot.go skipInactiveCQReason), so its workloads cannot be preempted, though
        its usage still counts in its cohort's."""
        if self._active is None:
            self.active_cluster_queues()
        if cq not in self._active_set:
            return _EMPTY
        return self.holders.get(cq, {}).values()

    def never_admissible(self, wl: SimWorkload, cq: str) -> str | None:
        """never_admissible_reason, remembered per pod sets and ClusterQueue until the configuration changes (it
        reads their quotas and flavors and the pod sets, never usage; the copies of a `workloads` entry share
        one pod-set tuple)."""
        pod_sets = wl.spec.pod_sets
        key = (id(pod_sets), cq)
        got = self._verdicts.get(key)
        if got is None or got[0] is not pod_sets:
            got = self._verdicts[key] = (pod_sets, never_admissible_reason(self.cluster, self.tree, wl.spec, cq))
        return got[1]

    def flavors_of(self, cq: str) -> dict[str, Any]:
        """The ResourceFlavors a ClusterQueue names (those that exist), until the configuration changes."""
        got = self._cq_flavors.get(cq)
        if got is None:
            flavors = self.cluster.resource_flavors
            got = self._cq_flavors[cq] = {f: flavors[f] for f in self.cluster.cluster_queues[cq].flavor_names()
                                          if f in flavors}
        return got

    def admissibility_problem(self, wl: SimWorkload, cq_name: str) -> tuple[str, str] | None:
        """Stopped LocalQueue or unselected namespace: remembered per LocalQueue and ClusterQueue until the
        configuration changes (both read objects only)."""
        key = (wl.spec.namespace, wl.spec.queue_name, cq_name)
        got = self._problems.get(key, _UNKNOWN)
        if got is _UNKNOWN:
            got = self._problems[key] = self._admissibility_problem(wl, cq_name)
        return got

    def _admissibility_problem(self, wl: SimWorkload, cq_name: str) -> tuple[str, str] | None:
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
        """The key of a ClusterQueue's cohort tree in _parked, remembered until the configuration changes."""
        got = self._root_keys.get(cq)
        if got is None:
            node = self.tree.cqs.get(cq)
            got = f"cq/{cq}" if node is None or node.parent is None else f"cohort/{node.root().name}"
            if node is not None:
                self._root_keys[cq] = got
        return got

    def _requeue_tree(self, cq: str) -> None:
        """Requeue-all for every ClusterQueue of the cohort tree (only those that parked something; those with a
        HeadPlan at once, by a new epoch)."""
        key = self._root_key(cq)
        self.plans.requeue_all(key)
        for name in sorted(self._parked.pop(key, ())):
            q = self.queues.get(name)
            if q is not None:
                q.requeue_all()

    def _requeue_everything(self) -> None:
        self.plans.materialize_all()
        self._parked.clear()
        for q in self.queues.values():
            q.requeue_all()

    # ------------------------------------------------------------------ admission fair sharing (LocalQueue usage)

    def _uses_afs(self, cq_name: str | None) -> bool:
        """afs.ResourceWeights: the Configuration enables it and the ClusterQueue's admissionScope asks for it."""
        if self.afs is None:
            return False
        cq = self.cluster.cluster_queues.get(cq_name or "")
        return cq is not None and cq.admission_mode == "UsageBasedAdmissionFairSharing"

    def _lq_usage(self, wl: SimWorkload) -> float:
        lq = self.cluster.local_queues.get((wl.spec.namespace, wl.spec.queue_name or ""))
        weight = float(lq.fair_sharing_weight) if lq is not None and lq.fair_sharing_weight is not None else 1.0
        return self.afs.usage((wl.spec.namespace, wl.spec.queue_name or ""), weight)

    def _afs_admitted_usage(self, cq: str, lq: tuple[str, str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for w in self.holders.get(cq, {}).values():
            if w.state == "Admitted" and (w.spec.namespace, w.spec.queue_name) == lq:
                for (_, res), v in w.usage.items():
                    out[res] = out.get(res, 0) + v
        return out

    def _afs_sample(self) -> None:
        """localqueue_controller.go: every usageSamplingInterval the consumed usage decays towards admitted usage."""
        for (ns, name), lq in sorted(self.cluster.local_queues.items()):
            if self._uses_afs(lq.cluster_queue):
                self.afs.sample((ns, name), self._afs_admitted_usage(lq.cluster_queue, (ns, name)), self.now)
        if self._timers or self._arrivals:  # only while something else can still happen
            self._push(self.now + self.config.afs_interval, self.P_TIMEOUT, "afssample", None)

    # ------------------------------------------------------------------ deletions with finalizers

    def _delete_object(self, kind: str, namespace: Any, name: str) -> None:
        if kind == "ClusterQueue" and self.holders.get(name):
            self._deleting_cqs.add(name)  # finalizer: wait for its admitted workloads
        elif kind == "ResourceFlavor" and any(fr[0] == name for ws in self.holders.values()
                                               for w in ws.values() for fr in w.usage):
            self._deleting_rfs.add(name)
        else:
            existed = self.cluster.delete(kind, str(namespace) if namespace else None, name)
            if kind == "LocalQueue" and existed:
                self._local_queue_deleted(str(namespace or "default"), name)
        self._config_changed()

    def _finalize_deletions(self) -> None:
        if not self._deleting_cqs and not self._deleting_rfs:
            return  # the usual case, after every completion and eviction
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


__all__ = ["QueueController"]
