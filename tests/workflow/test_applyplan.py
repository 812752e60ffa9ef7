"""`diff` plans the apply: what Argo CD / Flux will do with the change, on the demo platform (a multi-file spec
with declared load, and its rendered gen/), exit 1 unless the PlatformPolicy's `apply:` section allows it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kueueplan.workflow.applyplan import plan_env
from kueueplan.workflow.diff import diff_sides
from kueueplan.workflow.simulation import simulate_side
from kueueplan.workflow.sources import load_side

REPO = Path(__file__).resolve().parents[2]


def _copy(tmp: Path, name: str) -> Path:
    dest = tmp / name / "environments"
    shutil.copytree(REPO / "environments", dest)
    return dest


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _remove_team_b(spec: Path) -> None:
    teams = spec / "teams.yaml"
    docs = teams.read_text().split("\n---\n")
    teams.write_text("\n---\n".join(d for d in docs if "name: team-b\n" not in d))
    (spec / "workloads" / "team-b.yaml").unlink()
    (spec / "workloads" / "team-b-adhoc.yaml").unlink(missing_ok=True)
    env = spec / "env-dev.yaml"
    text = env.read_text()
    env.write_text(text[:text.index("      team-b:")] + text[text.index("      shared:"):])


def _steps(base: Path, head: Path, env: str = "prod", allow: set[str] | None = None):
    report = diff_sides(load_side(base, env), load_side(head, env), simulate_side,
                        (lambda _env: allow) if allow else None)
    return report, [s for e in report.envs for s in e.apply]


def test_removing_a_team_plans_namespace_and_queue_deletion(tmp_path: Path) -> None:
    base, head = _copy(tmp_path, "base"), _copy(tmp_path, "head")
    _remove_team_b(head)
    report, steps = _steps(base, head)
    assert report.exit_code == 1
    by_rule = {s.rule: s for s in steps}
    assert set(by_rule) == {"KP700", "KP706"}
    assert by_rule["KP700"].key == ("Namespace", "", "team-b")
    assert "team-b/sandbox" in by_rule["KP700"].message  # the RayCluster the simulation admitted
    assert by_rule["KP706"].key == ("ClusterQueue", "", "team-b")
    # The platform may allow both: then the same plan is shown, and nothing blocks.
    report, steps = _steps(base, head, allow={"namespaceDeletion", "queueDeletion"})
    assert report.exit_code == 0 and {s.rule for s in steps} == {"KP700", "KP706"}
    assert all(s.allowed for s in steps)


def test_cutting_quota_under_running_work_blocks(tmp_path: Path) -> None:
    base, head = _copy(tmp_path, "base"), _copy(tmp_path, "head")
    # team-b's always-on RayCluster and its pipelines use up to 24 CPUs; nominal 16 -> 4.
    _edit(head / "teams.yaml", "        nominalQuota: 16\n        borrowingLimit: 16",
          "        nominalQuota: 4\n        borrowingLimit: 16")
    report, steps = _steps(base, head)
    over = [s for s in steps if s.rule == "KP703"]
    assert report.exit_code == 1 and over
    assert over[0].key == ("ClusterQueue", "", "team-b") and "cpu-standard/cpu" in over[0].message
    assert "drops 16 -> 4" in over[0].message and "borrowed from cohort ml-platform" in over[0].message
    # Raising it never blocks.
    base2, head2 = _copy(tmp_path, "base2"), _copy(tmp_path, "head2")
    _edit(head2 / "teams.yaml", "        nominalQuota: 16\n", "        nominalQuota: 20\n")
    assert not [s for s in _steps(base2, head2)[1] if s.rule == "KP703"]


def test_cutting_the_lenders_makes_borrowers_reclaim_targets(tmp_path: Path) -> None:
    """team-b borrows CPU from the cohort (24 > its 16); shared and team-a lend less: the cohort no longer holds
    what is admitted, and team-b's borrowed work is what reclaiming queues preempt."""
    base, head = _copy(tmp_path, "base"), _copy(tmp_path, "head")
    teams = head / "teams.yaml"
    text = teams.read_text()
    i = text.index("name: shared")
    teams.write_text(text[:i] + text[i:].replace("      cpu: 32\n", "      cpu: 0\n", 1))
    _edit(teams, "  - flavor: cpu-standard\n    resources:\n      cpu: 8\n",
          "  - flavor: cpu-standard\n    resources:\n      cpu: 4\n")
    report, steps = _steps(base, head)
    [cohort] = [s for s in steps if s.rule == "KP703"]
    assert cohort.key == ("Cohort", "", "ml-platform") and "56 -> 20" in cohort.message
    assert "borrowers (team-b)" in cohort.message and report.exit_code == 1


