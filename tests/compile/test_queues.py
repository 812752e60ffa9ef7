"""Teams with several ClusterQueues, LocalQueues choosing theirs, namespaces shared between teams and lend-only
queues: the compiled objects, field by field, valid for the release's CRDs (the shipped schema pack, CEL rules
included), what the simulator does with them, and the errors at the spec field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.compile import compile_platform, scenario_for
from kueueplan.errors import KueueplanError
from kueueplan.kube.objects import read_cluster
from kueueplan.validate import validate

from ._support import crd_errors
from .test_teams import HEAD, _write

DEV_PROD = HEAD + """kind: Team
metadata: {name: ml}
spec:
  namespaces: [ml, ml-ci]
  cohort: org
  quotas: [{flavor: cpu, resources: {cpu: 4}}]
  preemption: {reclaimWithinCohort: Any}
  expect: {admittedWithin: 10m}
  clusterQueues:
  - name: ml-prod
    preemption: {withinClusterQueue: LowerPriority}
  - name: ml-dev
    quotas: [{flavor: cpu, resources: {cpu: 2}}]
    cohort: null
    expect: {neverPreempted: true}
  localQueues:
  - {name: prod, clusterQueue: ml-prod}
  - {name: dev, clusterQueue: ml-dev, namespaces: [ml-ci]}
  - main
