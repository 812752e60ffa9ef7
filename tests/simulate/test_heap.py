"""The simulator pauses the cycle collector only while it runs, and leaves the caller's setting as it found it."""

from __future__ import annotations

import gc

import pytest

from kueueplan.simulate import engine
from kueueplan.simulate.engine import simulate
from kueueplan.simulate.heap import cycle_collector_paused
from kueueplan.simulate.scenario import scenario_from_dict

SCENARIO = {"apiVersion": "kueueplan.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "s"},
            "spec": {"manifests": [], "workloads": []}}


@pytest.mark.parametrize("enabled", [True, False])
def test_collector_setting_is_restored(enabled: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    run = engine.Simulation.run
    monkeypatch.setattr(engine.Simulation, "run", lambda self: seen.append(gc.isenabled()) or run(self))
    (gc.enable if enabled else gc.disable)()
    try:
        simulate(scenario_from_dict(SCENARIO))
        assert seen == [False]
        assert gc.isenabled() is enabled
        with cycle_collector_paused():
            assert not gc.isenabled()
        assert gc.isenabled() is enabled
    finally:
        gc.enable()


def test_collector_comes_back_after_an_error() -> None:
    with pytest.raises(ZeroDivisionError):
        with cycle_collector_paused():
            1 / 0
    assert gc.isenabled()


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def test_what_the_pause_kept_is_old_and_its_garbage_cycles_are_still_freed() -> None:
    """After the pause, what it allocated is in the oldest generation (the next young collection does not walk
    it), and a reference cycle it left behind is freed by the next full collection."""
    gc.collect()
    with cycle_collector_paused():
        kept = [[i] for i in range(10_000)]
        a, b = _Node(), _Node()
        a.other, b.other = b, a
        del a, b
    assert gc.get_count()[0] < 1_000  # nothing young left to walk
    assert any(obj is kept for obj in gc.get_objects(generation=2))
    freed = gc.collect()
    assert freed >= 2  # the two nodes (and their attribute dicts)


def test_objects_the_caller_froze_stay_frozen() -> None:
    """A host that froze its objects (gc.freeze before forking workers, so that the children do not touch
    their pages) finds them still frozen after a run: the pause's freeze/unfreeze would have thawed them."""
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        simulate(scenario_from_dict(SCENARIO))
        assert gc.get_freeze_count() >= frozen
    finally:
        gc.unfreeze()
