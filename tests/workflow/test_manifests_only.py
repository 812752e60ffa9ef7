"""The manifests-only workflow, first-class beside the spec: `simulate`, `check` and `diff` on a repository of
plain Kueue/KubeRay YAML (tests/corpus/ml-platform, shaped like a team's kustomize repository), and on
`kustomize build` output piped to stdin."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kueueplan.cli import main

PLATFORM = Path(__file__).resolve().parents[1] / "corpus" / "ml-platform"


def invoke(args: list[str], stdin: str | None = None) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, args, input=stdin)
    return res.exit_code, res.stdout, res.stderr


def kustomize_build(folder: Path) -> str:
    """What `kustomize build` prints for this repository: its resources, one stream, `---` between objects."""
    import yaml

    resources = yaml.safe_load((folder / "kustomization.yaml").read_text())["resources"]
    return "".join("---\n" + (folder / r).read_text() for r in resources)


@pytest.fixture
def quota_cut(tmp_path: Path) -> tuple[Path, Path]:
    """BASE and HEAD of a pull request that cuts team-ml's on-demand A100 quota from 4 to 2."""
    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(PLATFORM, base)
    shutil.copytree(PLATFORM, head)
    cqs = head / "kueue" / "cluster-queues.yaml"
    text = cqs.read_text()
    assert text.count("nominalQuota: 4\n") == 1
    cqs.write_text(text.replace("nominalQuota: 4\n", "nominalQuota: 2\n"))
    return base, head


def test_simulate_a_manifest_folder_runs_its_workloads_as_the_load() -> None:
    code, out, err = invoke(["simulate", str(PLATFORM), "-o", "json"])
    assert code == 0, err
    data = json.loads(out)
    got = {w["name"]: (w["clusterQueue"], w["state"], w["createdAt"], w["finishedAt"]) for w in data["workloads"]}
    assert got == {
        "team-ml/preprocess-shards": ("ml-low", "Finished", 0, 1200),  # kueueplan.io/run-for: 20m
        "team-ml/llm-finetune": ("ml-high", "Admitted", 0, None),  # a RayCluster holds its quota
        "team-vision/detector-train-1": ("vision", "Finished", 0, 3600),  # kueueplan.io/count: 3, 2 L4s
        "team-vision/detector-train-2": ("vision", "Finished", 0, 3600),
        "team-vision/detector-train-3": ("vision", "Finished", 0, 7200),
        "team-ml/nightly-eval": ("ml-low", "Finished", 600, 2400),  # arrive-at 10m, run-for 30m
        # a Deployment is load too (one Workload per pod), but v0.19's default install leaves its integration off
        "team-vision/detector-inference-0": (None, "Inadmissible", 0, None),
        "team-vision/detector-inference-1": (None, "Inadmissible", 0, None),
    }
    assert [w["name"] for w in data["workloads"]][:2] == ["team-ml/preprocess-shards", "team-ml/llm-finetune"]
    assert data["warnings"] == [
        f"Deployment team-vision/detector-inference-{i} is not managed by Kueue (integration deployment is not "
        "enabled in integrations.frameworks): it holds no quota and has no events" for i in (0, 1)]


def test_simulate_stdin_equals_the_folder() -> None:
    folder = json.loads(invoke(["simulate", str(PLATFORM), "-o", "json"])[1])
    code, out, err = invoke(["simulate", "-", "-o", "json"], stdin=kustomize_build(PLATFORM))
    assert code == 0, err
    piped = json.loads(out)
    # kustomize's resource order differs from sorted paths: compare outcomes per workload
    assert {w["name"]: w["state"] for w in piped["workloads"]} == {w["name"]: w["state"] for w in folder["workloads"]}
    assert piped["scenario"] == "<stdin>"


def test_simulate_stdin_with_nothing_is_exit_2() -> None:
    code, _, err = invoke(["simulate", "-"], stdin="# nothing here\n")
    assert code == 2 and "no Kubernetes objects on standard input" in err