"""


def _by(manifests: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {(m["metadata"].get("namespace", "") + "/" if kind == "LocalQueue" else "") + m["metadata"]["name"]: m
            for m in manifests if m["kind"] == kind}


def _errors(spec: Path) -> list[str]:
    result = validate([str(spec)], policies=[])
    return [f"{f.rule} {f.object}: {f.message}" for f in result.findings if f.severity == "error"]


def _job(name: str, queue: str, namespace: str = "ml", cpu: int = 1, extra: str = "") -> str:
    return HEAD + f"kind: Workload\nmetadata: {{name: {name}}}\nspec:\n  team: ml\n  kind: Job\n" \
                  f"  namespace: {namespace}\n  localQueue: {queue}\n  template: {{image: busybox, resources: " \
                  f"{{requests: {{cpu: {cpu}}}}}}}\n{extra}"


@pytest.mark.parametrize("version", ["v0.14.8", "v0.19.2"])
def test_entries_take_the_teams_fields_unless_they_set_them(tmp_path: Path, version: str) -> None:
    spec = _write(tmp_path, DEV_PROD, f"{{kueueVersion: {version}}}")
    manifests = compile_platform(spec)["dev"]
    queues = _by(manifests, "ClusterQueue")
    assert list(queues) == ["ml-prod", "ml-dev"]
    prod, dev = queues["ml-prod"]["spec"], queues["ml-dev"]["spec"]
    cohort_field = "cohortName" if version == "v0.19.2" else "cohort"
    # ml-prod: the team's cohort and quotas; its own preemption replaces the team's whole field
    assert prod[cohort_field] == "org"
    assert prod["resourceGroups"] == [{"coveredResources": ["cpu"],
                                       "flavors": [{"name": "cpu", "resources": [{"name": "cpu", "nominalQuota": "4"}]}]}]
    assert prod["preemption"] == {"withinClusterQueue": "LowerPriority"}
    # ml-dev: its own quotas, cohort unset by its explicit null, the team's preemption
    assert cohort_field not in dev
    assert dev["resourceGroups"][0]["flavors"][0]["resources"] == [{"name": "cpu", "nominalQuota": "2"}]
    assert dev["preemption"] == {"reclaimWithinCohort": "Any"}
    # both select both team namespaces, by the team label
    assert prod["namespaceSelector"] == dev["namespaceSelector"] == {"matchLabels": {"kueueplan.io/team": "ml"}}
    local = {key: m["spec"]["clusterQueue"] for key, m in _by(manifests, "LocalQueue").items()}
    assert local == {"ml/prod": "ml-prod", "ml-ci/prod": "ml-prod", "ml-ci/dev": "ml-dev",
                     "ml/main": "ml-prod", "ml-ci/main": "ml-prod"}
    assert _errors(spec) == []


def test_each_queues_expect_is_judged_on_the_workloads_it_admits(tmp_path: Path) -> None:
    spec = _write(tmp_path, DEV_PROD, workloads=_job("train", "prod", extra="  load: [{runFor: 5m}]\n") +
                  "---\n" + _job("lint", "dev", namespace="ml-ci", extra="  load: [{runFor: 1m}]\n"))
    scenario = scenario_for(spec, "dev")
    by_queue = [e for e in scenario["spec"]["expectations"] if "clusterQueue" in e]
    assert by_queue == [{"clusterQueue": "ml-prod", "admittedWithin": "10m"},
                        {"clusterQueue": "ml-dev", "neverPreempted": True}]
    result = CliRunner().invoke(main, ["simulate", str(spec), "--env", "dev", "-o", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    placed = {w["name"]: (w["clusterQueue"], w["state"]) for w in report["workloads"]}
    assert placed == {"ml/train": ("ml-prod", "Finished"), "ml-ci/lint": ("ml-dev", "Finished")}


def test_a_local_queue_must_point_at_one_of_the_teams_queues(tmp_path: Path) -> None:
    spec = _write(tmp_path, DEV_PROD.replace("clusterQueue: ml-dev,", "clusterQueue: ml-deb,"))
    with pytest.raises(KueueplanError) as info:
        compile_platform(spec)
    err = info.value
    assert "ClusterQueue 'ml-deb' is not one of team 'ml''s ClusterQueues; did you mean 'ml-dev'?" in err.message
    assert err.message.startswith("spec.localQueues[1].clusterQueue")
    assert (Path(err.file).name, err.line) == ("teams.yaml", 19)
    assert "known: ml-prod, ml-dev" in (err.hint or "")


@pytest.mark.parametrize("teams,needle,line", [
    (DEV_PROD.replace("name: ml-dev", "name: ml-prod"), "clusterQueues names must be distinct", 10),
    (DEV_PROD + "  clusterQueue: ml\n", "set 'clusterQueue' (one queue) or 'clusterQueues', not both", 4),
    (DEV_PROD + "---\n" + HEAD + "kind: Team\nmetadata: {name: other}\nspec: {clusterQueue: ml-dev}\n",
     "ClusterQueue 'ml-dev' already belongs to team 'ml'", 25),
    (DEV_PROD.replace("    cohort: null\n", "    quotas: [{flavor: gpu, resources: {cpu: 2}}]\n", 1)
     .replace("    quotas: [{flavor: cpu, resources: {cpu: 2}}]\n", "", 1),
     "flavor 'gpu' does not exist", 14),
    (DEV_PROD.replace("  - name: ml-dev\n", "  - name: ml-dev\n    lendOnly: true\n"),
     "ClusterQueue 'ml-dev' is lendOnly", 20),
])
def test_queue_mistakes_point_at_the_field(tmp_path: Path, teams: str, needle: str, line: int) -> None:
    spec = _write(tmp_path, teams)
    with pytest.raises(KueueplanError) as info:
        compile_platform(spec)
    assert needle in info.value.message
    assert (Path(info.value.file).name, info.value.line) == ("teams.yaml", line)


SHARED = HEAD + """kind: Team
metadata: {name: a}
spec:
  namespaces: [{name: research, labels: {tier: gpu}}, a]
  quotas: [{flavor: cpu, resources: {cpu: 4}}]
  localQueues: [{name: a-queue}]
---
""" + HEAD + """kind: Team
metadata: {name: b}
spec:
  namespaces: [research]
  quotas: [{flavor: cpu, resources: {cpu: 2}}]
  localQueues: [{name: b-queue}]
---
""" + HEAD + """kind: Team
metadata: {name: c}
spec:
  quotas: [{flavor: cpu, resources: {cpu: 2}}]
