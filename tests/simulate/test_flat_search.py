"""The flat single-resource preemption search's shortcuts against the general path they stand for.

A ClusterQueue alone or in a flat cohort (every child a ClusterQueue without lending limits) with one (flavor,
resource) to free is the shape of most searches (preemption.Preemptor._targets_flat_single): the oracle's
verdict is then read without trial removals on the tree (preemption._flat_possibility), and the preemptor's own
queue's candidates are gathered only when a pass reaches them (Preemptor._own_candidates). The inputs are the
random small clusters of test_properties (lending limits, two flavors, every policy) and Kueue's performance
shape in small (busy_cohorts).
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from kueueplan.simulate import engine as engine_mod, preemption
from kueueplan.simulate.scenario import scenario_from_dict
from tests.simulate.test_cohort_index import _busy_fixed
from tests.simulate.test_properties import busy_cohorts, scenarios

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.one_of(scenarios(), busy_cohorts()))
def test_flat_verdict_matches_the_tree(data: dict[str, Any]) -> None:
    """At every oracle call in a flat cohort or a ClusterQueue alone, the verdict read arithmetically equals the
    one read with the targets removed from the tree, as in other cohorts."""
    _check_verdicts(data)


def test_flat_verdicts_are_checked() -> None:
    own, other = _check_verdicts(_busy_fixed())
    assert own > 5 and other > 5  # verdicts with targets in the preemptor's queue (Preempt) and only elsewhere


def _check_verdicts(data: dict[str, Any]) -> tuple[int, int]:
    """Run, checking every flat verdict; how many were Preempt and Reclaim."""
    original = preemption.possibility
    seen = {preemption.PREEMPT: 0, preemption.RECLAIM: 0}

    def checked(state: Any, cq: Any, fr: Any, quantity: int, targets: list[preemption.Target]) -> tuple[int, int]:
        got = original(state, cq, fr, quantity, targets)
        node = state.tree.cqs[cq.name]
        if targets and (node.parent is None or node.parent.flat):
            usage = {name: dict(n.usage) for name, n in state.tree.cqs.items()}
            assert got == preemption._possibility_on_tree(state, node, fr, quantity, targets)
            assert usage == {name: dict(n.usage) for name, n in state.tree.cqs.items()}  # put back
            seen[got[0]] += 1
        return got

    preemption.possibility = checked  # type: ignore[assignment]
    try:
        engine_mod.simulate(scenario_from_dict(data))
    finally:
        preemption.possibility = original  # type: ignore[assignment]
    return seen[preemption.PREEMPT], seen[preemption.RECLAIM]


def test_own_candidates_are_gathered_when_a_pass_reaches_them() -> None:
    """Many flat searches take their targets from other queues: the preemptor's own queue's holders are gathered
    for some searches only, at most once each (kept across its passes)."""
    searches = {"n": 0, "gathered": 0}
    most = {"now": 0, "max": 0}  # gathered in the current search, and in any one search
    targets, classify = preemption.Preemptor.targets, preemption.Preemptor._classify

    def counting_targets(self: preemption.Preemptor) -> list[preemption.Target]:
        searches["n"] += 1
        most["now"] = 0
        found = targets(self)
        most["max"] = max(most["max"], most["now"])
        return found

    def counting_classify(self: preemption.Preemptor, holders: Any, lca: Any, same: bool, hierarchical: bool) -> Any:
        searches["gathered"] += same
        most["now"] += same
        return classify(self, holders, lca, same, hierarchical)

    preemption.Preemptor.targets = counting_targets  # type: ignore[method-assign]
    preemption.Preemptor._classify = counting_classify  # type: ignore[method-assign]
    try:
        engine_mod.simulate(scenario_from_dict(_busy_fixed()))
    finally:
        preemption.Preemptor.targets = targets  # type: ignore[method-assign]
        preemption.Preemptor._classify = classify  # type: ignore[method-assign]
    assert searches["n"] > 20
    assert 0 < searches["gathered"] < searches["n"] - 10  # (large-jitter: in 733 of 7,693 searches)
    assert most["max"] == 1


@SETTINGS
@given(st.one_of(scenarios(), busy_cohorts()))
def test_runs_with_no_flat_cohort_match(data: dict[str, Any]) -> None:
    """Every shortcut for flat cohorts (the flavor assigner's quota numbers, the preemption search and its
    verdict, the fit check, plain requests and head plans) stands for the general path: a run where no cohort is
    marked flat is the same run."""
    from kueueplan.simulate import controller_queue, resource_node
    from kueueplan.simulate.result import result_json

    fast = result_json(engine_mod.simulate(scenario_from_dict(data)))
    build = resource_node.build_tree

    def no_flat(cluster: Any) -> Any:
        tree = build(cluster)
        for cohort in tree.cohorts.values():
            cohort.flat = False
        for node in tree.cqs.values():
            if node.parent is not None:
                node.root().flat = False  # implicit cohorts too
        return tree

    engine_mod.build_tree, controller_queue.build_tree = no_flat, no_flat  # type: ignore[assignment]
    try:
        general = result_json(engine_mod.simulate(scenario_from_dict(data)))
    finally:
        engine_mod.build_tree, controller_queue.build_tree = build, build  # type: ignore[assignment]
    assert fast == general


@SETTINGS
@given(st.one_of(scenarios(), busy_cohorts()))
def test_flat_quota_numbers_match_the_tree(data: dict[str, Any]) -> None:
    """At every quota check of the flavor assigner for a ClusterQueue alone or in a flat cohort, the numbers
    read in O(1) equal Node.potential_available, find_height_of_lowest_subtree_that_fits and cq_available."""
    _check_quota_numbers(data)


def test_flat_quota_numbers_are_checked() -> None:
    checked = _check_quota_numbers(_busy_fixed())
    assert checked["potential"] > 20 and checked["fit"] > 20 and checked["borrowing"] > 5


def _check_quota_numbers(data: dict[str, Any]) -> dict[str, int]:
    from kueueplan.simulate import flavorassigner
    from kueueplan.simulate.resource_node import find_height_of_lowest_subtree_that_fits

    potential, fit = flavorassigner._flat_potential, flavorassigner._flat_fit
    checked = {"potential": 0, "fit": 0, "borrowing": 0}

    def checked_potential(node: Any, fr: Any) -> int:
        got = potential(node, fr)
        assert got == node.potential_available(fr)
        checked["potential"] += 1
        return got

    def checked_fit(node: Any, fr: Any, val: int) -> tuple[int, bool, int]:
        got = fit(node, fr, val)
        assert got == (*find_height_of_lowest_subtree_that_fits(node, fr, val), node.cq_available(fr))
        checked["fit"] += 1
        checked["borrowing"] += got[0] > 0
        return got

    flavorassigner._flat_potential, flavorassigner._flat_fit = checked_potential, checked_fit  # type: ignore
    try:
        engine_mod.simulate(scenario_from_dict(data))
    finally:
        flavorassigner._flat_potential, flavorassigner._flat_fit = potential, fit  # type: ignore
    return checked
