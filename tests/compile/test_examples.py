"""Every example builds into manifests equivalent to its tutorial's YAML (same objects and fields), and the
committed examples/<name>/gen/ equals a fresh build."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from kueueplan.emit.build import render

from ._support import EXAMPLES, REPO, load_yaml_docs, match_upstream

UPSTREAM_SKIP_KINDS = {"RoleBinding"}  # RBAC is outside what kueueplan plans


def _files(shared: Path, *names: str) -> list[dict[str, Any]]:
    out = []
    for name in names:
        out += [d for d in load_yaml_docs(shared / "upstream" / name) if d.get("kind") not in UPSTREAM_SKIP_KINDS]
    return out


def _seed_blocks(shared: Path, seed: str) -> list[str]:
    text = next((shared / "seeds").glob(f"{seed}_*.txt")).read_text(encoding="utf-8")
    return re.findall(r"```yaml\n(.*?)```", text, re.S)


def _rayjob_priority(shared: Path, env: str) -> list[dict[str, Any]]:
    """Tutorial 000: its kueue-resources.yaml block, and KubeRay's sample RayJob with the metadata it prescribes."""
    blocks = _seed_blocks(shared, "000")
    resources = [d for d in yaml.safe_load_all(next(b for b in blocks if "# kueue-resources.yaml" in b)) if d]
    if env == "raised-quota":
        raised = [yaml.safe_load(b) for b in blocks
                  if b.lstrip().startswith("apiVersion") and "kind: ClusterQueue" in b]
        resources = [raised[-1] if d["kind"] == "ClusterQueue" else d for d in resources]
    sample = load_yaml_docs(shared / "upstream/kuberay/samples/ray-job.pytorch-distributed-training.yaml")[0]
    jobs = []
    for prefix in ("dev", "prod"):
        block = next(b for b in blocks if f"generateName: {prefix}-pytorch-text-classifier-" in b)
        job = dict(sample)
        job["metadata"] = yaml.safe_load(block)["metadata"]
        jobs.append(job)
    return resources + jobs


_COHORT_FILES = ("default-flavor.yaml", "gpu-flavor.yaml", "shared-cq.yaml", "team-a-cq.yaml", "team-b-cq.yaml",
                 "team-a-local-queue.yaml", "team-b-local-queue.yaml", "team-a-ns.yaml", "team-b-ns.yaml",
                 "workloadpriority.yml", "team-a-ray-cluster-prod.yaml", "team-b-ray-cluster-dev.yaml")