"""


def test_a_shared_namespace_is_created_once_and_selected_by_name(tmp_path: Path) -> None:
    spec = _write(tmp_path, SHARED)
    manifests = compile_platform(spec)["dev"]
    namespaces = {name: m["metadata"]["labels"] for name, m in _by(manifests, "Namespace").items()}
    assert list(namespaces) == ["research", "a", "c"]
    # no team label (it cannot name two teams), the teams' own labels kept
    assert namespaces["research"] == {"app.kubernetes.io/managed-by": "kueueplan", "tier": "gpu",
                                      "kubernetes.io/metadata.name": "research"}
    assert namespaces["a"]["kueueplan.io/team"] == "a"
    queues = _by(manifests, "ClusterQueue")
    assert queues["a"]["spec"]["namespaceSelector"] == {"matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["a", "research"]}]}
    assert queues["b"]["spec"]["namespaceSelector"] == {"matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["research"]}]}
    assert queues["c"]["spec"]["namespaceSelector"] == {"matchLabels": {"kueueplan.io/team": "c"}}  # unshared
    cluster = read_cluster(manifests)
    picked = {cq: sorted(ns for ns, labels in namespaces.items()
                         if cluster.cluster_queues[cq].namespace_selector.matches(labels)) for cq in queues}
    assert picked == {"a": ["a", "research"], "b": ["research"], "c": ["c"]}
    local = sorted(_by(manifests, "LocalQueue"))
    assert local == ["a/a-queue", "c/c", "research/a-queue", "research/b-queue"]
    assert _errors(spec) == []


def test_workloads_of_two_teams_in_one_namespace_reach_their_own_queues(tmp_path: Path) -> None:
    jobs = "".join(HEAD + f"kind: Workload\nmetadata: {{name: {team}-job}}\nspec:\n  team: {team}\n  kind: Job\n"
                   f"  namespace: research\n  template: {{image: busybox, resources: {{requests: {{cpu: 2}}}}}}\n"
                   f"  load: [{{runFor: 1m}}]\n---\n" for team in ("a", "b"))
    spec = _write(tmp_path, SHARED, workloads=jobs)
    report = json.loads(CliRunner().invoke(main, ["simulate", str(spec), "--env", "dev", "-o", "json"]).stdout)
    placed = {w["name"]: (w["clusterQueue"], w["state"]) for w in report["workloads"]}
    assert placed == {"research/a-job": ("a", "Finished"), "research/b-job": ("b", "Finished")}


@pytest.mark.parametrize("b_namespace,needle,line", [
    ("[{name: research, create: false}]", "namespace 'research' has create: false here and create: true in team "
                                          "'a'", 13),
    ("[{name: research, labels: {tier: cpu}}]", "namespace 'research' label tier=cpu conflicts with tier=gpu in "
                                                "team 'a'", 13),
])
def test_shared_namespace_conflicts_name_both_teams(tmp_path: Path, b_namespace: str, needle: str, line: int) -> None:
    spec = _write(tmp_path, SHARED.replace("namespaces: [research]", f"namespaces: {b_namespace}"))
    with pytest.raises(KueueplanError) as info:
        compile_platform(spec)
    assert needle in info.value.message
    assert (Path(info.value.file).name, info.value.line) == ("teams.yaml", line)


def test_two_teams_cannot_both_define_a_local_queue_in_a_shared_namespace(tmp_path: Path) -> None:
    spec = _write(tmp_path, SHARED.replace("b-queue", "a-queue"))
    with pytest.raises(KueueplanError) as info:
        compile_platform(spec)
    assert "LocalQueue 'a-queue' is defined twice in namespace 'research' (also by team 'a')" in info.value.message


LEND_ONLY = HEAD + """kind: Team
metadata: {name: ml}
spec:
  cohort: org
  quotas: [{flavor: cpu, resources: {cpu: 2}}]
  preemption: {reclaimWithinCohort: Any}
---
""" + HEAD + """kind: Team
metadata: {name: shared}
spec:
  lendOnly: true
  cohort: org
  quotas: [{flavor: cpu, resources: {cpu: 8}}]
