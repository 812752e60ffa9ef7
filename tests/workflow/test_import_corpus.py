"""Lossless import on realistic multi-file platforms (tests/corpus): `import` exits 0, `build` of the imported
spec and `kueueplan diff INPUT gen/<env>` shows no change, whatever the platform uses (several ClusterQueues per
namespace, TAS, MultiKueue, lend-only queues, every workload kind). What import cannot carry makes it exit 1,
naming the object."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kueueplan.cli import main

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
# Objects outside the spec (not Kueue's, no queue label): import names them, the platform applies them as they are.
OUTSIDE = {"workload-zoo": {"ClusterTrainingRuntime": "skipped: ClusterTrainingRuntime torch-distributed: "
                                                      "kueueplan's spec has no ClusterTrainingRuntime"},
           "ml-platform": {"Service": "skipped: Service team-vision/detector-inference: kueueplan's spec has no "
                                      "Service"}}


def invoke(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, list(args))
    return res.exit_code, res.stdout, res.stderr


def _import_build(source: Path, tmp_path: Path) -> tuple[Path, str]:
    code, out, err = invoke("import", str(source), "-o", str(tmp_path / "environments"))
    assert code == 0, out + err
    code, out, err2 = invoke("build", str(tmp_path / "environments"), "-o", str(tmp_path / "gen"))
    assert code == 0, out + err2
    return tmp_path / "gen" / "default", err


def _drop(folder: Path, kind: str) -> None:
    """The input as the spec carries it: without the objects of `kind` (outside the spec)."""
    for path in folder.rglob("*.yaml"):
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
        if any(d.get("kind") == kind for d in docs):
            path.write_text(yaml.safe_dump_all([d for d in docs if d.get("kind") != kind]))


@pytest.mark.parametrize("platform", ["gke-ai-platform", "tas-training", "multikueue-manager", "workload-zoo",
                                      "research-cluster", "ml-platform"])
def test_import_then_build_reproduces_the_platform(platform: str, tmp_path: Path) -> None:
    gen, import_notes = _import_build(CORPUS / platform, tmp_path)
    source = tmp_path / "input"
    shutil.copytree(CORPUS / platform, source)
    for kind, note in OUTSIDE.get(platform, {}).items():
        assert f"{note} (outside the spec: apply it as it is)" in import_notes
        _drop(source, kind)
    assert "not carried" not in import_notes and "unresolved" not in import_notes
    code, out, err = invoke("diff", str(source), str(gen))
    assert code == 0, out + err
    assert "no changes" in out, out


def _spec(tmp_path: Path, rel: str) -> list[dict]:
    return [d for d in yaml.safe_load_all((tmp_path / "environments" / rel).read_text()) if d]


def test_queues_sharing_a_namespace_become_one_team(tmp_path: Path) -> None:
    """The reference architecture's high/low-priority and compact queues of team-a all select namespace team-a:
    one Team, its three ClusterQueues as entries (what they share on the team), each LocalQueue keeping its queue."""
    _import_build(CORPUS / "gke-ai-platform", tmp_path)
    [team] = _spec(tmp_path, "teams/team-a.yaml")
    spec = team["spec"]
    assert [q["name"] for q in spec["clusterQueues"]] == ["team-a-high-priority", "team-a-low-priority",
                                                          "team-a-compact"]
    assert spec["cohort"] == "ai-platform"  # shared by all three: said once
    assert spec["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "team-a"}}
    assert {q["name"]: q["clusterQueue"] for q in spec["localQueues"]} == {
        "lq-high-priority": "team-a-high-priority", "lq-low-priority": "team-a-low-priority",
        "lq-compact": "team-a-compact"}
    assert spec["namespaces"] == [{"name": "team-a", "labels": {"platform.example.com/team": "team-a"}}]
    assert sorted(p.name for p in (tmp_path / "environments" / "teams").iterdir()) == ["team-a.yaml", "team-b.yaml"]


def test_a_queue_without_namespace_selector_is_lend_only(tmp_path: Path) -> None:
    _import_build(CORPUS / "workload-zoo", tmp_path)
    [team] = _spec(tmp_path, "teams/reserve.yaml")
    assert team["spec"]["lendOnly"] is True
    assert "namespaceSelector" not in team["spec"] and "namespaces" not in team["spec"]
    [cq] = [d for d in yaml.safe_load_all((tmp_path / "gen" / "default" / "clusterqueues.yaml").read_text())
            if d and d["metadata"]["name"] == "reserve"]
    assert "namespaceSelector" not in cq["spec"]  # Kueue: a nil selector matches no namespace


def test_topology_and_multikueue_objects_become_their_documents(tmp_path: Path) -> None:
    _import_build(CORPUS / "tas-training", tmp_path / "tas")
    [topology] = _spec(tmp_path / "tas", "topologies.yaml")
    assert topology["spec"]["levels"] == ["cloud.provider.com/topology-block", "cloud.provider.com/topology-rack",
                                          "kubernetes.io/hostname"]
    _import_build(CORPUS / "multikueue-manager", tmp_path / "mk")
    [check] = _spec(tmp_path / "mk", "admission-checks.yaml")
    assert check["spec"] == {"multiKueue": {"configName": "gpu-workers",
                                            "clusters": ["worker-us-east", "worker-eu-west"]}}
    clusters = {d["metadata"]["name"]: d["spec"] for d in _spec(tmp_path / "mk", "multikueue-clusters.yaml")}
    assert clusters["worker-eu-west"] == {"kubeConfig": {"locationType": "Secret",
                                                         "location": "worker-eu-west-kubeconfig"}}


def test_every_workload_kind_becomes_a_workload(tmp_path: Path) -> None:
    _import_build(CORPUS / "workload-zoo", tmp_path)
    kinds = {d["metadata"]["name"]: d["spec"]["kind"] for p in (tmp_path / "environments" / "workloads").iterdir()
             for d in yaml.safe_load_all(p.read_text()) if d}
    assert sorted(kinds.values()) == sorted(["RayJob", "RayCluster", "Job", "Pod", "JobSet", "PyTorchJob", "MPIJob",
                                             "TrainJob", "AppWrapper", "LeaderWorkerSet", "Deployment",
                                             "StatefulSet"])
    [lws] = _spec(tmp_path, "workloads/vllm-multihost.yaml")
    assert lws["spec"]["spec"]["leaderWorkerTemplate"]["size"] == 2  # the object's spec, verbatim
    assert lws["metadata"]["labels"] == {"app": "vllm"}  # queue label -> localQueue, the others kept


def _copy(tmp_path: Path, platform: str) -> Path:
    source = tmp_path / "in"
    shutil.copytree(CORPUS / platform, source)
    return source


def test_what_import_cannot_carry_makes_it_exit_1_naming_it(tmp_path: Path) -> None:
    source = _copy(tmp_path, "workload-zoo")
    (source / "workloads" / "more.yaml").write_text("""
