"""Admission checks (pkg/controller/admissionchecks/provisioning, pkg/controller/core/workload_controller.go
reconcileCheckBasedEviction): which apply to a reservation, which are active, the scenario's
delay/capacity/outcomes model of their controllers, and every check state change as an AdmissionCheckState event.

A check applies when the ClusterQueue's rule has no `onFlavors` or one of them is among the flavors
assigned to the workload (semantics §10). A ProvisioningRequest check whose config lists
`managedResources` the workload does not request is Ready at once (Kueue creates no request).
With a model `{delay, capacity}` provisioning starts when the in-flight managed resources plus this
workload's stay within `capacity` (waiting workloads start in reservation order, head of line first),
and the check turns Ready `delay` later. Without a model it is Ready at once.

Attempts (second edition): attempt n of a check for a workload ends `delay` after it starts with the model's
n-th outcome. Provisioned: Ready. Failed with n <= retryStrategy.backoffLimitCount: Retry, the workload is evicted
(reason AdmissionCheck) and requeued backoffBaseSeconds*2^(n-1) later (capped at backoffMaxSeconds;
UpdateAdmissionCheckRequeueState, no jitter); the next attempt starts at its next reservation. Failed beyond the
limit: Rejected, and the workload is deactivated (cause AdmissionCheck). A check with no ProvisioningRequestConfig
uses the config's defaults (3 / 60s / 1800s).

A ProvisioningRequest check whose ProvisioningRequestConfig does not exist is inactive
(provisioning/admissioncheck_reconciler.go: Active=False, BadParametersRef), and so is every ClusterQueue using it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kueueplan.kube.objects import Cluster, ClusterQueue, PROVISIONING_CONTROLLER, ProvisioningRequestConfig
from kueueplan.kube.podsets import total_requests
from kueueplan.simulate.scenario import CheckModel
from kueueplan.simulate.workload import QUOTA_RESERVED, SimWorkload

_DEFAULT_RETRY = ProvisioningRequestConfig("")  # retryStrategy {backoffLimitCount: 3, base 60s, max 1800s}


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


class AdmissionCheckReconciler:
    """Mixin of engine.Simulation: check states per workload, attempts and their outcomes."""

    def inactive_check_reason(self, name: str) -> str | None:
        ac = self.cluster.admission_checks.get(name)
        if ac is None or ac.controller_name != PROVISIONING_CONTROLLER:
            return None
        params = dict(ac.parameters)
        if not params.get("name"):
            return None  # no parameters: the controller uses its defaults
        if params.get("kind", "ProvisioningRequestConfig") != "ProvisioningRequestConfig":
            return f"parameters of kind {params.get('kind')} are not a ProvisioningRequestConfig"
        if params["name"] not in self.cluster.provisioning_request_configs:
            return f"ProvisioningRequestConfig {params['name']} doesn't exist"
        return None

    def _start_checks(self, wl: SimWorkload, cq_name: str) -> bool:
        """At a quota reservation: every applicable check turns Pending and its attempt starts. False when none."""
        cq = self.cluster.cluster_queues[cq_name]
        if not cq.admission_checks:  # the usual queue: nothing to start
            wl.checks = {}
            return False
        flavors = {fr[0] for fr in wl.usage}
        checks = applicable_checks(cq, flavors)
        wl.checks = {c: "Pending" for c in checks}
        if not checks:
            return False
        wl.message = "waiting for admission checks: " + ", ".join(checks)
        for c in checks:
            self.emit("AdmissionCheckState", wl, check=c, state="Pending", **self._request_state(wl, c, "Accepted"))
        for c in checks:
            self._schedule_attempts(self.ac.start(self.cluster, wl, c, self.now))
        return True

    def _release_checks(self, wl: SimWorkload) -> None:
        if self.ac.queues:  # only checks with a capacity hold anything (every release, usually without any)
            self._schedule_attempts(self.ac.release(self.cluster, wl, self.now))

    def _schedule_attempts(self, done: list[tuple[SimWorkload, str, int]]) -> None:
        for w, check, at in done:
            self._push(at, self.P_CHECK_READY, "ready", (w, check, w.run_token))

    def _request_state(self, wl: SimWorkload, check: str, condition: str) -> dict[str, str]:
        """Extra event field: the ProvisioningRequest's condition (Accepted -> Provisioned / Failed), for
        provisioning checks that create one (the workload requests some of its managedResources)."""
        ac = self.cluster.admission_checks.get(check)
        if ac is None or ac.controller_name != PROVISIONING_CONTROLLER or not managed_requests(self.cluster, check, wl):
            return {}
        return {"provisioningRequest": condition}

    def _retry_strategy(self, check: str) -> ProvisioningRequestConfig:
        ac = self.cluster.admission_checks.get(check)
        if ac is not None and ac.parameters_name:
            return self.cluster.provisioning_request_configs.get(ac.parameters_name, _DEFAULT_RETRY)
        return _DEFAULT_RETRY

    def _on_attempt_done(self, wl: SimWorkload, check: str, token: int) -> None:
        if wl.run_token != token or wl.state != QUOTA_RESERVED or wl.checks.get(check) != "Pending":
            return
        model = self.scenario.admission_checks.get(check)
        needs = managed_requests(self.cluster, check, wl)
        attempt = wl.check_attempts.get(check, 0) + 1
        outcome = model.outcome(attempt) if model is not None and needs else "Provisioned"
        if model is not None and needs:
            wl.check_attempts[check] = attempt
        if outcome == "Provisioned":
            wl.checks[check] = "Ready"
            self.emit("AdmissionCheckState", wl, check=check, state="Ready",
                      **self._request_state(wl, check, "Provisioned"))
            if all(s == "Ready" for s in wl.checks.values()):
                self._set_admitted(wl)
            return
        retry = self._retry_strategy(check)
        if attempt <= retry.backoff_limit_count:
            wl.checks[check] = "Retry"
            self.emit("AdmissionCheckState", wl, check=check, state="Retry", **self._request_state(wl, check, "Failed"))
            backoff = min(retry.backoff_base_seconds * 2 ** (attempt - 1), retry.backoff_max_seconds) * 1000
            self.evict(wl, reason="AdmissionCheck", backoff=backoff)
        else:
            wl.checks[check] = "Rejected"
            self.emit("AdmissionCheckState", wl, check=check, state="Rejected",
                      **self._request_state(wl, check, "Failed"))
            self.deactivate(wl, "AdmissionCheck")
