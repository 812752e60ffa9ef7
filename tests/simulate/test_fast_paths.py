"""The scheduler's shortcuts give the run the full path gives, byte for byte.

The shortcuts skip work whose outcome is known (scheduler.py, preemption.py, headplan.py):
- cannot_preempt answers "no targets" without the preemption search;
- _surely_parked parks a head that can neither fit nor preempt without its flavor scan, and its quota message
  is made only if it is still shown at the end (DeferredMessages);
- _direct_fit builds the assignment of a head that fits where the scan has nothing to choose, and
  FlavorAssigner.run_one scans such a head's single resource when it does not fit (and such a head keeps no
  LastAssignment: _scanless);
- head plans (headplan.py) nominate a plain queue's heads by arithmetic (test_headplan.py checks them alone).
Each test runs the same input with the shortcuts and with them switched off, and compares the whole result
(workloads, their messages, events, warnings). The inputs are random small clusters (test_properties), and
Kueue's performance shape cut off mid-run, where waiting heads show deferred messages; a counter checks that
the shortcuts were taken, so that a test cannot pass by never exercising them.
"""

from __future__ import annotations

import copy
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings

from kueueplan.simulate import engine, headplan, preemption, scheduler
from kueueplan.simulate.engine import simulate
from kueueplan.simulate.flavorassigner import FlavorAssigner
from kueueplan.simulate.headplan import HeadPlans
from kueueplan.simulate.result import result_json
from kueueplan.simulate.scenario import scenario_from_dict
from tests.simulate.test_properties import scenarios

V2 = "kueue.x-k8s.io/v1beta2"


def pure_head_plans(mp: pytest.MonkeyPatch) -> None:
    """Runs use the pure headplan module, whose methods the counters wrap: a compiled twin's cannot be patched
    (native.py; test_native.py checks that both give the same runs)."""
    mp.setattr(engine, "HeadPlans", headplan.HeadPlans)


PLAN_PATHS = ("lost their turn", "in turn after a claim", "taken in", "new top")


def count_plan_paths(mp: pytest.MonkeyPatch, n: dict[str, int]) -> None:
    """Counts into n (keys PLAN_PATHS) the pure plans' paths: fitting heads that lost their turns, groups whose later
    heads took their turns one by one after a claim, and pushed workloads a plan took in (and those that became a
    bucket's new head)."""
    pure_head_plans(mp)
    finish, claimed = headplan.FittingHeads.finish, headplan.FittingHeads.claimed
    pushed, new_top = headplan.HeadPlan.pushed, headplan.HeadPlan._new_top

    def counted_finish(group: Any, message: str) -> None:
        n["lost their turn"] += len(group.lost)  # finish empties it
        finish(group, message)

    def counted_claimed(group: Any, after: Any) -> None:
        n["in turn after a claim"] += 1
        claimed(group, after)

    def counted_pushed(plan: Any, *args: Any) -> bool:
        took = pushed(plan, *args)
        n["taken in"] += took
        return took

    def counted_new_top(plan: Any, *args: Any) -> bool:
        took = new_top(plan, *args)
        n["new top"] += took
        return took

    mp.setattr(headplan.FittingHeads, "finish", counted_finish)
    mp.setattr(headplan.FittingHeads, "claimed", counted_claimed)
    mp.setattr(headplan.HeadPlan, "pushed", counted_pushed)
    mp.setattr(headplan.HeadPlan, "_new_top", counted_new_top)


