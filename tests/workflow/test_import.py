"""`kueueplan import`: manifests -> spec, and the round trip build(import(x)) == x on the tutorials' YAML."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.compile import compile_platform
from kueueplan.workflow.importer import IMPORTED_KINDS, import_manifests, write_spec
from kueueplan.workflow.manifests import changed_paths, index, load_documents

SEEDS = ("upstream", "seeds")
# One variant per tutorial folder (some folders hold two versions of the same objects).
ROUND_TRIPS = {
    "kueue-preemption": None,  # the whole folder but the earlier gpu-flavor variant (see preemption_dir)
    "oke": ["cq-team-a.yaml", "cq-team-b.yaml", "kueue-resources-priorityscheduling.yaml",
            "ray-job.ps-dev-pytorch-distributed-training.yaml", "ray-job.ps-prod-pytorch-distributed-training.yaml",
            "ray-job.pytorch-team-a.yaml", "ray-job.pytorch-team-b.yaml"],
    "skypilot": ["single-clusterqueue-setup.yaml", "priority-classes.yaml", "kueue-pod.yaml"],
    "skypilot-no-preemption": ["single-clusterqueue-setup.no-preemption.c45a1354.yaml", "priority-classes.yaml"],
}


def _inputs(name: str, shared: Path, preemption_dir: Path) -> list[Path]:
    files = ROUND_TRIPS[name]
    if files is None:
        return [preemption_dir]
    folder = shared.joinpath(*SEEDS, name.split("-")[0])
    return [folder / f for f in files]


def _round_trip(inputs: list[Path], out: Path) -> tuple[dict, dict]:
    docs = load_documents(inputs)
    write_spec(import_manifests(docs), out)
    [(env, built)] = compile_platform(out).items()
    assert env == "default"
    original = {k: v for k, v in index(docs).items() if k[0] in IMPORTED_KINDS}
    return original, index(built)


@pytest.mark.parametrize("name", sorted(ROUND_TRIPS))
def test_build_of_import_equals_the_tutorial_yaml(name: str, shared_dir: Path, preemption_dir: Path,
                                                  tmp_path: Path) -> None:
    original, rebuilt = _round_trip(_inputs(name, shared_dir, preemption_dir), tmp_path / "spec")
    assert sorted(original) == sorted(rebuilt)
    diffs = {k: changed_paths(original[k], rebuilt[k]) for k in original if original[k] != rebuilt[k]}
    assert diffs == {}
    kinds = {k[0] for k in original}
    assert {"ClusterQueue", "LocalQueue", "ResourceFlavor"} <= kinds


def test_same_generate_name_in_two_namespaces_becomes_two_workloads(shared_dir: Path) -> None:
    folder = shared_dir.joinpath(*SEEDS, "oke")
    result = import_manifests(load_documents([folder]))
    assert result.skipped == []
    names = {(d["metadata"]["name"], d["spec"]["generateName"]) for path, docs in result.files.items()
             if path.startswith("workloads/") for d in docs}
    assert {("pytorch-text-classifier", "pytorch-text-classifier-"),
            ("pytorch-text-classifier-team-b", "pytorch-text-classifier-")} <= names


def _as_kubectl_export(docs: list[dict]) -> dict:
    items = []
    for i, d in enumerate(docs):
        d = copy.deepcopy(d)
        d["metadata"].update(uid=f"uid-{i}", resourceVersion=str(100 + i), generation=1,
                             creationTimestamp="2025-01-01T00:00:00Z",
                             managedFields=[{"manager": "kubectl", "operation": "Apply"}],
                             annotations={"kubectl.kubernetes.io/last-applied-configuration": "{}"})
        if d["kind"] == "ClusterQueue":
            d["metadata"]["finalizers"] = ["kueue.x-k8s.io/resource-in-use"]
            d["status"] = {"admittedWorkloads": 1, "conditions": [{"type": "Active", "status": "True"}]}
        items.append(d)
    return {"apiVersion": "v1", "kind": "List", "items": items}


def test_kubectl_export_imports_like_the_hand_written_files(preemption_dir: Path, tmp_path: Path) -> None:
    plain = [d.data for d in load_documents([preemption_dir])]
    export = tmp_path / "export.yaml"
    export.write_text(yaml.safe_dump(_as_kubectl_export(plain)))
    assert import_manifests(load_documents([export])).files == import_manifests(plain).files
    original, rebuilt = _round_trip([export], tmp_path / "spec")
    assert original == rebuilt


def test_cli_import_writes_files_and_refuses_to_overwrite(preemption_dir: Path, tmp_path: Path) -> None:
    out_dir = tmp_path / "spec"
    runner = CliRunner()
    res = runner.invoke(main, ["import", str(preemption_dir), "-o", str(out_dir), "--env", "prod"])
    assert res.exit_code == 0, res.output
    assert (out_dir / "teams" / "team-a-cq.yaml").is_file() and (out_dir / "env-prod.yaml").is_file()
    assert "skipped: RoleBinding team-a/edit" in res.output
    team = yaml.safe_load((out_dir / "teams" / "team-b-cq.yaml").read_text())
    assert team["spec"]["quotas"][0] == {"flavor": "gpu-flavor", "resources": {
        "nvidia.com/gpu": {"nominalQuota": "0", "borrowingLimit": "4"}}}
    again = runner.invoke(main, ["import", str(preemption_dir), "-o", str(out_dir)])
    assert again.exit_code == 2 and "--force" in again.output
    assert runner.invoke(main, ["build", str(out_dir), "-o", str(tmp_path / "gen")]).exit_code == 0


def test_duplicate_objects_in_the_input_are_a_clear_error(shared_dir: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["import", str(shared_dir.joinpath(*SEEDS, "skypilot")), "-o", str(tmp_path)])
    assert res.exit_code == 2
    assert "defined twice" in res.output and "Traceback" not in res.output


@pytest.mark.parametrize("text, message", [
    ("apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: x, labels: {kueue.x-k8s.io/queue-name: q}}\n"
     "spec:\n  rayClusterSpec:\n    headGroupSpec: [1, 2]\n", "unexpected shape"),
    ("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: x}\nspec:\n  resourceGroups: 5\n",
     "resourceGroups must be a list"),
    ("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: [1]\nspec: {clusterQueue: x}\n",
     "metadata"),
])
def test_malformed_objects_are_clean_errors_with_the_file(text: str, message: str, tmp_path: Path) -> None:
    (tmp_path / "q.yaml").write_text("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
                                     "metadata: {name: q, namespace: default}\nspec: {clusterQueue: x}\n---\n"
                                     "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: x}\n"
                                     "spec: {namespaceSelector: {}}\n")
    (tmp_path / "bad.yaml").write_text(text)
    res = CliRunner().invoke(main, ["import", str(tmp_path), "-o", str(tmp_path / "out")])
    assert res.exit_code == 2, res.output
    assert message in res.output and "bad.yaml" in res.output and "Traceback" not in res.output
