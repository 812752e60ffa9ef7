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
    from kueueplan.simulate.result import expectation_results, failed_count, result_json

    source = ScenarioSource.load(Path(str(spec_dir)), env)
    if not source.data.get("spec", {}).get("workloads"):
        return None
    runs, seed = source.monte_carlo_settings()
    sim = simulate(source.sample(seed, 0))
    results = expectation_results(sim)
    keys = expectation_results(sim, located=False)
    if runs > 1:
        results, keys = _monte_carlo(source, sim, seed, runs, results, keys)
    owners = [i for i, failures in enumerate(results) for _ in failures]
    return SimRun(result_json(sim), [line for failures in results for line in failures], len(results),
                  failed_count(results), [line for failures in keys for line in failures], owners)


def _monte_carlo(source: object, sim: object, seed: int, runs: int, results: list[list[str]],
                 keys: list[list[str]]) -> tuple[list[list[str]], list[list[str]]]:
    """Per expectation, one line when it misses its probability over the runs (with what went wrong in run 0
    when it failed there too), none when it meets it, even if run 0 broke it."""
    from kueueplan.planning.executors import execute
    from kueueplan.planning.montecarlo import aggregate

    result = aggregate(source, sim.scenario, seed, execute(source, seed, runs))  # type: ignore[attr-defined]
    out, out_keys = [], []
    for e, details, detail_keys in zip(result["expectations"], results, keys):
        if e["met"]:
            out.append([])
            out_keys.append([])
            continue
        head = (f"{e['expectation']} held in {e['held']} of {runs} runs ({e['probability']:.0%}), "
                f"needs {e['required']:.0%}")
        out.append([head + (f"; in run 0: {details[0]}" if details else "")])
        out_keys.append([head + (f"; in run 0: {detail_keys[0]}" if detail_keys else "")])
    return out, out_keys


def simulate_side(side: Side, env: str) -> SimRun | None:
    if not side.is_spec:
        return None
    return simulate_env(side.path, env)