def test_check_a_manifests_only_repository(tmp_path: Path) -> None:
    code, out, err = invoke(["check", str(PLATFORM), "--no-policies"])
    assert code == 0, out + err
    assert "simulate  " in out and "8 workload(s)" in out and "result: ok" in out
    code, out, err = invoke(["check", "-", "--no-policies", "-o", "json"], stdin=kustomize_build(PLATFORM))
    assert code == 0, out + err
    assert json.loads(out)["ok"] is True


def test_check_takes_the_kueue_release_of_plain_manifests() -> None:
    """The corpus is v1beta1 YAML of a cluster on an older Kueue: on the newest release every object is
    deprecated (KP207), on v0.14 (the last that serves v1beta1 as the storage version) none is. `validate` and
    `simulate` had --kueue-version; `check`, the CI command, had no way to say it."""
    rules = lambda out: {f["rule"] for f in json.loads(out)["findings"]}  # noqa: E731
    code, out, err = invoke(["check", str(PLATFORM), "--no-policies", "--fail-on", "warning", "-o", "json"])
    assert code == 1 and "KP207" in rules(out), out + err
    code, out, err = invoke(["check", str(PLATFORM), "--no-policies", "--fail-on", "warning", "-o", "json",
                             "--kueue-version", "v0.14"])
    assert "KP207" not in rules(out) and rules(out) == {"KP460"}, out + err  # a real finding stays
    code, _, err = invoke(["check", str(Path(__file__).resolve().parents[2] / "environments"),
                           "--kueue-version", "v0.14"])
    assert code == 2 and "Environment (spec.kueueVersion)" in err


def test_check_keeps_its_findings_when_the_simulation_cannot_read_the_input(tmp_path: Path) -> None:
    """A quota that is not a quantity is KP201 at its line (exit 1). The simulation cannot run on it; check
    ended with exit 2 and the simulator's message at the object's first line, the findings dropped."""
    repo = tmp_path / "repo"
    shutil.copytree(PLATFORM, repo)
    cqs = repo / "kueue" / "cluster-queues.yaml"
    text = cqs.read_text()
    assert text.count("nominalQuota: 4\n") == 1
    cqs.write_text(text.replace("nominalQuota: 4\n", "nominalQuota: 4 GPUs\n"))
    code, out, err = invoke(["check", str(repo), "--no-policies", "-o", "json"])
    assert code == 1, out + err
    report = json.loads(out)
    assert "KP201" in {f["rule"] for f in report["findings"]}
    [sim] = report["simulations"]
    assert "'4 GPUs' is not a valid quantity" in sim["skipped"] and sim["workloads"] == 0
    code, out, _ = invoke(["check", str(repo), "--no-policies"])
    assert code == 1 and "skipped: resource nvidia.com/gpu: '4 GPUs' is not a valid quantity" in out


def test_check_on_stdin_fails_on_what_validate_finds() -> None:
    broken = kustomize_build(PLATFORM).replace("clusterQueue: ml-high", "clusterQueue: ml-hihg")
    code, out, _ = invoke(["check", "-", "--no-policies"], stdin=broken)
    assert code == 1 and "ml-hihg" in out


def test_diff_of_a_gpu_quota_cut_names_the_workload_and_the_arithmetic(quota_cut: tuple[Path, Path]) -> None:
    base, head = quota_cut
    code, out, err = invoke(["diff", str(base), str(head)])
    assert code == 1, out + err
    assert ("✗ team-ml/llm-finetune (ml-high): inadmissible: Admitted (waited 0s) → Inadmissible "
            "[nvidia.com/gpu on a100-ondemand: nominal 4 → 2]") in out
    assert ("needs 4 nvidia.com/gpu (a100 2x2) but ClusterQueue ml-high can use at most 2 of flavor a100-ondemand"
            in out)
    # the workload that can no longer run, and what the apply itself does (KP703: admitted work over the new
    # quota, for the ClusterQueue and its cohort)
    assert "3 blocking problem(s)" in out and out.count("apply: KP703") == 2
    code, out, _ = invoke(["diff", str(base), str(head), "-o", "json"])
    assert code == 1 and "team-ml/llm-finetune" in out


