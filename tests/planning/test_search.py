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

from ._support import JOB, scenario, write

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


def _reclaim_scenario() -> dict[str, Any]:
    """Team A (2 GPUs) runs four 1-GPU jobs for 2h from 0, borrowing what team B's queue does not use; team B
    (reclaimWithinCohort: Any) submits two 1-GPU jobs at 30m. By Kueue's reclaim rules, with B's quota Q:
    Q = 0: A borrows nothing, nothing to reclaim; Q = 1..3: A borrows min(Q, 2) and B reclaims what it lacks,
    preempting A; Q >= 4: A borrows 2 and B's two jobs fit beside them. So "team A is never preempted" holds
    for 0 and 4.. but not 1..3: more quota for B is not monotone for A."""
    data = scenario(gpus=2, workloads=[
        {"count": 4, "runFor": "2h", "manifest": JOB},
        {"count": 2, "at": "30m", "runFor": "1h",
         "manifest": {**JOB, "metadata": {**JOB["metadata"], "name": "b", "namespace": "team-b"}}}],
        expectations=[{"namespace": "team-a", "neverPreempted": True}])
    manifests = data["spec"]["manifests"]
    cq_b = json.loads(json.dumps(manifests[1]))
    cq_b["metadata"]["name"] = "cq-b"
    cq_b["spec"]["preemption"] = {"reclaimWithinCohort": "Any"}
    for cq, namespace in ((manifests[1], "team-a"), (cq_b, "team-b")):
        cq["spec"]["cohort"] = "shared"
        cq["spec"]["namespaceSelector"] = {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
    manifests += [cq_b, {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
                         "metadata": {"name": "lq", "namespace": "team-b"}, "spec": {"clusterQueue": "cq-b"}}]
    return data


def test_reclaim_makes_a_real_search_non_monotone_and_it_is_reported(tmp_path: Path) -> None:
    path = write(tmp_path, _reclaim_scenario())
    vary = ["plan", "quota", str(path), "--vary", "cq-b/gpu/nvidia.com/gpu=0..6", "--runs", "1"]
    every = CliRunner().invoke(main, [*vary, "--exhaustive", "-o", "json"])
    assert every.exit_code == 0, every.output
    result = json.loads(every.stdout)
    assert {j["values"][0]: j["ok"] for j in result["judged"]} == {
        "0": True, "1": False, "2": False, "3": False, "4": True, "5": True, "6": True}
    assert result["nonMonotone"] == [f"cq-b/gpu/nvidia.com/gpu: 0 passes but {q} fails" for q in (1, 2, 3)]
    bisect = json.loads(CliRunner().invoke(main, [*vary, "-o", "json"]).stdout)
    assert bisect["tradeoffs"][0]["smallest"] == "4" and bisect["nonMonotone"] == []  # 0 is never judged


def test_the_count_of_judged_candidates_reads_as_english(tmp_path: Path) -> None:
    path = write(tmp_path, _reclaim_scenario())
    out = CliRunner().invoke(main, ["plan", "quota", str(path), "--vary", "cq-b/gpu/nvidia.com/gpu=2..2",
                                    "--runs", "1"])
    assert out.exit_code == 1 and "1 candidate judged (bisection)" in out.stdout, out.output