apiVersion: kubeflow.org/v1
kind: MPIJob
metadata:
  name: legacy-mpi
  namespace: ml
  labels: {kueue.x-k8s.io/queue-name: ml-queue}
spec:
  mpiReplicaSpecs: {}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: labelled-pods
  namespace: ml
spec:
  selector: {matchLabels: {app: x}}
  template:
    metadata:
      labels: {app: x, kueue.x-k8s.io/queue-name: ml-queue}
    spec:
      containers: [{name: x, image: x}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: prebuilt
  namespace: ml
spec:
  queueName: ml-queue
  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: x, image: x}]}}}]
""")
    code, out, err = invoke("import", str(source), "-o", str(tmp_path / "spec"))
    assert code == 1, out + err
    assert ("not carried: MPIJob ml/legacy-mpi: kueueplan writes MPIJob as kubeflow.org/v2beta1, not "
            "kubeflow.org/v1") in err
    assert ("not carried: Deployment ml/labelled-pods: the queue-name label is on its pod template only (Kueue "
            "queues each pod by it); kueueplan writes it on the Deployment") in err
    assert "not carried: Workload ml/prebuilt: kueueplan's spec has no Workload" in err
    assert "import is incomplete: 3 object(s) not carried" in err


def test_references_the_input_lacks_are_reported_at_import(tmp_path: Path) -> None:
    source = _copy(tmp_path, "tas-training")
    (source / "kueue" / "topology.yaml").unlink()
    code, out, err = invoke("import", str(source), "-o", str(tmp_path / "tas"))
    assert code == 1, out + err
    assert "unresolved: ResourceFlavor h100-tas uses Topology gpu-topology, which the input does not contain" in err
    source = _copy(tmp_path / "b", "multikueue-manager")
    clusters = (source / "clusters.yaml").read_text()
    (source / "clusters.yaml").write_text(clusters.split("---")[0])  # worker-eu-west is gone
    code, out, err = invoke("import", str(source), "-o", str(tmp_path / "mk"))
    assert code == 1, out + err
    assert ("unresolved: MultiKueueConfig gpu-workers uses MultiKueueCluster worker-eu-west, which the input does "
            "not contain") in err


def _states(*args: str) -> dict[str, tuple[str, str | None]]:
    import json

    code, out, err = invoke("simulate", *args, "-o", "json")
    assert code in (0, 1), out + err
    return {w["name"]: (w["state"], w.get("clusterQueue")) for w in json.loads(out)["workloads"]}


@pytest.mark.parametrize("platform", ["gke-ai-platform", "ml-platform", "research-cluster"])
def test_the_imported_environment_simulates_the_inputs_load(platform: str, tmp_path: Path) -> None:
    """Each imported workload is load at 0 (or as its kueueplan.io/* annotations say), as `simulate` takes the
    manifests themselves: same workloads, same states, same ClusterQueues (ml-platform's run-for annotations
    make five of them finish). Both sides find the Deployment's pods Inadmissible, as Kueue would: the
    configuration leaves the deployment integration off."""
    _import_build(CORPUS / platform, tmp_path)
    manifests = _states(str(CORPUS / platform))
    spec = _states(str(tmp_path / "environments"), "--env", "default")
    assert manifests
    assert spec == manifests
    if platform == "ml-platform":
        assert spec["team-vision/detector-inference-0"] == ("Inadmissible", None)
        assert sum(state == "Finished" for state, _ in manifests.values()) == 5


@pytest.mark.parametrize(("bad", "named"), [
    ("kind: Topology\nmetadata: {name: t}\nspec: {levels: [a, b]}\n", "Topology t"),
    ("kind: MultiKueueConfig\nmetadata: {name: c}\nspec: {clusters: 5}\n", "MultiKueueConfig c"),
    ("kind: MultiKueueCluster\nmetadata: {name: c}\nspec: [1]\n", "MultiKueueCluster c"),
])
def test_kueue_objects_of_the_wrong_shape_are_clean_errors(bad: str, named: str, tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "bad.yaml").write_text(f"apiVersion: kueue.x-k8s.io/v1beta2\n{bad}")
    res = CliRunner().invoke(main, ["import", str(tmp_path / "in"), "-o", str(tmp_path / "out")])
    assert res.exit_code == 2, res.output
    assert f"bad.yaml:1: cannot import {named}: unexpected shape" in res.output
    assert "Traceback" not in res.output and not (tmp_path / "out").exists()


def test_a_configuration_map_of_the_wrong_shape_is_a_clean_error(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "config.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kueue-manager-config, namespace: kueue-system}\ndata: 5\n")
    res = CliRunner().invoke(main, ["import", str(tmp_path / "in"), "-o", str(tmp_path / "out")])
    assert res.exit_code == 2 and "config.yaml:1: cannot import ConfigMap kueue-system/kueue-manager-config" in res.output


REPO = CORPUS.parents[1]


@pytest.mark.parametrize("rendered", ["gen/prod", "examples/one-cluster-dev-prod/gen/shared-cluster",
                                      "examples/gang-provisioning/gen/docs", "examples/oke-dev-prod/gen/lab"])
def test_kueueplans_own_output_imports_back_to_the_same_platform(rendered: str, tmp_path: Path) -> None:
    """What `build` wrote, imported: the namespaces' team label groups the dev and prod ClusterQueues of a team
    into one Team again, a generated namespaceSelector is left to build, and the rebuild (objects and simulated
    load) is the same. The Argo CD Application is outside the spec."""
    gen, notes = _import_build(REPO / rendered, tmp_path)
    source = tmp_path / "input"
    shutil.copytree(REPO / rendered, source)
    _drop(source, "Application")
    code, out, err = invoke("diff", str(source), str(gen))
    assert code == 0 and "no changes" in out, out + err
    if rendered.startswith("examples/one-cluster"):
        [team] = _spec(tmp_path, "teams/team-a.yaml")
        assert [q["name"] for q in team["spec"]["clusterQueues"]] == ["team-a-prod", "team-a-dev"]
        assert "namespaceSelector" not in team["spec"]["clusterQueues"][1]  # build's own: generated again


def test_what_build_would_not_give_back_is_named(tmp_path: Path) -> None:
    """Import builds what it wrote and compares it with the input as `diff` does. A Team has one set of labels for
    its ClusterQueue and LocalQueues, so a label on the ClusterQueue alone comes back on the LocalQueue too: said,
    exit 1, instead of a silent change."""
    source = _copy(tmp_path, "workload-zoo")
    path = source / "queues" / "platform.yaml"
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    for doc in docs:
        if doc["kind"] == "ClusterQueue":
            doc["metadata"]["labels"] = {"cost-center": "ml-123"}
    path.write_text(yaml.safe_dump_all(docs))
    code, out, err = invoke("import", str(source), "-o", str(tmp_path / "spec"))
    assert code == 1, out + err
    assert ("not carried: LocalQueue ml/ml-queue: the imported spec builds it differently (labels.cost-center)"
            in err)


def test_a_v1beta1_platform_built_as_v1beta2_shows_no_change(tmp_path: Path) -> None:
    """`diff` compares after API-version conversion: the v1beta1 reference architecture, imported and built with
    the release's default API (v1beta2: cohortName, ...), is the same platform."""
    code, out, err = invoke("import", str(CORPUS / "gke-ai-platform"), "-o", str(tmp_path / "spec"))
    assert code == 0, out + err
    env = tmp_path / "spec" / "env-default.yaml"
    env.write_text(env.read_text().replace("  kueueAPIVersion: v1beta1\n", "  kueueVersion: v0.19.2\n"))
    assert invoke("build", str(tmp_path / "spec"), "-o", str(tmp_path / "gen"))[0] == 0
    built = (tmp_path / "gen" / "default" / "clusterqueues.yaml").read_text()
    assert "apiVersion: kueue.x-k8s.io/v1beta2" in built and "cohortName: ai-platform" in built
    code, out, err = invoke("diff", str(CORPUS / "gke-ai-platform"), str(tmp_path / "gen" / "default"))
    assert code == 0 and "no changes" in out, out + err


def test_a_kueue_field_the_spec_has_no_place_for_is_named(tmp_path: Path) -> None:
    """Kueue's admission fair sharing example: `admissionScope` on a ClusterQueue has no spec field."""
    source = _copy(tmp_path, "workload-zoo")
    path = source / "queues" / "platform.yaml"
    path.write_text(path.read_text().replace("  cohortName: shared-pool\n  namespaceSelector:",
                                             "  cohortName: shared-pool\n  admissionScope:\n"
                                             "    admissionMode: UsageBasedAdmissionFairSharing\n"
                                             "  namespaceSelector:", 1))
    code, out, err = invoke("import", str(source), "-o", str(tmp_path / "spec"))
    assert code == 1, out + err
    assert "not carried: ClusterQueue ml: kueueplan's spec has no ClusterQueue field admissionScope" in err
    assert "import is incomplete: 1 object(s) not carried" in err  # said once, not again by the build-check
