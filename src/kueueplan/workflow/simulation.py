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
from kueueplan.workflow.diff import SimRun
from kueueplan.workflow.manifests import (KUEUEPLAN_API, documents_from_text, is_spec_document, load_documents,
                                          read_stdin_text)
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
                  failed_count(results), keys, owners, requests=_requests(sim))


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


def is_scenario(data: Any) -> bool:
    return isinstance(data, dict) and data.get("kind") == "Scenario" and data.get("apiVersion") in (None, KUEUEPLAN_API)


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


def read_input(arg: str, stdin_text: str | None = None) -> tuple[str, list[Document], bool]:
    """A PATH argument (folder, file or `-`) -> (name, documents, is a spec folder)."""
    if arg == "-":
        return "<stdin>", documents_from_text(read_stdin_text() if stdin_text is None else stdin_text), False
    path = Path(arg)
    if not path.exists():
        raise KueueplanError(f"{path} does not exist", hint="pass a Scenario file, a spec folder (with --env), "
                             "a manifest folder or file, or - for stdin")
    docs = load_documents([path])
    return str(path), docs, path.is_dir() and any(is_spec_document(d.data) for d in docs)


def scenario_for_input(arg: str, env: str | None, kueue_version: str | None = None) -> Any:
    """What `kueueplan simulate ARG` runs: a Scenario file, a spec folder's environment, or plain manifests."""
    from kueueplan.simulate.scenario import load_scenario, scenario_from_document

    name, docs, spec = read_input(arg)
    if spec:
        from kueueplan.compile import scenario_for

        path = Path(arg)
        if env is None:
            from kueueplan.spec.load import load_spec

            names = [e.name for e in load_spec(path).environments()]
            raise KueueplanError(f"a spec folder needs --env; its environments are {', '.join(names)}",
                                 file=str(path), hint=f"e.g. kueueplan simulate {path} --env {names[0]}")
        origins: list[tuple[str, int | None]] = []
        data = scenario_for(path, env, origins)
        return spec_scenario(data, env, file=f"{path}/ (env {env})", base=path, origins=origins)
    if len(docs) == 1 and (is_scenario(docs[0].data) or _kueueplan_document(docs[0].data)):
        if arg == "-":
            return scenario_from_document(docs[0], None)
        return load_scenario(arg)
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
    return manifests_scenario(docs, name, kueue_version)
