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
    from kueueplan.simulate.result import check_expectations, result_json

    scenario = scenario_for(spec_dir, env)  # type: ignore[arg-type]
    if not scenario.get("spec", {}).get("workloads"):
        return None
    sim = simulate(spec_scenario(scenario, env, file=f"{spec_dir} (environment {env})"))
    return SimRun(result_json(sim), check_expectations(sim), len(scenario["spec"].get("expectations", [])))


def simulate_side(side: Side, env: str) -> SimRun | None:
    if not side.is_spec:
        return None
    return simulate_env(side.path, env)
