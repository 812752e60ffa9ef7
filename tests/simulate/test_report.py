"""The people-facing reports compute real numbers from the run."""

from __future__ import annotations

from pathlib import Path

from kueueplan.report.simulation import _intervals, team_rows, utilisation
from kueueplan.simulate.engine import simulate
from kueueplan.simulate.scenario import load_scenario

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_team_table_and_utilisation() -> None:
    sim = simulate(load_scenario(EXAMPLES / "rayjob-priority" / "scenario.yaml"))
    (row,) = team_rows(sim)
    # waits until first admission: the single job 0s, dev-2 0s, dev-3 599s, dev-4 598s, prod 0s
    assert (row["team"], row["workloads"], row["admitted"], row["waiting"], row["inadmissible"]) == ("default", 5, 5, 0, 0)
    assert (row["p50"], row["p95"], row["max"], row["preemptions"]) == (0, 599, 599, 1)
    gpu = next(r for r in utilisation(sim) if r["resource"] == "nvidia.com/gpu")
    assert (gpu["quota"], gpu["peak"]) == (10, 4)
    # 1 GPU in use 0-180s (the single job), 300-900s (dev-2, then prod), 4 from 900s to 2400s, 3 until 2700s;
    # averaged over the 1h horizon
    assert abs(gpu["average"] - (1 * 180 + 1 * 600 + 4 * 1500 + 3 * 300) / 3600) < 1e-9


def test_gantt_intervals_follow_events() -> None:
    sim = simulate(load_scenario(EXAMPLES / "rayjob-priority" / "scenario.yaml"))
    dev2 = [(k, s, e) for key, k, s, e, _ in _intervals(sim) if key == "default/dev-pytorch-text-classifier-2"]
    assert dev2 == [("run", 300, 600), ("wait", 600, 900), ("run", 900, 2700)]
