"""Property tests on random small clusters and loads:
- at no instant does usage exceed what the quotas allow (per ClusterQueue with a borrowing limit, per cohort tree);
- every workload holding quota is accounted for, and the tree's usage equals the sum of their usage;
- the output is deterministic and does not depend on the order of the manifests."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from kueueplan.simulate import engine as engine_mod
from kueueplan.simulate.engine import Simulation
from kueueplan.simulate.result import result_json
from kueueplan.simulate.scenario import scenario_from_dict

V2 = "kueue.x-k8s.io/v1beta2"
POLICIES = ["Never", "LowerPriority", "LowerOrNewerEqualPriority"]
RECLAIM = ["Never", "LowerPriority", "Any"]


@st.composite
def scenarios(draw: Any) -> dict[str, Any]:
    flavors = ["f1", "f2"][: draw(st.integers(1, 2))]
    manifests: list[dict[str, Any]] = [{"apiVersion": V2, "kind": "ResourceFlavor", "metadata": {"name": f}} for f in flavors]
    manifests += [{"apiVersion": V2, "kind": "WorkloadPriorityClass", "metadata": {"name": f"p{v}"}, "value": v}
                  for v in (0, 1, 2)]
    n_cq = draw(st.integers(1, 4))
    for i in range(n_cq):
        resources = []
        for f in flavors:
            q: dict[str, Any] = {"name": "cpu", "nominalQuota": draw(st.integers(0, 6))}
            if draw(st.booleans()):
                q["borrowingLimit"] = draw(st.integers(0, 6))
            if draw(st.booleans()):
                q["lendingLimit"] = draw(st.integers(0, q["nominalQuota"]))
            resources.append({"name": f, "resources": [q]})
        reclaim = draw(st.sampled_from(RECLAIM))
        preemption: dict[str, Any] = {"withinClusterQueue": draw(st.sampled_from(POLICIES)), "reclaimWithinCohort": reclaim}
        if reclaim != "Never" and draw(st.booleans()):
            preemption["borrowWithinCohort"] = {"policy": "LowerPriority", "maxPriorityThreshold": draw(st.integers(0, 2))}
        spec: dict[str, Any] = {"namespaceSelector": {}, "preemption": preemption,
                                "queueingStrategy": draw(st.sampled_from(["BestEffortFIFO", "StrictFIFO"])),
                                "resourceGroups": [{"coveredResources": ["cpu"], "flavors": resources}]}
        cohort = draw(st.sampled_from([None, "c1", "c2"]))
        if cohort:
            spec["cohortName"] = cohort
        manifests.append({"apiVersion": V2, "kind": "ClusterQueue", "metadata": {"name": f"cq{i}"}, "spec": spec})
        manifests.append({"apiVersion": V2, "kind": "LocalQueue", "metadata": {"namespace": "default", "name": f"lq{i}"},
                          "spec": {"clusterQueue": f"cq{i}"}})
    if draw(st.booleans()):
        manifests.append({"apiVersion": V2, "kind": "Cohort", "metadata": {"name": "c2"}, "spec": {
            "parentName": "c1", "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                {"name": f, "resources": [{"name": "cpu", "nominalQuota": draw(st.integers(0, 4))}]} for f in flavors]}]}})
    workloads = []
    for j in range(draw(st.integers(1, 10))):
        w: dict[str, Any] = {"at": draw(st.integers(0, 20)), "manifest": {
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": f"w{j}", "namespace": "default",
                         "labels": {"kueue.x-k8s.io/queue-name": f"lq{draw(st.integers(0, n_cq - 1))}",
                                    "kueue.x-k8s.io/priority-class": f"p{draw(st.integers(0, 2))}"}},
            "spec": {"parallelism": draw(st.integers(1, 3)), "template": {"spec": {"containers": [
                {"name": "c", "resources": {"requests": {"cpu": str(draw(st.integers(1, 4)))}}}]}}}}}
        if draw(st.booleans()):
            w["runFor"] = draw(st.integers(1, 30))
        workloads.append(w)
    return {"apiVersion": "kueueplan.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "prop"},
            "spec": {"manifests": manifests, "workloads": workloads}}


def _check_invariants(sim: Simulation) -> None:
    tree = sim.tree
    for name, node in tree.cqs.items():
        for fr, q in node.quotas.items():
            used = node.usage.get(fr, 0)
            if q.borrowing_limit is not None:
                assert used <= q.nominal + q.borrowing_limit, (sim.now, name, fr)
            assert used <= node.potential_available(fr), (sim.now, name, fr)
        expected: dict = {}
        for w in sim.holders.get(name, {}).values():
            assert w.holds_quota and w.cluster_queue == name
            for fr, v in w.usage.items():
                expected[fr] = expected.get(fr, 0) + v
        assert {k: v for k, v in node.usage.items() if v} == {k: v for k, v in expected.items() if v}
    for node in tree.cohorts.values():
        if node.parent is None:
            for fr, total in node.subtree.items():
                assert node.usage.get(fr, 0) <= total, (sim.now, node.name, fr)
    holding = {w.key for w in sim.workloads if w.holds_quota}
    assert holding == {k for ws in sim.holders.values() for k in ws}


def _run_checked(data: dict[str, Any]) -> Simulation:
    sim = Simulation(scenario_from_dict(data))
    original = sim._settle

    def settle_and_check() -> None:
        original()
        _check_invariants(sim)

    sim._settle = settle_and_check  # type: ignore[method-assign]
    return sim.run()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_quota_never_exceeded_and_everything_accounted_for(data: dict[str, Any]) -> None:
    sim = _run_checked(data)
    out = result_json(sim)
    for w in out["workloads"]:
        reserved = sum(1 for e in out["events"] if e["workload"] == w["name"] and e["type"] == "QuotaReserved")
        lost = sum(1 for e in out["events"] if e["workload"] == w["name"] and e["type"] in ("Preempted", "Evicted"))
        assert w["evictions"] == lost
        ended = 1 if w["state"] in ("QuotaReserved", "Admitted") else 0
        released_by_end = sum(1 for e in out["events"] if e["workload"] == w["name"]
                              and e["type"] in ("Finished", "Deleted")) if reserved > lost else 0
        assert reserved == lost + ended + min(released_by_end, 1)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_deterministic_and_manifest_order_independent(data: dict[str, Any]) -> None:
    first = result_json(engine_mod.simulate(scenario_from_dict(data)))
    again = result_json(engine_mod.simulate(scenario_from_dict(data)))
    assert first == again
    shuffled = dict(data, spec=dict(data["spec"], manifests=list(reversed(data["spec"]["manifests"]))))
    assert result_json(engine_mod.simulate(scenario_from_dict(shuffled))) == first


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_flat_cohort_fast_path_matches_the_tree(data: dict[str, Any]) -> None:
    """Preemption reads flat cohorts arithmetically; forcing the general tree path gives the same run."""
    from kueueplan.simulate import preemption

    fast = result_json(engine_mod.simulate(scenario_from_dict(data)))
    original = preemption.Preemptor.__init__

    def tree_only(self: Any, *args: Any) -> None:
        original(self, *args)
        self.flat = False

    preemption.Preemptor.__init__ = tree_only  # type: ignore[method-assign]
    try:
        slow = result_json(engine_mod.simulate(scenario_from_dict(data)))
    finally:
        preemption.Preemptor.__init__ = original  # type: ignore[method-assign]
    assert fast == slow


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_cycle_candidate_cache_matches_a_fresh_search(data: dict[str, Any]) -> None:
    """Preemption caches each cohort level's candidates for a cycle; searching afresh every time gives the same run."""
    cached = result_json(engine_mod.simulate(scenario_from_dict(data)))
    original = engine_mod.Simulation.preemption_cache
    engine_mod.Simulation.preemption_cache = lambda self: {}  # type: ignore[method-assign]
    try:
        fresh = result_json(engine_mod.simulate(scenario_from_dict(data)))
    finally:
        engine_mod.Simulation.preemption_cache = original  # type: ignore[method-assign]
    assert cached == fresh
