"""A run ends even when Kueue itself would go on forever (runs are bounded in time: kueueplan runs in CI on pull
requests): without `until` when only a loop is left or preemptions undid each other at 1,000 instants, and with or
without `until` once a workload has been evicted 1,000 times."""

from __future__ import annotations

from pathlib import Path

import yaml

import pytest

from kueueplan.simulate import engine
from kueueplan.simulate.engine import MAX_EVICTIONS_PER_WORKLOAD, MAX_FLAPPING_INSTANTS, simulate
from kueueplan.simulate.scenario import scenario_from_dict

DATA = Path(__file__).parent / "data"
SCENARIOS = Path(__file__).parent / "scenarios"


def _flapping_forever(until: str | None = None) -> dict:
    data = yaml.safe_load((DATA / "flapping-forever.yaml").read_text(encoding="utf-8"))
    if until is not None:
        data["spec"]["until"] = until
    return data


def test_a_run_whose_preemptions_undo_each_other_forever_stops_with_a_warning() -> None:
    """The loop preempts the same workload about twice a second: its 1,000th eviction stops the run first."""
    sim = simulate(scenario_from_dict(_flapping_forever()))
    stopped = [w for w in sim.warnings if "stopped here" in w]
    most = max(sim.workloads, key=lambda w: w.evictions)
    assert len(stopped) == 1 and f"stopped here: {most.key} was evicted {most.evictions:,} times" in stopped[0]
    assert 0 < sum("preemptions undo each other" in w for w in sim.warnings) < MAX_FLAPPING_INSTANTS


def test_preemptions_undoing_each_other_at_a_thousand_instants_stop_a_run_without_until(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound for loops that spread their evictions over several workloads (here: the eviction bound lifted)."""
    monkeypatch.setattr(engine, "MAX_EVICTIONS_PER_WORKLOAD", 10**9)
    sim = simulate(scenario_from_dict(_flapping_forever()))
    flapping = [w for w in sim.warnings if "preemptions undo each other" in w]
    stopped = [w for w in sim.warnings if "stopped here: preemptions undid each other" in w]
    assert len(flapping) == MAX_FLAPPING_INSTANTS
    assert len(stopped) == 1 and "set `until` to follow it further" in stopped[0]


def test_pods_ready_only_after_their_timeout_loop_stops_without_until() -> None:
    """Pods ready 15s after admission, timeout 5s, blockAdmission, no backoffLimitCount: two workloads take turns
    being admitted and evicted forever, and a live podsready timer keeps the run from looking "only repeating"."""
    sim = simulate(scenario_from_dict(yaml.safe_load((DATA / "pods-ready-after-the-timeout-forever.yaml").read_text())))
    assert any(f"was evicted {MAX_EVICTIONS_PER_WORKLOAD:,} times" in w for w in sim.warnings), sim.warnings[-1:]


def test_with_until_the_same_run_goes_to_its_horizon_without_the_stop() -> None:
    sim = simulate(scenario_from_dict(_flapping_forever(until="120s")))
    assert sim.now == 120_000
    assert not any("stopped here" in w for w in sim.warnings)
    assert any("preemptions undo each other" in w for w in sim.warnings)


def test_with_an_until_of_ten_years_the_loop_stops_once_a_workload_was_evicted_a_thousand_times() -> None:
    """A hostile `until` cannot make the run last for days: the loop preempts the same workload every second."""
    sim = simulate(scenario_from_dict(_flapping_forever(until="87600h")))
    stopped = [w for w in sim.warnings if "stopped here, before `until`" in w]
    most = max(sim.workloads, key=lambda w: w.evictions)
    assert len(stopped) == 1 and f"{most.key} was evicted {most.evictions:,} times" in stopped[0], sim.warnings[-1:]
    assert MAX_EVICTIONS_PER_WORKLOAD <= most.evictions <= MAX_EVICTIONS_PER_WORKLOAD + 2  # checked per instant
    assert sim.now < MAX_EVICTIONS_PER_WORKLOAD * 1000  # a few evictions a second: far before the horizon


def test_pods_never_ready_with_a_long_until_stops_the_same_way() -> None:
    """waitForPodsReady requeueing forever (no backoffLimitCount): without `until` the run stops as soon as only
    that loop is left; with an `until` of 30 years, once the workload was evicted 1,000 times."""
    data = yaml.safe_load((SCENARIOS / "cfg-wait-for-pods-ready-endless-requeue-stops.yaml").read_text())["scenario"]
    data["spec"]["until"] = "262800h"
    sim = simulate(scenario_from_dict(data))
    stuck = next(w for w in sim.workloads if w.key == "default/stuck")
    assert stuck.evictions == MAX_EVICTIONS_PER_WORKLOAD
    assert any("stopped here, before `until`: default/stuck was evicted 1,000 times" in w for w in sim.warnings)
