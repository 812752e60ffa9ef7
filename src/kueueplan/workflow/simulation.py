"""The bridge to the simulator: a spec environment's declared load -> `SimRun` (JSON result + broken expectations).

Kept apart so `diff` and `check` stay pure. Returns None when the side is not a spec or the environment
declares no load (nothing to simulate).
"""

from __future__ import annotations

from kueueplan.workflow.diff import SimRun
from kueueplan.workflow.sources import Side


def spec_scenario(compiled: dict, env: str, **kwargs: object) -> object:
    """The Scenario of a spec environment's declared load (`compile.scenario_for`). Its Configuration is named
    after the Environment, not after a file path (reports must not depend on where the spec folder is)."""
    from kueueplan.simulate.scenario import scenario_from_dict

    scenario = scenario_from_dict(compiled, **kwargs)  # type: ignore[arg-type]
    if "configuration" in compiled["spec"]:
        major, minor = scenario.kueue_version
        scenario.configuration_source = (f"configuration of Environment {env} (Kueue v{major}.{minor}, over "
                                         "the release's shipped controller_manager_config.yaml)")
    return scenario


def simulate_env(spec_dir: object, env: str) -> SimRun | None:
    from kueueplan.compile import scenario_for
    from kueueplan.simulate.engine import simulate
    from kueueplan.simulate.result import expectation_results, failed_count, result_json

    origins: list[tuple[str, int | None]] = []
    scenario = scenario_for(spec_dir, env, origins)  # type: ignore[arg-type]
    if not scenario.get("spec", {}).get("workloads"):
        return None
    sim = simulate(spec_scenario(scenario, env, file=f"{spec_dir} (environment {env})", origins=origins))
    results = expectation_results(sim)
    keys = [line for failures in expectation_results(sim, located=False) for line in failures]
    owners = [i for i, failures in enumerate(results) for _ in failures]
    return SimRun(result_json(sim), [line for failures in results for line in failures], len(results),
                  failed_count(results), keys, owners)


def simulate_side(side: Side, env: str) -> SimRun | None:
    if not side.is_spec:
        return None
    return simulate_env(side.path, env)
