"""`kueueplan diff`: semantic object comparison, quota changes, the simulation delta, --base and exit codes."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.report.diff import COMMENT_MARKER
from kueueplan.workflow.diff import family, p95, workload_deltas
from kueueplan.workflow.manifests import index, load_documents

SPEC = """\
apiVersion: kueueplan.io/v1alpha1
kind: Environment
metadata: {name: prod}
---
apiVersion: kueueplan.io/v1alpha1
kind: ResourceFlavor
metadata: {name: a100}
spec:
  nodeLabels: {gpu: a100}
---
apiVersion: kueueplan.io/v1alpha1
kind: Priority
metadata: {name: prod}
spec: {value: 1000}
---
apiVersion: kueueplan.io/v1alpha1
kind: Team
metadata: {name: vision}
spec:
  cohort: research
  quotas:
  - flavor: a100
    resources: {cpu: 64, memory: 256Gi, nvidia.com/gpu: GPUS}
---
apiVersion: kueueplan.io/v1alpha1
kind: Workload
metadata: {name: nightly-train}
spec:
  team: vision
  kind: RayJob
  priority: prod
  image: rayproject/ray:2.9.0
  entrypoint: python train.py
  head:
    resources: {requests: {cpu: 2, memory: 8Gi}}
  workers:
  - groupName: gpu
    replicas: 4
    resources: {requests: {cpu: 8, memory: 32Gi, nvidia.com/gpu: 1}}
  load:
  - at: 0s
    runFor: 30m
