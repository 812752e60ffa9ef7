"""The simulator's module layering (issue 13, item 7): the scheduler side (pkg/scheduler's counterparts) never
imports the engine or the controllers, and no import cycle exists among simulate's modules, counting imports
inside functions and under TYPE_CHECKING too."""

from __future__ import annotations

import ast
from pathlib import Path

import kueueplan.simulate

PACKAGE = Path(kueueplan.simulate.__file__).parent
SCHEDULER_SIDE = {"scheduler", "fairsharing", "preemption", "flavorassigner", "resource_node", "queue", "entry",
                  "context", "admissibility", "workload", "heap"}


def _imports() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.glob("*.py"):
        name = path.stem
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module == "kueueplan.simulate":
                    deps.update(a.name for a in node.names)
                elif node.module.startswith("kueueplan.simulate."):
                    deps.add(node.module.split(".")[2])
            elif isinstance(node, ast.Import):
                deps.update(a.name.split(".")[2] for a in node.names if a.name.startswith("kueueplan.simulate."))
        graph[name] = deps - {name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def test_no_import_cycle_in_simulate() -> None:
    graph = _imports()
    assert {"engine", "scheduler", "fairsharing", "controller_workload"} <= set(graph)
    assert _cycle(graph) is None, _cycle(graph)


def test_scheduler_side_never_imports_engine_or_controllers() -> None:
    graph = _imports()
    for name in SCHEDULER_SIDE & set(graph):
        bad = {d for d in graph[name] if d == "engine" or d.startswith("controller_")}
        assert not bad, (name, bad)


def test_the_checker_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