def _cohort_borrow_text(shared: Path) -> list[dict[str, Any]]:
    """Tutorial 004 as its text says (10 shared CPU; no GPU for team B, whose dev cluster is 6 CPU / 16 GB / 0 GPU):
    its YAML with exactly those three changes."""
    docs = _files(shared, *[f"seeds/kueue-preemption/{n}" for n in _COHORT_FILES])
    by_name = {d["metadata"]["name"]: d for d in docs}
    shared_cq = by_name["shared-cq"]["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    next(r for r in shared_cq if r["name"] == "cpu")["nominalQuota"] = 10
    team_b = by_name["team-b-cq"]["spec"]
    team_b["resourceGroups"] = [g for g in team_b["resourceGroups"] if "nvidia.com/gpu" not in g["coveredResources"]]
    dev = next(d for d in docs if d["kind"] == "RayCluster" and d["metadata"]["namespace"] == "team-b")
    for group in dev["spec"]["workerGroupSpecs"]:
        group["rayStartParams"]["num-gpus"] = "0"
        for container in group["template"]["spec"]["containers"]:
            for part in ("limits", "requests"):
                container["resources"][part].pop("nvidia.com/gpu")
    return docs


def _gang_rayjob(shared: Path) -> list[dict[str, Any]]:
    """Tutorial 002's RayJob: KubeRay's sample with the label it prescribes (the tutorial's text lost its
    indentation, so its Kueue objects are checked line by line in test_gang_rayjob_kueue_lines)."""
    sample = load_yaml_docs(shared / "upstream/kuberay/samples/ray-job.pytorch-distributed-training.yaml")[0]
    job = dict(sample)
    job["metadata"] = {"generateName": "pytorch-text-classifier-",
                       "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}}
    text = next((shared / "seeds").glob("002_*.txt")).read_text(encoding="utf-8")
    assert "generateName: pytorch-text-classifier-\nlabels:\nkueue.x-k8s.io/queue-name: user-queue" in text
    return [job]


UPSTREAM = {
    ("rayjob-priority", "tutorial"): lambda s: _rayjob_priority(s, "tutorial"),
    ("rayjob-priority", "raised-quota"): lambda s: _rayjob_priority(s, "raised-quota"),
    ("oke-dev-prod", "lab"): lambda s: _files(
        s, "seeds/oke/kueue-resources-priorityscheduling.yaml", "seeds/oke/cq-team-a.yaml", "seeds/oke/cq-team-b.yaml",
        "seeds/oke/ray-job.ps-dev-pytorch-distributed-training.yaml",
        "seeds/oke/ray-job.ps-prod-pytorch-distributed-training.yaml",
        "seeds/oke/ray-job.pytorch-team-a.yaml", "seeds/oke/ray-job.pytorch-team-b.yaml"),
    ("gang-provisioning", "kueue-example"): lambda s: _files(
        s, "kueue/examples/provisioning/provisioning-setup.yaml", "kueue/examples/provisioning/sample-job.yaml"),
    ("gang-provisioning", "rayjob-gke"): _gang_rayjob,
    ("gang-provisioning", "docs"): lambda s: [
        d for d in _files(s, "kueue/examples/provisioning/provisioning-setup.yaml",
                          "kueue/examples/provisioning/sample-job.yaml")
        if d["kind"] != "ProvisioningRequestConfig"
    ] + _files(s, "kueue/examples/from-docs/concepts_admission_check_provisioning_request-01.yaml"),
    ("skypilot", "preemption"): lambda s: _files(
        s, "seeds/skypilot/single-clusterqueue-setup.yaml", "seeds/skypilot/priority-classes.yaml",
        "seeds/skypilot/kueue-pod.yaml"),
    ("skypilot", "no-preemption"): lambda s: _files(
        s, "seeds/skypilot/single-clusterqueue-setup.no-preemption.c45a1354.yaml",
        "seeds/skypilot/priority-classes.yaml", "seeds/skypilot/kueue-pod.yaml"),
    ("cohort-borrow", "tutorial-text"): lambda s: _cohort_borrow_text(s),
    ("cohort-borrow", "demo"): lambda s: _files(s, *[
        f"seeds/kueue-preemption/{n}" for n in (
            "default-flavor.yaml", "gpu-flavor.yaml", "shared-cq.yaml", "team-a-cq.yaml", "team-b-cq.yaml",
            "team-a-local-queue.yaml", "team-b-local-queue.yaml", "team-a-ns.yaml", "team-b-ns.yaml",
            "workloadpriority.yml", "team-a-ray-cluster-prod.yaml", "team-b-ray-cluster-dev.yaml")]),
}


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_builds_and_committed_gen_is_fresh(example: str) -> None:
    root = REPO / "examples" / example
    result = render(root / "environments", root / "gen")
    assert result.environments, "an example needs at least one environment"
    committed = {p.relative_to(root / "gen").as_posix(): p.read_text(encoding="utf-8")
                 for p in (root / "gen").rglob("*") if p.is_file()}
    assert committed == result.files, f"examples/{example}/gen is stale: run `kueueplan build` in examples/{example}"


# Examples of a kueueplan pattern rather than of a tutorial: no upstream YAML to compare with; their declared
# expectations and scenarios (tests/simulate/test_examples.py) say what they must do.
NO_TUTORIAL = {("one-cluster-dev-prod", "shared-cluster")}


def test_every_example_environment_is_compared_with_upstream() -> None:
    built = {(ex, env) for ex in EXAMPLES for env in render(REPO / "examples" / ex / "environments").environments}
    assert built == set(UPSTREAM) | NO_TUTORIAL


@pytest.mark.parametrize("example,env", sorted(UPSTREAM))
def test_example_matches_tutorial_yaml(shared_dir: Path, example: str, env: str) -> None:
    upstream = UPSTREAM[(example, env)](shared_dir)
    assert upstream, "no upstream objects found"
    # Kueue's ConfigMap is not among the tutorials' files: test_skypilot_configuration_is_the_tutorials.
    generated = [d for d in load_yaml_docs_all(REPO / "examples" / example / "gen" / env) if d["kind"] != "ConfigMap"]
    # rayjob-gke's Kueue objects are checked line by line (test_gang_rayjob_kueue_lines).
    assert match_upstream(upstream, generated, allow_extra=(example, env) == ("gang-provisioning", "rayjob-gke")) == []


@pytest.mark.parametrize("env", ["preemption", "no-preemption"])
def test_skypilot_configuration_is_the_tutorials(shared_dir: Path, env: str) -> None:
    """Tutorial 003's first step enables the pod integration in controller_manager_config.yaml: every field of
    the tutorial's file is in the rendered kueue-manager-config (which adds what Kueue v0.9 ships besides)."""
    text = next((shared_dir / "seeds").glob("003_*.txt")).read_text(encoding="utf-8")
    block = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    tutorial = yaml.safe_load(yaml.safe_load(block)["data"]["controller_manager_config.yaml"])
    (cm,) = [d for d in load_yaml_docs_all(REPO / "examples/skypilot/gen" / env) if d["kind"] == "ConfigMap"]
    rendered = yaml.safe_load(cm["data"]["controller_manager_config.yaml"])
    assert (cm["metadata"]["name"], cm["metadata"]["namespace"]) == ("kueue-manager-config", "kueue-system")
    assert tutorial["integrations"]["frameworks"] == ["batch/job", "pod"]
    assert _subset(tutorial, rendered), (tutorial, rendered)


def _subset(small: Any, big: Any) -> bool:
    if isinstance(small, dict):
        return isinstance(big, dict) and all(k in big and _subset(v, big[k]) for k, v in small.items())
    return small == big


def _leaves(obj: Any, key: str | None = None) -> list[tuple[str | None, Any]]:
    if obj == {} or obj == []:
        return [(key, obj)]
    if isinstance(obj, dict):
        return [pair for k, v in obj.items() for pair in _leaves(v, k)]
    if isinstance(obj, list):
        return [pair for v in obj for pair in _leaves(v, None if not isinstance(v, (dict, list)) else key)]
    return [(key, obj)]


def _same(a: Any, b: Any) -> bool:
    from kueueplan.kube.quantity import parse_quantity

    if str(a) == str(b):
        return True
    try:
        return parse_quantity(a) == parse_quantity(b)
    except Exception:  # noqa: BLE001 - not both quantities
        return False


def test_gang_rayjob_kueue_lines(shared_dir: Path) -> None:
    """Every `key: value` line of tutorial 002's kueue-resources.yaml is a field of the generated Kueue objects."""
    text = next((shared_dir / "seeds").glob("002_*.txt")).read_text(encoding="utf-8")
    block = text.split("# kueue-resources.yaml", 1)[1].split("Create the Kueue resources", 1)[0]
    generated = [d for d in load_yaml_docs_all(REPO / "examples/gang-provisioning/gen/rayjob-gke")
                 if d["apiVersion"].startswith("kueue.x-k8s.io")]
    leaves = [pair for obj in generated for pair in _leaves(obj)]
    lines = block.splitlines()
    kinds = [line.split(":", 1)[1].strip() for prev, line in zip(lines, lines[1:])
             if line.startswith("kind:") and prev.startswith("apiVersion:")]
    assert sorted(kinds) == sorted(d["kind"] for d in generated)
    for raw in block.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line == "---" or line.endswith(":"):
            continue
        item = line[2:] if line.startswith("- ") else line
        key, sep, value = item.partition(": ")
        if not sep:
            key, value = None, item
        value = value.strip().strip('"')
        if key == "coveredResources":
            value = yaml.safe_load(value)
            queue = next(d for d in generated if d["kind"] == "ClusterQueue")
            assert [g["coveredResources"] for g in queue["spec"]["resourceGroups"]] == [value]
            continue
        assert any((key is None or k == key) and _same(v, value) for k, v in leaves), f"line {line!r} not generated"


def load_yaml_docs_all(folder: Path) -> list[dict[str, Any]]:
    from ._support import gen_objects

    return gen_objects(folder)