def test_hold_and_drain_and_template_change(tmp_path: Path) -> None:
    base, head = _copy(tmp_path, "base"), _copy(tmp_path, "head")
    _edit(head / "teams.yaml", "  namespaces: [team-b]\n", "  namespaces: [team-b]\n  stopPolicy: HoldAndDrain\n")
    _edit(head / "workloads" / "team-b.yaml", "  image: rayproject/ray:2.46.0-py311\n  rayVersion: 2.46.0\n  head:\n"
          "    resources:\n      requests: {cpu: 1,", "  image: rayproject/ray:2.47.1-py311\n  rayVersion: 2.46.0\n"
          "  head:\n    resources:\n      requests: {cpu: 1,")
    _, steps = _steps(base, head)
    drain = next(s for s in steps if s.rule == "KP704")
    assert drain.key == ("ClusterQueue", "", "team-b") and "team-b/sandbox" in drain.message
    template = next(s for s in steps if s.rule == "KP705")
    assert template.key == ("RayCluster", "team-b", "sandbox") and "image" in template.message
    # `Hold` stops admission without evicting: no KP704.
    head2 = _copy(tmp_path, "head2")
    _edit(head2 / "teams.yaml", "  namespaces: [team-b]\n", "  namespaces: [team-b]\n  stopPolicy: Hold\n")
    assert "KP704" not in {s.rule for s in _steps(base, head2)[1]}


def test_moving_a_local_queue_in_rendered_manifests_is_an_immutable_change(tmp_path: Path) -> None:
    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(REPO / "gen" / "prod", base)
    shutil.copytree(REPO / "gen" / "prod", head)
    _edit(head / "localqueues.yaml", "  clusterQueue: team-b\n", "  clusterQueue: shared\n")
    report = diff_sides(load_side(base), load_side(head), None)
    [step] = [s for e in report.envs for s in e.apply]
    assert step.rule == "KP702" and step.key == ("LocalQueue", "team-b", "pipelines")
    assert "spec.clusterQueue is immutable" in step.message and "kustomize.toolkit.fluxcd.io/force" in step.advice
    assert report.exit_code == 1


def test_a_flux_environment_recreates_a_moved_local_queue(tmp_path: Path) -> None:
    """With `flux:` settings the build marks LocalQueues for Flux's force-recreate, so moving one to another
    ClusterQueue is a recreate, not a stuck sync: the plan says so, and still asks a human (KP702)."""
    base, head = _copy(tmp_path, "base"), _copy(tmp_path, "head")
    for spec in (base, head):
        dev = spec / "env-dev.yaml"
        dev.write_text(dev.read_text() + "  flux:\n    sourceRef: {kind: GitRepository, name: platform}\n")
    _edit(head / "teams.yaml", "  namespaces: [team-b]\n", "  namespaces: [team-b]\n  clusterQueue: team-b-v2\n")
    report = diff_sides(load_side(base, "dev"), load_side(head, "dev"), None)
    [moved] = [s for e in report.envs for s in e.apply if s.rule == "KP702"]
    assert moved.key == ("LocalQueue", "team-b", "pipelines")
    assert moved.message.startswith("spec.clusterQueue is immutable: Flux will recreate it "
                                    "(its kustomize.toolkit.fluxcd.io/force annotation); its admitted workloads")
    assert moved.blocking and report.exit_code == 1
    # Without Flux (the demo's dev is synced by Argo CD only) the same change is rejected at apply.
    plain_base, plain_head = _copy(tmp_path, "plain-base"), _copy(tmp_path, "plain-head")
    _edit(plain_head / "teams.yaml", "  namespaces: [team-b]\n", "  namespaces: [team-b]\n  clusterQueue: team-b-v2\n")
    [rejected] = [s for e in diff_sides(load_side(plain_base, "dev"), load_side(plain_head, "dev"), None).envs
                  for s in e.apply if s.rule == "KP702"]
    assert "the apply is rejected" in rejected.message and "Force=true,Replace=true" in rejected.advice


