"""The bridge to the simulator: a spec environment's declared load -> `SimRun` (JSON result + broken expectations).

Kept apart so `diff` and `check` stay pure. Returns None when the side is not a spec or the environment
declares no load (nothing to simulate).
"""

from __future__ import annotations

from kueueplan.workflow.diff import SimRun
from kueueplan.workflow.sources import Side


def simulate_env(spec_dir: object, env: str) -> SimRun | None:
    """Run 0 of the environment's load; with `simulation.runs` > 1 the expectations are judged on all runs
    (each must hold in its `probability` share of them, default every run)."""
    from pathlib import Path

    from kueueplan.planning.source import ScenarioSource
    from kueueplan.simulate.engine import simulate
    from kueueplan.simulate.result import check_expectations, result_json

    source = ScenarioSource.load(Path(str(spec_dir)), env)
    spec = source.data.get("spec", {})
    if not spec.get("workloads"):
        return None
    runs, seed = source.monte_carlo_settings()
    sim = simulate(source.sample(seed, 0))
    total = len(spec.get("expectations", []))
    if runs == 1:
        return SimRun(result_json(sim), check_expectations(sim), total)
    return SimRun(result_json(sim), _monte_carlo_failures(source, sim, seed, runs), total)


def _monte_carlo_failures(source: object, sim: object, seed: int, runs: int) -> list[str]:
    """Each expectation that misses its probability, with what went wrong in run 0 when it failed there too."""
    from kueueplan.planning.executors import execute
    from kueueplan.planning.metrics import judge_each
    from kueueplan.planning.montecarlo import aggregate

    result = aggregate(source, sim.scenario, seed, execute(source, seed, runs))  # type: ignore[attr-defined]
    details = judge_each(sim)  # type: ignore[arg-type]
    out = []
    for i, e in enumerate(result["expectations"]):
        if not e["met"]:
            first = f"; in run 0: {details[i][0]}" if details[i] else ""
            out.append(f"{e['expectation']} held in {e['held']} of {runs} runs ({e['probability']:.0%}), "
                       f"needs {e['required']:.0%}{first}")
    return out


def simulate_side(side: Side, env: str) -> SimRun | None:
    if not side.is_spec:
        return None
    return simulate_env(side.path, env)
