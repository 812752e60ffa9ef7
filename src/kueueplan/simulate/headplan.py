"""Nominations that only park a head again, told by arithmetic (the queue manager's side of scheduler.run_cycle).

After every quota release Kueue requeues every parked workload of the cohort tree (requeue-all,
pkg/cache/queue/manager.go QueueInadmissibleWorkloads) and the next cycles nominate each ClusterQueue's
head again, one bucket per cycle (BestEffortFIFO parks a head with its equivalents). On a busy cohort of a
hundred queues nearly all of those nominations park the head again: it neither fits nor can preempt
(scheduler._surely_parked). A HeadPlan keeps a queue's buckets in head order with, per head, the numbers
that decide its nomination (thresholds on the cohort's free quota, made again when the queue's usage
changes), so that:
- a requeue-all of the cohort costs O(1): a new epoch, in which every plan counts as unparked;
- a nomination that parks the head costs a few comparisons, and its quota message is made only if it is
  still shown when the queue is next read (the copies of the usage it saw go to DeferredMessages then);
- a head that fits or may preempt is nominated as usual (a live head): those of a cohort that fit the
  cycle's snapshot take their turns as a group (FittingHeads) and become entries only if they still fit then,
  an admitted head leaves its bucket to the next workload (admit_head), a pushed workload joins the plan
  (pushed), and anything else the usual path does to the queue (a preemptor waiting for its victims, a
  deletion, a configuration change, the end of the run) first writes the plan back into the queue
  (`materialize`; queue.ClusterQueueQueue's methods do it themselves);
- the engine's per-cycle state signature counts the queue as its structure would be (HeadPlan.terms).

Which queues: the scheduler's plain case (scheduler._plain_request, _surely_parked): classical preemption,
reclaimWithinCohort Any, borrowWithinCohort Never, withinClusterQueue Never or LowerPriority, a ClusterQueue
alone or in a flat cohort, BestEffortFIFO without admission fair sharing, no sticky preemptor, and every
bucket's head plain, pending, admissible, without scan progress or partial admission. The rest of the
cycle (ordering, processing, evictions) and every other queue are unchanged; tests/simulate/test_headplan.py
compares runs with plans on and off.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from kueueplan.kube.objects import ANY, LOWER_PRIORITY, NEVER
from kueueplan.simulate.entry import FAILED_AFTER_NOMINATION, NO_CANDIDATES, NO_FIT
from kueueplan.simulate.resource_node import FR, Node
from kueueplan.simulate.workload import PENDING, SimWorkload

_INF = float("inf")
# The one-resource verdicts compare the cohort's room with a head's thresholds in C where all three lie strictly
# between these bounds (the compiled twin types them long long; a cohort's sums can pass int64, then the exact
# Python ints are compared). A threshold past a bound (or infinite) is clipped to it: the comparison with a room
# strictly inside gives the same answer.
_LO, _HI = -(1 << 62), 1 << 62
_FRS: dict[FR, FR] = {}  # _Head.fr, interned (a process's flavors and resources: a handful; capped, as it lives on)
_MASK = (1 << 64) - 1  # signature terms are summed modulo 2**64 (engine._queues_signature masks the sum)
_K1, _K2, _K3 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB  # splitmix64's constants
_KEY = attrgetter("key")  # _Head.key
_W = 64  # bits per item of a rank (_rank_of)
_OFF = 1 << (_W - 1)
_Record = tuple[dict[FR, int], dict[FR, int] | None]  # copies of the ClusterQueue's and its cohort's usage


def _clip(x: float) -> int:
    """A threshold (an int or ±inf) as nominate's C comparison takes it: within [_LO, _HI]."""
    return _LO if x <= _LO else _HI if x >= _HI else int(x)


def _rank_of(items: tuple) -> int:
    """An int that orders as `items` (ints) among tuples of their length whose items all lie in [-2**63, 2**63):
    each item offset into its own 64 bits. FittingHeads compares heads' keys by it (an int comparison where a tuple's
    goes item by item: several int comparisons); -1 for items outside, whose run compares the keys themselves
    (HeadPlans.ranked)."""
    r = 0
    for x in items:
        if not -_OFF <= x < _OFF:
            return -1
        r = (r << _W) | (x + _OFF)
    return r


def signature_term(value: Any) -> int:
    """hash(value) through splitmix64's finalizer, for the order-free sums of the engine's state signature
    (engine._signature; a HeadPlan's terms). A tuple's hash is nearly additive in its last item, so without it
    swapping a count between two queues (one parked bucket here rather than there) left the sum unchanged about
    half the time, depending on hash(None), an address: a false 'state seen before' reported flapping, and the
    run differed from process to process. Here for the compiled twin: its .pxd types the arithmetic as C's
    unsigned 64 bits, which wraps as the masks do."""
    z = (hash(value) + _K1) & _MASK
    z = ((z ^ (z >> 30)) * _K2) & _MASK
    z = ((z ^ (z >> 27)) * _K3) & _MASK
    return z ^ (z >> 31)


