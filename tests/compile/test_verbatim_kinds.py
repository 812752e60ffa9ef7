"""MPIJob, TrainJob, AppWrapper, LeaderWorkerSet, Deployment and StatefulSet in the spec: the object's spec carried
verbatim (WorkloadSpec.spec), built with the API version Kueue's integration watches and the queue/priority labels
on the object, where Kueue reads them; pod sets as Kueue derives them (kube.podsets); declared load simulated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.kube.podsets import pod_sets_for, runtime_objects
from kueueplan.spec.models import VERBATIM_KINDS

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "workload-zoo"

PLATFORM = """
apiVersion: kueueplan.io/v1alpha1
kind: ResourceFlavor
metadata:
  name: a100
---
apiVersion: kueueplan.io/v1alpha1
kind: Priority
metadata:
  name: serving
spec: {value: 1000}
---
apiVersion: kueueplan.io/v1alpha1
kind: Team
metadata:
  name: ml
spec:
  localQueues: [ml-queue]
  quotas:
  - flavor: a100
    resources: {cpu: 64, memory: 512Gi, nvidia.com/gpu: 16}
---
apiVersion: kueueplan.io/v1alpha1
kind: Environment
metadata:
  name: prod
spec:
  kueueVersion: v0.19.2
"""


def _originals() -> dict[str, dict]:
    docs = [d for p in sorted((CORPUS / "workloads").glob("*.yaml")) for d in yaml.safe_load_all(p.read_text()) if d]
    return {d["kind"]: d for d in docs if d["kind"] in VERBATIM_KINDS}


def _workload_doc(obj: dict, load: list | None = None) -> dict:
    spec = {"team": "ml", "kind": obj["kind"], "spec": obj["spec"]}
    if obj["kind"] == "Deployment":
        spec["priority"] = "serving"
    if load is not None:
        spec["load"] = load
    return {"apiVersion": "kueueplan.io/v1alpha1", "kind": "Workload",
            "metadata": {"name": obj["metadata"]["name"], "labels": {"app": "zoo"}}, "spec": spec}


@pytest.fixture()
def spec_dir(tmp_path: Path) -> Path:
    d = tmp_path / "environments"
    d.mkdir()
    (d / "platform.yaml").write_text(PLATFORM)
    (d / "workloads.yaml").write_text(yaml.safe_dump_all([_workload_doc(o) for o in _originals().values()]))
    return d


def _build(spec_dir: Path) -> dict[str, dict]:
    out = spec_dir.parent / "gen"
    result = CliRunner().invoke(main, ["build", str(spec_dir), "-o", str(out)])
    assert result.exit_code == 0, result.output
    built = {}
    for path in sorted((out / "prod").glob("*.yaml")):
        for d in yaml.safe_load_all(path.read_text()):
            if d and d.get("kind") in VERBATIM_KINDS:
                built[d["kind"]] = d
                assert path.name == f"{d['kind'].lower()}s.yaml"
    return built


def test_build_writes_each_kind_as_its_project_defines_it(spec_dir: Path) -> None:
    originals, built = _originals(), _build(spec_dir)
    assert set(built) == set(VERBATIM_KINDS)
    related = runtime_objects(yaml.safe_load_all((CORPUS / "runtimes" / "torch-distributed.yaml").read_text()))
    for kind, obj in built.items():
        original = originals[kind]
        assert obj["apiVersion"] == original["apiVersion"], kind
        assert obj["spec"] == original["spec"], kind  # verbatim
        labels = obj["metadata"]["labels"]
        assert labels["kueue.x-k8s.io/queue-name"] == "ml-queue" and labels["app"] == "zoo", kind
        assert obj["metadata"]["namespace"] == "ml"
        assert pod_sets_for(obj, "v0.19.2", related) == pod_sets_for(original, "v0.19.2", related), kind
    # Kueue reads a Deployment's labels from the Deployment and copies them to the pods (deployment_webhook.go)
    assert built["Deployment"]["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "serving"
    assert "kueue.x-k8s.io/queue-name" not in built["Deployment"]["spec"]["template"]["metadata"]["labels"]
    assert {ps.name: ps.count for ps in pod_sets_for(built["LeaderWorkerSet"])} == {"leader": 1, "worker": 1}
    assert {ps.name: ps.count for ps in pod_sets_for(built["MPIJob"])} == {"launcher": 1, "worker": 2}


def test_declared_load_of_these_kinds_is_simulated(spec_dir: Path) -> None:
    """The Deployment is one Workload per pod (embeddings-api-0, -1), so its expectation covers both; the
    StatefulSet is one pod group of 3; the MPIJob runs 10 minutes."""
    originals = _originals()
    docs = [_workload_doc(originals["Deployment"], [{"at": "0s", "expect": {"admittedWithin": "1s"}}]),
            _workload_doc(originals["StatefulSet"], [{"at": "1s", "expect": {"admittedWithin": "1s"}}]),
            _workload_doc(originals["MPIJob"], [{"at": "2s", "runFor": "10m", "expect": {"state": "Finished"}}])]
    (spec_dir / "workloads.yaml").write_text(yaml.safe_dump_all(docs))
    result = CliRunner().invoke(main, ["simulate", str(spec_dir), "--env", "prod", "-o", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    states = {w["name"]: (w["kind"], w["state"]) for w in report["workloads"]}
    assert states == {"ml/embeddings-api-0": ("Deployment", "Admitted"),
                      "ml/embeddings-api-1": ("Deployment", "Admitted"),
                      "ml/feature-store": ("StatefulSet", "Admitted"), "ml/mpi-pi": ("MPIJob", "Finished")}


@pytest.mark.parametrize(("extra", "message"), [
    ({"template": {"image": "x"}}, "a Deployment is written as its object's spec under 'spec'; 'template' is for"),
    ({"spec": {}}, "a Deployment needs 'spec'"),
])
def test_typed_fields_on_a_verbatim_kind_are_refused(spec_dir: Path, extra: dict, message: str) -> None:
    doc = _workload_doc(_originals()["Deployment"])
    doc["spec"].update(extra)
    (spec_dir / "workloads.yaml").write_text(yaml.safe_dump(doc))
    result = CliRunner().invoke(main, ["build", str(spec_dir), "-o", str(spec_dir.parent / "gen")])
    assert result.exit_code == 2
    assert message in result.output and "workloads.yaml" in result.output


def test_a_deployment_of_a_hundred_million_replicas_is_a_located_error(spec_dir: Path) -> None:
    """An `expect` on a Deployment covers one Workload per pod; 10^8 of them were built before any limit and ran
    out of memory. The limit is the simulator's own, said where the load is written."""
    deployment = _originals()["Deployment"]
    deployment["spec"]["replicas"] = 100_000_000
    (spec_dir / "workloads.yaml").write_text(yaml.safe_dump_all(
        [_workload_doc(deployment, [{"at": "0s", "expect": {"admittedWithin": "1s"}}])]))
    result = CliRunner().invoke(main, ["simulate", str(spec_dir), "--env", "prod"])
    assert result.exit_code == 2 and "workloads.yaml:" in result.output, result.output
    assert "1 x 100,000,000 Workloads (count x replicas) is more than the 1,000,000" in result.output