"""


@pytest.mark.parametrize("version", ["v0.10.6", "v0.19.2"])
def test_a_lend_only_queue_has_no_selector_namespaces_or_local_queues(tmp_path: Path, version: str) -> None:
    spec = _write(tmp_path, LEND_ONLY, f"{{kueueVersion: {version}}}",
                  _job("big", "ml", cpu=6, extra="  load: [{runFor: 1m}]\n"))
    manifests = compile_platform(spec)["dev"]
    shared = _by(manifests, "ClusterQueue")["shared"]
    assert "namespaceSelector" not in shared["spec"]
    assert list(_by(manifests, "Namespace")) == ["ml"]
    assert list(_by(manifests, "LocalQueue")) == ["ml/ml"]
    assert _errors(spec) == []
    # its quota is lent: the 6-CPU job of a 2-CPU team borrows 4 of shared's 8
    report = json.loads(CliRunner().invoke(main, ["simulate", str(spec), "--env", "dev", "-o", "json"]).stdout)
    assert [(w["name"], w["clusterQueue"], w["state"]) for w in report["workloads"]] == [("ml/big", "ml", "Finished")]


@pytest.mark.parametrize("extra,needle,line", [
    ("  namespaces: [shared]\n", "a team whose ClusterQueues are all lendOnly has no namespaces", 16),
    ("  localQueues: [main]\n", "every ClusterQueue of the team is lendOnly", 16),
    ("  namespaceSelector: {}\n", "a lendOnly team has no namespaceSelector", 12),  # the model's check: at spec
])
def test_lend_only_mistakes(tmp_path: Path, extra: str, needle: str, line: int) -> None:
    spec = _write(tmp_path, LEND_ONLY + extra)
    with pytest.raises(KueueplanError) as info:
        compile_platform(spec)
    assert needle in info.value.message
    assert (Path(info.value.file).name, info.value.line) == ("teams.yaml", line)


def test_a_workload_of_a_lend_only_team_is_refused_at_its_team(tmp_path: Path) -> None:
    job = _job("big", "ml", extra="  load: [{runFor: 1m}]\n").replace("team: ml\n", "team: shared\n")
    spec = _write(tmp_path, LEND_ONLY, "{}", job.replace("  namespace: ml\n", ""))
    with pytest.raises(KueueplanError) as info:
        compile_platform(spec)
    assert "team 'shared' has no namespace to submit from (a lend-only team only lends its quota)" \
        in info.value.message
    assert info.value.hint == "name a team with a LocalQueue"


def test_a_lend_only_entry_with_a_selector_is_refused_at_the_entry(tmp_path: Path) -> None:
    teams = DEV_PROD.replace("  - name: ml-dev\n", "  - name: ml-dev\n    lendOnly: true\n    namespaceSelector: {}\n")
    teams = teams.replace("  - {name: dev, clusterQueue: ml-dev, namespaces: [ml-ci]}\n", "")
    spec = _write(tmp_path, teams)
    with pytest.raises(KueueplanError) as info:
        compile_platform(spec)
    assert "a lendOnly ClusterQueue has no namespaceSelector" in info.value.message
    assert (Path(info.value.file).name, info.value.line) == ("teams.yaml", 15)


def test_overlays_merge_cluster_queues_by_name(tmp_path: Path) -> None:
    overlay = ("{overlays: {Team: {ml: {clusterQueues: [{name: ml-dev, quotas: [{flavor: cpu, resources: "
               "{cpu: 6}}]}, {name: ml-extra, lendOnly: true}]}}}}")
    spec = _write(tmp_path, DEV_PROD, overlay)
    queues = _by(compile_platform(spec)["dev"], "ClusterQueue")
    assert list(queues) == ["ml-prod", "ml-dev", "ml-extra"]
    assert queues["ml-prod"]["spec"]["preemption"] == {"withinClusterQueue": "LowerPriority"}  # untouched
    assert queues["ml-dev"]["spec"]["resourceGroups"][0]["flavors"][0]["resources"] == [
        {"name": "cpu", "nominalQuota": "6"}]
    assert "cohort" not in queues["ml-dev"]["spec"]  # the base entry's null is kept
    assert "namespaceSelector" not in queues["ml-extra"]["spec"]


def test_an_overlay_mistake_in_an_entry_points_at_the_overlay(tmp_path: Path) -> None:
    overlay = "\n  overlays:\n    Team:\n      ml:\n        clusterQueues:\n        - name: ml-dev\n" \
              "          quotas: [{flavor: gpu, resources: {cpu: 6}}]\n"
    spec = _write(tmp_path, DEV_PROD, overlay)
    with pytest.raises(KueueplanError) as info:
        compile_platform(spec)
    assert "flavor 'gpu' does not exist" in info.value.message
    assert (Path(info.value.file).name, info.value.line) == ("env.yaml", 10)


@pytest.mark.parametrize("teams", [DEV_PROD, SHARED, LEND_ONLY], ids=["dev-prod", "shared-namespace", "lend-only"])
def test_queue_objects_pass_todays_crds_strictly(tmp_path: Path, teams: str, shared_dir: Path) -> None:
    manifests = compile_platform(_write(tmp_path, teams, "{kueueVersion: v0.19.2}"))["dev"]
    kueue = [m for m in manifests if m["apiVersion"].startswith("kueue.x-k8s.io/")]
    assert {m["kind"] for m in kueue} >= {"ClusterQueue", "LocalQueue"}
    assert [(m["kind"], m["metadata"]["name"], crd_errors(shared_dir, m)) for m in kueue if crd_errors(shared_dir, m)] == []
