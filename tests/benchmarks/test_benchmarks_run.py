"""benchmarks/run.py writes the README's Performance block; bench_manifests.py's input is real load."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


def _module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


run = _module("run")
bench_manifests = _module("bench_manifests")


def _block(readme: str) -> str:
    return readme.split(run.START, 1)[1].split(run.END, 1)[0]


def test_readme_block_sections_come_from_run_py() -> None:
    """Every `####` section of README's block is one of run.py's benchmarks, in run.py's order: a renamed or
    dropped benchmark leaves no stale table behind (a new one appears with the next `run.py --readme`)."""
    titles = [title for title, _ in run.BENCHMARKS]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    found = re.findall(r"^#### (.+)$", _block(readme), flags=re.M)
    assert found, "README.md's perf block has no benchmark sections"
    assert [t for t in titles if t in found] == found, f"not from benchmarks/run.py: {set(found) - set(titles)}"
    assert all((REPO / "benchmarks" / args[0]).is_file() for _, args in run.BENCHMARKS)


def test_readme_with_replaces_only_the_block() -> None:
    body = f"intro\n{run.START}\nold table\n{run.END}\noutro\n"
    assert run.readme_with(body, "new table") == f"intro\n{run.START}\nnew table\n{run.END}\noutro\n"
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert _block(run.readme_with(readme, "X")) == "\nX\n"
    for broken in ("no markers", f"{run.END}\n{run.START}", f"{run.START}{run.START}{run.END}"):
        with pytest.raises(ValueError, match="perf:start"):
            run.readme_with(broken, "X")


def test_manifests_benchmark_sizes() -> None:
    assert bench_manifests.sizes([]) == bench_manifests.SIZES
    assert bench_manifests.sizes(["50x100", "2x3"]) == [(50, 100), (2, 3)]
    with pytest.raises(SystemExit, match="TEAMSxJOBS"):
        bench_manifests.sizes(["5xx"])


def test_manifests_benchmark_stream_is_load() -> None:
    """The generated stream is what `kueueplan simulate -` reads: every Job a workload of its team's queue, all
    of them finished by the simulation (else the benchmark would time an empty or stuck run)."""
    from kueueplan.simulate.engine import simulate
    from kueueplan.simulate.result import result_json
    from kueueplan.workflow.manifests import documents_from_text
    from kueueplan.workflow.simulation import manifests_scenario

    scenario = manifests_scenario(documents_from_text(bench_manifests.stream(3, 5)), "<stdin>")
    workloads = result_json(simulate(scenario))["workloads"]
    assert len(workloads) == 15 and {w["state"] for w in workloads} == {"Finished"}
    assert {w["clusterQueue"] for w in workloads} == {"team-0", "team-1", "team-2"}
