"""Head plans (simulate/headplan.py) give the run the usual path gives, byte for byte.

A head plan nominates a queue's heads by arithmetic and keeps the queue's parked state itself; the usual path pops
and parks every head. Each test runs an input both ways and compares the whole result (workloads, their messages,
events and their order, warnings): random clusters and busy cohorts (test_properties), Kueue's performance shape
cut off mid-run (test_fast_paths), and hand-written cases for the plan's edges, each with the outcome Kueue gives
written out. A variant writes every plan back into its queue after every cycle, so that the write-back (bucket
flags, deferred quota messages, the state signature) is checked at every step, not only at the end of a run.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from kueueplan.simulate import engine, headplan, scheduler
from kueueplan.simulate.engine import simulate
from kueueplan.simulate.result import result_json
from kueueplan.simulate.scenario import scenario_from_dict
from tests.simulate.test_fast_paths import CLASSES, PLAN_PATHS, _perf_shape, count_plan_paths
from tests.simulate.test_properties import busy_cohorts, scenarios

V2 = "kueue.x-k8s.io/v1beta2"


def _run(data: dict[str, Any], monkeypatch: pytest.MonkeyPatch, plans: bool, write_back: bool = False) -> dict:
    with monkeypatch.context() as mp:
        mp.setattr(engine, "HEAD_PLANS", plans)
        if write_back:
            run_cycle = scheduler.run_cycle

            def cycle_then_write_back(sim: Any) -> bool:
                progress = run_cycle(sim)
                sim.plans.materialize_all()  # the next cycle makes new plans from the queues
                return progress

            mp.setattr(scheduler, "run_cycle", cycle_then_write_back)
        return result_json(simulate(scenario_from_dict(copy.deepcopy(data))))


class _Taken:
    """Counts the plans' paths: heads parked by arithmetic, admissions through a plan, write-backs, and those of
    test_fast_paths.count_plan_paths."""

    def __init__(self, mp: pytest.MonkeyPatch) -> None:
        self.n = {"parked": 0, "admitted": 0, "materialized": 0, **dict.fromkeys(PLAN_PATHS, 0)}
        count_plan_paths(mp, self.n)
        nominate, admit, materialize = (headplan.HeadPlans.nominate, headplan.HeadPlan.admit_head,
                                        headplan.HeadPlan.materialize)

        def counted_nominate(plans: Any, cycle: int) -> Any:
            got = nominate(plans, cycle)
            self.n["parked"] += got[1]
            return got

        def counted_admit(plan: Any, wl: Any) -> None:
            self.n["admitted"] += 1
            admit(plan, wl)

        def counted_materialize(plan: Any) -> None:
            self.n["materialized"] += 1
            materialize(plan)

        mp.setattr(headplan.HeadPlans, "nominate", counted_nominate)
        mp.setattr(headplan.HeadPlan, "admit_head", counted_admit)
        mp.setattr(headplan.HeadPlan, "materialize", counted_materialize)


def _same(data: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> dict:
    """The run with plans, checked against the usual path; the hand-written cases must make plans and park by
    them (else they would test nothing)."""
    with monkeypatch.context() as mp:
        taken = _Taken(mp)
        with_plans = _run(data, monkeypatch, True)
    assert with_plans == _run(data, monkeypatch, False)
    assert taken.n["parked"] > 0 and taken.n["materialized"] > 0, taken.n
    return with_plans


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(data=st.one_of(scenarios(), busy_cohorts()))
def test_random_clusters_same_run_with_and_without_plans(data: dict[str, Any],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    assert _run(data, monkeypatch, True) == _run(data, monkeypatch, False)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=busy_cohorts())
def test_plans_written_back_after_every_cycle_give_the_same_run(data: dict[str, Any],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    assert _run(data, monkeypatch, True, write_back=True) == _run(data, monkeypatch, False)


@pytest.mark.parametrize("until", [None, "700ms", "1300ms"])
def test_perf_shape_same_run_and_every_path_taken(until: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _perf_shape(8, until, CLASSES)
    with monkeypatch.context() as mp:
        taken = _Taken(mp)
        mp.setattr(engine, "HEAD_PLANS", True)
        with_plans = result_json(simulate(scenario_from_dict(copy.deepcopy(data))))
    assert with_plans == _run(data, monkeypatch, False)
    assert with_plans == _run(data, monkeypatch, True, write_back=True)
    # claims have their own test; a bucket's new head (an evicted workload back in a planned queue) comes late
    optional = {"in turn after a claim"} | ({"new top"} if until == "700ms" else set())
    assert all(n > 0 for k, n in taken.n.items() if k not in optional), taken.n
    if until is not None:  # heads a plan parked show their quota message, made when the plan was written back
        waiting = [w["message"] for w in with_plans["workloads"] if w["state"] == "Pending"]
        assert any("more needed" in m for m in waiting), waiting[:5]


def _cq(name: str, cohort: str | None, nominal: dict[str, str], borrowing: dict[str, str] | None = None,
        within: str = "LowerPriority") -> dict[str, Any]:
    spec: dict[str, Any] = {"namespaceSelector": {},
                            "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": within},
                            "resourceGroups": [{"coveredResources": sorted(nominal), "flavors": [{
                                "name": "f", "resources": [
                                    {"name": r, "nominalQuota": q, **({"borrowingLimit": borrowing[r]}
                                                                      if borrowing and r in borrowing else {})}
                                    for r, q in sorted(nominal.items())]}]}]}
    if cohort is not None:
        spec["cohortName"] = cohort
    return {"apiVersion": V2, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def _lq(name: str) -> dict[str, Any]:
    return {"apiVersion": V2, "kind": "LocalQueue", "metadata": {"namespace": "default", "name": name},
            "spec": {"clusterQueue": name}}


def _job(name: str, queue: str, at: str, requests: dict[str, str], run_for: str | None = None,
         priority: str | None = None) -> dict[str, Any]:
    labels = {"kueue.x-k8s.io/queue-name": queue}
    if priority:
        labels["kueue.x-k8s.io/priority-class"] = priority
    entry: dict[str, Any] = {"at": at, "manifest": {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": name, "namespace": "default", "labels": labels}, "spec": {"parallelism": 1, "template": {
            "spec": {"containers": [{"name": "c", "resources": {"requests": requests}}]}}}}}
    if run_for:
        entry["runFor"] = run_for
    return entry


def _scenario(manifests: list[dict[str, Any]], workloads: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    base = [{"apiVersion": V2, "kind": "ResourceFlavor", "metadata": {"name": "f"}},
            {"apiVersion": V2, "kind": "WorkloadPriorityClass", "metadata": {"name": "low"}, "value": 10},
            {"apiVersion": V2, "kind": "WorkloadPriorityClass", "metadata": {"name": "high"}, "value": 100}]
    return {"apiVersion": "kueueplan.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "plans"},
            "spec": {"manifests": base + manifests, "workloads": workloads, **spec}}


def _state(out: dict, name: str) -> tuple[str, str]:
    w = next(w for w in out["workloads"] if w["name"] == f"default/{name}")
    return w["state"], w["message"]


def test_deleted_workload_leaves_a_parked_bucket_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    """b and c wait in b's queue, each its own bucket (different requests), parked while a holds the cohort's
    quota; deleting c empties a parked bucket (it still counts as parked until a requeue-all); when a
    finishes, b is admitted."""
    data = _scenario([_cq("qa", "c", {"cpu": "2"}), _cq("qb", "c", {"cpu": "0"}), _lq("qa"), _lq("qb")],
                     [_job("a", "qa", "0s", {"cpu": "2"}, run_for="10s"),
                      _job("b", "qb", "1s", {"cpu": "1"}), _job("c", "qb", "1s", {"cpu": "2"})],
                     events=[{"at": "3s", "delete": {"kind": "Job", "name": "c"}}])
    out = _same(data, monkeypatch)
    assert _state(out, "b")[0] == "Admitted"
    assert [e["type"] for e in out["events"] if e["workload"] == "default/c"][-1] == "Deleted"


def test_new_workload_becomes_its_queue_head(monkeypatch: pytest.MonkeyPatch) -> None:
    """A high-priority workload created into a queue whose low-priority head is parked becomes the head and is
    admitted first when quota frees (Kueue orders a queue by priority, then creation time)."""
    data = _scenario([_cq("qa", "c", {"cpu": "2"}), _cq("qb", "c", {"cpu": "0"}), _lq("qa"), _lq("qb")],
                     [_job("a", "qa", "0s", {"cpu": "2"}, run_for="5s"),
                      _job("low", "qb", "1s", {"cpu": "2"}, priority="low"),
                      _job("high", "qb", "2s", {"cpu": "2"}, priority="high")])
    out = _same(data, monkeypatch)
    assert _state(out, "high")[0] == "Admitted"
    assert _state(out, "low") == ("Pending", "insufficient unused quota for cpu in flavor f, 2 more needed")


def test_alone_and_with_several_resources(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ClusterQueue without a cohort, and heads asking for cpu, memory and GPUs (the verdict per resource):
    the head waits on the GPU quota and says so (its equivalent waits with it, never nominated)."""
    data = _scenario([_cq("solo", None, {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "2"}), _lq("solo")],
                     [_job(f"j{i}", "solo", f"{i}s", {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"},
                           run_for="10s") for i in range(4)], until="5s")
    out = _same(data, monkeypatch)
    assert [_state(out, f"j{i}")[0] for i in range(4)] == ["Admitted", "Admitted", "Pending", "Pending"]
    assert _state(out, "j2")[1] == "insufficient unused quota for nvidia.com/gpu in flavor f, 1 more needed"


def test_fitting_heads_after_a_victim_is_claimed_in_their_cohort(monkeypatch: pytest.MonkeyPatch) -> None:
    """hog-2 borrows 6 of the cohort's 12 CPUs from qb, so 2 are free. At 1s, ra (qa, within nominal) reclaims
    them by preempting hog-2, and fc1 and fc2 (2 CPUs each, lower priority, so after ra in the cycle) both fit
    the snapshot. Kueue's fit check after a preemption counts the claimed victims' quota as free
    (scheduler.go: the entry fits with the workloads to preempt removed), so both are admitted in that cycle,
    although only one fits the free quota alone: the fitting heads take their turns one by one once a victim
    is claimed in their cohort. ra is admitted once hog-2 is evicted."""
    data = _scenario([_cq("qa", "c", {"cpu": "4"}), _cq("qb", "c", {"cpu": "4"}), _cq("qc", "c", {"cpu": "2"}),
                      _cq("qd", "c", {"cpu": "2"}), *(_lq(q) for q in ("qa", "qb", "qc", "qd"))],
                     [_job("hog-1", "qb", "0s", {"cpu": "4"}, run_for="1h", priority="low"),
                      _job("hog-2", "qb", "0s", {"cpu": "6"}, run_for="1h", priority="low"),
                      _job("ra", "qa", "1s", {"cpu": "4"}, run_for="10m", priority="high"),
                      _job("fc1", "qc", "1s", {"cpu": "2"}, run_for="10m", priority="low"),
                      _job("fc2", "qd", "1s", {"cpu": "2"}, run_for="10m", priority="low")], until="2s")
    with monkeypatch.context() as mp:
        taken = _Taken(mp)
        with_plans = _run(data, monkeypatch, True)
    assert with_plans == _run(data, monkeypatch, False)
    assert taken.n["in turn after a claim"] > 0, taken.n
    admitted = {e["workload"].split("/")[1]: e["at"] for e in with_plans["events"] if e["type"] == "Admitted"}
    assert admitted == {"hog-1": 0, "hog-2": 0, "fc1": 1, "fc2": 1, "ra": 1}
    assert [(e["workload"], e["at"]) for e in with_plans["events"] if e["type"] == "Preempted"] == \
        [("default/hog-2", 1)]


def test_a_fitting_head_that_lost_its_turn_stays_lost_after_a_claim(monkeypatch: pytest.MonkeyPatch) -> None:
    """hog-2 borrows 6 of the cohort's 12 CPUs, so 2 are free. At 1s w and a (high priority) both fit that
    snapshot, and e (low priority, within its nominal quota) can only reclaim. In the cycle's order w takes the 2
    free CPUs; a's turn comes next and it no longer fits; then e claims hog-2. The victim's quota counts as free
    only for entries after e: a had its turn already and waits for the next cycle, where, with hog-2 evicted, a
    and then e are admitted (scheduler.go processes the entries once, in order)."""
    data = _scenario([_cq("qw", "c", {"cpu": "2"}), _cq("qa", "c", {"cpu": "2"}), _cq("qe", "c", {"cpu": "4"}),
                      _cq("qb", "c", {"cpu": "4"}), *(_lq(q) for q in ("qw", "qa", "qe", "qb"))],
                     [_job("hog-1", "qb", "0s", {"cpu": "4"}, run_for="1h", priority="low"),
                      _job("hog-2", "qb", "0s", {"cpu": "6"}, run_for="1h", priority="low"),
                      _job("w", "qw", "1s", {"cpu": "2"}, run_for="10m", priority="high"),
                      _job("a", "qa", "1s", {"cpu": "2"}, run_for="10m", priority="high"),
                      _job("e", "qe", "1s", {"cpu": "4"}, run_for="10m", priority="low")], until="2s")
    with_plans = _run(data, monkeypatch, True)
    assert with_plans == _run(data, monkeypatch, False)
    order = [(e["type"], e["workload"].split("/")[1]) for e in with_plans["events"]
             if e["at"] == 1 and e["type"] in ("QuotaReserved", "Preempted")]
    assert order == [("QuotaReserved", "w"), ("Preempted", "hog-2"), ("QuotaReserved", "a"),
                     ("QuotaReserved", "e")], order


def test_alone_with_one_resource(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ClusterQueue without a cohort whose heads of one resource park by arithmetic: a parked head makes its
    cycle productive (the engine runs another), so every bucket's head is tried in the instant. Three priority
    levels (three buckets) on 2 CPUs: the two high ones run; mid and low (withinClusterQueue LowerPriority cannot
    preempt higher ones) are each nominated, parked and say why."""
    data = _scenario([_cq("solo", None, {"cpu": "2"}), _lq("solo"),
                      {"apiVersion": V2, "kind": "WorkloadPriorityClass", "metadata": {"name": "mid"}, "value": 50}],
                     [_job("h1", "solo", "0s", {"cpu": "1"}, run_for="10s", priority="high"),
                      _job("h2", "solo", "0s", {"cpu": "1"}, run_for="10s", priority="high"),
                      _job("m", "solo", "0s", {"cpu": "1"}, run_for="10s", priority="mid"),
                      _job("l", "solo", "0s", {"cpu": "1"}, run_for="10s", priority="low")], until="5s")
    out = _same(data, monkeypatch)
    assert [_state(out, n)[0] for n in ("h1", "h2")] == ["Admitted", "Admitted"]
    for name in ("m", "l"):
        assert _state(out, name) == ("Pending", "insufficient unused quota for cpu in flavor f, 1 more needed")
