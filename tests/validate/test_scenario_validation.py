"""`kueueplan validate scenario.yaml` reads a Scenario as `simulate` loads it (it said "0 object(s)" and passed a
broken one): loading problems are KP119 findings at file:line; the manifests inside are validated like any."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kueueplan.cli import main

REPO = Path(__file__).resolve().parents[2]
HEAD = "apiVersion: kueueplan.io/v1alpha1\nkind: Scenario\nmetadata:\n  name: nightly\n"
CQ = """  manifests:
  - apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata: {name: cq}
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [nvidia.com/gpu]
        flavors:
        - name: f
          resources:
          - name: nvidia.com/gpu
            nominalQuota: 8
            borrowingLimit: 2
"""


def _validate(path: Path) -> tuple[int, dict]:
    result = CliRunner().invoke(main, ["validate", str(path), "--no-policies", "-o", "json"])
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("spec,line,words", [
    ("spec:\n  until: soon\n  workloads: []\n", 6, "'soon' is not a duration"),
    ("spec:\n  manifestFiles: [../../../../../../etc/passwd]\n", 6, "leaves"),
    ("", 1, "spec is missing"),
    ("spec:\n  workloads:\n  - at: 5m\n    runFor: forever\n    manifest: {apiVersion: batch/v1, kind: Job}\n", 8,
     "not a duration"),
    ("spec:\n  expectations:\n  - {workload: a/b, admitedWithin: 1m}\n", 7, "unknown expectation field"),
])
def test_a_broken_scenario_is_a_finding_at_its_line(tmp_path: Path, spec: str, line: int, words: str) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(HEAD + spec)
    code, data = _validate(path)
    assert code == 1
    [finding] = [f for f in data["findings"] if f["severity"] == "error"]
    assert (finding["rule"], finding["file"], finding["line"]) == ("KP119", str(path), line), finding
    assert words in finding["message"] and finding["object"] == "Scenario/nightly"
    simulated = CliRunner().invoke(main, ["simulate", str(path)])
    assert simulated.exit_code == 2 and f"{path}:{line}" in simulated.stderr  # the same problem, the same line


def test_the_manifests_inside_a_scenario_are_validated_where_they_are_written(tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(HEAD + "spec:\n" + CQ + "  workloads: []\n")
    code, data = _validate(path)
    assert code == 1 and data["summary"]["objects"] == 1
    # a borrowingLimit without a cohort: simulate warns that Kueue would reject it; validate reports it
    [kp306] = [f for f in data["findings"] if f["rule"] == "KP306"]
    assert (kp306["file"], kp306["line"], kp306["object"]) == (str(path), 19, "ClusterQueue/cq")
    assert not [f for f in data["findings"] if f["rule"] == "KP119"]


def test_a_scenario_beside_manifests_is_a_cluster_of_its_own(tmp_path: Path) -> None:
    """The same ClusterQueue in a scenario and in the manifests next to it is not a duplicate."""
    (tmp_path / "scenario.yaml").write_text(HEAD + "spec:\n" + CQ.replace("            borrowingLimit: 2\n", "") + "  workloads: []\n")
    (tmp_path / "cq.yaml").write_text("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n"
                                      "  name: cq\nspec:\n  namespaceSelector: {}\n  resourceGroups: []\n")
    code, data = _validate(tmp_path)
    assert code == 0, [f for f in data["findings"] if f["severity"] == "error"]


def test_the_projects_scenarios_load() -> None:
    scenarios = sorted((REPO / "examples").glob("*/scenario*.yaml"))
    scenarios += sorted((REPO / "tests" / "simulate" / "scenarios").glob("*.yaml"))
    assert scenarios
    for path in scenarios:
        _, data = _validate(path)
        assert not [f for f in data["findings"] if f["rule"] == "KP119"], path
