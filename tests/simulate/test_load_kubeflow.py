"""The load-only kinds (kube.podsets.LOAD_ONLY_KINDS) as load: Kueue's own examples of TFJob, XGBoostJob,
PaddleJob, JAXJob and RayService in plain manifests are admitted with their pod sets' quota, unless the release or
the Configuration has no such integration (then they are unmanaged: no quota, a warning), never "not run yet"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.kube import yamlio
from kueueplan.simulate.engine import simulate
from kueueplan.simulate.result import result_json
from kueueplan.simulate.scenario import load_scenario, scenario_from_manifests

GI = 2**30
MI = 2**20
EXAMPLES = ("sample-tfjob.yaml", "sample-xgboostjob.yaml", "sample-paddlejob.yaml", "sample-jaxjob.yaml",
            "ray-service-sample.yaml")
QUEUES = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cluster-queue}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors: [{name: default-flavor, resources: [{name: cpu, nominalQuota: 20}, {name: memory, nominalQuota: 64Gi}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: user-queue, namespace: default}
spec: {clusterQueue: cluster-queue}
"""
# Each example's quota, from its pod sets (tests/kube/test_podsets_kubeflow.py): per pod x count, summed.
USAGE = {
    "default/tensorflow-dist-mnist": {"cpu": 3 * 1000, "memory": 3 * 200 * MI},  # ps 1 + worker 2
    "default/xgboost-dist-iris-test-train": {"cpu": 3 * 500, "memory": 3 * 256 * MI},  # master 1 + worker 2
    "default/paddle-simple-cpu": {"cpu": 2 * 1000, "memory": 2 * 256 * MI},  # worker 2
    "default/jax-simple": {"cpu": 2 * 1000, "memory": 2 * 200 * MI},  # worker 2
    "default/test-rayservice": {"cpu": 2000 + 1000, "memory": 4 * GI + 2 * GI},  # head 1 + small-group 1
}
KUBEFLOW = {"default/tensorflow-dist-mnist", "default/xgboost-dist-iris-test-train", "default/paddle-simple-cpu",
            "default/jax-simple"}
NOT_RUN = "does not run yet"


def _folder(tmp: Path, shared: Path, extra: list[dict] | None = None) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "queues.yaml").write_text(QUEUES)
    for name in EXAMPLES:
        (tmp / name).write_text((shared / "upstream" / "kueue" / "examples" / "jobs" / name).read_text())
    if extra:
        (tmp / "extra.yaml").write_text(yaml.safe_dump_all(extra))
    return tmp


def _cli(folder: Path, release: str) -> dict:
    res = CliRunner().invoke(main, ["simulate", str(folder), "--kueue-version", release, "-o", "json"])
    assert res.exit_code == 0, res.output
    assert NOT_RUN not in res.output
    return json.loads(res.stdout)


def _sim(folder: Path, release: str):
    objects = [(d.data, d.file, d.line) for p in sorted(folder.glob("*.yaml")) for d in yamlio.load_file(p)]
    return simulate(scenario_from_manifests(objects, "kf", release))


def _usage(sim) -> dict:
    return {w.spec.key: {r: v for (_, r), v in sorted(w.usage.items())} for w in sim.workloads if w.usage}


def test_plain_manifests_admit_each_kind_with_its_pod_sets_quota(tmp_path: Path, shared_dir: Path) -> None:
    """v0.18's default install ships kubeflow.org/{tfjob,xgboostjob,paddlejob,jaxjob} and ray.io/rayservice."""
    folder = _folder(tmp_path, shared_dir)
    out = _cli(folder, "v0.18")
    got = {w["name"]: (w["kind"], w["state"], w["admittedAt"], w["podSetCounts"]) for w in out["workloads"]}
    assert got == {
        "default/tensorflow-dist-mnist": ("TFJob", "Admitted", 0, {"ps": 1, "worker": 2}),
        "default/xgboost-dist-iris-test-train": ("XGBoostJob", "Admitted", 0, {"master": 1, "worker": 2}),
        "default/paddle-simple-cpu": ("PaddleJob", "Admitted", 0, {"worker": 2}),
        "default/jax-simple": ("JAXJob", "Admitted", 0, {"worker": 2}),
        "default/test-rayservice": ("RayService", "Admitted", 0, {"head": 1, "small-group": 1}),
    }
    assert out.get("warnings", []) == []
    assert _usage(_sim(folder, "v0.18")) == USAGE


def test_quota_decides_who_waits(tmp_path: Path, shared_dir: Path) -> None:
    """11.5 CPUs in all: with 11 the last of the load to arrive in file order (XGBoostJob, 1.5) waits."""
    folder = _folder(tmp_path, shared_dir)
    (folder / "queues.yaml").write_text(QUEUES.replace("nominalQuota: 20}", "nominalQuota: 11}"))
    states = {w["name"]: w["state"] for w in _cli(folder, "v0.18")["workloads"]}
    assert [n for n, s in states.items() if s != "Admitted"] == ["default/xgboost-dist-iris-test-train"]
    (folder / "queues.yaml").write_text(QUEUES.replace("nominalQuota: 20}", "nominalQuota: 11500m}"))
    assert {w["state"] for w in _cli(folder, "v0.18")["workloads"]} == {"Admitted"}


