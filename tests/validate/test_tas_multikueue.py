"""validate on TAS and MultiKueue platforms written as real multi-file manifests (tests/validate/platforms):
the references Kueue accepts but that never work (KP442-KP447), judged for the Kueue release."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kueueplan.validate import validate
from kueueplan.validate.finding import Finding

PLATFORMS = Path(__file__).resolve().parent / "platforms"
OURS = ("KP442", "KP443", "KP444", "KP445", "KP446", "KP447", "KP448")


def _copy(tmp_path: Path, name: str) -> Path:
    return Path(shutil.copytree(PLATFORMS / name, tmp_path / name))


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


def _ours(folder: Path, version: str | None = None) -> list[Finding]:
    result = validate([str(folder)], policies=[], kueue_version=version)
    return [f for f in result.findings if f.rule in OURS]


@pytest.mark.parametrize("name", ["tas", "multikueue"])
def test_platforms_are_clean(name: str) -> None:
    assert _ours(PLATFORMS / name) == []


# ---------------------------------------------------------------------------------------------------- TAS


def test_flavor_naming_a_missing_topology_blocks_its_queue(tmp_path: Path) -> None:
    tas = _copy(tmp_path, "tas")
    _edit(tas / "flavors.yaml", "topologyName: gpu-topology", "topologyName: gpu-topo")
    [hit] = _ours(tas)
    assert (hit.rule, hit.severity, hit.line) == ("KP442", "error", 8)
    assert hit.file.endswith("flavors.yaml")
    assert "Topology 'gpu-topo' does not exist" in hit.message
    assert "ClusterQueue(s) gpu-tas" in hit.message and "TopologyNotFound" in hit.message
    # The workloads' levels are not judged against a Topology that is not there (one finding, at the cause).


def test_missing_topology_is_judged_for_the_release_and_its_gate(tmp_path: Path) -> None:
    tas = _copy(tmp_path, "tas")
    _edit(tas / "flavors.yaml", "topologyName: gpu-topology", "topologyName: gpu-topo")
    # v0.13: TopologyAwareScheduling is alpha and off, Kueue ignores topologyName and the annotations.
    found = _ours(tas, "v0.13.0")
    assert {f.rule for f in found} == {"KP444"}
    assert all(f.severity == "warning" and "TopologyAwareScheduling is off" in f.message for f in found)
    assert len(found) == 2  # the JobSet and the Job
    # ... unless Kueue's Configuration turns the gate on.
    (tas / "kueue-config.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kueue-manager-config\n  namespace: kueue-system\n"
        "data:\n  controller_manager_config.yaml: |\n    apiVersion: config.kueue.x-k8s.io/v1beta1\n"
        "    kind: Configuration\n    featureGates:\n      TopologyAwareScheduling: true\n")
    assert [f.rule for f in _ours(tas, "v0.13.0")] == ["KP442"]


def test_topology_behind_only_multikueue_queues_is_not_needed(tmp_path: Path) -> None:
    tas = _tas_with_multikueue(tmp_path)
    _edit(tas / "flavors.yaml", "topologyName: gpu-topology", "topologyName: gpu-topo")
    assert _ours(tas) == []  # TopologyNotFound is not checked on a MultiKueue manager: TAS runs on the workers


def test_unused_flavor_with_missing_topology_is_a_warning(tmp_path: Path) -> None:
    tas = _copy(tmp_path, "tas")
    (tas / "spare.yaml").write_text(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: a100-tas\nspec:\n"
        "  nodeLabels:\n    cloud.provider.com/node-group: a100\n  topologyName: a100-topology\n")
    [hit] = _ours(tas)
    assert (hit.rule, hit.severity) == ("KP442", "warning")
    assert "any ClusterQueue using this flavor" in hit.message


def test_required_level_the_topology_lacks(tmp_path: Path) -> None:
    tas = _copy(tmp_path, "tas")
    _edit(tas / "jobs.yaml", "podset-required-topology: cloud.provider.com/topology-rack",
          "podset-required-topology: cloud.google.com/gce-topology-subblock")
    [hit] = _ours(tas)
    assert (hit.rule, hit.severity, hit.line) == ("KP443", "error", 19)
    assert hit.object == "JobSet/training/pretrain"
    assert "'cloud.google.com/gce-topology-subblock' is not a level" in hit.message
    assert ("h100-tas (gpu-topology): cloud.provider.com/topology-block, cloud.provider.com/topology-rack, "
            "kubernetes.io/hostname") in hit.message


def test_preferred_level_is_checked_too(tmp_path: Path) -> None:
    # tas_flavor_snapshot.go HasLevel resolves the preferred level as well: a missing one skips the flavor.
    tas = _copy(tmp_path, "tas")
    _edit(tas / "jobs.yaml", "podset-preferred-topology: cloud.provider.com/topology-block",
          "podset-preferred-topology: topology.kubernetes.io/zone")
    [hit] = _ours(tas)
    assert (hit.rule, hit.object) == ("KP443", "Job/training/finetune")
    assert hit.message.startswith("kueue.x-k8s.io/podset-preferred-topology: 'topology.kubernetes.io/zone'")


def test_slice_topology_is_judged_only_where_the_release_has_it(tmp_path: Path) -> None:
    tas = _copy(tmp_path, "tas")
    _edit(tas / "jobs.yaml", "podset-required-topology: cloud.provider.com/topology-rack",
          "podset-required-topology: cloud.provider.com/topology-block\n"
          "              kueue.x-k8s.io/podset-slice-required-topology: cloud.provider.com/rack\n"
          "              kueue.x-k8s.io/podset-slice-size: \"2\"")
    assert [f.rule for f in _ours(tas)] == ["KP443"]
    # v0.12 has no slice annotation; with the gate on, only the (valid) required level counts.
    (tas / "kueue-config.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kueue-manager-config\n  namespace: kueue-system\n"
        "data:\n  controller_manager_config.yaml: |\n    apiVersion: config.kueue.x-k8s.io/v1beta1\n"
        "    kind: Configuration\n    featureGates:\n      TopologyAwareScheduling: true\n")
    assert _ours(tas, "v0.12.0") == []


def test_topology_request_on_a_queue_without_tas_flavor(tmp_path: Path) -> None:
    tas = _copy(tmp_path, "tas")
    _edit(tas / "jobs.yaml", "kueue.x-k8s.io/queue-name: gpu\nspec:\n  parallelism",
          "kueue.x-k8s.io/queue-name: cpu\nspec:\n  parallelism")
    found = _ours(tas)
    assert [(f.rule, f.severity, f.object) for f in found] == [("KP444", "error", "Job/training/finetune")]
    assert "no flavor of ClusterQueue 'cpu-batch' has a topologyName" in found[0].message


def test_workload_topology_request_fields(tmp_path: Path) -> None:
    tas = _copy(tmp_path, "tas")
    (tas / "workload.yaml").write_text("""\
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: direct
  namespace: training
