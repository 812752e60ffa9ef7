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
