"""Manifests as load (second edition): workload objects of manifests/manifestFiles, kueueplan.io/* annotations,
`ref`, and objects the simulator does not understand named in `warnings`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.errors import KueueplanError
from kueueplan.simulate.engine import simulate
from kueueplan.simulate.result import result_json
from kueueplan.simulate.scenario import load_scenario

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

CLUSTER = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: f, resources: [{name: cpu, nominalQuota: 4}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: default}
spec: {clusterQueue: cq}
"""


def job(name: str, cpu: int = 2, annotations: dict | None = None, generate: bool = False) -> dict:
    meta: dict = {"namespace": "default", "labels": {"kueue.x-k8s.io/queue-name": "q"}}
    meta["generateName" if generate else "name"] = name
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x",
                                                           "resources": {"requests": {"cpu": str(cpu)}}}]}}}}


def scenario(tmp: Path, spec: dict, files: dict[str, list[dict]] | None = None,
             other: dict[str, list[dict]] | None = None) -> Path:
    (tmp / ".git").mkdir(exist_ok=True)  # the repository root that manifestFiles must stay inside
    (tmp / "cluster.yaml").write_text(CLUSTER)
    for rel, docs in {**(files or {}), **(other or {})}.items():
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / rel).write_text(yaml.safe_dump_all(docs, sort_keys=False))
    spec = {"manifestFiles": ["cluster.yaml", *sorted(files or {})], **spec}
    path = tmp / "scenario.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "kueueplan.io/v1alpha1", "kind": "Scenario",
                                    "metadata": {"name": "t"}, "spec": spec}, sort_keys=False))
    return path


def run(path: Path) -> dict:
    return result_json(simulate(load_scenario(path)))


def test_workload_objects_in_manifest_files_are_load_created_at_0_never_finishing(tmp_path: Path) -> None:
    out = run(scenario(tmp_path, {}, {"jobs/a.yaml": [job("a1"), job("a2")], "jobs/b.yaml": [job("b1")]}))
    names = [(w["name"], w["createdAt"], w["state"]) for w in out["workloads"]]
    # files in sorted path order, documents in file order; no runFor: the third waits for ever
    assert names == [("default/a1", 0, "Admitted"), ("default/a2", 0, "Admitted"), ("default/b1", 0, "Pending")]


def test_manifests_come_before_manifest_files_and_before_workloads_entries(tmp_path: Path) -> None:
    spec = {"manifests": [job("inline", 4)], "workloads": [{"at": 0, "runFor": 60, "manifest": job("entry", 4)}]}
    out = run(scenario(tmp_path, spec, {"z.yaml": [job("file", 4)]}))
    assert [w["name"] for w in out["workloads"]] == ["default/inline", "default/file", "default/entry"]
    assert out["workloads"][0]["state"] == "Admitted"  # first created: it gets the 4 CPUs


def test_annotations_set_arrival_run_time_and_copies(tmp_path: Path) -> None:
    ann = {"kueueplan.io/arrive-at": "1m", "kueueplan.io/run-for": "10m", "kueueplan.io/count": "3"}
    out = run(scenario(tmp_path, {}, {"jobs.yaml": [job("train", 2, ann)]}))
    got = [(w["name"], w["createdAt"], w["admittedAt"], w["finishedAt"]) for w in out["workloads"]]
    assert got == [("default/train-1", 60, 60, 660), ("default/train-2", 60, 60, 660),
                   ("default/train-3", 60, 660, 1260)]


@pytest.mark.parametrize("annotations,needle", [
    ({"kueueplan.io/count": "zero"}, "is not a positive integer"),
    ({"kueueplan.io/run-for": "soon"}, "is not a duration"),
])
def test_bad_annotation_names_the_object_file_and_line(tmp_path: Path, annotations: dict, needle: str) -> None:
    path = scenario(tmp_path, {}, {"jobs.yaml": [job("ok"), job("bad", 1, annotations)]})
    with pytest.raises(KueueplanError) as err:
        load_scenario(path)
    assert needle in err.value.message
    assert err.value.file.endswith("jobs.yaml") and err.value.line is not None and err.value.line > 1


