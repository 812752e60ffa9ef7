"""The valid upstream examples in ../shared/upstream pass with no error; the known-invalid ones are caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from kueueplan.validate import validate

# Files that are not valid, applyable Kubernetes manifests, each with the reason and the rule that says so.
NOT_VALID = {
    # webhook rule 27: onFlavors must name flavors of the queue; this sample has no resourceGroups at all
    "kueue/examples/admin/minimal-cq.yaml": "KP309",
    # documentation fragments (INDEX.md: "<...>" placeholders, partial specs)
    "kueue/examples/from-docs/concepts_admission_check__index-02.yaml": "KP001",
    "kueue/examples/from-docs/concepts_admission_check__index-03.yaml": "KP001",
    "kueue/examples/from-docs/concepts_admission_fair_sharing-01.yaml": "KP202",
    "kueue/examples/from-docs/concepts_cluster_queue-05.yaml": "KP204",
    "kueue/examples/from-docs/concepts_cluster_queue-06.yaml": "KP204",
    # A HAMi Deployment (now a workload kind): its nvidia.com/gpucores and gpumem requests are admissible only
    # through the resources.transformations of the Kueue Configuration that HAMi's guide installs, which this
    # file lacks; under the default configuration Kueue finds gpucores uncovered by hami-queue.
    "kueue/examples/serving-workloads/sample-hami.yaml": "KP501",
    # SkyPilot task files, not Kubernetes objects
    "seeds/skypilot/sky-kueue-gpu-task.yaml": "KP002",
    "seeds/skypilot/sky-kueue-task.yaml": "KP002",
}


# Earlier variants of a file in the same seed (SOURCE.md): applying both would declare an object twice.
ALTERNATIVES = {"gpu-flavor-org.yaml", "single-clusterqueue-setup.no-preemption.c45a1354.yaml"}


def _files(upstream: Path) -> list[Path]:
    found = [p for p in upstream.rglob("*") if p.suffix in (".yaml", ".yml") and "crds" not in p.parts]
    return sorted(found)


def test_upstream_examples(shared_dir: Path, crd_paths: list[str]) -> None:
    upstream = shared_dir / "upstream"
    files = _files(upstream)
    assert len(files) > 100
    unexpected, missed = [], []
    for f in files:
        rel = str(f.relative_to(upstream))
        errors = [x for x in validate([str(f)], crds=crd_paths, policies=[]).findings if x.severity == "error"]
        if rel in NOT_VALID:
            if NOT_VALID[rel] not in {e.rule for e in errors}:
                missed.append((rel, NOT_VALID[rel], errors))
        elif errors:
            unexpected.append((rel, [(e.rule, e.line, e.message) for e in errors]))
    assert unexpected == []
    assert missed == []


def test_kinds_without_crd_are_info(shared_dir: Path, crd_paths: list[str]) -> None:
    jobset = shared_dir / "upstream" / "kueue" / "examples" / "jobs" / "sample-jobset.yaml"
    findings = validate([str(jobset)], crds=crd_paths, policies=[]).findings
    notes = [f for f in findings if f.rule == "KP205"]
    assert notes and all(f.severity == "info" and "JobSet" in f.object for f in notes)


def test_sample_rayjob_without_shutdown_is_rejected_once_queued(shared_dir: Path, crd_paths: list[str],
                                                               tmp_path: Path) -> None:
    # workload-podsets.md §10: ray-job.sample.yaml + a queue label is rejected (shutdownAfterJobFinishes unset)
    text = (shared_dir / "upstream" / "kuberay" / "samples" / "ray-job.sample.yaml").read_text()
    text = text.replace("kind: RayJob\nmetadata:\n", "kind: RayJob\nmetadata:\n  labels:\n"
                                                    "    kueue.x-k8s.io/queue-name: user-queue\n", 1)
    (tmp_path / "rj.yaml").write_text(text)
    findings = validate([str(tmp_path / "rj.yaml")], crds=crd_paths, policies=[]).findings
    assert "KP410" in {f.rule for f in findings if f.severity == "error"}


@pytest.mark.parametrize("seed", ["oke", "kueue-preemption", "skypilot"])
def test_seed_platforms_validate_as_a_whole(shared_dir: Path, crd_paths: list[str], seed: str) -> None:
    folder = shared_dir / "upstream" / "seeds" / seed
    files = [str(p) for p in sorted(folder.glob("*.y*ml"))
             if f"seeds/{seed}/{p.name}" not in NOT_VALID and p.name not in ALTERNATIVES]
    result = validate(files, crds=crd_paths, policies=[])
    errors = [(f.rule, f.file, f.message) for f in result.findings if f.severity == "error"]
    # oke's lab predates Kueue's RayJob submitter pod set: its 2-CPU queue can never admit the 2.5-CPU job
    assert result.objects >= 5
    if seed == "oke":
        assert {r for r, _, _ in errors} == {"KP501"}
        assert any("2500m" in m and "ps-cluster-queue" in m for _, _, m in errors)
    else:
        assert errors == []


def test_kueue_version_changes_the_admission_verdict(shared_dir: Path, crd_paths: list[str]) -> None:
    # The oke lab ran Kueue v0.8.1, before the RayJob submitter pod set (v0.10): there the job fits.
    folder = shared_dir / "upstream" / "seeds" / "oke"
    files = [str(folder / "kueue-resources-priorityscheduling.yaml"),
             str(folder / "ray-job.ps-dev-pytorch-distributed-training.yaml")]
    newest = validate(files, crds=crd_paths, policies=[]).findings
    lab = validate(files, crds=crd_paths, policies=[], kueue_version="v0.8.1").findings
    assert [f.rule for f in newest if f.severity == "error"] == ["KP501"]
    assert [f for f in lab if f.severity == "error"] == []