spec:
  queueName: gpu
  podSets:
  - name: main
    count: 2
    topologyRequest:
      required: cloud.provider.com/topology-row
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: main
          image: busybox
          resources:
            requests:
              cpu: "1"
""")
    [hit] = _ours(tas)
    assert (hit.rule, hit.line) == ("KP443", 12)
    assert hit.message.startswith("required: 'cloud.provider.com/topology-row'")


def test_annotation_outside_a_pod_template_is_not_read(tmp_path: Path) -> None:
    # Kueue reads TAS requests from pod templates; an annotation on the JobSet's job template is not one.
    tas = _copy(tmp_path, "tas")
    _edit(tas / "jobs.yaml", "    template:\n      spec:\n        parallelism: 4",
          "    template:\n      metadata:\n        annotations:\n"
          "          kueue.x-k8s.io/podset-required-topology: no-such-level\n      spec:\n        parallelism: 4")
    assert _ours(tas) == []


# ---------------------------------------------------------------------------------------------- MultiKueue


def test_check_naming_a_missing_config(tmp_path: Path) -> None:
    mk = _copy(tmp_path, "multikueue")
    _edit(mk / "manager.yaml", "    name: multikueue-config", "    name: multikueue-cfg")
    [hit] = _ours(mk)
    assert (hit.rule, hit.severity, hit.line) == ("KP445", "error", 43)
    assert "MultiKueueConfig 'multikueue-cfg' does not exist" in hit.message
    assert "ClusterQueue(s) cluster-queue stay inactive" in hit.message


@pytest.mark.parametrize(("old", "new", "expect"), [
    ("    kind: MultiKueueConfig", "    kind: ProvisioningRequestConfig",
     "parameters.kind is 'ProvisioningRequestConfig', expecting 'MultiKueueConfig'"),
    ("    apiGroup: kueue.x-k8s.io", "    apiGroup: kueue.x-k8s.io/v1beta2",
     "parameters.apiGroup is 'kueue.x-k8s.io/v1beta2', expecting 'kueue.x-k8s.io'"),
    ("  parameters:\n    apiGroup: kueue.x-k8s.io\n    kind: MultiKueueConfig\n    name: multikueue-config\n", "",
     "has no spec.parameters"),
])
def test_check_with_a_wrong_parameters_reference(tmp_path: Path, old: str, new: str, expect: str) -> None:
    mk = _copy(tmp_path, "multikueue")
    _edit(mk / "manager.yaml", old, new)
    [hit] = [f for f in _ours(mk) if f.rule == "KP445"]
    assert expect in hit.message and hit.severity == "error"


def test_config_naming_missing_clusters(tmp_path: Path) -> None:
    mk = _copy(tmp_path, "multikueue")
    _edit(mk / "clusters.yaml", "  - worker-us\n", "  - worker-asia\n")
    [hit] = _ours(mk)
    assert (hit.rule, hit.severity, hit.line) == ("KP446", "warning", 8)
    assert "'worker-asia' does not exist" in hit.message and "SomeActiveClusters" in hit.message
    _edit(mk / "clusters.yaml", "  - worker-eu\n", "  - worker-eur\n")
    found = _ours(mk)
    assert [(f.rule, f.severity) for f in found] == [("KP446", "error")] * 2
    assert all("AdmissionCheck(s) sample-multikueue inactive (NoUsableClusters)" in f.message for f in found)


def test_queue_with_two_multikueue_checks_or_per_flavor(tmp_path: Path) -> None:
    mk = _copy(tmp_path, "multikueue")
    _edit(mk / "manager.yaml", "    - name: sample-multikueue\n",
          "    - name: sample-multikueue\n    - name: second-multikueue\n")
    (mk / "second.yaml").write_text(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata:\n  name: second-multikueue\nspec:\n"
        "  controllerName: kueue.x-k8s.io/multikueue\n  parameters:\n    apiGroup: kueue.x-k8s.io\n"
        "    kind: MultiKueueConfig\n    name: multikueue-config\n")
    [hit] = _ours(mk)
    assert hit.rule == "KP447" and "MultipleMultiKueueAdmissionChecks" in hit.message


def test_on_flavors_naming_every_flavor_is_per_flavor_only_before_v0_15(tmp_path: Path) -> None:
    mk = _copy(tmp_path, "multikueue")
    _edit(mk / "manager.yaml", "    - name: sample-multikueue\n",
          "    - name: sample-multikueue\n      onFlavors: [default-flavor]\n")
    assert _ours(mk) == []  # v0.15+: the same set as all of the queue's flavors
    [hit] = _ours(mk, "v0.14.0")
    assert hit.rule == "KP447" and "MultiKueueAdmissionCheckAppliedPerFlavor" in hit.message


def test_multikueue_with_provisioning_request_from_v0_16(tmp_path: Path) -> None:
    mk = _copy(tmp_path, "multikueue")
    _edit(mk / "manager.yaml", "    - name: sample-multikueue\n",
          "    - name: sample-multikueue\n    - name: dws-prov\n")
    (mk / "prov.yaml").write_text(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata:\n  name: dws-prov\nspec:\n"
        "  controllerName: kueue.x-k8s.io/provisioning-request\n")
    [hit] = _ours(mk)
    assert hit.rule == "KP447" and "MultiKueueWithProvisioningRequest" in hit.message
    assert _ours(mk, "v0.15.0") == []


def test_lone_check_without_configs_is_only_info(tmp_path: Path) -> None:
    # A check applied on its own (no MultiKueueConfig among the inputs): the config may exist in the cluster.
    (tmp_path / "check.yaml").write_text((PLATFORMS / "multikueue" / "manager.yaml").read_text())
    [hit] = _ours(tmp_path)
    assert (hit.rule, hit.severity) == ("KP445", "info")


# ------------------------------------------------------------------------------------------ TAS webhook

_GATE_ON = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kueue-manager-config\n  namespace: kueue-system\n"
            "data:\n  controller_manager_config.yaml: |\n    apiVersion: config.kueue.x-k8s.io/v1beta1\n"
            "    kind: Configuration\n    featureGates:\n      TopologyAwareScheduling: true\n")


def _webhook(folder: Path, version: str | None = None) -> list[Finding]:
    return [f for f in _ours(folder, version) if f.rule == "KP448"]


def test_slice_topology_without_slice_size_is_rejected_from_v0_14(tmp_path: Path) -> None:
    tas = _copy(tmp_path, "tas")
    _edit(tas / "jobs.yaml", "podset-required-topology: cloud.provider.com/topology-rack",
          "podset-required-topology: cloud.provider.com/topology-block\n"
          "              kueue.x-k8s.io/podset-slice-required-topology: cloud.provider.com/topology-rack")
    [hit] = _webhook(tas)
    assert hit.severity == "error" and hit.object == "JobSet/training/pretrain" and hit.line == 20
    assert "kueue.x-k8s.io/podset-slice-size must be set" in hit.message and "webhook rejects the JobSet" in hit.message
    (tas / "kueue-config.yaml").write_text(_GATE_ON)
    assert _webhook(tas, "v0.13.0") == []  # v0.13 did not require the size yet


def test_invalid_level_name_and_unconstrained_conflict(tmp_path: Path) -> None:
    tas = _copy(tmp_path, "tas")
    _edit(tas / "jobs.yaml", "podset-preferred-topology: cloud.provider.com/topology-block",
          "podset-preferred-topology: topology block\n"
          "        kueue.x-k8s.io/podset-unconstrained-topology: \"true\"")
    found = _webhook(tas)
    assert [f.object for f in found] == ["Job/training/finetune"] * 2
    assert any("must not contain more than one of" in f.message for f in found)
    assert any("'topology block' is not a valid node label name" in f.message for f in found)
    # Before v0.11 the unconstrained annotation did not exist: only the bad name is rejected.
    (tas / "kueue-config.yaml").write_text(_GATE_ON)
    [old] = _webhook(tas, "v0.10.0")
    assert "not a valid node label name" in old.message
    # With the gate off (v0.13 default) the webhooks do not look at topology annotations.
    (tas / "kueue-config.yaml").unlink()
    assert _webhook(tas, "v0.13.0") == []


def test_unmanaged_jobset_is_not_validated_by_kueue(tmp_path: Path) -> None:
    tas = _copy(tmp_path, "tas")
    _edit(tas / "jobs.yaml", "podset-required-topology: cloud.provider.com/topology-rack",
          "podset-required-topology: cloud.provider.com/topology-rack\n"
          "              kueue.x-k8s.io/podset-preferred-topology: cloud.provider.com/topology-block")
    assert [f.object for f in _webhook(tas)] == ["JobSet/training/pretrain"]
    _edit(tas / "jobs.yaml", "  labels:\n    kueue.x-k8s.io/queue-name: gpu\nspec:\n  replicatedJobs",
          "spec:\n  replicatedJobs")
    assert _webhook(tas) == []


def test_multikueue_check_with_the_gate_off(tmp_path: Path) -> None:
    mk = _copy(tmp_path, "multikueue")
    [hit] = _ours(mk, "v0.8.4")  # MultiKueue was alpha, off by default, in v0.8
    assert hit.rule == "KP445" and hit.line == 39
    assert "MultiKueue feature gate is off (Kueue v0.8's default)" in hit.message
    assert "ClusterQueue(s) cluster-queue stay inactive" in hit.message
    (mk / "kueue-config.yaml").write_text(_GATE_ON.replace("TopologyAwareScheduling", "MultiKueue"))
    assert _ours(mk, "v0.8.4") == []
    (mk / "kueue-config.yaml").write_text(_GATE_ON.replace("TopologyAwareScheduling: true", "MultiKueue: false"))
    [off] = _ours(mk)
    assert "featureGates.MultiKueue=false (ConfigMap kueue-manager-config)" in off.message


def _tas_with_multikueue(tmp_path: Path) -> Path:
    """The TAS platform whose GPU queue also dispatches through MultiKueue (a manager with TAS flavors)."""
    tas = _copy(tmp_path, "tas")
    _edit(tas / "queues.yaml", "  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [cpu, memory, nvidia",
          "  namespaceSelector: {}\n  admissionChecksStrategy:\n    admissionChecks:\n    - name: mk\n"
          "  resourceGroups:\n  - coveredResources: [cpu, memory, nvidia")
    shutil.copy(PLATFORMS / "multikueue" / "clusters.yaml", tas / "clusters.yaml")
    (tas / "check.yaml").write_text(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata:\n  name: mk\nspec:\n"
        "  controllerName: kueue.x-k8s.io/multikueue\n  parameters:\n    apiGroup: kueue.x-k8s.io\n"
        "    kind: MultiKueueConfig\n    name: multikueue-config\n")
    return tas


def test_tas_with_multikueue_before_v0_15(tmp_path: Path) -> None:
    tas = _tas_with_multikueue(tmp_path)
    assert _ours(tas) == []  # v0.15+: TAS runs on the workers
    [hit] = _ours(tas, "v0.14.8")
    assert (hit.rule, hit.object) == ("KP447", "ClusterQueue/gpu-tas")
    assert hit.message.startswith("TAS is not supported with MultiKueue admission check in Kueue v0.14: with TAS "
                                  "flavor(s) h100-tas this ClusterQueue stays inactive")
    # Before v0.15 a missing Topology blocks a MultiKueue queue too.
    _edit(tas / "flavors.yaml", "topologyName: gpu-topology", "topologyName: gpu-topo")
    assert sorted(f.rule for f in _ours(tas, "v0.14.8")) == ["KP442", "KP447"]
    assert [f.rule for f in _ours(tas)] == []


def test_tas_in_a_cohort_before_v0_11(tmp_path: Path) -> None:
    tas = _copy(tmp_path, "tas")
    _edit(tas / "queues.yaml", "  name: gpu-tas\nspec:\n", "  name: gpu-tas\nspec:\n  cohortName: gpus\n")
    (tas / "kueue-config.yaml").write_text(_GATE_ON)
    [hit] = _ours(tas, "v0.10.6")
    assert hit.rule == "KP447" and hit.message.startswith("TAS is not supported for cohorts in Kueue v0.10")
    assert _ours(tas, "v0.11.9") == []


def test_missing_topology_in_v0_9_is_not_judged(tmp_path: Path) -> None:
    # v0.9 had no TopologyNotFound: what its cache did with the missing Topology is not modelled, so say nothing.
    tas = _copy(tmp_path, "tas")
    _edit(tas / "flavors.yaml", "topologyName: gpu-topology", "topologyName: gpu-topo")
    (tas / "kueue-config.yaml").write_text(_GATE_ON)
    assert [f.rule for f in _ours(tas, "v0.10.6")] == ["KP442"]
    assert [f.rule for f in _ours(tas, "v0.9.5")] == []


@pytest.mark.parametrize(("spec_lines", "extra", "failing", "passing", "what"), [
    ("  preemption:\n    withinClusterQueue: LowerPriority\n", None, "v0.10.6", "v0.11.9",
     "for preemption within cluster queue"),
    ("  admissionChecksStrategy:\n    admissionChecks:\n    - name: dws\n",
     "apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata:\n  name: dws\nspec:\n"
     "  controllerName: kueue.x-k8s.io/provisioning-request\n", "v0.11.9", "v0.12.10",
     "with ProvisioningRequest admission check"),
])
def test_what_early_tas_queues_may_not_use(tmp_path: Path, spec_lines: str, extra: str | None, failing: str,
                                           passing: str, what: str) -> None:
    tas = _copy(tmp_path, "tas")
    _edit(tas / "queues.yaml", "  name: gpu-tas\nspec:\n", "  name: gpu-tas\nspec:\n" + spec_lines)
    if extra:
        (tas / "extra.yaml").write_text(extra)
    (tas / "kueue-config.yaml").write_text(_GATE_ON)
    [hit] = _ours(tas, failing)
    assert hit.rule == "KP447" and hit.message.startswith(f"TAS is not supported {what} in Kueue")
    assert _ours(tas, passing) == []