def test_ref_takes_the_object_as_it_is_and_it_is_no_longer_load(tmp_path: Path) -> None:
    spec = {"workloads": [{"at": "30s", "runFor": "1m", "count": 2,
                           "ref": {"kind": "Job", "namespace": "default", "name": "gen-"}},
                          {"at": "30s", "ref": {"kind": "Job", "name": "named"}}]}
    out = run(scenario(tmp_path, spec, {"jobs.yaml": [job("gen-", 1, generate=True), job("named", 1),
                                                      job("loose", 1)]}))
    got = [(w["name"], w["createdAt"]) for w in out["workloads"]]
    # unreferenced `loose` is load at 0; generateName copies are numbered as first-edition entries are
    assert got == [("default/loose", 0), ("default/gen-1", 30), ("default/gen-2", 30), ("default/named", 30)]


@pytest.mark.parametrize("ref,needle", [
    ({"kind": "Job", "name": "missing"}, "no such object"),
    ({"kind": "ResourceFlavor", "name": "f"}, "not a workload kind"),
    ({"kind": "Job"}, "ref needs kind and name"),
])
def test_bad_ref_exits_2_with_the_scenario_line(tmp_path: Path, ref: dict, needle: str) -> None:
    path = scenario(tmp_path, {"workloads": [{"at": 0, "ref": ref}]})
    res = CliRunner().invoke(main, ["simulate", str(path), "-o", "json"])
    assert res.exit_code == 2
    assert needle in res.stderr and "scenario.yaml:" in res.stderr


def test_an_object_the_simulator_does_not_run_is_a_warning_not_dropped_silently(tmp_path: Path) -> None:
    spark = {"apiVersion": "sparkoperator.k8s.io/v1beta2", "kind": "SparkApplication",
             "metadata": {"name": "pi", "namespace": "default"}}
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kueue-manager-config",
                                                                    "namespace": "kueue-system"},
              "data": {"controller_manager_config.yaml": "apiVersion: config.kueue.x-k8s.io/v1beta1\n"}}
    out = run(scenario(tmp_path, {}, {"other.yaml": [spark, widget, config, job("j")]}))
    assert [w["name"] for w in out["workloads"]] == ["default/j"]
    assert out["warnings"] == [
        "SparkApplication default/pi: a Kueue integration the simulator does not run yet: it is not part of the load",
        "Widget w: not modelled by the simulator: ignored",
    ]


def _pod(cpu: int) -> dict:
    return {"spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": str(cpu)}}}]}}


def test_every_integration_the_simulator_derives_pod_sets_for_is_load(tmp_path: Path) -> None:
    # The contract: "a workload object (RayJob, RayCluster, Job, Pod, JobSet, or any other kind of Kueue's
    # integrations that the simulator supports)" in manifests is load. The JobSet's two replicated jobs hold
    # 1 + 1 CPU; the MPIJob's launcher and 2 workers hold 3, more than the 2 left of the queue's 4: it waits for
    # the JobSet (run-for 10m) to finish.
    meta = {"namespace": "default", "labels": {"kueue.x-k8s.io/queue-name": "q"}}
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
              "metadata": {**meta, "name": "js", "annotations": {"kueueplan.io/run-for": "10m"}},
              "spec": {"replicatedJobs": [{"name": n, "replicas": 1, "template": {"spec": {"template": _pod(1)}}}
                                          for n in ("driver", "workers")]}}
    mpijob = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {**meta, "name": "mpi"},
              "spec": {"mpiReplicaSpecs": {"Launcher": {"replicas": 1, "template": _pod(1)},
                                           "Worker": {"replicas": 2, "template": _pod(1)}}}}
    out = run(scenario(tmp_path, {}, {"jobs.yaml": [jobset, mpijob]}))
    got = {w["name"]: (w["kind"], w["state"], w["admittedAt"], w.get("finishedAt")) for w in out["workloads"]}
    assert got == {"default/js": ("JobSet", "Finished", 0, 600), "default/mpi": ("MPIJob", "Admitted", 600, None)}
    assert out.get("warnings", []) == []
    # and a `workloads` entry can refer to such an object
    ref = run(scenario(tmp_path, {"workloads": [{"at": "5m", "runFor": "1m",
                                                 "ref": {"kind": "JobSet", "name": "js"}}]},
                       {"jobs.yaml": [jobset]}))
    assert [(w["name"], w["createdAt"], w["finishedAt"]) for w in ref["workloads"]] == [("default/js", 300, 360)]


