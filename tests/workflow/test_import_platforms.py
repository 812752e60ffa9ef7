"""`kueueplan import` on multi-file platforms (tests/corpus): one platform from many files, `--force` that
replaces only what an earlier import wrote, and an import that says what it could not carry (exit 1) instead of
writing a spec that `build` refuses."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from click.testing import CliRunner

from kueueplan.cli import main

CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def invoke(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, list(args))
    return res.exit_code, res.stdout, res.stderr


def test_a_platform_split_over_folders_round_trips(tmp_path: Path) -> None:
    """Flavors, priorities and queues in cluster/, each team's queue and workloads in teams/<team>/."""
    source = CORPUS / "research-cluster"
    code, out, err = invoke("import", str(source), "-o", str(tmp_path / "environments"))
    assert code == 0, out + err
    assert invoke("build", str(tmp_path / "environments"), "-o", str(tmp_path / "gen"))[0] == 0
    code, out, err = invoke("diff", str(source), str(tmp_path / "gen" / "default"))
    assert code == 0, out + err
    assert "no changes" in out
    # several inputs are one platform too, whatever the order
    code, out, err = invoke("import", str(source / "teams"), str(source / "cluster"), "-o", str(tmp_path / "two"))
    assert code == 0, out + err


def test_import_carries_every_kueue_object_and_names_what_is_outside_the_spec(tmp_path: Path) -> None:
    """team-ml's two queues (ml-high, ml-low) share its namespace: one team; the lend-only cpu-reserve stays without
    namespaceSelector; the Deployment is a workload of the pod integration; kueue-manager-config becomes the
    Environment's configuration. Only the Service is outside the spec (not a loss)."""
    code, out, err = invoke("import", str(CORPUS / "ml-platform"), "-o", str(tmp_path / "environments"))
    assert code == 0, out + err
    assert err.splitlines()[:1] == ["skipped: Service team-vision/detector-inference: kueueplan's spec has no "
                                    "Service (outside the spec: apply it as it is)"]
    assert err.splitlines()[1:] == [line for line in err.splitlines()[1:] if line.startswith("note: ")]
    env = yaml.safe_load((tmp_path / "environments" / "env-default.yaml").read_text().split("\n", 1)[1])
    assert env["spec"]["configuration"]["integrations"] == {
        "frameworks": ["batch/job", "ray.io/rayjob", "ray.io/raycluster", "pod"]}
    code, out, err = invoke("build", str(tmp_path / "environments"), "-o", str(tmp_path / "gen"))
    assert code == 0, out + err


def test_references_to_objects_the_input_lacks_are_reported_at_import(tmp_path: Path) -> None:
    source = tmp_path / "in"
    shutil.copytree(CORPUS / "research-cluster", source)
    (source / "cluster" / "priorities.yaml").unlink()
    (source / "cluster" / "flavors.yaml").write_text((source / "cluster" / "flavors.yaml").read_text()
                                                     .split("---")[0])  # h100 only: `cpu` is missing
    code, out, err = invoke("import", str(source), "-o", str(tmp_path / "spec"))
    assert code == 1, out + err
    assert "unresolved: ClusterQueue nlp uses ResourceFlavor cpu, which the input does not contain" in err
    assert "unresolved: Workload pretrain-7b uses WorkloadPriorityClass deadline, which the input does not contain" in err


def _names(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_force_replaces_only_what_import_wrote(tmp_path: Path) -> None:
    source = tmp_path / "in"
    shutil.copytree(CORPUS / "research-cluster", source)
    spec = tmp_path / "spec"
    assert invoke("import", str(source), "-o", str(spec))[0] == 0
    assert "workloads/augment-sweep.yaml" in _names(spec)
    (spec / "README.md").write_text("our notes\n")
    # the next import no longer has the sweep: its file goes, the README stays, no old file is left beside
    (source / "teams" / "cv" / "sweep.yaml").unlink()
    code, out, err = invoke("import", str(source), "-o", str(spec))
    assert code == 2 and "--force" in err
    code, out, err = invoke("import", str(source), "-o", str(spec), "--force")
    assert code == 0, out + err
    assert "workloads/augment-sweep.yaml" not in _names(spec)
    assert (spec / "README.md").read_text() == "our notes\n"
    assert yaml.safe_load((spec / ".kueueplan-import.yaml").read_text())["files"] == sorted(
        n for n in _names(spec) if n.endswith(".yaml") and not n.startswith("."))
    assert invoke("build", str(spec), "-o", str(tmp_path / "gen"))[0] == 0


def test_force_refuses_a_file_import_did_not_write_and_changes_nothing(tmp_path: Path) -> None:
    spec = tmp_path / "spec"
    assert invoke("import", str(CORPUS / "research-cluster"), "-o", str(spec))[0] == 0
    hand = spec / "teams" / "extra.yaml"
    hand.write_text("apiVersion: kueueplan.io/v1alpha1\nkind: Priority\nmetadata: {name: mine}\nspec: {value: 1}\n")
    before = {n: (spec / n).read_bytes() for n in _names(spec)}
    code, out, err = invoke("import", str(CORPUS / "research-cluster"), "-o", str(spec), "--force")
    assert code == 2
    assert f"{hand}" in err and "was not written by `kueueplan import`" in err
    assert err.count(str(hand)) == 1  # named once, as the error's location (it was also repeated in the text)
    assert {n: (spec / n).read_bytes() for n in _names(spec)} == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".spec.")]  # no scratch folder left behind


