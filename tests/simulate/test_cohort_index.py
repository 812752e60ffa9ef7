"""The cohort index and the lazily read flat cohort level against the paths they replace.

controller_workload keeps, per cohort tree root, (flavor, resource) and priority, the quota holders in the order
of their reservation (CandidatesOrdering's reverse within a priority), updated on admission and release and
rebuilt after configuration changes or anything out of order (cohort_holders); a flat cohort's one-resource
preemption search reads its only level from it, candidate by candidate, as far as its pass goes
(preemption.Preemptor._flat_level). The inputs are Kueue's performance
shape in small (test_properties.busy_cohorts) with changes during the run: WorkloadPriorityClass values
(holders change priority, so their place in the order), ClusterQueues moving cohorts or changing quota
(a new quota tree), and ClusterQueues made inactive (a flavor that does not exist: their holders are no
candidates) or stopped (their holders are evicted).
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from kueueplan.simulate import engine as engine_mod, preemption
from kueueplan.simulate.engine import Simulation
from kueueplan.simulate.preemption import other_queue_order
from kueueplan.simulate.result import result_json
from kueueplan.simulate.scenario import scenario_from_dict
from tests.simulate.test_properties import busy_cohorts

V2 = "kueue.x-k8s.io/v1beta2"
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def changing_cohorts(draw: Any) -> dict[str, Any]:
    data = draw(busy_cohorts())
    spec = data["spec"]
    queues = [m for m in spec["manifests"] if m["kind"] == "ClusterQueue"]
    events = []
    for _ in range(draw(st.integers(0, 4))):
        event: dict[str, Any] = {"at": f"{draw(st.integers(1, 12)) * 100}ms"}
        change = draw(st.sampled_from(["priority", "cohort", "quota", "inactive", "stop"]))
        if change == "priority":
            event["apply"] = {"apiVersion": V2, "kind": "WorkloadPriorityClass",
                              "metadata": {"name": f"p{draw(st.integers(0, 2))}"}, "value": draw(st.integers(-1, 3))}
        else:
            cq = copy.deepcopy(draw(st.sampled_from(queues)))
            cq_spec = cq["spec"]
            if change == "cohort":
                cq_spec.pop("cohortName", None)
                cohort = draw(st.sampled_from([None, "c1", "c2"]))
                if cohort:
                    cq_spec["cohortName"] = cohort
            elif change == "quota":
                cq_spec["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = draw(st.integers(0, 5))
            elif change == "inactive":
                cq_spec["resourceGroups"][0]["flavors"][0]["name"] = "missing"
            else:
                cq_spec["stopPolicy"] = draw(st.sampled_from(["Hold", "HoldAndDrain"]))
            event["apply"] = cq
        events.append(event)
    spec["events"] = events
    return data


def _fresh_index(sim: Simulation) -> dict[tuple[int, Any], list[tuple[tuple, str]]]:
    """Per root and (flavor, resource): workloads_in of its ClusterQueues that use it, sorted afresh."""
    out: dict[tuple[int, Any], list[tuple[tuple, str]]] = {}
    for node in sim.tree.cqs.values():
        for w in sim.workloads_in(node.name):
            for fr in w.usage:
                out.setdefault((id(node.root()), fr), []).append((other_queue_order(w), w.key))
    return {k: sorted(v) for k, v in out.items()}


def _read_index(sim: Simulation) -> dict[tuple[int, Any], list[tuple[tuple, str]]]:
    out = {}
    roots = {id(n.root()): n.root() for n in sim.tree.cqs.values()}
    frs = {fr for ws in sim.holders.values() for w in ws.values() for fr in w.usage}
    for root in roots.values():
        for fr in frs:
            groups = sim.cohort_holders(root, fr)  # per priority, in reservation order: candidates' is its reverse
            if groups:
                assert all(groups.values())  # no empty priority is kept
                out[(id(root), fr)] = [(other_queue_order(w), w.key) for prio in sorted(groups)
                                       for w in reversed(groups[prio])]
    return out


@SETTINGS
@given(changing_cohorts())
def test_index_equals_a_fresh_sort_after_every_instant(data: dict[str, Any]) -> None:
    """After every instant, the index holds exactly the candidates workloads_in gives, in CandidatesOrdering,
    with keys that are current."""
    _run_checking_index(data)


def test_index_is_maintained_between_configuration_changes() -> None:
    """Admissions and releases update the index in place: it is built once for a run without changes, and
    once more after each configuration change that replaces the quota tree."""
    sim, builds = _run_checking_index(_busy_fixed())
    assert sum(1 for e in sim.events if e["type"] == "Preempted") > 10
    assert builds == 1
    changed = _busy_fixed()
    changed["spec"]["events"] = [{"at": "1s", "apply": {"apiVersion": V2, "kind": "WorkloadPriorityClass",
                                                        "metadata": {"name": "p0"}, "value": 5}},
                                 {"at": "2s", "apply": next(m for m in changed["spec"]["manifests"]
                                                            if m["kind"] == "ClusterQueue")}]
    sim, builds = _run_checking_index(changed)
    assert builds == 3  # every apply replaces the quota tree (a priority class's too, before holders re-key)


def _run_checking_index(data: dict[str, Any]) -> tuple[Simulation, int]:
    """Run, comparing the index with a fresh sort after every instant; the run and how often it was built."""
    sim = Simulation(scenario_from_dict(data))
    built = {"n": 0}
    build = sim._build_cohort_index

    def counting() -> Any:
        built["n"] += 1
        return build()

    sim._build_cohort_index = counting  # type: ignore[method-assign]
    settle = sim._settle

    def settle_and_check() -> None:
        settle()
        assert _read_index(sim) == _fresh_index(sim), sim.now

    sim._settle = settle_and_check  # type: ignore[method-assign]
    sim.run()
    return sim, built["n"]


def _busy_fixed() -> dict[str, Any]:
    """Two flat cohorts of three queues (nominal 2, borrowing 4) and three priorities that preempt each other."""
    manifests: list[dict[str, Any]] = [{"apiVersion": V2, "kind": "ResourceFlavor", "metadata": {"name": "f"}}]
    manifests += [{"apiVersion": V2, "kind": "WorkloadPriorityClass", "metadata": {"name": f"p{v}"}, "value": v}
                  for v in (0, 1, 2)]
    workloads = []
    for i in range(6):
        manifests.append({"apiVersion": V2, "kind": "ClusterQueue", "metadata": {"name": f"cq{i}"}, "spec": {
            "cohortName": f"c{i % 2}", "namespaceSelector": {},
            "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
            "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [
                {"name": "cpu", "nominalQuota": 2, "borrowingLimit": 4}]}]}]}})
        manifests.append({"apiVersion": V2, "kind": "LocalQueue", "metadata": {"namespace": "default", "name": f"lq{i}"},
                          "spec": {"clusterQueue": f"cq{i}"}})
        for prio in range(3):
            workloads.append({"at": f"{(i + prio) * 100}ms", "count": 4, "every": "100ms",
                              "runFor": f"{(prio + 1) * 300}ms", "manifest": {
                                  "apiVersion": "batch/v1", "kind": "Job", "metadata": {
                                      "name": f"w{i}-{prio}", "labels": {"kueue.x-k8s.io/queue-name": f"lq{i}",
                                                                       "kueue.x-k8s.io/priority-class": f"p{prio}"}},
                                  "spec": {"template": {"spec": {"containers": [{"name": "c", "resources": {
                                      "requests": {"cpu": str(1 + prio % 2)}}}]}}}}})
    return {"apiVersion": "kueueplan.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "busy"},
            "spec": {"manifests": manifests, "workloads": workloads}}


@SETTINGS
@given(st.one_of(busy_cohorts(), changing_cohorts()))
def test_lazy_flat_level_equals_the_gathered_level(data: dict[str, Any]) -> None:
    """Every flat level read lazily (and shared by a cycle's searches) holds, in order and with the same
    variants, the candidates that gathering every holder of the queues over nominal, sorting and classifying
    them gives (_level_holders, _classify)."""
    _check_levels(data)


def test_lazy_flat_levels_are_searched() -> None:
    assert _check_levels(_busy_fixed()) > 10


def _check_levels(data: dict[str, Any]) -> int:
    """Run, checking every flat level against the gathered one; how many were checked."""
    original = preemption.Preemptor._flat_level
    seen = {"levels": 0}

    def checked(self: preemption.Preemptor, skip_priority: bool) -> Any:
        level, hierarchical = original(self, skip_priority)
        if level is not None:
            cache, self.cache = self.cache, {}  # a fresh search, not this cycle's cached lists
            root = self.node.parent
            gathered = self._classify(self._level_holders(root, None), root, False, hierarchical)
            self.cache = cache
            assert [(c.wl.key, c.variant, c.lca) for c in level] == \
                [(c.wl.key, c.variant, c.lca) for c in gathered]
            seen["levels"] += 1
        return level, hierarchical

    preemption.Preemptor._flat_level = checked  # type: ignore[method-assign]
    try:
        engine_mod.simulate(scenario_from_dict(data))
    finally:
        preemption.Preemptor._flat_level = original  # type: ignore[method-assign]
    return seen["levels"]


@SETTINGS
@given(changing_cohorts())
def test_flat_path_with_changes_matches_the_tree(data: dict[str, Any]) -> None:
    """With priorities, cohorts, quotas and active queues changing during the run, the flat path (index and
    lazy level) gives the run the general tree path gives."""
    fast = result_json(engine_mod.simulate(scenario_from_dict(data)))
    original = preemption.Preemptor.__init__

    def tree_only(self: Any, *args: Any) -> None:
        original(self, *args)
        self.flat = False

    preemption.Preemptor.__init__ = tree_only  # type: ignore[method-assign]
    try:
        assert fast == result_json(engine_mod.simulate(scenario_from_dict(data)))
    finally:
        preemption.Preemptor.__init__ = original  # type: ignore[method-assign]


def test_levels_do_not_outlive_their_cycle() -> None:
    """A run pauses the cycle collector (heap.py), so a shared level must not sit in a reference cycle: once
    the cycle's cache is dropped, reference counting frees every level and its search."""
    import gc

    was = gc.isenabled()
    gc.collect()  # what earlier tests left in cycles
    gc.disable()
    try:
        sim = Simulation(scenario_from_dict(_busy_fixed()))
        sim.run()
        assert sum(1 for e in sim.events if e["type"] == "Preempted") > 10
        sim._preemption_cache = (-1, {})
        alive = [o for o in gc.get_objects() if isinstance(o, (preemption._Level, preemption.Preemptor))]
        assert alive == []
    finally:
        if was:
            gc.enable()


def test_out_of_order_updates_rebuild_the_index() -> None:
    """An entry that would not keep reservation order (a holder put back behind later reservations), or a
    removal of what the index does not hold, makes the index stale; its next read is rebuilt, not guessed."""
    data = _busy_fixed()
    data["spec"]["until"] = "1s"
    sim = Simulation(scenario_from_dict(data))
    sim.run()
    assert _read_index(sim) == _fresh_index(sim)
    roots = {n.root() for n in sim.tree.cqs.values()}
    group = next(g for root in roots for g in sim.cohort_holders(root, ("f", "cpu")).values() if len(g) > 1)
    oldest = next(iter(group))
    sim._index_holder(oldest, -1)
    assert sim._cohort_index[0] is sim.tree  # a removal in place
    sim._index_holder(oldest, +1)
    assert sim._cohort_index[0] is None  # behind later reservations: stale
    assert _read_index(sim) == _fresh_index(sim)
    sim._index_holder(oldest, -1)
    sim._index_holder(oldest, -1)
    assert sim._cohort_index[0] is None  # it was not there any more: stale


@SETTINGS
@given(st.one_of(busy_cohorts(), changing_cohorts()))
def test_holders_stay_put_while_a_cycle_searches(data: dict[str, Any]) -> None:
    """A flat level reads the cohort index as it stands, lazily, across the searches of its cycle
    (preemption._flat_candidates, without a copy): every search of a cycle runs while it nominates, before any
    holder comes or goes."""
    _check_searches_see_one_index(data)


def test_searches_of_one_cycle_see_one_index() -> None:
    again, changes = _check_searches_see_one_index(_busy_fixed())
    assert again > 10 and changes > 100  # cycles searched more than once, and holders did change between cycles


def _check_searches_see_one_index(data: dict[str, Any]) -> tuple[int, int]:
    """Run, checking that holders did not change between a cycle's first search and each later one; the
    searches that were not their cycle's first, and the holder changes of the run."""
    sim = Simulation(scenario_from_dict(data))
    changes = {"n": 0}
    first: dict[int, int] = {}  # cycle -> holder changes made before its first search
    again = {"n": 0}
    count_usage = sim._count_usage

    def counting(wl: Any, sign: int) -> None:
        changes["n"] += 1
        count_usage(wl, sign)

    sim._count_usage = counting  # type: ignore[method-assign]
    original = preemption.Preemptor.__init__

    def checked(self: preemption.Preemptor, state: Any, *args: Any) -> None:
        if state.cycle in first:
            assert first[state.cycle] == changes["n"], f"holders changed in cycle {state.cycle} between searches"
            again["n"] += 1
        else:
            first[state.cycle] = changes["n"]
        original(self, state, *args)

    preemption.Preemptor.__init__ = checked  # type: ignore[method-assign]
    try:
        sim.run()
    finally:
        preemption.Preemptor.__init__ = original  # type: ignore[method-assign]
    return again["n"], changes["n"]


def test_reserved_later_or_same_is_reserve_orders_comparison() -> None:
    """The cohort index's in-order check compares reservation order without building tuples: the same answers as
    comparing preemption.reserve_order, unset reservation times (None) included."""
    from types import SimpleNamespace

    from kueueplan.simulate.preemption import reserve_order, reserved_later_or_same

    stamps = [SimpleNamespace(reserved_at=at, reserve_seq=seq) for at in (None, 0, 5, 7) for seq in (0, 1, 2)]
    for a in stamps:
        for b in stamps:
            assert reserved_later_or_same(a, b) == (reserve_order(a) >= reserve_order(b))