def _manifest_keys(folder: Path) -> set[tuple[str, str, str]]:
    keys = set()
    for f in sorted(folder.rglob("*.yaml")):
        for doc in yaml.safe_load_all(f.read_text()):
            if isinstance(doc, dict) and doc.get("metadata"):
                m = doc["metadata"]
                keys.add((doc["kind"], m.get("namespace", "default"), m.get("name") or m.get("generateName")))
    return keys


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*/scenario*.yaml")), ids=lambda p: p.parent.name + "/" + p.name)
def test_no_example_scenario_inlines_a_workload_of_its_gen(path: Path) -> None:
    """Example scenarios simulate the build (manifestFiles + ref), not hand-copies of it."""
    built = _manifest_keys(path.parent / "gen")
    spec = yaml.safe_load(path.read_text())["spec"]
    inlined = [w["manifest"] for w in spec.get("workloads", []) if "manifest" in w]
    inlined += [e["apply"] for e in spec.get("events", []) if "apply" in e and "manifestFile" not in e["apply"]]
    copies = [(m["kind"], m["metadata"].get("namespace", "default"),
               m["metadata"].get("name") or m["metadata"].get("generateName")) for m in inlined]
    assert not [c for c in copies if c in built]
    assert any("ref" in w for w in spec.get("workloads", []))


def test_json_names_load_from_manifests(tmp_path: Path) -> None:
    path = scenario(tmp_path, {}, {"jobs.yaml": [job("x")]})
    res = CliRunner().invoke(main, ["simulate", str(path), "-o", "json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["workloads"][0]["name"] == "default/x"


def test_apply_manifest_file_applies_the_built_objects(tmp_path: Path) -> None:
    bigger = yaml.safe_load_all(CLUSTER.replace("nominalQuota: 4", "nominalQuota: 8"))
    spec = {"events": [{"at": "1m", "apply": {"manifestFile": "raised/cluster.yaml"}}]}
    out = run(scenario(tmp_path, spec, {"jobs.yaml": [job("a", 4), job("b", 4)]}, {"raised/cluster.yaml": list(bigger)}))
    assert [(w["name"], w["admittedAt"]) for w in out["workloads"]] == [("default/a", 0), ("default/b", 60)]


def test_apply_manifest_file_refuses_workloads_and_escapes(tmp_path: Path) -> None:
    spec = {"events": [{"at": 0, "apply": {"manifestFile": "more.yaml"}}]}
    with pytest.raises(KueueplanError, match="workloads arrive through"):
        load_scenario(scenario(tmp_path, spec, {}, {"more.yaml": [job("x")]}))
    spec = {"events": [{"at": 0, "apply": {"manifestFile": "../../etc/passwd"}}]}
    with pytest.raises(KueueplanError, match="leaves"):
        load_scenario(scenario(tmp_path, spec))


def test_gke_infinite_quota_simulates_and_says_what_it_becomes(tmp_path: Path) -> None:
    """`nominalQuota: 1000000000Ti` (GKE tutorials' "infinite"): capped by the API server, unlimited in Kueue."""
    cluster = CLUSTER.replace("coveredResources: [cpu]", "coveredResources: [cpu, memory]").replace(
        "resources: [{name: cpu, nominalQuota: 4}]",
        "resources: [{name: cpu, nominalQuota: 4}, {name: memory, nominalQuota: 1000000000Ti}]")
    big = job("big", 2)
    big["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["memory"] = "1Ei"
    path = scenario(tmp_path, {}, {"jobs.yaml": [big]})
    (tmp_path / "cluster.yaml").write_text(cluster)
    res = CliRunner().invoke(main, ["simulate", str(path), "-o", "json"])
    assert res.exit_code == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["workloads"][0]["state"] == "Admitted"
    assert out["warnings"] == ["ClusterQueue cq: memory nominalQuota '1000000000Ti' on flavor f: the API server caps "
                               "binary-suffix quantities at 2^63-1 (9223372036854775807); in base units it does not "
                               "fit Kueue's int64 arithmetic, so Kueue treats this quota as unlimited"]


def test_a_scenario_above_the_workload_bound_names_replicas_as_the_cause(tmp_path: Path) -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "web", "namespace": "default", "labels": {"kueue.x-k8s.io/queue-name": "q"}},
                  "spec": {"replicas": 2_000_000, "template": _pod(1)}}
    res = CliRunner().invoke(main, ["simulate", str(scenario(tmp_path, {"workloads": [{"manifest": deployment}]}))])
    assert res.exit_code == 2
    assert "count 1 x 2,000,000 Workloads (replicas) brings the scenario above 1,000,000 workloads" in res.output