def test_force_into_a_folder_without_a_record_refuses_its_yaml(tmp_path: Path) -> None:
    spec = tmp_path / "spec"
    spec.mkdir()
    (spec / "team.yaml").write_text("apiVersion: kueueplan.io/v1alpha1\nkind: Priority\nmetadata: {name: x}\n")
    code, _, err = invoke("import", str(CORPUS / "research-cluster"), "-o", str(spec), "--force")
    assert code == 2 and "team.yaml" in err


def test_kueue_version_says_which_release_the_imported_platform_runs(tmp_path: Path) -> None:
    """The workload zoo's PyTorchJob is managed by the default install of Kueue v0.16 but not of v0.19 (whose
    shipped frameworks dropped the Kubeflow v1 jobs). Imported without a release, the spec targets the newest and
    simulates the PyTorchJob as unmanaged, which import now says; --kueue-version v0.16 writes the release."""
    import json

    code, _, err = invoke("import", str(CORPUS / "workload-zoo"), "-o", str(tmp_path / "newest"))
    assert code in (0, 1) and "note: the Environment names no kueueVersion" in err

    def pytorchjobs(spec: Path) -> list[str]:
        code, out, err = invoke("simulate", str(spec), "-o", "json")
        assert code in (0, 1), out + err
        return [w["state"] for w in json.loads(out)["workloads"] if w["kind"] == "PyTorchJob"]

    assert pytorchjobs(tmp_path / "newest") == ["Inadmissible"]  # "not managed by Kueue"
    code, _, err = invoke("import", str(CORPUS / "workload-zoo"), "-o", str(tmp_path / "v016"),
                          "--kueue-version", "v0.16")
    assert code in (0, 1) and "names no kueueVersion" not in err and "does not build" not in err
    env = yaml.safe_load((tmp_path / "v016" / "env-default.yaml").read_text())
    assert env["spec"]["kueueVersion"] == "v0.16"
    assert pytorchjobs(tmp_path / "v016") and "Inadmissible" not in pytorchjobs(tmp_path / "v016")
    assert invoke("import", str(CORPUS / "workload-zoo"), "-o", str(tmp_path / "x"), "--kueue-version", "new")[0] == 2


def test_an_output_folder_inside_the_input_is_not_read_back(tmp_path: Path) -> None:
    """`import manifests -o manifests/spec --force` again: the earlier spec is import's output, not a manifest
    (its Team and Environment were listed as objects to apply as they are)."""
    source = tmp_path / "in"
    shutil.copytree(CORPUS / "research-cluster", source)
    first = invoke("import", str(source), "-o", str(source / "spec"))
    again = invoke("import", str(source), "-o", str(source / "spec"), "--force")
    assert first[0] == again[0] == 0, again
    assert first[2] == again[2] and "kueueplan.io" not in again[2] and "Team " not in again[2], again[2]
    code, _, err = invoke("import", str(source / "spec"), "-o", str(source / "spec"), "--force")
    assert code == 2 and "no Kubernetes objects found" in err


def test_an_output_below_a_symlinked_folder_is_refused(tmp_path: Path, monkeypatch) -> None:
    """`-o specs/team` where the PR made specs a link to a folder outside: nothing is written there."""
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "specs").symlink_to(outside)
    monkeypatch.chdir(repo)
    code, _, err = invoke("import", str(CORPUS / "research-cluster"), "-o", "specs/team")
    assert code == 2 and "refusing to write into specs: it is a symlink" in err, err
    assert not any(outside.iterdir())


def test_a_name_too_long_for_a_file_name_is_exit_2(tmp_path: Path) -> None:
    """253 characters is a valid ClusterQueue name, and teams/<name>.yaml is over the 255 bytes of a file name:
    a clear error, no traceback, nothing written."""
    name = ".".join(["a" * 63, "b" * 63, "c" * 63, "d" * 61])
    source = tmp_path / "in"
    source.mkdir()
    (source / "queues.yaml").write_text(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: fl}\n---\n"
        f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n"
        "  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
        "    - name: fl\n      resources: [{name: cpu, nominalQuota: 4}]\n")
    res = CliRunner().invoke(main, ["import", str(source), "-o", str(tmp_path / "spec")])
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit), res.output
    assert f"cannot write 'teams/{name}.yaml'" in res.stderr and "shorten that name" in res.stderr
    assert not (tmp_path / "spec").exists()
