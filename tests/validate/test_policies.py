"""Platform policies: the demo platform passes; attack-like specs are caught (issue 7, multi-tenant safety)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from kueueplan.validate import validate
from kueueplan.validate.finding import Finding

REPO = Path(__file__).resolve().parents[2]
POLICY = REPO / "policies" / "platform.yaml"
SPEC = REPO / "environments"

pytestmark = pytest.mark.skipif(not SPEC.is_dir(), reason="the demo spec environments/ is not in this checkout")


def _copy_spec(tmp: Path) -> Path:
    dest = tmp / "environments"
    shutil.copytree(SPEC, dest)
    return dest


def _edit(path: Path, kind: str, name: str, change: Any) -> None:
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    hit = [d for d in docs if d.get("kind") == kind and d["metadata"]["name"] == name]
    assert hit, f"{kind}/{name} not in {path}"
    change(hit[0])
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))


def _errors(findings: list[Finding], rule: str) -> list[Finding]:
    return [f for f in findings if f.rule == rule and f.severity == "error"]


def _run(spec: Path, crd_paths: list[str], policy: Path = POLICY) -> list[Finding]:
    return validate([str(spec)], crds=crd_paths, policies=[str(policy)]).findings


def test_demo_platform_passes(crd_paths: list[str]) -> None:
    result = validate([str(SPEC)], crds=crd_paths, policies=[str(POLICY)])
    assert result.objects > 0
    assert [f for f in result.findings if f.severity == "error"] == []
    assert result.policy_files == [str(POLICY)]


def test_team_granting_itself_another_teams_namespace(tmp_path: Path, crd_paths: list[str]) -> None:
    spec = _copy_spec(tmp_path)

    def widen(team: dict[str, Any]) -> None:
        team["spec"]["namespaceSelector"] = {"matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["team-b", "team-a"]}]}

    _edit(spec / "teams.yaml", "Team", "team-b", widen)
    hits = _errors(_run(spec, crd_paths), "KP601")
    assert hits and all("team-a" in f.message and "ClusterQueue/team-b" in f.object for f in hits)


def test_team_labelling_a_namespace_of_another_team(tmp_path: Path, crd_paths: list[str]) -> None:
    spec = _copy_spec(tmp_path)
    _edit(spec / "teams.yaml", "Team", "team-b",
          lambda t: t["spec"].__setitem__("namespaces", ["team-b", "team-a-scratch"]))
    hits = _errors(_run(spec, crd_paths), "KP602")
    assert any("team-a-scratch" in f.message and "belongs to team team-a" in f.message for f in hits)


def test_local_queue_aimed_at_a_foreign_queue_in_the_spec(tmp_path: Path, crd_paths: list[str]) -> None:
    spec = _copy_spec(tmp_path)
    # team-b puts a LocalQueue for its own ClusterQueue into team-a's namespace: the spec loader refuses it.
    _edit(spec / "teams.yaml", "Team", "team-b",
          lambda t: t["spec"].__setitem__("localQueues", [{"name": "pipelines"},
                                                          {"name": "sneaky", "namespaces": ["team-a"]}]))
    hits = _errors(_run(spec, crd_paths), "KP003")
    assert any("team-a" in f.message for f in hits)


def test_local_queue_aimed_at_a_foreign_queue_in_manifests(tmp_path: Path, crd_paths: list[str]) -> None:
    from kueueplan.emit.build import build

    gen = tmp_path / "gen"
    build(str(SPEC), str(gen), None)
    # A hand-written manifest slipped into team-b's namespace, pointing at team-a's GPU queue.
    (gen / "prod" / "zz-sneaky.yaml").write_text(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: gpus\n  namespace: team-b\n"
        "spec:\n  clusterQueue: team-a\n")
    findings = validate([str(gen)], crds=crd_paths, policies=[str(POLICY)]).findings
    hits = _errors(findings, "KP603")
    assert [f.object for f in hits] == ["LocalQueue/team-b/gpus"]
    assert "team team-a's ClusterQueue 'team-a'" in hits[0].message and hits[0].line == 7  # spec.clusterQueue
    # Kueue would also never admit from it (team-a's queue does not select team-b); nothing else is wrong.
    assert {(f.rule, f.object) for f in findings if f.severity == "error"} == {
        ("KP603", "LocalQueue/team-b/gpus"), ("KP408", "LocalQueue/team-b/gpus")}


def test_dev_environment_using_prod_priority(tmp_path: Path, crd_paths: list[str]) -> None:
    policy = yaml.safe_load(POLICY.read_text())
    policy["spec"]["environments"]["dev"]["priorities"] = ["dev-priority"]
    strict = tmp_path / "strict.yaml"
    strict.write_text(yaml.safe_dump(policy))
    hits = _errors(_run(SPEC, crd_paths, strict), "KP605")
    assert hits and all("@dev" in f.object and "prod-priority" in f.message for f in hits)
    assert not any("@prod" in f.object for f in hits)


def test_team_claiming_a_gpu_flavor_it_may_not_use(tmp_path: Path, crd_paths: list[str]) -> None:
    spec = _copy_spec(tmp_path)

    def grab_gpus(team: dict[str, Any]) -> None:
        team["spec"]["flavors"] = ["cpu-standard", "gpu-h100"]
        # same resources as its CPU flavor, so the spec compiles; the policy must still refuse it
        team["spec"]["quotas"].append({"flavor": "gpu-h100", "resources": {"cpu": 8, "memory": "64Gi"}})

    _edit(spec / "teams.yaml", "Team", "team-b", grab_gpus)
    findings = _run(spec, crd_paths)
    hits = _errors(findings, "KP607")
    assert any("gpu-h100" in f.message and "team team-b" in f.message for f in hits), findings


def test_rule_switches_disable_and_regrade(tmp_path: Path, crd_paths: list[str]) -> None:
    text = ("apiVersion: policy.kueueplan.io/v1alpha1\nkind: PlatformPolicy\nmetadata: {name: p}\n"
            "spec:\n  rules:\n    KP420: {enabled: false}\n    KP102: {severity: warning}\n")
    (tmp_path / "p.yaml").write_text(text)
    (tmp_path / "m.yaml").write_text("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
                                     "metadata: {name: Bad_Name}\nspec: {}\n")
    findings = validate([str(tmp_path / "m.yaml")], crds=crd_paths, policies=[str(tmp_path / "p.yaml")]).findings
    assert "KP420" not in {f.rule for f in findings}
    assert {f.severity for f in findings if f.rule == "KP102"} == {"warning"}


def test_broken_policy_is_a_usage_error(tmp_path: Path) -> None:
    from kueueplan.errors import KueueplanError

    (tmp_path / "p.yaml").write_text("apiVersion: policy.kueueplan.io/v1alpha1\nkind: PlatformPolicy\n"
                                     "metadata: {name: p}\nspec:\n  teams:\n    a: {namespacez: [x]}\n")
    (tmp_path / "m.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n")
    with pytest.raises(KueueplanError) as err:
        validate([str(tmp_path / "m.yaml")], crds=None, policies=[str(tmp_path / "p.yaml")])
    assert err.value.line == 6 and "namespacez" in err.value.message


def test_capacity_from_node_pools(tmp_path: Path, crd_paths: list[str]) -> None:
    policy = yaml.safe_load(POLICY.read_text())
    policy["spec"]["environments"]["prod"]["nodePools"]["gpu-h100"]["nodes"] = 0  # the H100 pool is gone
    shrunk = tmp_path / "shrunk.yaml"
    shrunk.write_text(yaml.safe_dump(policy))
    hits = _errors(_run(SPEC, crd_paths, shrunk), "KP604")
    assert hits and all("@prod" in f.object and "gpu-h100" in f.message and "0 nodes x" in f.message for f in hits)