class _Head:
    """One bucket's head and, per usage of its ClusterQueue, what decides its nomination."""

    __slots__ = ("wl", "plan", "bucket", "order", "plain", "checks", "over", "height", "fr", "v", "fit_from",
                 "live_from", "fit_c", "live_c", "sort_tail", "fifo_tail", "key", "tail_rank", "version", "rec_usage",
                 "rec_snap")

    def __init__(self, wl: SimWorkload, bucket: Any, order: tuple, plain: dict[FR, int]) -> None:
        self.wl = wl
        self.plan: HeadPlan | None = None  # set by the plan that takes the head in
        self.bucket = bucket
        self.order = order  # the queue's order of its bucket's head (queue._order)
        self.plain = plain
        # per resource (fr, fit, short): it fits where the cohort's free quota is >= fit in every fr, and is
        # short of quota even with its own lower-priority workloads gone where free < short in some fr
        self.checks: tuple[tuple[FR, float, float], ...] = ()
        self.over = False  # over nominal even with its own lower-priority workloads gone
        self.height = 0  # its borrowing height when it fits (scheduler._fit_height)
        # one resource (fr): it fits where free >= fit_from, and parks where free < live_from (classify)
        fr = next(iter(plain)) if len(plain) == 1 else None
        # one object per resource (_FRS): nominate tells the next head's resource from the last by identity
        self.fr: FR | None = fr if fr is None or len(_FRS) >= 1024 else _FRS.setdefault(fr, fr)
        self.v = plain[self.fr] if self.fr is not None else 0  # its request in fr
        self.fit_from = self.live_from = 0.0
        self.fit_c = self.live_c = 0  # the same, clipped to [_LO, _HI] (nominate compares them in C)
        # Entry.sort_key / fifo_key after the borrowing height (a queued workload's priority and timestamp only
        # change through a configuration change or a requeue, which end the plan)
        self.sort_tail = (-wl.priority, wl.queue_ts, wl.seq)
        self.fifo_tail = (wl.queue_ts, wl.seq)
        self.key: tuple = ()  # its Entry's sort key when it fits (scheduler._ordered), made with its numbers
        # _rank_of its key's tail (made once): heads' keys order as their (height, tail_rank) while HeadPlans.ranked
        self.tail_rank: int | None = None
        self.version = -1  # the plan's usage version its numbers are for (HeadPlan.refresh)
        # where its bucket parked with a deferred quota message: the copies of its ClusterQueue's usage and its
        # cohort's (a _Record) that the message is made from (_write_message); rec_usage None: none deferred.
        # Kept on the head (not in a list beside heads): nominate touches the head anyway, and the copies move
        # with it when heads change places.
        self.rec_usage: dict[FR, int] | None = None
        self.rec_snap: dict[FR, int] | None = None