def test_diff_without_a_workload_change_exits_0(quota_cut: tuple[Path, Path]) -> None:
    base, head = quota_cut
    cqs = head / "kueue" / "cluster-queues.yaml"
    cqs.write_text(cqs.read_text().replace("nominalQuota: 2\n", "nominalQuota: 6\n", 1))  # a raise, not a cut
    code, out, _ = invoke(["diff", str(base), str(head)])
    assert code == 0, out
    assert "nominal 4 → 6" in out


def test_diff_pending_on_head_blocks(tmp_path: Path) -> None:
    """Admitted on BASE, Pending for ever on HEAD: the PR routes team-ml's batch queue to the on-demand
    ClusterQueue, where the production RayCluster holds every A100 and outranks it."""
    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(PLATFORM, base)
    shutil.copytree(PLATFORM, head)
    lqs = head / "kueue" / "local-queues.yaml"
    lqs.write_text(lqs.read_text().replace("clusterQueue: ml-low", "clusterQueue: ml-high"))
    code, out, _ = invoke(["diff", str(base), str(head)])
    assert code == 1, out
    line = next(x for x in out.splitlines() if "team-ml/nightly-eval" in x)
    assert "never admitted: Finished (waited 0s) → Pending" in line
    assert "insufficient unused quota for nvidia.com/gpu in flavor a100-ondemand, 1 more needed" in line
    # the request beside it (head 2 cpu + worker 4 + the RayJob submitter's 500m; 8Gi + 32Gi + 200Mi)
    assert line.endswith("it requests cpu 6500m, memory 41160Mi, nvidia.com/gpu 1")


def test_simulate_a_built_gen_folder_picks_the_environment() -> None:
    gen = Path(__file__).resolve().parents[2] / "examples" / "rayjob-priority" / "gen"
    code, _, err = invoke(["simulate", str(gen)])
    assert code == 2 and "several environments (raised-quota, tutorial)" in err
    code, out, err = invoke(["simulate", str(gen), "--env", "tutorial", "--kueue-version", "v0.6", "-o", "json"])
    assert code == 0, err
    states = {w["name"]: w["state"] for w in json.loads(out)["workloads"]}
    # the tutorial's build: its two RayJobs (generateName) on a 1-GPU queue, prod first by priority
    assert states == {"default/dev-pytorch-text-classifier-1": "Pending",
                      "default/prod-pytorch-text-classifier-2": "Admitted"}


def test_stdin_is_size_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from kueueplan.kube import yamlio

    monkeypatch.setattr(yamlio, "MAX_FILE_BYTES", 4096)
    code, _, err = invoke(["simulate", "-"], stdin=kustomize_build(PLATFORM))
    assert code == 2 and "standard input is larger than 4096 bytes" in err and "Traceback" not in err
    code, _, err = invoke(["check", "-"], stdin="\x00\x01 not yaml: [")  # garbage: a clean error
    assert code == 2 and "Traceback" not in err


def test_diff_adding_a_job_kueue_does_not_queue_does_not_block(tmp_path: Path) -> None:
    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(PLATFORM, base)
    shutil.copytree(PLATFORM, head)
    (head / "teams" / "ml" / "migrate.yaml").write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: db-migrate, namespace: team-ml}\nspec:\n  template:\n"
        "    spec:\n      restartPolicy: Never\n      containers: [{name: m, image: migrate:1}]\n")
    code, out, _ = invoke(["diff", str(base), str(head)])
    assert code == 0, out
    assert "+ Job team-ml/db-migrate" in out
