"""Admission checks: which apply to a reservation, and the scenario's delay/capacity model of their controllers.

A check applies when the ClusterQueue's rule has no `onFlavors` or one of them is among the flavors
assigned to the workload (semantics §10). A ProvisioningRequest check whose config lists
`managedResources` the workload does not request is Ready at once (Kueue creates no request).
With a model `{delay, capacity}` provisioning starts when the in-flight managed resources plus this
workload's stay within `capacity` (waiting workloads start in reservation order, head of line first),
and the check turns Ready `delay` later. Without a model it is Ready at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kueueplan.kube.objects import Cluster, ClusterQueue, PROVISIONING_CONTROLLER
from kueueplan.kube.podsets import total_requests
from kueueplan.simulate.scenario import CheckModel
from kueueplan.simulate.workload import SimWorkload


def applicable_checks(cq: ClusterQueue, flavors_used: set[str]) -> list[str]:
    out = []
    for rule in cq.admission_checks:
        if not rule.on_flavors or flavors_used.intersection(rule.on_flavors):
            out.append(rule.name)
    return sorted(set(out))


def managed_requests(cluster: Cluster, check: str, wl: SimWorkload) -> dict[str, int]:
    """The workload's requests this check provisions (all, or the config's managedResources)."""
    totals = total_requests(wl.spec.pod_sets)
    ac = cluster.admission_checks.get(check)
    if ac is not None and ac.controller_name == PROVISIONING_CONTROLLER and ac.parameters_name:
        prc = cluster.provisioning_request_configs.get(ac.parameters_name)
        if prc is not None and prc.managed_resources:
            return {r: v for r, v in totals.items() if r in prc.managed_resources and v > 0}
    return {r: v for r, v in totals.items() if v > 0}


@dataclass
class _CheckQueue:
    model: CheckModel
    waiting: list[SimWorkload] = field(default_factory=list)
    in_flight: dict[str, dict[str, int]] = field(default_factory=dict)


class AdmissionCheckController:
    """Tracks provisioning per check; `start` and `release` return (workload, check, ready_at) to schedule."""

    def __init__(self, models: dict[str, CheckModel]) -> None:
        self.queues = {name: _CheckQueue(m) for name, m in models.items()}

    def start(self, cluster: Cluster, wl: SimWorkload, check: str, now: int) -> list[tuple[SimWorkload, str, int]]:
        """A reservation needs this check. Returns the Ready times that are now known."""
        needs = managed_requests(cluster, check, wl)
        q = self.queues.get(check)
        if q is None or not needs:
            return [(wl, check, now)]
        if q.model.capacity is None:
            return [(wl, check, now + q.model.delay)]
        q.waiting.append(wl)
        return self._drain(cluster, check, q, now)

    def release(self, cluster: Cluster, wl: SimWorkload, now: int) -> list[tuple[SimWorkload, str, int]]:
        """The workload finished or lost its quota: free what it held and start waiting ones."""
        out = []
        for check, q in self.queues.items():
            changed = q.in_flight.pop(wl.key, None) is not None
            if wl in q.waiting:
                q.waiting.remove(wl)
                changed = True
            if changed:
                out.extend(self._drain(cluster, check, q, now))
        return out

    def _drain(self, cluster: Cluster, check: str, q: _CheckQueue, now: int) -> list[tuple[SimWorkload, str, int]]:
        out = []
        cap = q.model.capacity or {}
        while q.waiting:
            wl = q.waiting[0]
            needs = managed_requests(cluster, check, wl)
            used: dict[str, int] = {}
            for held in q.in_flight.values():
                for r, v in held.items():
                    used[r] = used.get(r, 0) + v
            if any(used.get(r, 0) + needs.get(r, 0) > limit for r, limit in cap.items()):
                break
            q.waiting.pop(0)
            q.in_flight[wl.key] = {r: v for r, v in needs.items() if r in cap}
            out.append((wl, check, now + q.model.delay))
        return out
