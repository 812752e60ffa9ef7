"""The `preempted` and `evicted` expectations: they pass on what the run shows and fail, in words, otherwise."""

from __future__ import annotations

from pathlib import Path

import yaml

from kueueplan.simulate.engine import simulate
from kueueplan.simulate.result import check_expectations
from kueueplan.simulate.scenario import scenario_from_dict

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _failures(scenario_file: str, expectations: list[dict]) -> list[str]:
    data = yaml.safe_load((EXAMPLES / scenario_file).read_text())
    data["spec"]["expectations"] = expectations
    return check_expectations(simulate(scenario_from_dict(data, base=(EXAMPLES / scenario_file).parent)))


def test_preempted() -> None:
    assert _failures("skypilot/scenario.yaml", [{"workload": "default/job1-head-1", "preempted": True}]) == []
    (failure,) = _failures("skypilot/scenario-fifo.yaml", [{"workload": "default/job1-head-1", "preempted": True}])
    assert "default/job1-head-1 was never preempted" in failure


def test_evicted() -> None:
    # the OKE lab's PROD job preempts a DEV job: Kueue reports that as Preempted, not as an eviction for a reason
    # such as PodsReadyTimeout
    (failure,) = _failures("oke-dev-prod/scenario.yaml",
                           [{"workload": "default/dev-pytorch-text-classifier-2", "evicted": "PodsReadyTimeout"}])
    assert "never evicted (PodsReadyTimeout)" in failure