class _Shortcuts:
    """Counts the shortcuts taken, or switches them off."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.mp = monkeypatch
        self.taken = {"cannot_preempt": 0, "surely_parked": 0, "direct_fit": 0, "run_one": 0, "head_plan": 0}
        self._orig = (preemption.cannot_preempt, scheduler._surely_parked, scheduler._direct_fit,
                      FlavorAssigner.run_one, HeadPlans.nominate)

    def count(self) -> None:
        cp, sp, df, one, nominate = self._orig
        pure_head_plans(self.mp)

        def plan_nominate(plans: HeadPlans, cycle: int) -> Any:
            got = nominate(plans, cycle)
            self.taken["head_plan"] += got[1]  # a cycle in which head plans parked heads by arithmetic
            return got

        def cannot(*a: Any) -> bool:
            r = cp(*a)
            self.taken["cannot_preempt"] += r
            return r

        def parked(*a: Any) -> bool:
            r = sp(*a)
            self.taken["surely_parked"] += r
            return r

        def fit(*a: Any) -> Any:
            r = df(*a)
            self.taken["direct_fit"] += r is not None
            return r

        def run_one(assigner: FlavorAssigner, *a: Any) -> Any:
            self.taken["run_one"] += 1
            return one(assigner, *a)

        self.mp.setattr(preemption, "cannot_preempt", cannot)
        self.mp.setattr(scheduler, "_surely_parked", parked)
        self.mp.setattr(scheduler, "_direct_fit", fit)
        self.mp.setattr(FlavorAssigner, "run_one", run_one)
        self.mp.setattr(HeadPlans, "nominate", plan_nominate)

    def off(self) -> None:
        self.mp.setattr(engine, "HEAD_PLANS", False)
        self.mp.setattr(preemption, "cannot_preempt", lambda *a: False)
        self.mp.setattr(scheduler, "_surely_parked", lambda *a: False)
        self.mp.setattr(scheduler, "_direct_fit", lambda *a: None)
        self.mp.setattr(FlavorAssigner, "run_one", lambda self, ps, fr: self.run((ps,)))
        self.mp.setattr(scheduler, "_scanless", lambda wl: False)


def _both(data: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> tuple[dict, dict, dict[str, int]]:
    with monkeypatch.context() as mp:
        s = _Shortcuts(mp)
        s.count()
        fast = result_json(simulate(scenario_from_dict(copy.deepcopy(data))))
        taken = dict(s.taken)
    with monkeypatch.context() as mp:
        _Shortcuts(mp).off()
        full = result_json(simulate(scenario_from_dict(copy.deepcopy(data))))
    return fast, full, taken


def _perf_shape(queues: int, until: str | None, classes: list[tuple[str, int, int, int, int, int]]) -> dict[str, Any]:
    """Kueue's scheduler performance shape (benchmarks/bench_simulate.py) on two cohorts."""
    manifests: list[dict[str, Any]] = [{"apiVersion": V2, "kind": "ResourceFlavor", "metadata": {"name": "default"}}]
    manifests += [{"apiVersion": V2, "kind": "WorkloadPriorityClass", "metadata": {"name": n}, "value": p}
                  for n, _, _, p, _, _ in classes]
    workloads = []
    for c in range(2):
        for q in range(queues):
            cq = f"cq-{c}-{q}"
            manifests.append({"apiVersion": V2, "kind": "ClusterQueue", "metadata": {"name": cq}, "spec": {
                "cohortName": f"cohort-{c}", "namespaceSelector": {},
                "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
                "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                    {"name": "default", "resources": [{"name": "cpu", "nominalQuota": "20", "borrowingLimit": "100"}]}]}]}})
            manifests.append({"apiVersion": V2, "kind": "LocalQueue", "metadata": {"namespace": "default", "name": cq},
                              "spec": {"clusterQueue": cq}})
            for name, cpu, run_for, _, every, count in classes:
                workloads.append({"at": f"{(q * 37) % 400}ms", "count": count, "every": f"{every + q % 7}ms",
                                  "runFor": f"{run_for + 13 * (q % 5)}ms", "manifest": {
                                      "apiVersion": "batch/v1", "kind": "Job",
                                      "metadata": {"name": f"{cq}-{name}", "namespace": "default", "labels": {
                                          "kueue.x-k8s.io/queue-name": cq, "kueue.x-k8s.io/priority-class": name}},
                                      "spec": {"parallelism": 1, "template": {"spec": {"containers": [
                                          {"name": "c", "resources": {"requests": {"cpu": str(cpu)}}}]}}}}})
    spec: dict[str, Any] = {"manifests": manifests, "workloads": workloads}
    if until is not None:
        spec["until"] = until
    return {"apiVersion": "kueueplan.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "perf"}, "spec": spec}


CLASSES = [("small", 1, 200, 50, 100, 12), ("medium", 5, 500, 100, 500, 4), ("large", 20, 1000, 200, 1200, 2)]


def _cases() -> Iterator[tuple[int, str | None]]:
    yield 8, None
    for until in ("700ms", "1300ms", "2s"):
        yield 8, until


@pytest.mark.parametrize("queues,until", list(_cases()))
def test_perf_shape_same_run_with_and_without_shortcuts(queues: int, until: str | None,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    fast, full, taken = _both(_perf_shape(queues, until, CLASSES), monkeypatch)
    assert all(n > 0 for n in taken.values()), taken
    assert fast == full
    if until is not None:  # heads parked by _surely_parked show their deferred quota message
        waiting = [w["message"] for w in fast["workloads"] if w["state"] == "Pending"]
        assert any("more needed" in m for m in waiting), waiting[:5]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(data=scenarios())
def test_random_clusters_same_run_with_and_without_shortcuts(data: dict[str, Any],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    fast, full, _ = _both(data, monkeypatch)
    assert fast == full
