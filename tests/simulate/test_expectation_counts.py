"""Expectation verdicts count expectations, not the workloads they select: never negative, never above the
total ("expectations: -52 of 64 passed" and "116 of 64 failed" happened), and each failure names the file and
line the expectation was written at (a spec's `expect:`, not "line 1")."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.workflow.check import run_check

REPO = Path(__file__).resolve().parents[2]

SCENARIO = """\
apiVersion: kueueplan.io/v1alpha1
kind: Scenario
metadata: {name: t}
spec:
  manifests:
  - {apiVersion: kueue.x-k8s.io/v1beta2, kind: ResourceFlavor, metadata: {name: f}}
  - apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata: {name: cq}
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu]
        flavors: [{name: f, resources: [{name: cpu, nominalQuota: 1}]}]
  - {apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {namespace: default, name: lq}, spec: {clusterQueue: cq}}
  workloads:
  - at: 0s
    runFor: 10m
    count: 4
    manifest:
      apiVersion: batch/v1
      kind: Job
      metadata: {name: j, namespace: default, labels: {kueue.x-k8s.io/queue-name: lq}}
      spec:
        template: {spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
  expectations:
  - {clusterQueue: cq, admittedWithin: 1m}
  - {workload: default/j-1, state: Finished}
"""


def test_one_expectation_broken_by_three_workloads_counts_once(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    result = CliRunner().invoke(main, ["simulate", str(path)])
    assert result.exit_code == 1
    # three of the four copies wait 10m, 20m, 30m: three lines, one broken expectation
    lines = [line for line in result.stderr.splitlines() if line.startswith("expectation failed:")]
    assert len(lines) == 3 and all(f"({path}:27)" in line for line in lines), result.stderr
    assert "expectations: 1 of 2 passed" in result.stderr


def _single_run_demo(spec: Path) -> None:
    """The demo judged on one run, without team-b's sampled load and expectation: the counting these tests
    check is per run (a Monte-Carlo gate reports one line per expectation, tested in tests/planning)."""
    (spec / "workloads" / "team-b-adhoc.yaml").unlink()
    env = spec / "env-prod.yaml"
    env.write_text(re.sub(r"\n    runs: \d+[^\n]*", "", env.read_text()))
    teams = spec / "teams.yaml"
    teams.write_text(re.sub(r"(  - name: pipelines\n)  expect:\n(    .*\n)+", r"\1", teams.read_text(), count=1))


def test_check_counts_failed_expectations_and_names_the_spec_line(tmp_path: Path) -> None:
    spec = tmp_path / "environments"
    shutil.copytree(REPO / "environments", spec)
    _single_run_demo(spec)
    teams = spec / "teams.yaml"
    # team-b must finish within 1s: each of its pipeline runs breaks that one expectation
    text = teams.read_text().replace("  localQueues:\n  - name: pipelines\n",
                                     "  localQueues:\n  - name: pipelines\n  expect:\n    finishedBy: 1s\n", 1)
    teams.write_text(text)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t == "  expect:" and i > 44)
    report = run_check(spec, None)
    prod = next(s for s in report.simulations if s.env == "prod")
    # three of team-b's workloads break its one expectation: one failed expectation, three lines
    assert (prod.failed, len(prod.failures)) == (1, 3), prod.failures
    assert all(f.endswith(f"teams.yaml:{line})") for f in prod.failures), prod.failures
    assert report.problems == ["2 expectation(s) failed"]  # one in dev, one in prod
    result = CliRunner().invoke(main, ["simulate", str(spec), "--env", "prod"])
    verdict = next(t for t in result.stderr.splitlines() if t.startswith("expectations:"))
    passed, total = int(verdict.split()[1]), int(verdict.split()[3])
    assert (passed, total) == (total - 1, prod.expectations) and f"teams.yaml:{line})" in result.stderr


def test_moving_lines_does_not_break_an_expectation_in_a_diff(tmp_path: Path) -> None:
    """Failures name their line, but `diff` compares them without it: a comment added above an expectation
    that already failed is not a newly broken expectation."""
    from kueueplan.workflow.diff import diff_sides
    from kueueplan.workflow.simulation import simulate_side
    from kueueplan.workflow.sources import load_side

    base, head = tmp_path / "base" / "environments", tmp_path / "head" / "environments"
    for side in (base, head):
        shutil.copytree(REPO / "environments", side)
        _single_run_demo(side)
        teams = side / "teams.yaml"
        teams.write_text(teams.read_text().replace("  localQueues:\n  - name: pipelines\n",
                                                   "  localQueues:\n  - name: pipelines\n  expect:\n"
                                                   "    finishedBy: 1s\n", 1))
    teams = head / "teams.yaml"
    teams.write_text("# a comment that moves every line down\n" + teams.read_text())
    report = diff_sides(load_side(base), load_side(head), simulate=simulate_side)
    assert all(env.broken_expectations == [] for env in report.envs)


def test_a_diff_counts_the_expectations_it_breaks_not_the_workloads(tmp_path: Path) -> None:
    from kueueplan.report.diff import markdown
    from kueueplan.workflow.diff import diff_sides
    from kueueplan.workflow.simulation import simulate_side
    from kueueplan.workflow.sources import load_side

    base, head = tmp_path / "base" / "environments", tmp_path / "head" / "environments"
    shutil.copytree(REPO / "environments", base)
    shutil.copytree(REPO / "environments", head)
    _single_run_demo(base)
    _single_run_demo(head)
    teams = head / "teams.yaml"
    teams.write_text(teams.read_text().replace("  localQueues:\n  - name: pipelines\n",
                                               "  localQueues:\n  - name: pipelines\n  expect:\n"
                                               "    finishedBy: 1s\n", 1))
    report = diff_sides(load_side(base), load_side(head), simulate=simulate_side)
    prod = next(env for env in report.envs if env.env == "prod")
    assert (prod.broken_count, len(prod.broken_expectations)) == (1, 3)
    assert "2 expectation(s) break" in markdown(report)  # one in dev, one in prod (6 lines)


def test_a_monte_carlo_gate_names_the_failed_expectation_on_one_line(tmp_path: Path) -> None:
    """With --runs, a broken expectation is one line on stderr (its share of runs) and exit 1, not a traceback (the
    line once named a helper the module never imported)."""
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    result = CliRunner().invoke(main, ["simulate", str(path), "--runs", "3", "--jobs", "1", "-o", "json"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    lines = [line for line in result.stderr.splitlines() if line.startswith("expectation failed:")]
    assert lines == ["expectation failed: clusterQueue cq: admittedWithin 1m held in 0 of 3 runs (0.0%), needs 100%"]
