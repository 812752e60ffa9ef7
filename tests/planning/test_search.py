"""Quota search: bisection finds what judging every candidate finds, and says when monotonicity fails."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.errors import KueueplanError
from kueueplan.planning.executors import run_local
from kueueplan.planning.search import Search, parse_variable
from kueueplan.planning.source import ScenarioSource

from ._support import scenario, write

EXPECT = [{"namespace": "team-a", "admittedWithin": "15m", "probability": 0.8}]


def test_bisection_agrees_with_exhaustive_search(tmp_path: Path) -> None:
    source = ScenarioSource.load(write(tmp_path, scenario(expectations=EXPECT)))
    var = parse_variable("cq/gpu/nvidia.com/gpu=2..12")
    runs = lambda s: run_local(s, 0, 16, workers=2)  # noqa: E731
    bisect = Search(source, [var], 0, runs).run()
    every = Search(source, [var], 0, runs, exhaustive=True).run()
    assert bisect["tradeoffs"] == every["tradeoffs"]
    smallest = int(bisect["tradeoffs"][0]["smallest"])
    assert 2 < smallest <= 12
    assert len(bisect["judged"]) <= 5 < len(every["judged"]) == 11
    # the answer is tight: one GPU less fails
    below = [j for j in every["judged"] if j["values"] == [str(smallest - 1)]]
    assert below and not below[0]["ok"]


def test_a_non_monotone_answer_is_reported() -> None:
    """A stand-in runner where 3 passes, 4 fails and 5 passes: the search must say so, not hide it."""
    class Fake:
        probabilities: dict = {}
        def with_quota(self, cq: str, flavor: str, resource: str, value: str) -> Any:
            out = Fake(); out.value = int(value); return out  # noqa: E702
        def sample(self, seed: int, run: int) -> Any:
            return type("S", (), {"name": "fake", "expectations": [type("E", (), {
                "describe": lambda self: "x", "admitted_within": None, "finished_by": None, "never_preempted": False,
                "state": None, "line": 1})()]})()
    from kueueplan.planning.metrics import RunMetrics

    def runs(source: Any) -> list:
        ok = source.value in (3, 5, 6)
        return [RunMetrics(0, 1, [], {}, {}, [ok])]

    result = Search(Fake(), [parse_variable("cq/gpu/nvidia.com/gpu=1..6")], 0, runs, exhaustive=True).run()  # type: ignore[arg-type]
    assert result["tradeoffs"][0]["smallest"] == "3"
    assert any("3 passes but 4 fails" in n for n in result["nonMonotone"])


def test_two_variables_give_a_tradeoff_table(tmp_path: Path) -> None:
    data = scenario(expectations=EXPECT)
    # a second team with its own queue in the same cohort
    cq_b = json.loads(json.dumps(data["spec"]["manifests"][1]))
    cq_b["metadata"]["name"] = "cq-b"
    for cq in (data["spec"]["manifests"][1], cq_b):
        cq["spec"]["cohort"] = "shared"
    data["spec"]["manifests"].append(cq_b)
    path = write(tmp_path, data)
    out = CliRunner().invoke(main, ["plan", "quota", str(path), "--vary", "cq-b/gpu/nvidia.com/gpu=0..8:4",
                                    "--vary", "cq/gpu/nvidia.com/gpu=0..12", "--runs", "8", "-o", "json"])
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    rows = [(r["values"]["cq-b/gpu/nvidia.com/gpu"], r["smallest"]) for r in result["tradeoffs"]]
    assert [r[0] for r in rows] == ["0", "4", "8"]
    needed = [int(r[1]) for r in rows]
    assert needed == sorted(needed, reverse=True) and needed[0] > needed[-1]  # what team B lends, A needs less


@pytest.mark.parametrize("text", ["cq/gpu=1..4", "cq/gpu/nvidia.com/gpu=8..4", "cq/gpu/memory=1Gi..4Mi"])
def test_bad_variables_are_refused(text: str) -> None:
    with pytest.raises(KueueplanError):
        parse_variable(text)