"""


def _spec(dest: Path, gpus: int) -> Path:
    dest.mkdir(parents=True)
    (dest / "platform.yaml").write_text(SPEC.replace("GPUS", str(gpus)))
    return dest


def test_quota_cut_making_prod_rayjob_inadmissible_fails_with_markdown_report(tmp_path: Path) -> None:
    base, head = _spec(tmp_path / "base", 8), _spec(tmp_path / "head", 2)
    out = CliRunner().invoke(main, ["diff", str(base), str(head), "-o", "markdown"])
    assert out.exit_code == 1, out.output
    md = out.output
    assert md.startswith(COMMENT_MARKER)
    assert "can no longer run: `vision/nightly-train` (inadmissible, prod)" in md  # the summary line
    row = next(line for line in md.splitlines() if line.startswith("| ❌") and "`vision/nightly-train`" in line)
    # the queue, the workload, what happened, and the resource with before -> after
    assert "`vision`" in row and "inadmissible" in row.lower()
    assert "nvidia.com/gpu on a100: nominal 8 → 2" in row
    quota_row = next(line for line in md.splitlines() if line.startswith("| vision |"))
    assert quota_row.split("|")[4:8] == [" nvidia.com/gpu ", " nominal ", " 8 ", " 2 "]
    assert "```mermaid" in md and "class cq_vision changed" in md


def test_quota_raise_is_not_blocking_and_json_lists_changes(tmp_path: Path) -> None:
    base, head = _spec(tmp_path / "base", 8), _spec(tmp_path / "head", 16)
    out = CliRunner().invoke(main, ["diff", str(base), str(head), "-o", "json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    [env] = data["environments"]
    assert data["blocking"] == [] and env["simulated"] is True
    [quota] = env["quotas"]
    assert (quota["owner"], quota["team"], quota["resource"]) == ("vision", "vision", "nvidia.com/gpu")
    assert quota["changes"] == [{"limit": "nominal", "before": "8", "after": "16"}]


def test_semantic_equality_ignores_format_version_quantity_spelling_and_server_fields(
        preemption_dir: Path, tmp_path: Path) -> None:
    head = tmp_path / "head"
    shutil.copytree(preemption_dir, head)
    cq = yaml.safe_load((head / "team-b-cq.yaml").read_text())
    cq["apiVersion"] = "kueue.x-k8s.io/v1beta2"  # conversion: cohort -> cohortName
    cq["spec"]["cohortName"] = cq["spec"].pop("cohort")
    cq["spec"]["resourceGroups"].reverse()  # group order carries no meaning
    cq["metadata"].update(resourceVersion="123", uid="x", managedFields=[{"manager": "kubectl"}])
    cq["status"] = {"pendingWorkloads": 3}
    (head / "team-b-cq.yaml").write_text(json.dumps(cq))  # JSON is YAML too: formatting differs entirely
    shared = yaml.safe_load((head / "shared-cq.yaml").read_text())
    shared["spec"]["resourceGroups"][0]["flavors"][0]["resources"][1]["nominalQuota"] = "68719476736"  # = 64Gi
    (head / "shared-cq.yaml").write_text(yaml.safe_dump(shared))
    assert index(load_documents([preemption_dir])) == index(load_documents([head]))
    out = CliRunner().invoke(main, ["diff", str(preemption_dir), str(head)])
    assert out.exit_code == 0 and "no changes" in out.output


def test_manifest_diff_reports_quota_and_object_changes(preemption_dir: Path, tmp_path: Path) -> None:
    head = tmp_path / "head"
    shutil.copytree(preemption_dir, head)
    text = (head / "team-a-cq.yaml").read_text().replace('nominalQuota: "4"', 'nominalQuota: "2"')
    (head / "team-a-cq.yaml").write_text(text)
    (head / "team-b-rb.yaml").unlink()
    out = CliRunner().invoke(main, ["diff", str(preemption_dir), str(head)])
    # The tutorial's RayClusters are the load (second edition): team-a's prod cluster needs 4 GPUs, now 2.
    assert out.exit_code == 1, out.output
    assert ("team-a/raycluster-prod (team-a-cq): inadmissible: Admitted (waited 0s) → Inadmissible "
            "[nvidia.com/gpu on gpu-flavor: nominal 4 → 2]") in out.output
    assert "needs 4 nvidia.com/gpu (small-group-test 2x2) but ClusterQueue team-a-cq can use at most 2" in out.output
    assert "quota ClusterQueue team-a-cq: nvidia.com/gpu on gpu-flavor: nominal 4 → 2" in out.output
    assert "- RoleBinding team-b/edit" in out.output
    assert "~ ClusterQueue team-a-cq" in out.output


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@e", "HOME": str(repo), "PATH": "/usr/bin:/bin"})


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_base_ref_compares_same_path_at_another_commit(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _spec(repo / "platform", 8)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    (repo / "platform" / "platform.yaml").write_text(SPEC.replace("GPUS", "2"))
    out = CliRunner().invoke(main, ["diff", "--base", "HEAD", str(repo / "platform"), "-o", "json"])
    assert out.exit_code == 1, out.output
    data = json.loads(out.output)
    assert data["base"].endswith("@HEAD")
    assert any("vision/nightly-train inadmissible" in b for b in data["blocking"])
    bad = CliRunner().invoke(main, ["diff", "--base", "no-such-ref", str(repo / "platform")])
    assert bad.exit_code == 2 and "not a commit" in bad.output


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    out = CliRunner().invoke(main, ["diff", str(tmp_path)])
    assert out.exit_code == 2 and "BASE and HEAD" in out.output


def _result(*workloads: dict, events: list | None = None) -> dict:
    return {"scenario": "s", "workloads": list(workloads), "events": events or []}


def _wl(name: str, state: str = "Finished", created: float = 0, admitted: float | None = 0) -> dict:
    return {"name": name, "clusterQueue": "cq", "state": state, "createdAt": created, "admittedAt": admitted,
            "message": ""}


def test_workload_deltas_classify_changes() -> None:
    before = _result(_wl("ns/a"), _wl("ns/b"), _wl("ns/c", admitted=10), _wl("ns/d"))
    after = _result(_wl("ns/a", "Inadmissible", admitted=None), _wl("ns/b", "Pending", admitted=None),
                    _wl("ns/c", admitted=600), _wl("ns/d", admitted=0),
                    events=[{"at": 5, "type": "Preempted", "workload": "ns/d", "by": "ns/x"}])
    deltas = {d.workload: d for d in workload_deltas(before, after)}
    assert deltas["ns/a"].change == "inadmissible" and deltas["ns/a"].blocking
    assert deltas["ns/b"].change == "never admitted" and deltas["ns/b"].blocking
    assert deltas["ns/c"].change == "waits longer" and not deltas["ns/c"].blocking
    # one copy: by how much
    assert (deltas["ns/c"].before, deltas["ns/c"].after) == ("waited 10s", "waits 10m (+9m50s)")
    assert deltas["ns/d"].change == "preempted" and deltas["ns/d"].after == "preempted 1x"
    # Already inadmissible before: not news, not blocking.
    assert workload_deltas(after, after) == []


def test_p95_and_family() -> None:
    assert p95([float(i) for i in range(1, 21)]) == 19.0
    assert p95([7.0]) == 7.0
    assert family("ns/train-12") == "ns/train" and family("ns/train") == "ns/train"


def test_fields_the_object_model_does_not_read_still_count() -> None:
    cq = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "q"},
          "spec": {"namespaceSelector": {}, "admissionScope": {"admissionMode": "UsageBasedAdmissionFairSharing"}}}
    changed = {**cq, "spec": {**cq["spec"], "admissionScope": {"admissionMode": "NoAdmissionFairSharing"}}}
    key = ("ClusterQueue", "", "q")
    assert index([cq])[key] != index([changed])[key]
    from kueueplan.workflow.manifests import changed_paths
    assert changed_paths(index([cq])[key], index([changed])[key]) == ["otherSpec.admissionScope.admissionMode"]


def test_a_configuration_change_is_shown_field_by_field_with_its_consequence(tmp_path: Path) -> None:
    """Raising prod's waitForPodsReady timeout from 10m to 30m: the diff names the field inside Kueue's
    ConfigMap, and the simulation shows the notebook waiting 20 minutes longer for the H100 the broken job holds."""
    repo = Path(__file__).resolve().parents[2]
    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(repo / "environments", base)
    shutil.copytree(repo / "environments", head)
    env = head / "env-prod.yaml"
    env.write_text(env.read_text().replace("      timeout: 10m\n", "      timeout: 30m\n"))
    out = CliRunner().invoke(main, ["diff", str(base), str(head), "--env", "prod", "-o", "json"])
    data = json.loads(out.output)
    [prod] = data["environments"]
    changes = [c for c in prod["objects"] if "kueue-manager-config" in json.dumps(c)]
    assert changes and "data.controller_manager_config.yaml.waitForPodsReady.timeout" in json.dumps(changes)
    assert out.exit_code == 1  # the notebook's `admittedWithin: 10m` breaks