def test_v0_19_default_install_leaves_the_kubeflow_v1_jobs_unmanaged(tmp_path: Path, shared_dir: Path) -> None:
    """v0.19.2's shipped integrations.frameworks no longer list the training-operator v1 jobs (as for PyTorchJob):
    they run unmanaged; a kueue-manager-config naming them brings them back."""
    out = _cli(_folder(tmp_path / "a", shared_dir), "v0.19")
    states = {w["name"]: w["state"] for w in out["workloads"]}
    assert states == {name: "Admitted" if name == "default/test-rayservice" else "Inadmissible" for name in USAGE}
    assert sum("is not managed by Kueue (integration kubeflow.org/" in w for w in out["warnings"]) == 4
    frameworks = ["kubeflow.org/tfjob", "kubeflow.org/xgboostjob", "kubeflow.org/paddlejob", "kubeflow.org/jaxjob",
                  "ray.io/rayservice"]
    config = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "kueue-manager-config", "namespace": "kueue-system"},
              "data": {"controller_manager_config.yaml": yaml.safe_dump(
                  {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
                   "integrations": {"frameworks": frameworks}})}}
    folder = _folder(tmp_path / "b", shared_dir, [config])
    out = _cli(folder, "v0.19")
    assert {w["state"] for w in out["workloads"]} == {"Admitted"} and out.get("warnings", []) == []
    assert _usage(_sim(folder, "v0.19")) == USAGE
    config["data"]["controller_manager_config.yaml"] = config["data"]["controller_manager_config.yaml"].replace(
        "- ray.io/rayservice\n", "")
    out = _cli(_folder(tmp_path / "c", shared_dir, [config]), "v0.19")
    assert {w["name"]: w["state"] for w in out["workloads"]}["default/test-rayservice"] == "Inadmissible"


@pytest.mark.parametrize("release,missing", [
    ("v0.11", {"default/jax-simple", "default/test-rayservice"}),  # jaxjob from v0.12, rayservice from v0.17
    ("v0.16", {"default/test-rayservice"}),
])
def test_a_release_without_the_integration_does_not_manage_the_kind(tmp_path: Path, shared_dir: Path,
                                                                    release: str, missing: set) -> None:
    out = _cli(_folder(tmp_path, shared_dir), release)
    assert {w["name"] for w in out["workloads"] if w["state"] != "Admitted"} == missing
    assert all("holds no quota" in w for w in out["warnings"]) and len(out["warnings"]) == len(missing)


def _scenario(tmp: Path, shared: Path, workloads: list, events: list) -> Path:
    (tmp / ".git").mkdir(exist_ok=True)
    folder = _folder(tmp / "m", shared)
    spec = {"kueueVersion": "v0.18", "manifestFiles": ["m"], "workloads": workloads, "events": events}
    path = tmp / "scenario.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "kueueplan.io/v1alpha1", "kind": "Scenario",
                                    "metadata": {"name": "kf"}, "spec": spec}))
    assert folder.is_dir()
    return path


def test_workloads_entries_and_refs_run_them_and_a_rayservice_never_finishes(tmp_path: Path,
                                                                           shared_dir: Path) -> None:
    tf = yaml.safe_load((shared_dir / "upstream/kueue/examples/jobs/sample-tfjob.yaml").read_text())
    tf["metadata"]["name"] = "tf-inline"
    path = _scenario(tmp_path, shared_dir, [
        {"at": "1m", "runFor": "5m", "manifest": tf},
        {"at": "2m", "runFor": "5m", "ref": {"kind": "JAXJob", "name": "jax-simple"}},
        {"at": "3m", "runFor": "5m", "ref": {"kind": "RayService", "name": "test-rayservice"}},
    ], [{"at": "20m", "delete": {"kind": "PaddleJob", "name": "paddle-simple-cpu"}}])
    sim = simulate(load_scenario(path))
    out = result_json(sim)
    got = {w["name"]: (w["createdAt"], w["state"], w["finishedAt"]) for w in out["workloads"]}
    assert got["default/tf-inline"] == (60, "Finished", 360)
    assert got["default/jax-simple"] == (120, "Finished", 420)
    assert got["default/test-rayservice"] == (180, "Admitted", None)  # serving: runFor ignored
    assert got["default/paddle-simple-cpu"] == (0, "Finished", 1200)  # unreferenced: load from 0, until deleted
    assert _usage(sim) == {k: USAGE[k] for k in ("default/test-rayservice", "default/tensorflow-dist-mnist",
                                                 "default/xgboost-dist-iris-test-train")}


def test_a_configuration_naming_an_integration_its_release_lacks_does_not_make_it_managed(
        tmp_path: Path, shared_dir: Path) -> None:
    """Kueue v0.11 has no JAXJob integration (from v0.12): a Configuration that names kubeflow.org/jaxjob would keep
    its manager from starting (validateIntegrations, validate's KP452); the simulation says so and leaves JAXJob
    unmanaged instead of simulating an integration that does not exist."""
    config = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "kueue-manager-config", "namespace": "kueue-system"},
              "data": {"controller_manager_config.yaml": yaml.safe_dump(
                  {"apiVersion": "config.kueue.x-k8s.io/v1beta1", "kind": "Configuration",
                   "integrations": {"frameworks": ["kubeflow.org/tfjob", "kubeflow.org/jaxjob"]}})}}
    out = _cli(_folder(tmp_path, shared_dir, [config]), "v0.11")
    states = {w["name"]: w["state"] for w in out["workloads"]}
    assert states["default/tensorflow-dist-mnist"] == "Admitted" and states["default/jax-simple"] == "Inadmissible"
    assert any("integrations.frameworks names kubeflow.org/jaxjob, which Kueue v0.11 does not have" in w
               for w in out["warnings"])