class HeadPlan:
    """A ClusterQueue queue's buckets in head order, parked or not (see the module docstring)."""

    __slots__ = ("plans", "cohort", "q", "name", "node", "root", "heads", "parked", "pos", "count", "ghosts",
                 "ghost_count", "epoch", "version", "lower", "members", "terms", "steps", "usage_snap",
                 "detached", "cq", "flavors")

    def __init__(self, plans: "HeadPlans", cohort: "_Cohort", q: Any, node: Node, heads: list[_Head],
                 parked: list[bool], ghosts: list[Any], lower: bool) -> None:
        self.plans = plans
        self.cohort = cohort
        self.q = q
        self.name: str = q.name
        self.node = node
        self.root = node.parent
        # the objects its nominations read: a configuration change replaces them before it writes the plan back
        self.cq = plans.sim.cluster.cluster_queues[self.name]
        self.flavors = plans.sim.flavors_of(self.name)
        self.heads = heads
        for h in heads:
            h.plan = self
        # per head whether its bucket is parked; None: those before pos are, the others not (nominate parks heads in
        # order, so only a head pushed or moved before a parked one needs the list)
        self.parked: list[bool] | None = parked if any(parked) else None
        self.count = sum(parked)
        self.pos = 0
        self._advance()
        self.ghosts = ghosts  # parked buckets with no workload left (they count in parked_buckets)
        self.ghost_count = len(ghosts)
        self.epoch = cohort.epoch
        self.version = 0  # of the ClusterQueue's usage (usage_changed)
        self.detached = False  # materialized: the queue is the usual path's again
        self.lower = lower
        self.members = len(q.members)
        self.terms: list[int] = []
        self.steps: list[int] = []  # steps[k] = (terms[k + 1] - terms[k]) mod 2**64
        self._terms()
        self.usage_snap: dict[FR, int] | None = None  # usage_copy

    def _advance(self) -> None:
        parked, n = self.parked, len(self.heads)
        if parked is None:
            return
        pos = self.pos
        while pos < n and parked[pos]:
            pos += 1
        self.pos = pos

    def _flags(self) -> list[bool]:
        """The parked flags as a list, made from the prefix where there was none (parked None)."""
        if self.parked is None:
            pos = self.pos
            self.parked = [i < pos for i in range(len(self.heads))]
        return self.parked

    def _terms(self) -> None:
        """The engine's signature term per number of parked buckets (engine._queues_signature); the cohort's
        sum with every bucket unparked follows."""
        old = self.terms[0] if self.terms else 0
        self.terms, self.steps = self.plans.terms_for(self.name, self.members, len(self.heads) + len(self.ghosts) + 1)
        if old:
            self.cohort.zero += self.terms[0] - old

    def term(self) -> int:
        """The engine's signature term of this queue as its structure would be now (engine._queues_signature)."""
        return self.terms[self.count + self.ghost_count]

    def sync_epoch(self) -> None:
        """A requeue-all of the cohort since the plan last moved: every bucket is unparked."""
        if self.epoch != self.cohort.epoch:
            self.epoch = self.cohort.epoch
            self.parked = None
            self.count = self.ghost_count = 0
            self.pos = 0

    def refresh(self, h: _Head) -> None:
        """A head's numbers for the ClusterQueue's current usage (its version): preemption.cannot_preempt and
        scheduler._fit_height in the same arithmetic, with the cohort's free quota (free) left open. The room
        resource_node.flat_available gives is min(free, cap), cap = nominal + borrowingLimit - usage (none
        without a limit); alone, the room is nominal - usage and the verdicts are fixed (free reads 0)."""
        node, root, plans = self.node, self.root, self.plans
        usage, subtree, borrowing = node.usage, node.subtree, node.borrowing
        own = plans.sim.usage_below(self.name, h.wl.priority) if self.lower else {}
        checks = []
        over = False
        height = 0
        for fr, v in h.plain.items():
            used, nominal = usage.get(fr, 0), subtree.get(fr, 0)
            o = own.get(fr, 0)
            if used - o + v > nominal:
                over = True
            if root is None:
                cap = nominal - used
                fit = -_INF if v <= 0 or v <= cap else _INF
                short = _INF if cap + o < v else -_INF
            else:
                limit = borrowing.get(fr)
                cap = None if limit is None else nominal + limit - used
                if used + v > nominal:
                    height = root.height
                fit = -_INF if v <= 0 else _INF if cap is not None and v > cap else v
                short = _INF if cap is not None and cap < v - o else v - o
            checks.append((fr, fit, short))
        h.checks, h.over, h.height = tuple(checks), over, height
        tail = h.sort_tail if plans.priority_sorting else h.fifo_tail
        h.key = (height,) + tail
        if h.tail_rank is None:
            h.tail_rank = _rank_of(tail)
            if h.tail_rank < 0:
                plans.ranked = False  # for the rest of the run: ranks made before and after could not be compared
        if h.fr is not None:  # fit >= min(fit, short): parking needs no fit, over, short
            h.fit_from = checks[0][1]
            h.live_from = min(checks[0][1], checks[0][2]) if over else -_INF
            h.fit_c, h.live_c = _clip(h.fit_from), _clip(h.live_from)
        h.version = self.version

    def usage_copy(self) -> dict[FR, int]:
        """A copy of the ClusterQueue's usage as its nominations see it (one per usage version)."""
        if self.usage_snap is None:
            self.usage_snap = dict(self.node.usage)
        return self.usage_snap

    def usage_changed(self) -> None:
        """Its ClusterQueue's usage changed: every head's numbers are made again when next needed."""
        self.version += 1
        self.usage_snap = None

    def classify(self, h: _Head, free: dict[FR, int]) -> int | None:
        """None: the head parks (it can neither fit nor preempt); else its borrowing height if it fits, or -1
        (it may preempt: the usual nomination)."""
        fits = True
        short = False
        for fr, fit, short_below in h.checks:
            room = free.get(fr)
            if room is None:
                room = self.cohort.free(fr, free)
            if room < fit:
                fits = False
            if room < short_below:
                short = True
        if fits:
            return h.height
        if h.over and short:
            return None
        return -1

    def park(self, record: _Record | None) -> None:
        """Park the head's bucket (as q.park(head, bulk=True)); `record`: the copies its quota message is
        made from, None when the message was set already."""
        old = self.term()
        if self.parked is not None:
            self.parked[self.pos] = True
        h = self.heads[self.pos]
        h.rec_usage, h.rec_snap = record if record is not None else (None, None)
        self.count += 1
        self.pos += 1
        self._advance()
        self.plans.retotal(self.cohort, self.term() - old)

    def materialize(self) -> None:
        """Write the plan into the queue (buckets parked or not, quota messages) and hand it back to the
        scheduler's usual path."""
        self.sync_epoch()
        q, sim = self.q, self.plans.sim
        q.plan = None
        self.detached = True
        buckets = q.buckets
        for h, parked in zip(self.heads, self._flags()):
            b = buckets[h.bucket]
            b.parked = parked
            b.verdict = None
            if h.rec_usage is not None:
                self._write_message(h)
        for g in self.ghosts:
            if self.ghost_count == 0:
                b = buckets.get(g)
                if b is not None:
                    b.parked = False
        q.parked_buckets = self.count + self.ghost_count
        self.plans.detach(self)
        q.mark_dirty()
        if q.parked_buckets:
            sim._parked.setdefault(sim._root_key(self.name), set()).add(self.name)
        if self.pos < len(self.heads):
            sim._ready_queues.add(self.name)

    def admit_head(self, wl: SimWorkload) -> None:
        """Before a live head is admitted: it leaves the queue (pop_head) and the plan stays, with the next
        workload of its bucket as that bucket's head, in its place in head order."""
        q, i = self.q, self.pos
        if self.detached or self.epoch != self.cohort.epoch or i >= len(self.heads) \
                or self.heads[i].wl is not wl:
            self.take_head(wl)
            return
        old = self.term()
        admitted = self.heads[i]
        bucket_key = admitted.bucket
        q.members.pop(wl.key)  # pop_head, without marking the queue dirty: the plan keeps its term
        self.members -= 1
        entry = q._top_entry(q.buckets[bucket_key])
        heads, parked = self.heads, self.parked
        if entry is None:  # the bucket is empty (head() would drop it)
            del q.buckets[bucket_key]
            del heads[i]
            if parked is not None:
                del parked[i]
        else:
            nxt = entry[2]
            if nxt.spec.namespace == wl.spec.namespace and nxt.state == PENDING and nxt.last_assignment is None:
                # an equivalent (same shapes, priority and queue name) from the same namespace (same LocalQueue
                # verdicts): plain as the admitted head was
                head: _Head | None = _Head(nxt, bucket_key, entry[0], admitted.plain)
            else:
                head = self.plans.head_for(entry, bucket_key, self.name)
            if head is None:  # the next one is not plain: the usual path takes the queue
                admitted.rec_usage = admitted.rec_snap = None
                self._terms()
                self.plans.retotal(self.cohort, self.term() - old)
                self.materialize()
                return
            head.plan = self
            heads[i] = head
            while i + 1 < len(heads) and heads[i + 1].order < head.order:  # its later head moves back
                self._swap(i, i + 1)
                i += 1
        self._terms()
        self._advance()
        self.plans.retotal(self.cohort, self.term() - old)
        if not heads and not self.ghosts:
            self.materialize()  # an empty queue: what comes next is the usual path's until a cycle plans it again

    def pushed(self, wl: SimWorkload, bucket_key: Any, bucket: Any) -> bool:
        """After queue.push added `wl` to `bucket`: True when the plan takes it in (every bucket's head stays, or
        `wl` heads a new bucket whose nominations the plan can tell: a new, unparked head in its place in head
        order); False when the queue must be written back (materialize) first."""
        if self.epoch != self.cohort.epoch:
            self.sync_epoch()
        top = self.q._top_entry(bucket)
        heads = self.heads
        old = self.term()
        for i, h in enumerate(heads):
            if h.bucket == bucket_key:
                if h.wl is not top[2] and not self._new_top(i, top):
                    return False
                break
        else:
            if bucket_key in self.ghosts or top[2] is not wl:
                return False
            head = self.plans.head_for(top, bucket_key, self.name)
            if head is None:
                return False
            head.plan = self
            i = len(heads)
            while i > 0 and heads[i - 1].order > head.order:
                i -= 1
            had_head = self.pos < len(heads)
            if i < self.pos:  # an unparked head before parked ones
                self._flags()
                self.pos = i
            if self.parked is not None:
                self.parked.insert(i, False)
            heads.insert(i, head)
            cohort = self.cohort
            if not had_head and self not in cohort.active:  # plans that may have an unparked head (nominate)
                cohort.active.append(self)
                self.plans.active[cohort.key] = cohort
        self.members += 1
        self._terms()
        self.plans.retotal(self.cohort, self.term() - old)
        return True

    def _new_top(self, i: int, top: tuple) -> bool:
        """A pushed workload heads bucket i now (an evicted workload keeps its older queue time): it takes the
        head's place, parked or not, in head order; the old head's deferred quota message is written as
        materialize would. False where the plan cannot tell its nominations."""
        head = self.plans.head_for(top, self.heads[i].bucket, self.name)
        if head is None:
            return False
        self._flags()  # it may move before heads that are parked, or be parked itself before unparked ones
        heads = self.heads
        if heads[i].rec_usage is not None:
            self._write_message(heads[i])
        head.plan = self
        heads[i] = head
        while i > 0 and heads[i - 1].order > head.order:
            self._swap(i - 1, i)
            i -= 1
        self.pos = 0  # the first unparked head
        self._advance()
        return True

    def _swap(self, i: int, j: int) -> None:
        """Heads i and j change places in head order, with their buckets' parked flags (without a list both are
        on the same side of pos)."""
        heads, parked = self.heads, self.parked
        heads[i], heads[j] = heads[j], heads[i]
        if parked is not None:
            parked[i], parked[j] = parked[j], parked[i]

    def _write_message(self, h: _Head) -> None:
        """A parked head's quota message, deferred from the copies it recorded (DeferredMessages)."""
        h.wl.message = self.plans.sim.deferred.defer_copies(h.wl, self.cq, self.node, h.rec_usage, h.rec_snap,
                                                            self.flavors)

    def take_head(self, wl: SimWorkload) -> None:
        """Before a live head is admitted, preempts or is requeued by the usual path: the queue as the
        usual path would hold it, with the head taken out (pop_head)."""
        if not self.detached:
            self.materialize()
        if self.q.head() is wl:
            self.q.pop_head()

    def requeue_live(self, wl: SimWorkload, reason: str, message: str) -> bool | None:
        """ClusterQueue requeue of a live head that was not admitted, where it stays with the plan: False when
        it goes back as it was (it lost its fit to an earlier entry), True when its bucket parks (no fit, no
        candidates); None when the usual path must requeue it (the queue is handed back first)."""
        if not self.detached and self.epoch == self.cohort.epoch and self.pos < len(self.heads) \
                and self.heads[self.pos].wl is wl:
            if reason == FAILED_AFTER_NOMINATION:
                wl.message = message
                self.heads[self.pos].rec_usage = None
                return False
            if reason == NO_CANDIDATES or reason == NO_FIT:
                wl.message = message
                self.park(None)
                return True
        self.take_head(wl)
        return None


