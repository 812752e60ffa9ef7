"""A scheduling-cycle entry and Kueue's requeue reasons (pkg/scheduler/scheduler.go `entry`, pkg/cache/queue)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kueueplan.simulate import preemption
from kueueplan.simulate.flavorassigner import Assignment
from kueueplan.simulate.workload import SimWorkload

# requeue reasons (pkg/cache/queue)
NO_FIT = "NoFit"
NO_CANDIDATES = "PreemptionNoCandidates"
FAILED_AFTER_NOMINATION = "FailedAfterNomination"
PENDING_PREEMPTION = "PendingPreemption"
NAMESPACE_MISMATCH = "NamespaceMismatch"
GENERIC = "Generic"
WAITING_FOR_PODS_READY = "WaitingForPodsReady"  # blockAdmission held the admission back


@dataclass(slots=True)  # one per head of every cycle
class Entry:
    wl: SimWorkload
    cq: str
    assignment: Assignment | None = None
    targets: list[preemption.Target] = field(default_factory=list)
    requeue_reason: str = GENERIC
    message: str = ""
    admitted: bool = False
    plan: Any = None  # the headplan.HeadPlan of a live head nominated from one

    def sort_key(self) -> tuple:
        borrowing = self.assignment.borrowing if self.assignment else 0
        return (borrowing, -self.wl.priority, self.wl.queue_ts, self.wl.seq)

    def fifo_key(self) -> tuple:
        """sort_key with PrioritySortingWithinCohort off (scheduler.go: step 3 skipped)."""
        borrowing = self.assignment.borrowing if self.assignment else 0
        return (borrowing, self.wl.queue_ts, self.wl.seq)
