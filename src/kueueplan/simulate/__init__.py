"""The offline admission simulator (issue 3): Kueue's queueing, flavor assignment and preemption replayed in
zero-latency simulated time, to the contract in ../shared/docs/scenario-format.md.

Entry points (imported lazily by callers, to keep `import kueueplan.simulate` cheap):
- `kueueplan.simulate.scenario.load_scenario(path)` / `scenario_from_dict(data)` -> Scenario
- `kueueplan.simulate.engine.simulate(scenario)` -> Simulation
- `kueueplan.simulate.result.result_json(sim)` and `check_expectations(sim)`
- `kueueplan.simulate.admissibility.can_ever_admit(cluster, manifest, kueue_version)` for the validator.

Module layout mirrors Kueue. pkg/scheduler and pkg/cache: resource_node (quota tree), queue, flavorassigner,
preemption, fairsharing, entry, scheduler (the cycle), which see the simulation only through context.
pkg/controller: controller_job (jobframework), controller_workload, controller_queue, controller_admissionchecks,
with admissionfairsharing and configuration (Kueue's Configuration as simulated). engine: the event loop.
"""