class _Cohort:
    """The plans of one cohort tree (or of a ClusterQueue alone)."""

    __slots__ = ("key", "root", "epoch", "plans", "active", "total", "zero", "snap_cycle", "snap")

    def __init__(self, key: str, root: Node | None) -> None:
        self.key = key
        self.root = root
        self.epoch = 0
        self.plans: dict[str, HeadPlan] = {}
        self.active: list[HeadPlan] = []  # plans that may have an unparked head
        self.total = 0  # the sum of the plans' signature terms
        self.zero = 0  # the same with every bucket unparked (after a requeue-all)
        self.snap_cycle = -1
        self.snap: dict[FR, int] | None = None

    def free(self, fr: FR, free: dict[FR, int]) -> int:
        """The cohort's free quota in fr (resource_node.flat_available's room), remembered in `free` for the
        cycle; 0 for a ClusterQueue alone (its verdicts do not read it)."""
        root = self.root
        if root is None:
            got = 0
        else:
            subtree, usage = root.subtree, root.usage  # dicts, typed in the twin
            got = subtree.get(fr, 0) - usage.get(fr, 0)
        free[fr] = got
        return got

    def snapshot(self, cycle: int) -> dict[FR, int] | None:
        """A copy of the cohort's usage as the cycle's nominations see it (one per cycle: DeferredMessages.defer)."""
        if self.root is None:
            return None
        if self.snap_cycle != cycle:
            self.snap_cycle, self.snap = cycle, dict(self.root.usage)
        return self.snap