def test_a_force_replaced_job_is_recreated_and_loses_its_pods(tmp_path: Path) -> None:
    """Argo CD's Force=true,Replace=true on a Job whose immutable selector changes: recreated, pods deleted."""
    job = """apiVersion: batch/v1
kind: Job
metadata:
  name: etl
  namespace: team-a
  labels: {kueue.x-k8s.io/queue-name: default}
  annotations: {argocd.argoproj.io/sync-options: "Force=true,Replace=true"}
spec:
  completionMode: NonIndexed
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, resources: {requests: {cpu: "1"}}}]
"""
    base, head = tmp_path / "base", tmp_path / "head"
    for folder, mode in ((base, "NonIndexed"), (head, "Indexed")):
        folder.mkdir()
        (folder / "job.yaml").write_text(job.replace("NonIndexed", mode))
    [step] = [s for e in diff_sides(load_side(base), load_side(head), None).envs for s in e.apply
              if s.rule == "KP702"]
    assert step.key == ("Job", "team-a", "etl")
    assert "spec.completionMode is immutable: Argo CD will recreate it" in step.message
    assert "its pods are deleted" in step.message


def test_unchanged_platform_plans_nothing() -> None:
    docs = list(load_side(REPO / "environments", "prod").envs["prod"])
    assert plan_env("prod", docs, docs) == []


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd, check=True,
                   capture_output=True, timeout=60)


def test_a_pull_request_cannot_allow_its_own_apply(tmp_path: Path) -> None:
    """With --base, the apply policy is read at the base commit: editing policies/ in the PR changes nothing."""
    repo = tmp_path / "repo"
    spec = _copy(tmp_path, "repo")
    shutil.copytree(REPO / "policies", repo / "policies")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    _remove_team_b(spec)
    policy = repo / "policies" / "platform.yaml"
    policy.write_text(policy.read_text() + "  apply:\n    allow: [namespaceDeletion, queueDeletion]\n")
    cmd = [sys.executable, "-m", "kueueplan", "diff", "--base", "HEAD", "environments", "--env", "prod"]
    done = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    assert "KP700 Namespace team-b" in done.stdout
    # Once the policy is merged (it is in the base), the same change passes.
    _git(repo, "add", "policies")
    _git(repo, "commit", "-qm", "allow")
    done = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "(allowed: namespaceDeletion)" in done.stdout


def test_apply_section_is_validated(tmp_path: Path) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text("apiVersion: policy.kueueplan.io/v1alpha1\nkind: PlatformPolicy\nspec:\n"
                      "  apply:\n    allow: [namespaceDeletions]\n")
    from kueueplan.errors import KueueplanError
    from kueueplan.validate.policy import load_policies

    with pytest.raises(KueueplanError) as err:
        load_policies([policy], [])
    assert "apply.allow" in err.value.message and err.value.line == 5


def test_check_with_base_plans_the_apply(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    spec = _copy(tmp_path, "repo")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    _edit(spec / "teams.yaml", "        nominalQuota: 16\n", "        nominalQuota: 4\n")
    from kueueplan.report.check import as_json
    from kueueplan.workflow.check import run_check
    import json

    report = run_check(spec, None, base_ref="HEAD", policies=[])
    data = json.loads(as_json(report))
    assert report.exit_code == 1 and [s["rule"] for s in data["apply"]] == ["KP703"]
    assert "1 apply step(s) the platform policy does not allow" in data["problems"]
    assert run_check(spec, None, simulate=False, policies=[]).apply == []  # without --base: no plan


def test_markdown_plan_escapes_what_the_pull_request_wrote(tmp_path: Path) -> None:
    """Names come from the PR's YAML: in the PR comment they are text, never markup."""
    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(REPO / "gen" / "prod", base)
    shutil.copytree(REPO / "gen" / "prod", head)
    hostile = "x<img src=a onerror=alert(1)>[y](https://evil)`z`|w"
    with (base / "namespaces.yaml").open("a") as f:
        f.write(f"---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: {json.dumps(hostile)}\n")
    from kueueplan.report.diff import markdown

    text = markdown(diff_sides(load_side(base), load_side(head), None))
    row = next(line for line in text.splitlines() if line.startswith("|") and "KP700" in line)
    # The name is one code span (longer fence than its own backticks): no HTML, link or cell break.
    assert "| ``Namespace x<img src=a onerror=alert(1)>[y](https://evil)`z`\\|w`` |" in row
    assert row.count(" | ") == 4
    # the comment's first line says it as check does ("the apply would 1x do what ..." before)
    assert "❌ **This change blocks:** 1 apply step(s) the platform policy does not allow (KP700)." in text
