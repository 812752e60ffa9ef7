"""The bridge to the simulator: what `simulate`, `check` and `diff` run.

A spec environment's declared load, or plain manifests (a folder, a file, stdin) whose workload objects are
the load (simulate/load.py, the contract's second edition) -> `SimRun` (JSON result + broken expectations).
Kept apart so `diff` and `check` stay pure. Returns None when there is nothing to simulate.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from kueueplan.errors import KueueplanError
from kueueplan.kube.yamlio import Document
from kueueplan.simulate.scenario import is_scenario
from kueueplan.workflow.diff import SimRun
from kueueplan.workflow.manifests import documents_from_text, is_spec_document, load_documents, read_stdin_text
from kueueplan.workflow.sources import Side


def simulate_env(spec_dir: object, env: str) -> SimRun | None:
    """Run 0 of the environment's load; with `simulation.runs` > 1 the expectations are judged on all runs
    (each must hold in its `probability` share of them, default every run)."""
    from kueueplan.planning.source import ScenarioSource

    source = ScenarioSource.load(Path(str(spec_dir)), env)
    if not source.data.get("spec", {}).get("workloads"):
        return None
    return judged(source)


def judged(source: Any) -> SimRun:
    """Run 0 of a planning source, its expectations judged (on every run when it declares `runs` > 1)."""
    from kueueplan.simulate.engine import simulate
    from kueueplan.simulate.result import expectation_results, failed_count, result_json

    runs, seed = source.monte_carlo_settings()
    sim = simulate(source.sample(seed, 0))
    results = expectation_results(sim)
    keys = expectation_results(sim, located=False)
    if runs > 1:
        results, keys = _monte_carlo(source, sim, seed, runs, results, keys)
    owners = [i for i, failures in enumerate(results) for _ in failures]
    return SimRun(result_json(sim), [line for failures in results for line in failures], len(results),
                  failed_count(results), [line for failures in keys for line in failures], owners,
                  requests=_requests(sim), runs=runs)


def _monte_carlo(source: Any, sim: Any, seed: int, runs: int, results: list[list[str]],
                 keys: list[list[str]]) -> tuple[list[list[str]], list[list[str]]]:
    """Per expectation, one line when it misses its probability over the runs (with what went wrong in run 0
    when it failed there too), none when it meets it, even if run 0 broke it."""
    from kueueplan.planning.executors import execute
    from kueueplan.planning.montecarlo import aggregate

    result = aggregate(source, sim.scenario, seed, execute(source, seed, runs))
    out: list[list[str]] = []
    out_keys: list[list[str]] = []
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


def run(scenario: Any, expectations: int = 0) -> SimRun:
    from kueueplan.simulate.engine import simulate
    from kueueplan.simulate.result import check_expectations, result_json

    sim = simulate(scenario)
    return SimRun(result_json(sim), check_expectations(sim), expectations, requests=_requests(sim))


def _requests(sim: Any) -> dict[str, str]:
    """Each workload's total request (all pod sets), e.g. `cpu 6, memory 40Gi, nvidia.com/gpu 1`."""
    from kueueplan.kube.podsets import total_requests
    from kueueplan.kube.quantity import format_resource_value

    return {wl.key: ", ".join(f"{r} {format_resource_value(r, v)}" for r, v in total_requests(wl.spec.pod_sets).items())
            for wl in sim.workloads}


def _kueueplan_document(data: Any) -> bool:
    """A kueueplan document that is not a spec folder's: a Scenario with a mistake, read as one for its error."""
    return isinstance(data, dict) and str(data.get("apiVersion", "")).startswith("kueueplan.io/")


def manifests_scenario(docs: Iterable[Any], name: str, kueue_version: str | None = None) -> Any:
    """Plain manifests -> Scenario; Scenario documents lying among them (a repository's own) are skipped."""
    from kueueplan.simulate.scenario import scenario_from_manifests

    objects = [(dict(getattr(d, "data", d)), getattr(d, "file", name), getattr(d, "line", None)) for d in docs
               if not is_scenario(getattr(d, "data", d))]
    return scenario_from_manifests(objects, name, kueue_version)


def has_load(scenario: Any) -> bool:
    return bool(scenario.workloads)


def simulate_side(side: Side, env: str) -> SimRun | None:
    if side.is_spec:
        return simulate_env(side.path, env)
    scenario = manifests_scenario(side.envs[env], str(side.path))
    return run(scenario) if has_load(scenario) else None


def load_simulator(load: Any) -> Any:
    """`diff --load`: a simulator (Side, env) -> SimRun that runs `load` (planning.replay.Load) under each
    side's queues instead of the side's own load."""
    from kueueplan.planning.replay import manifests_replayed, replayed
    from kueueplan.planning.source import ScenarioSource

    def simulate_with_load(side: Side, env: str) -> SimRun:
        if side.is_spec:
            return judged(replayed(ScenarioSource.load(Path(side.path), env), load))
        datas = [getattr(d, "data", d) for d in side.envs[env]]
        objects = [dict(data) for data in datas if isinstance(data, dict) and not is_scenario(data)]
        return judged(manifests_replayed(objects, f"{side.path}", load))

    return simulate_with_load


def read_input(arg: str, stdin_text: str | None = None, read: dict[Path, list[Document]] | None = None
               ) -> tuple[str, list[Document], bool]:
    """A PATH argument (folder, file or `-`) -> (name, documents, is a spec folder); `read` as load_documents."""
    if arg == "-":
        return "<stdin>", documents_from_text(read_stdin_text() if stdin_text is None else stdin_text), False
    path = Path(arg)
    if not path.exists():
        raise KueueplanError(f"{path} does not exist", hint="pass a Scenario file, a spec folder, "
                             "a manifest folder or file, or - for stdin")
    docs = load_documents([path], read)
    return str(path), docs, path.is_dir() and any(is_spec_document(d.data) for d in docs)


def source_for_input(arg: str, env: str | None, kueue_version: str | None = None) -> Any:
    """What `kueueplan simulate ARG` runs, as a planning source (kueueplan.planning.source): a Scenario file or a
    spec folder's environment, whose stochastic load is drawn per run, or plain manifests, whose load is fixed."""
    from kueueplan.planning.source import ScenarioSource

    read: dict[Path, list[Document]] = {}
    name, docs, spec = read_input(arg, read=read)
    if spec:
        return ScenarioSource.load(Path(arg), env)
    if len(docs) == 1 and (is_scenario(docs[0].data) or _kueueplan_document(docs[0].data)):
        if arg == "-":
            return ScenarioSource.of(docs[0].data, "<stdin>", None, docs[0])
        return ScenarioSource.load(Path(arg), raw=read.get(Path(arg)))  # a 2 MB scenario is read once
    if any(is_scenario(d.data) for d in docs) and arg != "-" and Path(arg).is_file():
        raise KueueplanError("a Scenario file holds exactly one YAML document", file=name)
    if not docs:
        raise KueueplanError("no Kubernetes objects found", file=name)
    if arg != "-" and Path(arg).is_dir():
        from kueueplan.workflow.sources import load_side, pick_env

        side = load_side(Path(arg), env)  # gen/ with one folder per environment: --env picks one
        chosen = pick_env(side, env)
        docs = side.envs[chosen]
        name = name if len(side.envs) == 1 else f"{name} ({chosen})"
    return ScenarioSource.fixed(manifests_scenario(docs, name, kueue_version))
