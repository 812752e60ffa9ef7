"""Per-ClusterQueue pending queues, after Kueue's pkg/cache/queue (semantics doc §4).

Order: the sticky preemptor (BestEffortFIFO), then higher priority, then older queue-order timestamp,
then creation order. BestEffortFIFO parks a head that cannot be admitted in the inadmissible set until
a requeue-all; with SchedulingEquivalenceHashing every pending workload with the same scheduling hash is
parked with it. StrictFIFO keeps the head in place.

Data structure: pending workloads are bucketed by equivalence hash, one binary heap per bucket. Parking
a bucket and a requeue-all are O(1) (a bucket flag), and taking the head costs O(buckets + log n), so a
scheduling cycle does not depend on the total number of pending workloads.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any

from kueueplan.simulate.workload import SimWorkload


def _order(wl: SimWorkload) -> tuple[int, int, int]:
    return (-wl.priority, wl.queue_ts, wl.seq)


@dataclass
class _Bucket:
    heap: list[tuple[tuple[int, int, int], int, SimWorkload]] = field(default_factory=list)
    parked: bool = False
    verdict: str | None = None  # why the parked bucket can never be admitted, if it can't


@dataclass
class ClusterQueueQueue:
    name: str
    strict_fifo: bool = False
    buckets: dict[Any, _Bucket] = field(default_factory=dict)
    members: dict[str, tuple[Any, int]] = field(default_factory=dict)  # key -> (bucket hash, token)
    inadmissible: dict[str, SimWorkload] = field(default_factory=dict)  # parked one by one
    _sticky: str | None = None
    parked_buckets: int = 0  # buckets parked now (read by the engine's per-cycle state signature)
    # names of the queues whose signature fields (sticky, member counts, parked buckets) may have changed,
    # shared with the engine so that its per-cycle signature rehashes only those (None: nobody reads it)
    dirty: set[str] | None = None
    # names of the queues that may have an unparked bucket (a head), shared with the engine: a queue is
    # named here whenever a bucket may become unparked (push, requeue-all); cycles look only at these
    ready: set[str] | None = None
    _token: int = 0
    # admission fair sharing (UsageBasedAdmissionFairSharing): the LocalQueue usage of a workload, compared
    # before everything else (cluster_queue.go queueOrderingFunc); None = off
    usage_of: Any = None
    # a headplan.HeadPlan that holds this queue's parked state while the scheduler nominates its heads by
    # arithmetic; every method below first writes it back (materialize), so the plan is invisible here
    plan: Any = None

    @property
    def sticky(self) -> str | None:
        return self._sticky  # a queue with a plan has none (only the setter changes it)

    @sticky.setter
    def sticky(self, key: str | None) -> None:
        if self.plan is not None:
            self.plan.materialize()
        self._touch()
        self._sticky = key

    @property
    def token(self) -> int:
        """Bumped by every push and park."""
        return self._token

    def mark_dirty(self) -> None:
        self._touch()

    def _touch(self) -> None:
        if self.dirty is not None:
            self.dirty.add(self.name)

    def __len__(self) -> int:
        if self.plan is not None:
            self.plan.materialize()
        return len(self.members) + len(self.inadmissible)

    def push(self, wl: SimWorkload) -> str | None:
        """Add (or re-add) a workload to its bucket heap; returns the bucket's never-admissible verdict if parked."""
        plan = self.plan
        if plan is not None:  # a plan takes in a workload that leaves every bucket's head as it was, or heads a new one
            if wl.key in self.members:
                return None  # queued already: nothing changes
            bucket = self._add(wl)
            if plan.pushed(wl, wl.spec.scheduling_shape, bucket):  # its bucket's hash
                return None
            plan.materialize()
        self._touch()
        if self.ready is not None:
            self.ready.add(self.name)
        if plan is None:
            self.inadmissible.pop(wl.key, None)
            if wl.key in self.members:
                return None
            bucket = self._add(wl)
        return bucket.verdict if bucket.parked else None

    def _add(self, wl: SimWorkload) -> _Bucket:
        # equivalence_hash() and _order(wl), inline: one push per creation, requeue and eviction
        spec = wl.spec
        h = spec.scheduling_shape
        token = self._token = self._token + 1
        self.members[wl.key] = (h, token)
        bucket = self.buckets.get(h)
        if bucket is None:
            bucket = self.buckets[h] = _Bucket()
        heapq.heappush(bucket.heap, ((-spec.priority, wl.queue_ts, wl.seq), token, wl))
        return bucket

    def remove(self, key: str) -> None:
        if key not in self.members and key not in self.inadmissible and self._sticky != key:
            return  # not queued here (an admitted workload that finished): nothing changes (a plan keeps these)
        if self.plan is not None:
            self.plan.materialize()
        self._touch()
        self.members.pop(key, None)  # heap entries are dropped lazily
        self.inadmissible.pop(key, None)
        if self.sticky == key:
            self.sticky = None

    def _top(self, bucket: _Bucket) -> SimWorkload | None:
        entry = self._top_entry(bucket)
        return entry[2] if entry is not None else None

    def _top_entry(self, bucket: _Bucket) -> tuple[tuple[int, int, int], int, SimWorkload] | None:
        """The bucket's first live heap entry (order, token, workload); stale entries are dropped on the way."""
        heap = bucket.heap
        members = self.members
        while heap:
            entry = heap[0]
            member = members.get(entry[2].key)
            if member is not None and member[1] == entry[1]:
                return entry
            heapq.heappop(heap)
        return None

    def head(self) -> SimWorkload | None:
        """The next workload to try, without removing it."""
        if self.plan is not None:
            self.plan.materialize()
        if self.usage_of is not None:
            return self._afs_head()
        sticky = self._sticky
        if sticky is not None and sticky in self.members:
            h, token = self.members[sticky]
            for entry in self.buckets[h].heap if not self.buckets[h].parked else ():
                if entry[1] == token:
                    return entry[2]
        best: tuple[tuple[int, int, int], int, SimWorkload] | None = None
        empty = []
        members = self.members
        for h, bucket in self.buckets.items():
            if bucket.parked:
                continue
            heap = bucket.heap  # _top_entry, inline: this loop runs for every queue of every cycle
            top = None
            while heap:
                entry = heap[0]
                member = members.get(entry[2].key)
                if member is not None and member[1] == entry[1]:
                    top = entry
                    break
                heapq.heappop(heap)
            if top is None:
                empty.append(h)
                continue
            if best is None or top[0] < best[0]:  # the order the entry was pushed with: _order(workload)
                best = top
        for h in empty:
            if not self.buckets[h].parked:
                del self.buckets[h]
        return best[2] if best is not None else None

    def _afs_head(self) -> SimWorkload | None:
        """queueOrderingFunc with admission fair sharing: lower LocalQueue usage first, then the usual order
        (sticky, priority, timestamp). Usage changes over time, so the head is searched, not kept in a heap."""
        best, best_key = None, None
        for bucket in self.buckets.values():
            if bucket.parked:
                continue
            for _, token, wl in bucket.heap:
                m = self.members.get(wl.key)
                if m is None or m[1] != token:
                    continue
                key = (self.usage_of(wl), wl.key != self.sticky, _order(wl))
                if best_key is None or key < best_key:
                    best, best_key = wl, key
        return best

    def pop_head(self) -> SimWorkload | None:
        wl = self.head()
        if wl is not None:
            self._touch()
            self.members.pop(wl.key, None)
        return wl

    def park(self, wl: SimWorkload, bulk: bool, verdict: str | None = None) -> list[SimWorkload]:
        """BestEffortFIFO: move a failed head (and, if bulk, its equivalents) out of the way.

        Returns the equivalents parked with it (they share the head's verdict)."""
        if self.plan is not None:
            self.plan.materialize()
        self._touch()
        if bulk:
            bucket = self._add(wl)
            if not bucket.parked:
                self.parked_buckets += 1
            bucket.parked = True
            bucket.verdict = verdict
            if verdict is None:
                return []
            # in queue order: the heap's array order depends on how often its head was parked before
            return sorted((w for _, token, w in bucket.heap
                           if w is not wl and self.members.get(w.key, (None, -1))[1] == token), key=_order)
        self.inadmissible[wl.key] = wl
        return []

    def requeue_all(self) -> bool:
        """Move every parked workload back; True if anything moved."""
        if self.plan is not None:
            self.plan.materialize()
        self._touch()
        if self.ready is not None:
            self.ready.add(self.name)
        moved = bool(self.inadmissible)
        self.parked_buckets = 0
        for bucket in self.buckets.values():
            if bucket.parked:
                bucket.parked = False
                bucket.verdict = None
                moved = True
        parked = list(self.inadmissible.values())
        self.inadmissible.clear()
        for wl in parked:
            self.push(wl)
        return moved

    def pending(self) -> list[SimWorkload]:
        if self.plan is not None:
            self.plan.materialize()
        out = []
        for bucket in self.buckets.values():
            for _, token, wl in bucket.heap:
                m = self.members.get(wl.key)
                if m is not None and m[1] == token:
                    out.append(wl)
        out.extend(self.inadmissible.values())
        return sorted(out, key=_order)
