"""Kueue's Configuration as Kueue v0.19.2 loads it (apis/config/v1beta{1,2}/defaults.go, configuration_conversion.go)."""

import pytest

from kueueplan.errors import KueueplanError
from kueueplan.kube.configuration import (SHIPPED_FRAMEWORKS, V1BETA1, V1BETA2, configuration_from_configmap,
                                          default_configuration, format_go_duration, parse_configuration,
                                          parse_go_duration)


def test_v0_19_default_install_waits_for_pods_ready_30m():
    # apis/config/v1beta2/defaults.go (v0.19): WaitForPodsReady defaulted, DefaultWaitForPodsReadyTimeout = 30m
    cfg = default_configuration((0, 19))
    w = cfg.wait_for_pods_ready
    assert w is not None and w.timeout == 1800 and w.block_admission is False and w.recovery_timeout == 1800
    rs = w.requeuing_strategy
    assert (rs.timestamp, rs.backoff_limit_count, rs.backoff_base_seconds, rs.backoff_max_seconds) == \
        ("Eviction", None, 60, 3600)
    assert cfg.fair_sharing is None and cfg.admission_fair_sharing is None
    assert cfg.manage_jobs_without_queue_name is False
    assert cfg.managed_jobs_namespace_selector["matchExpressions"][0]["values"] == ["kube-system", "kueue-system"]


def test_before_v0_19_wait_for_pods_ready_is_off_by_default():
    assert default_configuration((0, 18)).wait_for_pods_ready is None
    assert default_configuration((0, 10)).wait_for_pods_ready is None


def test_v1beta1_enable_false_drops_blocks_and_enable_true_blocks_admission():
    # Convert_v1beta1_Configuration_To_v1beta2_Configuration: disabled = nil; v1beta1 blockAdmission defaults to enable
    off = parse_configuration({"apiVersion": V1BETA1, "kind": "Configuration",
                               "waitForPodsReady": {"enable": False, "timeout": "1m"},
                               "fairSharing": {"enable": False}}, (0, 19))
    assert off.wait_for_pods_ready is None and off.fair_sharing is None
    on = parse_configuration({"apiVersion": V1BETA1, "kind": "Configuration",
                              "waitForPodsReady": {"enable": True}, "fairSharing": {"enable": True}}, (0, 19))
    assert on.wait_for_pods_ready.timeout == 300 and on.wait_for_pods_ready.block_admission is True
    assert on.fair_sharing.preemption_strategies == ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]


def test_omitted_fields_take_the_shipped_file_and_unknown_fields_are_kept():
    cfg = parse_configuration({"apiVersion": V1BETA2, "kind": "Configuration", "manageJobsWithoutQueueName": True,
                               "someFutureField": {"x": 1}}, (0, 19))
    assert cfg.frameworks == SHIPPED_FRAMEWORKS[(0, 19)]
    assert cfg.manage_jobs_without_queue_name is True
    assert cfg.to_dict()["someFutureField"] == {"x": 1}
    given = parse_configuration({"integrations": {"frameworks": ["pod"]}}, (0, 19))
    assert given.frameworks == ("pod",)


def test_shipped_frameworks_per_release():
    assert "pod" not in SHIPPED_FRAMEWORKS[(0, 15)] and "pod" in SHIPPED_FRAMEWORKS[(0, 16)]
    assert "kubeflow.org/pytorchjob" in SHIPPED_FRAMEWORKS[(0, 18)]
    assert "kubeflow.org/pytorchjob" not in SHIPPED_FRAMEWORKS[(0, 19)]
    assert "ray.io/rayjob" in SHIPPED_FRAMEWORKS[(0, 8)]


def test_transformation_strategy_defaults_to_retain_and_sampling_to_5m():
    cfg = parse_configuration({"resources": {"transformations": [{"input": "nvidia.com/mig-1g.5gb",
                                                                  "outputs": {"example.com/gpu-memory": "5Gi"}}]},
                               "admissionFairSharing": {"usageHalfLifeTime": "1h"}}, (0, 19))
    assert cfg.resources.transformations[0].strategy == "Retain"
    assert cfg.admission_fair_sharing.usage_sampling_interval == 300
    assert cfg.admission_fair_sharing.usage_half_life_time == 3600


def test_v1beta2_before_v0_15_and_bad_fields_are_clear_errors():
    with pytest.raises(KueueplanError, match="v1beta1"):
        parse_configuration({"apiVersion": V1BETA2, "kind": "Configuration"}, (0, 14))
    with pytest.raises(KueueplanError, match="waitForPodsReady.timeout"):
        parse_configuration({"waitForPodsReady": {"timeout": "ten minutes"}}, (0, 19))


def test_configmap_and_durations():
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kueue-manager-config"},
          "data": {"controller_manager_config.yaml": "apiVersion: config.kueue.x-k8s.io/v1beta2\n"
                                                     "kind: Configuration\nmanageJobsWithoutQueueName: true\n"}}
    assert configuration_from_configmap(cm)["manageJobsWithoutQueueName"] is True
    assert configuration_from_configmap({**cm, "metadata": {"name": "other"}}) is None
    assert parse_go_duration("1h30m") == 5400 and parse_go_duration("168h") == 604800
    assert format_go_duration(5400) == "1h30m0s" and format_go_duration(300) == "5m0s"


def test_configmap_alias_bomb_and_two_documents_are_clear_errors():
    bomb = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(9))
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kueue-manager-config"},
          "data": {"controller_manager_config.yaml": bomb}}
    with pytest.raises(KueueplanError, match="alias bomb"):
        configuration_from_configmap(cm, "f.yaml", 3)
    cm["data"]["controller_manager_config.yaml"] = "kind: Configuration\n---\nkind: Configuration\n"
    with pytest.raises(KueueplanError, match="one Configuration document"):
        configuration_from_configmap(cm, "f.yaml", 3)
