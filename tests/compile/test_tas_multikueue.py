"""Topology (TAS) and MultiKueue documents: the objects each Kueue release serves (apiVersion and shape read from
the release CRDs in the schema pack), valid for that release's schemas and CEL rules, and the references build
checks (a flavor's topologyName, a check's clusters)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kueueplan.compile import compile_platform
from kueueplan.emit.build import render
from kueueplan.errors import KueueplanError
from kueueplan.spec.load import load_spec
from kueueplan.validate import validate
from kueueplan.validate.schemapack import crd_documents, pack_release

from ._support import crd_errors

HEAD = "apiVersion: kueueplan.io/v1alpha1\n"
PLATFORM = HEAD + """kind: Topology
metadata: {name: default}
spec:
  levels: [cloud.provider.com/topology-block, cloud.provider.com/topology-rack, kubernetes.io/hostname]
---
""" + HEAD + """kind: ResourceFlavor
metadata: {name: tas-flavor}
spec:
  nodeLabels: {cloud.provider.com/node-group: tas-group}
  topologyName: default
---
""" + HEAD + """kind: MultiKueueCluster
metadata: {name: worker1}
spec:
  kubeConfig: {locationType: Secret, location: worker1-secret}
---
""" + HEAD + """kind: AdmissionCheck
metadata: {name: sample-multikueue}
spec:
  multiKueue: {configName: multikueue-test, clusters: [worker1]}
---
""" + HEAD + """kind: Team
metadata: {name: ml}
spec:
  quotas: [{flavor: tas-flavor, resources: {cpu: 9, memory: 36Gi}}]
  admissionChecks: [sample-multikueue]
