"""A workload during a simulation: its derived pod sets plus everything that changes while it runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kueueplan.kube.podsets import WorkloadSpec
from kueueplan.simulate.resource_node import FR

PENDING = "Pending"
INADMISSIBLE = "Inadmissible"
QUOTA_RESERVED = "QuotaReserved"
ADMITTED = "Admitted"
FINISHED = "Finished"
DEACTIVATED = "Deactivated"  # evicted and never requeued (second edition)


@dataclass(slots=True)  # one per nomination; never changed after it is made
class LastAssignment:
    """Kueue's AssignmentClusterQueueState: how far the last flavor scan got, per pod set and resource (the
    index of the flavor it stopped at; -1 once it reached the last one, so the next scan starts over),
    with the ClusterQueue generation, the scheduling cycle and the workload's shape at the time."""

    tried: tuple[dict[str, int], ...]
    generation: tuple[int, int]
    cycle: int
    shape: tuple[Any, ...]
    pending: bool = False  # pending_flavors(), given by the maker (who knows it without a walk)

    def pending_flavors(self) -> bool:
        return any(i != -1 for per_pod_set in self.tried for i in per_pod_set.values())

    def next_flavor(self, pod_set: int, resource: str) -> int:
        """NextFlavorToTryForPodSetResource."""
        if pod_set >= len(self.tried):
            return 0
        return self.tried[pod_set].get(resource, -1) + 1


@dataclass(eq=False, slots=True)  # one per workload: slots keep 50,000 of them small
class SimWorkload:
    seq: int  # creation order: Kueue's creation-time/UID tie-breaker
    spec: WorkloadSpec
    created_at: int  # ms
    run_for: int | None  # ms; None = never finishes by itself
    manifest: Any = None

    state: str = PENDING
    cluster_queue: str | None = None
    queue_ts: int = 0  # queue-order timestamp (ms)
    usage: dict[FR, int] = field(default_factory=dict)  # quota held, per (flavor, resource)
    assignment: dict[str, dict[str, str]] = field(default_factory=dict)  # pod set -> resource -> flavor
    counts: dict[str, int] = field(default_factory=dict)  # pod set -> pods admitted (partial admission)
    reserved_at: int | None = None
    reserve_seq: int = 0
    admitted_at: int | None = None
    finished_at: int | None = None
    evictions: int = 0
    message: str = ""
    note: str = ""  # a standing remark about the input, shown when there is no other message
    gone: bool = False  # finished or deleted: never scheduled again
    run_token: int = 0  # invalidates a scheduled completion after an eviction
    last_assignment: LastAssignment | None = None  # flavor scan progress, while it waits
    checks: dict[str, str] = field(default_factory=dict)  # admission check -> Pending/Ready/Retry/Rejected
    # second edition: the controllers around the scheduler
    pods_ready_after: int = 0  # ms after admission; scenario.NEVER = never
    pods_ready: bool = False  # PodsReady condition since the last admission
    requeue_count: int = 0  # Kueue's status.requeueState.count (PodsReadyTimeout evictions), never reset
    requeue_at: int | None = None  # in backoff until then (not in its queue)
    check_attempts: dict[str, int] = field(default_factory=dict)  # provisioning attempts per check
    max_exec: int | None = None  # ms, kueue.x-k8s.io/max-exec-time-seconds
    past_exec: int = 0  # ms admitted before the last eviction (AccumulatedPastExecutionTimeSeconds)
    resubmit_after: int | None = None  # ms: recreate this Pod as <name>-rN after a preemption
    template: Any = None  # the scenario entry it came from (resubmission copies it)
    unmanaged: bool = False  # Kueue would not manage it: no quota, no events
    # namespace/name, read millions of times in a large run: a slot, not a property (a replaced spec keeps
    # the workload's namespace and name)
    key: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.key = self.spec.key

    @property
    def priority(self) -> int:
        return self.spec.priority

    @property
    def admitted_not_ready(self) -> bool:
        return self.state == ADMITTED and not self.pods_ready

    @property
    def holds_quota(self) -> bool:
        return self.state in (QUOTA_RESERVED, ADMITTED)

    def equivalence_hash(self) -> tuple[Any, ...]:
        """Kueue's scheduling equivalence: same shapes, selectors, tolerations and priority (kept on the spec,
        which is only ever replaced, never changed in place)."""
        return self.spec.scheduling_shape
