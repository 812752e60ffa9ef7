"""What one run measured: per workload its wait and preemptions, per flavor and resource its usage over
time, and which expectations held. Small and plain (it crosses process boundaries), and computed from the
simulator's own state: the quota a workload holds is recorded where the engine reserves and releases it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kueueplan.kube.apiversion import TEAM_LABEL
from kueueplan.simulate.engine import Simulation
from kueueplan.simulate.result import expectation_results
from kueueplan.simulate.scenario import Scenario


class TracedSimulation(Simulation):
    """The engine, unchanged, with a log of every quota reservation and release: (ms, flavor, resource, delta)."""

    def __init__(self, scenario: Scenario) -> None:
        super().__init__(scenario)
        self.usage_log: list[tuple[int, str, str, int]] = []

    def admit(self, wl: Any, cq_name: str, assignment: Any) -> None:
        super().admit(wl, cq_name, assignment)
        self.usage_log.extend((self.now, f, r, v) for (f, r), v in wl.usage.items())

    def _release(self, wl: Any) -> None:
        held = dict(wl.usage) if wl.holds_quota else {}
        super()._release(wl)
        self.usage_log.extend((self.now, f, r, -v) for (f, r), v in held.items())


@dataclass
class WorkloadOutcome:
    team: str
    cluster_queue: str
    wait_ms: int  # until the first admission, or until the end of the run when never admitted
    admitted: bool
    preempted: int


@dataclass
class RunMetrics:
    run: int
    end_ms: int
    workloads: list[WorkloadOutcome]
    usage: dict[str, dict[str, tuple[float, int]]]  # flavor -> resource -> (time-averaged, peak)
    quota: dict[str, dict[str, int]]  # flavor -> resource -> nominal quota summed over ClusterQueues
    expectations: list[bool]  # per expectation of the scenario, in order: did it hold
    failures: list[str] = field(default_factory=list)
    # change points for charts: "flavor/resource" -> [(ms, level)], and ClusterQueue -> [(ms, waiting)]
    usage_series: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    waiting_series: dict[str, list[tuple[int, int]]] = field(default_factory=dict)


def run_metrics(scenario: Scenario, run: int) -> RunMetrics:
    sim = TracedSimulation(scenario).run()
    return measure(sim, run)


def measure(sim: TracedSimulation, run: int) -> RunMetrics:
    end = sim.now
    teams = _teams(sim)
    first_admitted: dict[str, int] = {}
    preempted: dict[str, int] = {}
    for e in sim.events:
        if e["type"] == "Admitted":
            first_admitted.setdefault(e["workload"], round(e["at"] * 1000))
        elif e["type"] == "Preempted":
            preempted[e["workload"]] = preempted.get(e["workload"], 0) + 1
    outcomes = []
    for wl in sim.workloads:
        at = first_admitted.get(wl.key)
        outcomes.append(WorkloadOutcome(
            team=teams.get(wl.spec.namespace, wl.spec.namespace),
            cluster_queue=wl.cluster_queue or "",
            wait_ms=(at if at is not None else end) - wl.created_at,
            admitted=at is not None,
            preempted=preempted.get(wl.key, 0)))
    details = expectation_results(sim)
    verdicts, failures = [not d for d in details], [f for d in details for f in d]
    return RunMetrics(run, end, outcomes, _usage(sim.usage_log, end), _quota(sim), verdicts, failures,
                      _levels(sim.usage_log), _waiting(sim))


def _teams(sim: Simulation) -> dict[str, str]:
    """Namespace -> team: the `kueueplan.io/team` label kueueplan's build puts on Namespaces, else the name."""
    out = {}
    for data, _, _ in sim.scenario.manifests:
        if data.get("kind") == "Namespace":
            meta = data.get("metadata") or {}
            team = (meta.get("labels") or {}).get(TEAM_LABEL)
            if team and meta.get("name"):
                out[str(meta["name"])] = str(team)
    return out


def _usage(log: list[tuple[int, str, str, int]], end: int) -> dict[str, dict[str, tuple[float, int]]]:
    """Time-averaged and peak usage per flavor and resource over [0, end]."""
    series: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for at, flavor, resource, delta in log:
        series.setdefault((flavor, resource), []).append((at, delta))
    out: dict[str, dict[str, tuple[float, int]]] = {}
    for (flavor, resource), changes in sorted(series.items()):
        level = peak = 0
        area = 0
        last = 0
        i = 0
        while i < len(changes):  # apply every change of one instant before reading the level
            at = changes[i][0]
            area += level * (at - last)
            last = at
            while i < len(changes) and changes[i][0] == at:
                level += changes[i][1]
                i += 1
            peak = max(peak, level)
        area += level * (end - last)
        out.setdefault(flavor, {})[resource] = (area / end if end > 0 else float(level), peak)
    return out


def _levels(log: list[tuple[int, str, str, int]]) -> dict[str, list[tuple[int, int]]]:
    """Usage after each instant's changes, per flavor/resource."""
    out: dict[str, list[tuple[int, int]]] = {}
    for at, flavor, resource, delta in log:
        _step(out.setdefault(f"{flavor}/{resource}", []), at, delta)
    return out


def _step(points: list[tuple[int, int]], at: int, delta: int) -> None:
    """Add `delta` to a step function at `at`; changes at one instant make one point."""
    level = (points[-1][1] if points else 0) + delta
    if points and points[-1][0] == at:
        points[-1] = (at, level)
    else:
        points.append((at, level))


def _waiting(sim: Simulation) -> dict[str, list[tuple[int, int]]]:
    """Workloads waiting for quota per ClusterQueue over time (created or evicted, not yet holding quota)."""
    out: dict[str, list[tuple[int, int]]] = {}
    waiting: dict[str, bool] = {}
    for e in sim.events:
        cq, key, kind = e.get("clusterQueue"), e["workload"], e["type"]
        if not cq:
            continue
        before = waiting.get(key, False)
        if kind == "Evicted" and e.get("reason") == "Deactivated":
            waiting[key] = False  # deactivated: never requeued
        elif kind in ("Created", "Preempted", "Evicted"):
            waiting[key] = True
        elif kind in ("QuotaReserved", "Deleted", "Finished"):
            waiting[key] = False
        delta = int(waiting.get(key, False)) - int(before)
        if delta:
            _step(out.setdefault(cq, []), round(e["at"] * 1000), delta)
    return out


def _quota(sim: Simulation) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for node in sim.tree.cqs.values():
        for (flavor, resource), q in node.quotas.items():
            out.setdefault(flavor, {})[resource] = out.get(flavor, {}).get(resource, 0) + q.nominal
    return out