"""


def _spec(tmp_path: Path, version: str, platform: str = PLATFORM, env: str = "") -> Path:
    (tmp_path / "platform.yaml").write_text(platform)
    (tmp_path / "env.yaml").write_text(HEAD + f"kind: Environment\nmetadata: {{name: e}}\nspec:\n"
                                              f"  kueueVersion: {version}\n{env}")
    return tmp_path


def _objects(spec: Path) -> dict[str, dict[str, Any]]:
    return {m["kind"]: m for m in compile_platform(spec)["e"]}


def _served(version: str, kind: str) -> list[str]:
    crds = crd_documents("kueue", pack_release("kueue", version) or "")
    crd = crds.get(f"{kind}.kueue.x-k8s.io")
    return [v["name"] for v in crd["spec"]["versions"] if v.get("served")] if crd else []


# (release, Topology apiVersion, MultiKueue apiVersion): one per API generation
RELEASES = [("v0.9.5", "v1alpha1", "v1beta1"), ("v0.13.10", "v1alpha1", "v1beta1"), ("v0.14.8", "v1beta1", "v1beta1"),
            ("v0.19.2", "v1beta2", "v1beta2")]


@pytest.mark.parametrize("version,topology_api,multikueue_api", RELEASES)
def test_each_release_gets_the_api_its_crds_serve(tmp_path: Path, version: str, topology_api: str,
                                                  multikueue_api: str) -> None:
    objects = _objects(_spec(tmp_path, version))
    for kind, api in (("Topology", topology_api), ("MultiKueueCluster", multikueue_api),
                      ("MultiKueueConfig", multikueue_api)):
        assert objects[kind]["apiVersion"] == f"kueue.x-k8s.io/{api}"
        assert api in _served(version, kind), (kind, version)
    assert objects["Topology"]["spec"] == {"levels": [{"nodeLabel": "cloud.provider.com/topology-block"},
                                                      {"nodeLabel": "cloud.provider.com/topology-rack"},
                                                      {"nodeLabel": "kubernetes.io/hostname"}]}
    assert objects["ResourceFlavor"]["spec"]["topologyName"] == "default"
    assert objects["AdmissionCheck"]["spec"] == {
        "controllerName": "kueue.x-k8s.io/multikueue",
        "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": "multikueue-test"}}
    assert objects["MultiKueueConfig"]["metadata"]["name"] == "multikueue-test"
    assert objects["MultiKueueConfig"]["spec"] == {"clusters": ["worker1"]}
    kube_config = {"locationType": "Secret", "location": "worker1-secret"}
    if multikueue_api == "v1beta2":
        assert objects["MultiKueueCluster"]["spec"] == {"clusterSource": {"kubeConfig": kube_config}}
    else:
        assert objects["MultiKueueCluster"]["spec"] == {"kubeConfig": kube_config}
    errors = [f.rule for f in validate([str(tmp_path)], policies=[]).findings if f.severity == "error"]
    # v0.14 turns TAS on by default but keeps a ClusterQueue with TAS flavors and a MultiKueue check inactive
    # until v0.15 (Kueue pkg/cache ClusterQueue NotSupportedWithTopologyAwareScheduling); earlier releases have
    # TAS off by default, so the flavor's topologyName is ignored.
    assert errors == (["KP447"] if version == "v0.14.8" else [])


def test_kinds_older_than_the_release_are_refused(tmp_path: Path) -> None:
    with pytest.raises(KueueplanError) as info:
        compile_platform(_spec(tmp_path, "v0.8.4"))
    assert "Topology needs Kueue v0.9 or newer" in info.value.message
    assert (Path(info.value.file).name, info.value.line) == ("platform.yaml", 4)


def test_a_cluster_profile_needs_v1beta2_alone_or_v0_15_beside_kube_config(tmp_path: Path) -> None:
    profile = PLATFORM.replace("kubeConfig: {locationType: Secret, location: worker1-secret}",
                               "clusterProfileRef: {name: worker1-profile}")
    assert _objects(_spec(tmp_path, "v0.19.2", profile))["MultiKueueCluster"]["spec"] == {
        "clusterSource": {"clusterProfileRef": {"name": "worker1-profile"}}}
    with pytest.raises(KueueplanError) as info:
        compile_platform(_spec(tmp_path, "v0.19.2", profile, "  kueueAPIVersion: v1beta1\n"))
    assert "Kueue's v1beta1 MultiKueueCluster needs kubeConfig" in info.value.message
    both = PLATFORM.replace("kubeConfig: {locationType: Secret, location: worker1-secret}",
                            "kubeConfig: {location: s}\n  clusterProfileRef: {name: p}")
    old = _objects(_spec(tmp_path, "v0.15.8", both, "  kueueAPIVersion: v1beta1\n"))["MultiKueueCluster"]
    assert old["spec"] == {"kubeConfig": {"locationType": "Secret", "location": "s"},
                           "clusterProfileRef": {"name": "p"}}
    with pytest.raises(KueueplanError) as info:
        compile_platform(_spec(tmp_path, "v0.14.8", both))
    assert "MultiKueueCluster spec.clusterProfileRef needs Kueue v0.15 or newer" in info.value.message
    with pytest.raises(KueueplanError) as info:
        compile_platform(_spec(tmp_path, "v0.19.2", both))
    assert "exactly one of kubeConfig and clusterProfileRef" in info.value.message


@pytest.mark.parametrize("old,new,needle,line", [
    ("topologyName: default", "topologyName: defualt", "Topology 'defualt' is not declared for environment 'e'; "
                                                       "did you mean 'default'?", 12),
    ("clusters: [worker1]", "clusters: [worker2]", "MultiKueueCluster 'worker2' is not declared for environment "
                                                   "'e'; did you mean 'worker1'?", 24),
])
def test_unknown_references_are_build_errors(tmp_path: Path, old: str, new: str, needle: str, line: int) -> None:
    with pytest.raises(KueueplanError) as info:
        compile_platform(_spec(tmp_path, "v0.19.2", PLATFORM.replace(old, new)))
    assert needle in info.value.message
    assert (Path(info.value.file).name, info.value.line) == ("platform.yaml", line)


def test_release_limits_on_levels_clusters_and_quota_management(tmp_path: Path) -> None:
    nine = PLATFORM.replace("levels: [cloud.provider.com/topology-block,",
                            "levels: [" + "".join(f"l{i}/x, " for i in range(6)) + "cloud.provider.com/topology-block,")
    with pytest.raises(KueueplanError) as info:
        compile_platform(_spec(tmp_path, "v0.12.10", nine))
    assert "9 levels; Kueue v0.12.10 allows at most 8" in info.value.message
    assert len(_objects(_spec(tmp_path, "v0.13.10", nine))["Topology"]["spec"]["levels"]) == 9
    managed = PLATFORM.replace("clusters: [worker1]}", "clusters: [worker1], quotaManagement: Automated}")
    assert _objects(_spec(tmp_path, "v0.19.2", managed))["MultiKueueConfig"]["spec"]["quotaManagement"] == "Automated"
    with pytest.raises(KueueplanError) as info:
        compile_platform(_spec(tmp_path, "v0.17.8", managed))
    assert "quotaManagement needs Kueue v0.18" in info.value.message


def test_topologies_are_written_first_and_overlayable(tmp_path: Path) -> None:
    overlay = "  overlays:\n    Topology:\n      default: {levels: [rack, kubernetes.io/hostname]}\n" \
              "    MultiKueueCluster:\n      worker1: {kubeConfig: {location: other-secret}}\n"
    spec = _spec(tmp_path, "v0.19.2", env=overlay)
    objects = _objects(spec)
    assert objects["Topology"]["spec"]["levels"] == [{"nodeLabel": "rack"}, {"nodeLabel": "kubernetes.io/hostname"}]
    assert objects["Topology"]["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] == "-1"
    assert objects["MultiKueueCluster"]["spec"]["clusterSource"]["kubeConfig"]["location"] == "other-secret"
    files = render(spec).files
    kustomization = files["e/kustomization.yaml"]
    order = [line[2:] for line in kustomization.splitlines() if line.startswith("- ")]
    assert order.index("topologies.yaml") < order.index("resourceflavors.yaml")
    assert {"multikueueclusters.yaml", "multikueueconfigs.yaml"} <= set(order)
    assert "kind: Topology" in files["e/topologies.yaml"]
    platform = load_spec(spec)
    assert [e.name for e in platform.entries["Topology"]] == ["default"]


@pytest.mark.parametrize("levels,needle", [
    ("[kubernetes.io/hostname, rack]", "kubernetes.io/hostname can only be the lowest (last) level"),
    ("[rack, rack]", "topology levels must be unique"),
    ("[]", "List should have at least 1 item"),
])
def test_topology_levels_follow_the_crds_rules(tmp_path: Path, levels: str, needle: str) -> None:
    bad = PLATFORM.replace("levels: [cloud.provider.com/topology-block, cloud.provider.com/topology-rack, "
                           "kubernetes.io/hostname]", f"levels: {levels}")
    with pytest.raises(KueueplanError) as info:
        load_spec(_spec(tmp_path, "v0.19.2", bad))
    assert needle in info.value.message
    assert (Path(info.value.file).name, info.value.line) == ("platform.yaml", 5)


@pytest.mark.parametrize("api", ["v1beta1", "v1beta2"])
def test_objects_pass_todays_crds_strictly(tmp_path: Path, api: str, shared_dir: Path) -> None:
    """Field by field against Kueue's current CRDs (both served versions), unknown fields refused as under
    kubectl's strict field validation."""
    objects = compile_platform(_spec(tmp_path, "v0.19.2", env=f"  kueueAPIVersion: {api}\n"))["e"]
    kueue = [o for o in objects if o["apiVersion"].startswith("kueue.x-k8s.io/")]
    assert {o["kind"] for o in kueue} >= {"Topology", "MultiKueueCluster", "MultiKueueConfig", "AdmissionCheck"}
    assert {o["apiVersion"] for o in kueue} == {f"kueue.x-k8s.io/{api}"}
    assert [(o["kind"], crd_errors(shared_dir, o)) for o in kueue if crd_errors(shared_dir, o)] == []


@pytest.mark.parametrize("second,kind", [
    ("multiKueue: {configName: multikueue-test, clusters: [worker1]}", "MultiKueueConfig 'multikueue-test'"),
    ("multiKueue: {clusters: [worker1]}", None),  # its own config, named like the check
])
def test_two_checks_never_generate_one_configuration(tmp_path: Path, second: str, kind: str | None) -> None:
    platform = PLATFORM + "---\n" + HEAD + f"kind: AdmissionCheck\nmetadata: {{name: other}}\nspec:\n  {second}\n"
    spec = _spec(tmp_path, "v0.19.2", platform)
    if kind is None:
        names = [m["metadata"]["name"] for m in compile_platform(spec)["e"] if m["kind"] == "MultiKueueConfig"]
        assert sorted(names) == ["multikueue-test", "other"]
        return
    with pytest.raises(KueueplanError) as info:
        compile_platform(spec)
    # checks are compiled in name order: the second one named is refused, naming the first
    assert f"{kind} is also generated for 'other'" in info.value.message
    assert Path(info.value.file).name == "platform.yaml"
