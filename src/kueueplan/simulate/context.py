"""What the scheduler, fair sharing and preemption need from the simulation around them.

A Protocol, so that pkg/scheduler's counterparts (scheduler.py, fairsharing.py, preemption.py) never import the
engine that drives them: data and imports flow one way, engine -> controllers -> scheduler.
"""

from __future__ import annotations

from typing import Any, Iterable, Protocol

from kueueplan.kube.objects import Cluster, ClusterQueue
from kueueplan.simulate.flavorassigner import Assignment
from kueueplan.simulate.preemption import Target
from kueueplan.simulate.queue import ClusterQueueQueue
from kueueplan.simulate.resource_node import FR, QuotaTree
from kueueplan.simulate.workload import SimWorkload


class SchedulingContext(Protocol):
    cluster: Cluster
    tree: QuotaTree
    queues: dict[str, ClusterQueueQueue]
    cycle: int
    version: tuple[int, int]
    fair_sharing: dict[str, Any] | None
    config: Any  # simulate.configuration.SimConfiguration
    deferred: Any  # scheduler.DeferredMessages
    plans: Any  # headplan.HeadPlans
    plain_requests: dict[tuple[int, str], tuple[Any, dict[FR, int] | None]]
    fitting: dict[tuple[int, str, int], tuple[Any, Assignment]]

    @property
    def cluster_queues(self) -> dict[str, ClusterQueue]: ...

    def active_cluster_queues(self) -> list[str]: ...

    def queues_with_heads(self) -> list[str]: ...

    def admissibility_problem(self, wl: SimWorkload, cq_name: str) -> tuple[str, str] | None: ...

    def admission_blocked(self) -> bool: ...

    def never_admissible(self, wl: SimWorkload, cq: str) -> str | None: ...

    def flavors_of(self, cq: str) -> dict[str, Any]: ...

    def namespace_labels(self, namespace: str) -> dict[str, str]: ...

    def cq_generation(self, cq: str) -> tuple[int, int]: ...

    def preemption_oracle(self, wl: SimWorkload, cq: ClusterQueue, fr: FR, qty: int) -> tuple[int, int]: ...

    def get_targets(self, wl: SimWorkload, cq_name: str, assignment: Assignment) -> list[Target]: ...

    def workloads_in(self, cq: str) -> Iterable[SimWorkload]: ...

    def preemption_cache(self) -> dict: ...

    def requeue(self, wl: SimWorkload, cq: str, reason: str, assignment: Assignment | None, message: str) -> bool: ...

    def admit(self, wl: SimWorkload, cq_name: str, assignment: Assignment) -> None: ...

    def evict(self, wl: SimWorkload, preempted_by: SimWorkload | None = None, reason: str = "") -> None: ...
