"""Gathering inputs: fast and careful YAML paths agree, Lists, universes, spec folders."""

from __future__ import annotations

from pathlib import Path

from kueueplan.validate import validate
from kueueplan.validate.inputs import gather

MULTI = """# leading comment
apiVersion: v1
kind: Namespace
metadata:
  name: a
---
---
apiVersion: v1
kind: Namespace
metadata:
  name: b
  labels: {x: "1"}
"""


def test_multi_document_lines(tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_text(MULTI.replace("name: b", "name: B"))
    findings = validate([str(tmp_path / "m.yaml")], crds=None, policies=[]).findings
    assert [(f.rule, f.line, f.object) for f in findings] == [("KP102", 11, "Namespace/B")]


def test_list_items_are_objects_with_their_own_lines(tmp_path: Path) -> None:
    text = ("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Namespace\n  metadata:\n"
            "    name: Bad_Name\n")
    findings = validate(["-"], crds=None, policies=[], stdin_text=text).findings
    assert [(f.rule, f.line, f.object) for f in findings if f.rule == "KP102"] == [("KP102", 7, "Namespace/Bad_Name")]


def test_api_lists_are_flattened_as_by_the_workflow_commands(tmp_path: Path) -> None:
    """`kubectl get clusterqueues -o yaml` style lists: validate and diff/graph/import read the same objects."""
    from kueueplan.workflow.manifests import load_documents

    text = ("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavorList\nitems:\n"
            "- apiVersion: kueue.x-k8s.io/v1beta2\n  kind: ResourceFlavor\n  metadata:\n    name: Bad_Name\n"
            "- apiVersion: kueue.x-k8s.io/v1beta2\n  kind: ResourceFlavor\n  metadata:\n    name: ok\n")
    (tmp_path / "list.yaml").write_text(text)
    findings = validate([str(tmp_path / "list.yaml")], crds=None, policies=[]).findings
    assert [(f.rule, f.line) for f in findings if f.rule == "KP102"] == [("KP102", 7)]
    assert [d.data["metadata"]["name"] for d in load_documents([tmp_path / "list.yaml"])] == ["Bad_Name", "ok"]


def test_kustomization_roots_are_separate_universes(tmp_path: Path) -> None:
    flavor = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: default\n"
    for env in ("dev", "prod"):
        (tmp_path / env).mkdir()
        (tmp_path / env / "kustomization.yaml").write_text(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [f.yaml]\n")
        (tmp_path / env / "f.yaml").write_text(flavor)
    inputs = gather([str(tmp_path)])
    assert sorted(o.env or "" for o in inputs.objects) == ["dev", "prod"]
    assert "KP407" not in {f.rule for f in validate([str(tmp_path)], crds=None, policies=[]).findings}
    # without the kustomization roots, the same two files are one apply unit: a duplicate
    for env in ("dev", "prod"):
        (tmp_path / env / "kustomization.yaml").unlink()
    assert "KP407" in {f.rule for f in validate([str(tmp_path)], crds=None, policies=[]).findings}


def _kustomization(folder: Path, *resources: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [" + ", ".join(resources) + "]\n")


_QUEUE = ("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: {name}\nspec:\n"
          "  namespaceSelector: {{}}\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
          "    - name: gpu\n      resources:\n      - name: cpu\n        nominalQuota: 4\n")
_FLAVOR = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: gpu\n"


def test_kustomizations_a_root_pulls_in_are_its_apply_unit(tmp_path: Path) -> None:
    """platform/kustomization.yaml lists base/ and teams/vision/, each with its own kustomization: one apply
    unit, so the queue's flavor in base/ is found (it was KP402 'does not exist' when each folder stood alone)
    and the same flavor written twice is a duplicate."""
    root = tmp_path / "platform"
    _kustomization(root, "base", "teams/vision")
    _kustomization(root / "base", "flavors.yaml")
    _kustomization(root / "teams" / "vision", "queues.yaml")
    (root / "base" / "flavors.yaml").write_text(_FLAVOR)
    (root / "teams" / "vision" / "queues.yaml").write_text(_QUEUE.format(name="vision"))
    inputs = gather([str(root)])
    assert {o.universe for o in inputs.objects} == {str(root)} and {o.env for o in inputs.objects} == {"platform"}
    assert inputs.kustomizations == [str(root / "kustomization.yaml")]  # the note names what applies
    rules = {f.rule for f in validate([str(root)], crds=None, policies=[]).findings}
    assert "KP402" not in rules and "KP407" not in rules
    (root / "teams" / "vision" / "flavor.yaml").write_text(_FLAVOR)
    assert "KP407" in {f.rule for f in validate([str(root)], crds=None, policies=[]).findings}


def test_a_workload_in_a_plain_folder_of_the_root_is_judged_against_the_queues_of_the_unit(tmp_path: Path) -> None:
    """The root lists teams/vision/ (a kustomization) and workloads/train.yaml (a file): a Job needing 40 cpu
    on a queue of 4 can never be admitted (KP501). Split per folder, the Job had no queue in its universe and
    validate passed."""
    root = tmp_path / "platform"
    _kustomization(root, "base", "teams/vision", "workloads/train.yaml")
    _kustomization(root / "base", "flavors.yaml")
    _kustomization(root / "teams" / "vision", "queues.yaml")
    (root / "base" / "flavors.yaml").write_text(_FLAVOR)
    (root / "teams" / "vision" / "queues.yaml").write_text(
        _QUEUE.format(name="vision") + "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n"
        "  name: train\n  namespace: vision\nspec:\n  clusterQueue: vision\n")
    (root / "workloads").mkdir()
    (root / "workloads" / "train.yaml").write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n  namespace: vision\n  labels:\n"
        "    kueue.x-k8s.io/queue-name: train\nspec:\n  suspend: true\n  template:\n    spec:\n"
        "      restartPolicy: Never\n      containers:\n      - name: c\n        image: busybox\n"
        "        resources:\n          requests: {cpu: '40'}\n")
    [hit] = [f for f in validate([str(root)], crds=None, policies=[]).findings if f.rule == "KP501"]
    assert hit.object == "Job/vision/train" and "can use at most 4" in hit.message


def test_a_base_two_overlays_pull_in_stays_its_own_unit(tmp_path: Path) -> None:
    """overlays/dev and overlays/prod both list ../../base: base belongs to neither; each overlay is its own
    unit, so the queue both overlays define is no duplicate."""
    _kustomization(tmp_path / "base", "flavors.yaml")
    (tmp_path / "base" / "flavors.yaml").write_text(_FLAVOR)
    for env in ("dev", "prod"):
        _kustomization(tmp_path / "overlays" / env, "../../base", "queue.yaml")
        (tmp_path / "overlays" / env / "queue.yaml").write_text(_QUEUE.format(name="team"))
    units = {Path(o.file).parent.name: o.universe for o in gather([str(tmp_path)]).objects}
    assert units == {"base": str(tmp_path / "base"), "dev": str(tmp_path / "overlays" / "dev"),
                     "prod": str(tmp_path / "overlays" / "prod")}
    assert "KP407" not in {f.rule for f in validate([str(tmp_path)], crds=None, policies=[]).findings}


def test_spec_folder_errors_point_into_the_spec(tmp_path: Path) -> None:
    (tmp_path / "flavors.yaml").write_text("apiVersion: kueueplan.io/v1alpha1\nkind: ResourceFlavor\n"
                                           "metadata:\n  name: default\nspec:\n  nodeLabelz: {}\n")
    findings = validate([str(tmp_path)], crds=None, policies=[]).findings
    assert [(f.rule, Path(f.file).name, f.line) for f in findings] == [("KP003", "flavors.yaml", 6)]


def test_spec_beside_its_build_is_found_and_lends_its_kueue_version(crd_paths: list[str]) -> None:
    import pytest

    example = Path(__file__).resolve().parents[2] / "examples" / "oke-dev-prod"
    if not (example / "environments").is_dir() or not (example / "gen").is_dir():
        pytest.skip("examples/oke-dev-prod is not in this checkout")
    inputs = gather([str(example)])
    spec_objects = [o for o in inputs.objects if o.env_in_ref]
    built = [o for o in inputs.objects if not o.env_in_ref]
    assert spec_objects and built
    spec_root = example / "environments"
    assert all(Path(o.file) == spec_root or spec_root in Path(o.file).parents for o in spec_objects)
    assert not any("/environments/" in o.file for o in built)
    # the lab runs Kueue v0.8.1 (no RayJob submitter pod set): its 2-CPU queue fits the 2-CPU head
    result = validate([str(example)], crds=crd_paths, policies=[])
    assert [f for f in result.findings if f.severity == "error"] == []
    assert "KP501" in {f.rule for f in validate([str(example / "gen")], crds=crd_paths, policies=[]).findings}


def test_a_deprecated_kueue_api_built_from_the_spec_says_what_to_change_in_the_spec(tmp_path: Path) -> None:
    """`kueueplan import` of v1beta1 YAML writes `kueueAPIVersion: v1beta1`; on Kueue v0.19 every built object is
    then deprecated (KP207). Its fix is in the Environment, not an apiVersion the spec file does not have."""
    (tmp_path / "spec.yaml").write_text(
        "apiVersion: kueueplan.io/v1alpha1\nkind: Environment\nmetadata: {name: prod}\n"
        "spec: {kueueVersion: v0.19.2, kueueAPIVersion: v1beta1}\n---\n"
        "apiVersion: kueueplan.io/v1alpha1\nkind: ResourceFlavor\nmetadata: {name: gpu}\nspec: {}\n")
    [hit] = [f for f in validate([str(tmp_path)], policies=[]).findings if f.rule == "KP207"]
    assert hit.message.endswith("set kueueAPIVersion: v1beta2 in Environment prod (or leave it out: the "
                                "release's own) and rebuild")
    (tmp_path / "gen.yaml").write_text("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
                                       "metadata: {name: cpu}\n")
    plain = [f for f in validate([str(tmp_path / "gen.yaml")], policies=[]).findings if f.rule == "KP207"]
    assert [f.message.rsplit("; ", 1)[1] for f in plain] == ["use kueue.x-k8s.io/v1beta2"]
