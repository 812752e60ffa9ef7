"""Reading Kueue objects of both API versions into the normalized model."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kueueplan.errors import KueueplanError
from kueueplan.kube.objects import (LabelSelector, Requirement, Taint, Toleration, read_cluster, read_object,
                                    selector_matches)


def _docs(path: Path) -> list:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def test_v1beta1_cluster_queue_conversion(shared_dir: Path) -> None:
    cq = read_object(_docs(shared_dir / "upstream/seeds/kueue-preemption/team-a-cq.yaml")[0])
    assert cq.cohort_name == "team-ab"
    assert cq.preemption.borrow_within_cohort.policy == "LowerPriority"
    assert cq.preemption.borrow_within_cohort.max_priority_threshold == 100
    assert cq.namespace_selector.matches({"kubernetes.io/metadata.name": "team-a"})
    gpu = cq.resource_groups[1].flavors[0].resources[0]
    assert (gpu.name, gpu.nominal_quota, gpu.borrowing_limit) == ("nvidia.com/gpu", 4, None)


def test_quotas_in_kueue_units() -> None:
    cq = read_object({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "q"},
                      "spec": {"cohortName": "c", "resourceGroups": [{"coveredResources": ["cpu", "memory"], "flavors": [
                          {"name": "f", "resources": [
                              {"name": "cpu", "nominalQuota": "1500m", "borrowingLimit": 2, "lendingLimit": "500m"},
                              {"name": "memory", "nominalQuota": "1.5"}]}]}]}})
    cpu, mem = cq.resource_groups[0].flavors[0].resources
    assert (cpu.nominal_quota, cpu.borrowing_limit, cpu.lending_limit) == (1500, 2000, 500)
    assert mem.nominal_quota == 2  # rounded up like Quantity.Value
    assert cq.namespace_selector is None  # absent selects nothing (Kueue)


def test_v1beta1_flat_admission_checks_and_fungibility() -> None:
    cq = read_object({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue", "metadata": {"name": "q"},
                      "spec": {"admissionChecks": ["a"], "flavorFungibility": {"whenCanBorrow": "Borrow",
                                                                                "whenCanPreempt": "Preempt"},
                               "admissionChecksStrategy": {"admissionChecks": [{"name": "b", "onFlavors": ["x"]}]}}})
    assert [(r.name, r.on_flavors) for r in cq.admission_checks] == [("a", ()), ("b", ("x",))]
    assert cq.flavor_fungibility.when_can_borrow == "MayStopSearch"
    assert cq.flavor_fungibility.when_can_preempt == "MayStopSearch"


def test_cluster_inventory_and_defaults(shared_dir: Path) -> None:
    docs = []
    for f in sorted((shared_dir / "upstream/seeds/kueue-preemption").glob("*.y*ml")):
        docs.extend(_docs(f))
    cluster = read_cluster(docs)
    assert sorted(cluster.cluster_queues) == ["shared-cq", "team-a-cq", "team-b-cq"]
    assert ("team-a", "local-queue") in cluster.local_queues
    assert cluster.workload_priority_classes["prod-priority"].value == 1000
    assert cluster.resource_flavors["gpu-flavor"].labels == {"nvidia.com/gpu.present": "true"}
    assert cluster.namespace_labels("team-b")["kubernetes.io/metadata.name"] == "team-b"
    assert any(d.get("kind") == "RayCluster" for d in cluster.other)


def test_selectors_and_tolerations() -> None:
    sel = LabelSelector((("a", "1"),), (Requirement("b", "In", ("x", "y")), Requirement("c", "DoesNotExist")))
    assert sel.matches({"a": "1", "b": "x"})
    assert not sel.matches({"a": "1", "b": "z"})
    assert not selector_matches(None, {"a": "1"})
    assert selector_matches(LabelSelector(), {})
    taint = Taint("nvidia.com/gpu", "", "NoSchedule")
    assert Toleration("nvidia.com/gpu", "Exists").tolerates(taint)
    assert not Toleration("other", "Exists").tolerates(taint)
    assert Toleration("", "Exists").tolerates(taint)


def test_bad_objects_name_file_and_line() -> None:
    with pytest.raises(KueueplanError) as err:
        read_object({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "q"}},
                    file="x.yaml", line=7)
    assert (err.value.file, err.value.line) == ("x.yaml", 7)
    with pytest.raises(KueueplanError):
        read_object({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "q"},
                     "spec": {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                         {"name": "f", "resources": [{"name": "cpu", "nominalQuota": "abc"}]}]}]}})
