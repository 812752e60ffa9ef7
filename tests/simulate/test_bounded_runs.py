"""A run without `until` ends even when Kueue itself would go on forever (runs are bounded in time: kueueplan runs
in CI on pull requests)."""

from __future__ import annotations

from pathlib import Path

import yaml

from kueueplan.simulate.engine import MAX_FLAPPING_INSTANTS, simulate
from kueueplan.simulate.scenario import scenario_from_dict

DATA = Path(__file__).parent / "data"


def _flapping_forever(until: str | None = None) -> dict:
    data = yaml.safe_load((DATA / "flapping-forever.yaml").read_text(encoding="utf-8"))
    if until is not None:
        data["spec"]["until"] = until
    return data


def test_a_run_whose_preemptions_undo_each_other_forever_stops_with_a_warning() -> None:
    sim = simulate(scenario_from_dict(_flapping_forever()))
    flapping = [w for w in sim.warnings if "preemptions undo each other" in w]
    stopped = [w for w in sim.warnings if "stopped here: preemptions undid each other" in w]
    assert len(flapping) == MAX_FLAPPING_INSTANTS
    assert len(stopped) == 1 and "set `until` to follow it further" in stopped[0]


def test_with_until_the_same_run_goes_to_its_horizon_without_the_stop() -> None:
    sim = simulate(scenario_from_dict(_flapping_forever(until="120s")))
    assert sim.now == 120_000
    assert not any("stopped here" in w for w in sim.warnings)
    assert any("preemptions undo each other" in w for w in sim.warnings)
