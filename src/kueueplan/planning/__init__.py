"""Capacity planning above the simulator: stochastic load, Monte-Carlo runs, quota search, history replay.

Nothing here changes how Kueue is simulated. Every input this package understands (stochastic `workloads`
entries, kueue-bench WorkloadProfiles, `historyFiles`) is expanded into plain first-edition arrivals
before `kueueplan.simulate` sees the scenario, and every run is one ordinary `simulate` run.

- `sampling`: seeded random draws that are byte-identical on every machine and executor.
- `load`: stochastic entries and WorkloadProfiles -> plain `workloads` entries.
- `source`: a scenario (file, spec environment or manifests) that can be sampled with a seed.
- `metrics`: what one run measured (waits, preemptions, usage over time).
- `montecarlo`: N runs aggregated into percentiles, confidence intervals and probabilities.
- `executors`: where runs execute (one process, a local process pool, a Ray cluster).
- `search`: the smallest quotas for which every expectation holds with the required probability.
"""
