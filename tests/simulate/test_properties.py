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


def _run_patched(data: dict[str, Any], owner: Any, **attrs: Any) -> dict[str, Any]:
    """The run's result with `owner`'s attributes replaced for it (a slower reference path), restored after."""
    originals = {name: getattr(owner, name) for name in attrs}
    for name, value in attrs.items():
        setattr(owner, name, value)
    try:
        return result_json(engine_mod.simulate(scenario_from_dict(data)))
    finally:
        for name, value in originals.items():
            setattr(owner, name, value)


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

    assert fast == _run_patched(data, preemption.Preemptor, __init__=tree_only)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_cycle_candidate_cache_matches_a_fresh_search(data: dict[str, Any]) -> None:
    """Preemption caches each cohort level's candidates for a cycle; searching afresh every time gives the same run."""
    cached = result_json(engine_mod.simulate(scenario_from_dict(data)))
    assert cached == _run_patched(data, engine_mod.Simulation, preemption_cache=lambda self: {})


@st.composite
def busy_cohorts(draw: Any) -> dict[str, Any]:
    """Kueue's performance shape in small: full flat cohorts where many heads of one cycle preempt at once."""
    manifests: list[dict[str, Any]] = [{"apiVersion": V2, "kind": "ResourceFlavor", "metadata": {"name": "f"}}]
    manifests += [{"apiVersion": V2, "kind": "WorkloadPriorityClass", "metadata": {"name": f"p{v}"}, "value": v}
                  for v in (0, 1, 2)]
    workloads = []
    for i in range(draw(st.integers(2, 6))):
        quota: dict[str, Any] = {"name": "cpu", "nominalQuota": draw(st.integers(1, 4))}
        if draw(st.booleans()):
            quota["borrowingLimit"] = draw(st.integers(0, 6))
        cohort = draw(st.sampled_from([None, "c1", "c1", "c2"]))
        manifests.append({"apiVersion": V2, "kind": "ClusterQueue", "metadata": {"name": f"cq{i}"}, "spec": {
            **({"cohortName": cohort} if cohort else {}), "namespaceSelector": {},
            "preemption": {"reclaimWithinCohort": draw(st.sampled_from(RECLAIM)),
                           "withinClusterQueue": draw(st.sampled_from(POLICIES))},
            "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [quota]}]}]}})
        manifests.append({"apiVersion": V2, "kind": "LocalQueue", "metadata": {"namespace": "default", "name": f"lq{i}"},
                          "spec": {"clusterQueue": f"cq{i}"}})
        for prio in range(3):
            workloads.append({"at": f"{draw(st.integers(0, 3)) * 100}ms", "count": draw(st.integers(1, 6)),
                              "every": f"{draw(st.integers(0, 2)) * 100}ms", "runFor": f"{draw(st.integers(1, 4)) * 100}ms",
                              "manifest": {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
                                  "name": f"w{i}-{prio}", "labels": {"kueue.x-k8s.io/queue-name": f"lq{i}",
                                                                   "kueue.x-k8s.io/priority-class": f"p{prio}"}},
                                  "spec": {"template": {"spec": {"containers": [{"name": "c", "resources": {
                                      "requests": {"cpu": str(draw(st.integers(1, 3)))}}}]}}}}})
    return {"apiVersion": "kueueplan.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "busy"},
            "spec": {"manifests": manifests, "workloads": workloads}}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(scenarios(), busy_cohorts()))
def test_flat_fit_check_after_claimed_victims_matches_the_tree(data: dict[str, Any]) -> None:
    """A cycle's fit check in a flat cohort (or without one) is arithmetic over the claimed victims; removing
    them from the tree and reading Node.available, as before, gives the same run."""
    from kueueplan.simulate import scheduler

    fast = result_json(engine_mod.simulate(scenario_from_dict(data)))

    def on_the_tree(self: Any, node: Any, root: Any, usage: dict[Any, int], new: list[Any]) -> bool:
        nodes = {n.name: n for n in root.subtree_cqs()}
        return scheduler.fits_on_tree(nodes, node, self.by_root.get(root, []) + new, usage)

    assert fast == _run_patched(data, scheduler._Claimed, fits_flat=on_the_tree)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_remembered_verdicts_match_fresh_ones(data: dict[str, Any]) -> None:
    """Never-admissible and namespace/stop verdicts are remembered until the configuration changes; judging
    afresh every time gives the same run."""
    from kueueplan.simulate.admissibility import never_admissible_reason

    cached = result_json(engine_mod.simulate(scenario_from_dict(data)))
    sim_cls = engine_mod.Simulation
    fresh = _run_patched(data, sim_cls, admissibility_problem=sim_cls._admissibility_problem,
                         never_admissible=lambda self, wl, cq: never_admissible_reason(self.cluster, self.tree,
                                                                                       wl.spec, cq))
    assert cached == fresh


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(scenarios(), busy_cohorts()))
def test_incremental_queue_bookkeeping_matches_a_full_walk(data: dict[str, Any]) -> None:
    """A cycle looks only at the queues of the ready set, and the state signature rehashes only the queues of
    the dirty set and keeps the head plans' terms by cohort: at every cycle, both equal what walking every
    queue gives (as before they were kept; a queue with a head plan counts its buckets as the plan has them,
    and its heads are the plan's to nominate)."""
    from kueueplan.simulate.engine import _HASH_MASK, _term

    heads, signature = Simulation.queues_with_heads, Simulation._queues_signature
    checked = {"heads": 0, "signatures": 0}

    def all_heads(self: Simulation) -> list[str]:
        got = heads(self)
        assert got == [n for n in self.active_cluster_queues() if self.queues[n].plan is None
                       and self.queues[n].parked_buckets != len(self.queues[n].buckets)]
        checked["heads"] += 1
        return got

    def term(n: str, q: Any) -> int:
        plan = q.plan
        if plan is None:
            return _term((n, q.sticky, len(q.members), len(q.inadmissible), q.parked_buckets))
        plan.sync_epoch()  # after a requeue-all of its cohort: nothing parked
        return _term((n, None, len(q.members), 0, plan.count + plan.ghost_count))

    def full_signature(self: Simulation) -> int:
        got = signature(self)
        assert got == sum(term(n, q) for n, q in self.queues.items()) & _HASH_MASK
        checked["signatures"] += 1
        return got

    Simulation.queues_with_heads = all_heads  # type: ignore[method-assign]
    Simulation._queues_signature = full_signature  # type: ignore[method-assign]
    try:
        engine_mod.simulate(scenario_from_dict(data))
    finally:
        Simulation.queues_with_heads = heads  # type: ignore[method-assign]
        Simulation._queues_signature = signature  # type: ignore[method-assign]
    assert checked["heads"] > 0