class HeadPlans:
    """Every HeadPlan of a run, by cohort tree; the engine's `plans`."""

    def __init__(self, sim: Any, enabled: bool = True) -> None:
        self.sim = sim
        self.enabled = enabled  # off: every queue is nominated by the usual path (tests compare the two)
        self.priority_sorting = sim.config.priority_sorting  # Entry.sort_key or fifo_key (a run's configuration)
        self.ranked = True  # every head's key within _rank_of's bounds so far: FittingHeads compares their ranks
        self.cohorts: dict[str, _Cohort] = {}
        self.active: dict[str, _Cohort] = {}  # cohorts with an active plan
        self.total = 0  # the plans' part of the engine's queue signature
        self._eligible: dict[str, bool] = {}
        self._refused: dict[str, int] = {}  # queue -> its token when a plan could not be made
        self._term_lists: dict[tuple[str, int], tuple[list[int], list[int]]] = {}  # terms_for

    # ------------------------------------------------------------------ lifecycle

    def terms_for(self, name: str, members: int, n: int) -> tuple[list[int], list[int]]:
        """The signature terms of a queue with `members` workloads and 0, 1, ... parked buckets (HeadPlan._terms),
        at least n of them, and their steps (one more parked bucket: terms[k + 1] - terms[k], modulo 2**64),
        remembered: a queue's member count goes up and down over the same few values. Only ever extended."""
        key = (name, members)
        got = self._term_lists.get(key)
        if got is None:
            got = self._term_lists[key] = ([], [])
        terms, steps = got
        if len(terms) < n:
            terms += [signature_term((name, None, members, 0, k)) for k in range(len(terms), n)]
            steps += [(terms[k + 1] - terms[k]) & _MASK for k in range(len(steps), n - 1)]
        return got

    def retotal(self, cohort: _Cohort, delta: int) -> None:
        cohort.total += delta
        self.total += delta

    def detach(self, plan: HeadPlan) -> None:
        cohort = plan.cohort
        del cohort.plans[plan.name]
        if plan in cohort.active:  # nominate presents every plan of the list: none is detached
            cohort.active.remove(plan)
        self.retotal(cohort, -plan.term())
        cohort.zero -= plan.terms[0]

    def materialize_all(self) -> None:
        for cohort in list(self.cohorts.values()):
            for plan in list(cohort.plans.values()):
                plan.materialize()
        self.cohorts.clear()
        self.active.clear()
        self._eligible.clear()
        self._refused.clear()

    def requeue_all(self, key: str) -> None:
        """Requeue-all of a cohort tree for its plans: a new epoch."""
        cohort = self.cohorts.get(key)
        if cohort is None or not cohort.plans:
            return
        cohort.epoch += 1
        self.retotal(cohort, cohort.zero - cohort.total)
        cohort.active = list(cohort.plans.values())
        self.active[key] = cohort

    # ------------------------------------------------------------------ adoption

    def adopt(self, names: list[str]) -> list[str]:
        """Make plans for the queues of `names` that qualify; returns the others (nominated as usual)."""
        sim = self.sim
        rest = []
        for name in names:
            q = sim.queues[name]
            if self._refused.get(name) == q.token or not self._attach(q):
                self._refused[name] = q.token
                rest.append(name)
        return rest

    def _qualifies(self, name: str) -> bool:
        got = self._eligible.get(name)
        if got is None:
            sim = self.sim
            q = sim.queues[name]
            cq = sim.cluster.cluster_queues[name]
            node = sim.tree.cqs[name]
            p = cq.preemption
            root = node.parent
            got = (sim.fair_sharing is None and not q.strict_fifo and q.usage_of is None
                   and p.reclaim_within_cohort == ANY and p.within_cluster_queue in (NEVER, LOWER_PRIORITY)
                   and (root is None or (root.flat and root.parent is None
                                         and p.borrow_within_cohort.policy == NEVER)))
            self._eligible[name] = got
        return got

    def head_for(self, entry: tuple[tuple, int, SimWorkload], bucket: Any, name: str) -> _Head | None:
        """The _Head of a bucket's top heap entry, None where the plan cannot tell its nominations."""
        from kueueplan.simulate import scheduler  # scheduler imports this module
        sim = self.sim
        wl = entry[2]
        if wl.state != PENDING or wl.last_assignment is not None:
            return None
        if sim.config.partial_admission and sim.version >= (0, 5) and \
                any(ps.min_count is not None and ps.min_count < ps.count for ps in wl.spec.pod_sets):
            return None
        if sim.admissibility_problem(wl, name) is not None:
            return None
        plain = scheduler._plain_request(sim, wl, name)
        return None if plain is None else _Head(wl, bucket, entry[0], plain)

    def _attach(self, q: Any) -> bool:
        name = q.name
        sim = self.sim
        if not self._qualifies(name) or q.sticky is not None or q.inadmissible:
            return False
        tops = []
        ghosts = []
        for h, bucket in list(q.buckets.items()):
            entry = q._top_entry(bucket)
            if entry is None:
                if bucket.parked:
                    ghosts.append(h)
                else:
                    del q.buckets[h]
                continue
            head = self.head_for(entry, h, name) if bucket.verdict is None else None
            if head is None:
                return False
            tops.append((head, bucket.parked))
        if not tops:
            return False
        tops.sort(key=lambda t: t[0].order)
        key = sim._root_key(name)
        cohort = self.cohorts.get(key)
        node = sim.tree.cqs[name]
        if cohort is None:
            cohort = self.cohorts[key] = _Cohort(key, node.parent)
        plan = HeadPlan(self, cohort, q, node, [t[0] for t in tops], [t[1] for t in tops], ghosts,
                        sim.cluster.cluster_queues[name].preemption.within_cluster_queue == LOWER_PRIORITY)
        q.plan = plan
        sim.forget_queue_term(name)
        parked = sim._parked.get(key)
        if parked is not None:
            parked.discard(name)
        sim._ready_queues.discard(name)
        cohort.plans[name] = plan
        self.retotal(cohort, plan.term())
        cohort.zero += plan.terms[0]
        if plan.pos < len(plan.heads):
            cohort.active.append(plan)
            self.active[key] = cohort
        return True

    # ------------------------------------------------------------------ nomination

    def nominate(self, cycle: int) -> tuple[bool, bool, list[tuple[HeadPlan, _Head, int | None]],
                                            list["FittingHeads"]]:
        """The plans' part of a cycle's nominations: heads that park are parked here (their message
        deferred); returns (whether any plan had a head, whether one parked, the other live heads with their
        fit height or None, and per cohort its heads of one resource that fit the snapshot)."""
        any_head = parked = False
        live: list[tuple[HeadPlan, _Head, int | None]] = []
        groups: list[FittingHeads] = []
        for key, cohort in list(self.active.items()):
            free: dict[FR, int] = {}
            keep = []
            fits: list[_Head] = []
            grouped = cohort.root is not None
            epoch = cohort.epoch
            snap = None  # the cohort's usage as its nominations see it, when a head parks (None alone)
            parks = False
            delta = 0  # the signature terms' change (HeadPlan.park)
            last_fr: FR | None = None  # the resource of the last head classified and the cohort's room in it
            room = 0
            room_c = 0  # the room as a C number, where it lies strictly within (_LO, _HI) (small)
            small = False
            for plan in cohort.active:
                heads = plan.heads
                if plan.epoch != epoch:  # sync_epoch, inline (as below: this loop runs for every head)
                    plan.epoch = epoch
                    plan.parked = None
                    plan.count = plan.ghost_count = 0
                    plan.pos = 0
                pos = plan.pos
                n = len(heads)
                if pos >= n:
                    continue
                h = heads[pos]
                if h.version != plan.version:
                    plan.refresh(h)
                fr = h.fr
                if fr is None:
                    height = plan.classify(h, free)
                else:  # classify, inline for one resource
                    if fr is not last_fr and fr != last_fr:
                        got = free.get(fr)
                        room = got if got is not None else cohort.free(fr, free)
                        last_fr = fr
                        small = _LO < room < _HI
                        if small:
                            room_c = room
                    # live_from <= fit_from: a head short of quota is one that does not fit
                    if small:
                        height = None if room_c < h.live_c else h.height if room_c >= h.fit_c else -1
                    else:
                        height = None if room < h.live_from else h.height if room >= h.fit_from else -1
                if height is None:  # park, inline
                    if not parks:
                        snap = cohort.snapshot(cycle)
                        parks = True
                    step = plan.steps[plan.count + plan.ghost_count]  # typed: the sum wraps modulo 2**64 in C
                    delta += step
                    h.rec_usage = plan.usage_snap if plan.usage_snap is not None else plan.usage_copy()
                    h.rec_snap = snap
                    plan.count += 1
                    pos += 1
                    flags = plan.parked
                    if flags is not None:
                        flags[pos - 1] = True
                        while pos < n and flags[pos]:
                            pos += 1
                    plan.pos = pos
                    if pos < n:
                        keep.append(plan)
                else:
                    if height >= 0 and fr is not None and grouped:
                        fits.append(h)
                    else:
                        live.append((plan, h, height if height >= 0 else None))
                    keep.append(plan)
            if keep or parks:
                any_head = True
            if parks:
                parked = True
                cohort.total += delta
                self.total += delta
            cohort.active = keep
            if fits:
                groups.append(FittingHeads(cohort.root, fits, self.ranked))
            if not keep:
                del self.active[key]
        return any_head, parked, live, groups


