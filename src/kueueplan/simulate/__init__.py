"""The offline admission simulator (issue 3): Kueue's queueing, flavor assignment and preemption replayed in
zero-latency simulated time, to the contract in ../shared/docs/scenario-format.md.

Entry points (imported lazily by callers, to keep `import kueueplan.simulate` cheap):
- `kueueplan.simulate.scenario.load_scenario(path)` / `scenario_from_dict(data)` -> Scenario
- `kueueplan.simulate.engine.simulate(scenario)` -> Simulation
- `kueueplan.simulate.result.result_json(sim)` and `check_expectations(sim)`
- `kueueplan.simulate.admissibility.can_ever_admit(cluster, manifest, kueue_version)` for the validator.

Module layout mirrors Kueue: resource_node (quota tree), queue, flavorassigner, preemption, fairsharing,
scheduler (the cycle), admissionchecks, engine (the event loop).
"""
