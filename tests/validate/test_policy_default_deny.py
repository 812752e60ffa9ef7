"""KP607 default deny: a ClusterQueue of a team the policy does not list (or of no team) gets no restricted
flavor, with a finding that says how to list the team. Listed teams and shared queues behave as before."""

from __future__ import annotations

import shutil
from pathlib import Path

from kueueplan.validate import validate

REPO = Path(__file__).resolve().parents[2]
POLICY = """apiVersion: policy.kueueplan.io/v1alpha1
kind: PlatformPolicy
metadata: {name: p}
spec:
  sharedQueues: [shared]
  restrictedFlavors: [gpu-h100]
  teams:
    team-a: {clusterQueues: [team-a], flavors: [gpu-h100, cpu]}
"""


def _cq(name: str, flavor: str, labels: str = "") -> str:
    return (f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: {name}\n{labels}"
            "spec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n"
            f"    flavors:\n    - name: {flavor}\n      resources:\n      - name: nvidia.com/gpu\n"
            "        nominalQuota: 8\n")


def _kp607(tmp_path: Path, manifest: str) -> list[tuple[int | None, str]]:
    (tmp_path / "policy.yaml").write_text(POLICY)
    (tmp_path / "cq.yaml").write_text(manifest)
    result = validate([str(tmp_path / "cq.yaml")], crds=None, policies=[str(tmp_path / "policy.yaml")])
    return [(f.line, f.message) for f in result.findings if f.rule == "KP607"]


def test_a_queue_of_no_listed_team_gets_no_restricted_flavor(tmp_path: Path) -> None:
    [(line, message)] = _kp607(tmp_path, _cq("team-c", "gpu-h100"))
    assert line == 10 and "flavor 'gpu-h100' is restricted" in message
    assert "teams.<team>: {clusterQueues: [team-c], flavors: [gpu-h100]}" in message


def test_a_team_labelled_queue_of_an_unlisted_team_is_told_how_to_list_it(tmp_path: Path) -> None:
    labels = "  labels: {kueueplan.io/team: team-c}\n"
    [(_, message)] = _kp607(tmp_path, _cq("c-gpus", "gpu-h100", labels))
    assert "its team 'team-c' is not listed" in message and "teams.team-c: {clusterQueues: [c-gpus]" in message


def test_listed_teams_shared_queues_and_unrestricted_flavors_pass(tmp_path: Path) -> None:
    assert _kp607(tmp_path, _cq("team-a", "gpu-h100")) == []
    assert _kp607(tmp_path, _cq("shared", "gpu-h100")) == []
    assert _kp607(tmp_path, _cq("team-c", "cpu")) == []


def test_a_new_team_in_the_demo_spec_may_not_take_gpus_until_the_policy_lists_it(tmp_path: Path) -> None:
    spec = tmp_path / "environments"
    shutil.copytree(REPO / "environments", spec)
    teams = spec / "teams.yaml"
    teams.write_text(teams.read_text() + "---\napiVersion: kueueplan.io/v1alpha1\nkind: Team\nmetadata:\n"
                     "  name: team-c\nspec:\n  namespaces: [team-c]\n  quotas:\n  - flavor: gpu-h100\n"
                     "    resources:\n      nvidia.com/gpu: 1\n  localQueues:\n  - name: main\n")
    line = len(teams.read_text().splitlines()) - 4
    policy = REPO / "policies" / "platform.yaml"
    found = [f for f in validate([str(spec)], crds=None, policies=[str(policy)]).findings if f.rule == "KP607"]
    assert sorted((Path(f.file).name, f.line, f.object) for f in found) == [
        ("teams.yaml", line, "ClusterQueue/team-c@dev"), ("teams.yaml", line, "ClusterQueue/team-c@prod")]
    listed = tmp_path / "policy.yaml"
    listed.write_text(policy.read_text().replace(
        "  teams:\n", "  teams:\n    team-c:\n      namespaces: [team-c]\n      clusterQueues: [team-c]\n"
                      "      flavors: [gpu-h100]\n", 1))
    assert not [f for f in validate([str(spec)], crds=None, policies=[str(listed)]).findings if f.rule == "KP607"]