class FittingHeads:
    """A cohort's live heads of one resource each that fit the cycle's snapshot, to take their turns among the
    cycle's entries in key order without an Entry each: on a busy cohort most lose their fit to an earlier entry.
    While no victim is claimed in the cohort, a head whose turn comes when it asks for more than the cohort has
    free surely loses (_Claimed.fits_flat would fail it) and stays as it was; once a victim is claimed in the
    cohort, every later head takes its turn as an entry (scheduler._in_turn tells the group: `claimed`).

    The heads are not sorted up front: the cohort's free quota only goes down while no victim is claimed (the
    cycle adds usage; victims leave after it), so a head that does not fit at a look would lose its turn whenever
    it came. The first look needs only the least key among the heads that fit (its turn usually takes the
    cohort's room, and every other head loses); later looks put the heads left in key order."""

    __slots__ = ("root", "heads", "lost", "key", "at", "looked", "ordered", "exact", "ranked")

    def __init__(self, root: Node, heads: list[_Head], ranked: bool) -> None:
        self.root = root
        self.ranked = ranked  # the heads' (height, tail_rank) order as their keys (HeadPlans.ranked): compared instead
        self.heads = heads  # those that fitted at the last look (in key order once `ordered`)
        self.lost: list[_Head] = []  # those that did not: they lose their turns (`finish`)
        # the key of the next turn as of the last look (scheduler._in_turn's heap of groups): the cohort's free
        # quota only goes down, so it is a lower bound later; None: no turn left; () before the first look
        self.key: tuple | None = ()
        self.at = -1  # the index in heads of the next turn's head, as of the last look
        self.looked = False  # later looks order the heads left: their cost stays O(n log n) however many there are
        self.ordered = False
        self.exact = False  # a victim is claimed in the cohort: every later head takes its turn as an entry

    def look(self) -> None:
        """The next turn as the cohort's free quota stands (`key`, `at`): the head of least key among those that
        still fit it; the others are lost."""
        if self.exact:
            self.at = 0 if self.heads else -1
        elif self.ordered:
            self.at = self._first_fit()
        else:
            self.at = self._least_fit()
        self.key = self.heads[self.at].key if self.at >= 0 else None

    def _least_fit(self) -> int:
        """Heads in no order: those that do not fit are lost; the index of the least key among the others, or -1
        (the first look: nothing else is needed when its turn takes the cohort's room, as it mostly does)."""
        root = self.root
        subtree, usage = root.subtree, root.usage
        lost = self.lost
        fr: FR | None = None
        room = 0
        heads = []
        total = 0.0  # what the heads that fit ask for in all (a float: it only chooses how to order), one resource
        mixed = False
        for h in self.heads:
            if h.fr is not fr:  # an identical resource has the same room (_Head.fr is interned)
                mixed = mixed or fr is not None
                fr = h.fr
                room = max(subtree.get(fr, 0) - usage.get(fr, 0), 0)
            if h.v <= room:
                heads.append(h)
                total += h.v
            else:
                lost.append(h)
        self.heads = heads
        # a later look, or one where all of them fit together (they all take their turns): the heads go in key order
        if self.looked or (not mixed and total <= room):
            heads.sort(key=_KEY)
            self.ordered = True
            return 0 if heads else -1
        self.looked = True
        at = -1
        least: Any = None
        if self.ranked:  # the least (height, tail_rank): C integers, then one int comparison where heights tie
            height = 0
            for i, h in enumerate(heads):
                if at < 0 or h.height < height or (h.height == height and h.tail_rank < least):
                    at, height, least = i, h.height, h.tail_rank
        else:
            for i, h in enumerate(heads):
                if at < 0 or h.key < least:
                    at, least = i, h.key
        return at

    def _first_fit(self) -> int:
        """A later look, heads in key order: those before the first that fits are lost; 0, or -1 if none fits."""
        root = self.root
        subtree, usage = root.subtree, root.usage
        heads, lost = self.heads, self.lost
        fr: FR | None = None
        room = 0
        n = 0
        for h in heads:
            if h.fr is not fr:
                fr = h.fr
                room = max(subtree.get(fr, 0) - usage.get(fr, 0), 0)
            if h.v <= room:
                break
            lost.append(h)
            n += 1
        del heads[:n]
        return 0 if heads else -1

    def take(self) -> _Head:
        """The head of the last look's turn, taken out; `key` is then a lower bound of the next turn's."""
        heads, at = self.heads, self.at
        h = heads[at]
        if self.ordered:  # at is 0
            del heads[0]
        else:  # after the first look: the heads left are ordered at the next (their keys are above h's)
            heads[at] = heads[-1]
            heads.pop()
        self.key = None if not heads else heads[0].key if self.ordered else h.key
        self.at = -1
        return h

    def claimed(self, after: tuple) -> None:
        """A victim was claimed in the cohort at the turn of key `after`: the heads that lost their turns before
        it stay lost; every other takes its turn, in key order, as an entry."""
        lost = self.lost
        self.lost = [h for h in lost if h.key < after]
        # those that still fit have keys above `after`: else their group's turn would have come before it
        heads = self.heads + [h for h in lost if h.key > after]
        heads.sort(key=_KEY)
        self.heads = heads
        self.ordered = self.exact = True
        self.at = 0 if heads else -1
        self.key = heads[0].key if heads else None

    def finish(self, message: str) -> None:
        """The end of the cycle's turns: the heads that lost theirs stay as they were, with `message`."""
        for h in self.lost:
            wl = h.wl
            if wl.message is not message:
                wl.message = message
            h.rec_usage = None  # a quota message deferred from an earlier cycle is not shown
        self.lost = []


__all__ = ["FittingHeads", "HeadPlan", "HeadPlans"]
