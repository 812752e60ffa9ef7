"""JobSet and PyTorchJob in the spec: built into the objects their projects define, with the pod sets Kueue
derives (kube.podsets, cited there), simulated from the spec's declared load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.kube.podsets import pod_sets_for, total_requests

PLATFORM = """
apiVersion: kueueplan.io/v1alpha1
kind: ResourceFlavor
metadata:
  name: h100
---
apiVersion: kueueplan.io/v1alpha1
kind: Team
metadata:
  name: llm
spec:
  namespaces:
  - name: llm
  clusterQueue: llm-cq
  localQueues: [training]
  quotas:
  - flavor: h100
    resources: {cpu: 256, memory: 2Ti, nvidia.com/gpu: 32}
---
apiVersion: kueueplan.io/v1alpha1
kind: Environment
metadata:
  name: prod
spec:
  kueueVersion: v0.19.2
"""

WORKLOADS = """
apiVersion: kueueplan.io/v1alpha1
kind: Workload
metadata:
  name: pretrain
spec:
  team: llm
  kind: JobSet
  image: nvcr.io/nvidia/pytorch:24.05-py3
  replicas:
  - name: driver
    resources: {requests: {cpu: "2", memory: 8Gi}}
  - name: workers
    replicas: 2
    parallelism: 2
    completions: 2
    resources: {requests: {cpu: "32", memory: 256Gi}, limits: {nvidia.com/gpu: 8}}
  load:
  - at: 0s
    runFor: 1h
    expect: {state: Finished, admittedWithin: 1s}
---
apiVersion: kueueplan.io/v1alpha1
kind: Workload
metadata:
  name: finetune
spec:
  team: llm
  kind: PyTorchJob
  image: kubeflow/pytorch-dist-mnist:latest
  replicas:
  - name: worker
    replicas: 3
    resources: {requests: {cpu: "8", memory: 64Gi}, limits: {nvidia.com/gpu: 4}}
  - name: master
    resources: {requests: {cpu: "8", memory: 64Gi}, limits: {nvidia.com/gpu: 4}}
  load:
  - at: 1s
    runFor: 30m
    expect: {state: Finished, admittedWithin: 1h}
"""


@pytest.fixture()
def spec_dir(tmp_path: Path) -> Path:
    d = tmp_path / "environments"
    d.mkdir()
    (d / "platform.yaml").write_text(PLATFORM)
    (d / "workloads.yaml").write_text(WORKLOADS)
    return d


def _built(spec_dir: Path) -> dict[str, dict]:
    out = spec_dir.parent / "gen"
    result = CliRunner().invoke(main, ["build", str(spec_dir), "-o", str(out)])
    assert result.exit_code == 0, result.output
    docs = [d for p in sorted((out / "prod").glob("*.yaml")) for d in yaml.safe_load_all(p.read_text()) if d]
    return {d["kind"]: d for d in docs if d.get("kind") in ("JobSet", "PyTorchJob")}


def test_build_writes_jobset_and_pytorchjob(spec_dir: Path) -> None:
    objs = _built(spec_dir)
    js, pt = objs["JobSet"], objs["PyTorchJob"]
    assert js["apiVersion"] == "jobset.x-k8s.io/v1alpha2" and pt["apiVersion"] == "kubeflow.org/v1"
    assert js["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "training"
    workers = js["spec"]["replicatedJobs"][1]
    assert workers["replicas"] == 2 and workers["template"]["spec"]["parallelism"] == 2
    assert workers["template"]["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert list(pt["spec"]["pytorchReplicaSpecs"]) == ["Master", "Worker"]
    master = pt["spec"]["pytorchReplicaSpecs"]["Master"]
    assert master["template"]["spec"]["containers"][0]["name"] == "pytorch"  # the operator's default container
    # Kueue's pod sets of what build wrote (jobset_controller.go, kubeflowjob_controller.go)
    assert {ps.name: ps.count for ps in pod_sets_for(js)} == {"driver": 1, "workers": 4}
    assert total_requests(pod_sets_for(js))["nvidia.com/gpu"] == 32
    assert {ps.name: ps.count for ps in pod_sets_for(pt)} == {"master": 1, "worker": 3}


def test_declared_load_of_the_new_kinds_simulates(spec_dir: Path) -> None:
    """pretrain takes all 32 GPUs; finetune (16 GPUs) waits for it. PyTorchJob is disabled by v0.19.2's default
    install, so it is unmanaged unless the environment's Configuration enables it: the expectation on it fails."""
    result = CliRunner().invoke(main, ["simulate", str(spec_dir), "--env", "prod", "-o", "json"])
    report = json.loads(result.stdout)
    states = {w["name"]: w["state"] for w in report["workloads"]}
    assert states["llm/pretrain"] == "Finished"
    assert states["llm/finetune"] == "Inadmissible"
    assert "kubeflow.org/pytorchjob is not enabled" in json.dumps(report)
    assert result.exit_code == 1


def test_a_pytorchjob_replica_must_be_master_or_worker(spec_dir: Path) -> None:
    (spec_dir / "workloads.yaml").write_text(WORKLOADS.replace("  - name: worker\n", "  - name: chief\n"))
    result = CliRunner().invoke(main, ["build", str(spec_dir), "-o", str(spec_dir.parent / "gen")])
    assert result.exit_code == 2 and "master and/or worker" in result.output
