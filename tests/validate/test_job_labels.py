"""KP414: the Kueue labels every integration's webhook checks (jobframework ValidateJobOnCreate), including the
SparkApplication integration Kueue registers from v0.17 (pkg/controller/jobs/sparkapplication), and KP452 on
integrations a release does not register yet."""

from __future__ import annotations

from pathlib import Path

import pytest

from kueueplan.validate import validate

QUEUE = "kueue.x-k8s.io/queue-name"


@pytest.fixture(scope="module")
def spark(shared_dir: Path) -> str:
    """Kueue's own example (examples/jobs/sample-sparkapplication.yaml): a valid, queued SparkApplication."""
    return (shared_dir / "upstream" / "kueue" / "examples" / "jobs" / "sample-sparkapplication.yaml").read_text()


SPARK_ON = ("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: kueue-manager-config, namespace: kueue-system}\n"
            "data:\n  controller_manager_config.yaml: |\n    apiVersion: config.kueue.x-k8s.io/v1beta1\n"
            "    kind: Configuration\n    integrations:\n      frameworks: [batch/job, jobset.x-k8s.io/jobset, ray.io/rayservice, sparkoperator.k8s.io/sparkapplication]\n")
# Kueue sets up an integration's webhook only where the Configuration enables it: no release's default install
# enables the SparkApplication one, so these inputs carry a kueue-manager-config that does.


def _kp414(tmp_path: Path, text: str, version: str | None = None, config: str = SPARK_ON) -> list[str]:
    path = tmp_path / "job.yaml"
    path.write_text(text + config)
    return [f.message for f in validate([str(path)], policies=[], kueue_version=version).findings
            if f.rule == "KP414"]


def _annotated(text: str, annotations: str) -> str:
    return text.replace("metadata:\n  name: spark-pi\n", f"metadata:\n  name: spark-pi\n  annotations: {annotations}\n")


@pytest.mark.parametrize("version", [None, "v0.18", "v0.17"])
def test_the_upstream_sparkapplication_passes(tmp_path: Path, spark: str, version: str | None) -> None:
    assert f"{QUEUE}: user-queue" in spark
    assert _kp414(tmp_path, spark, version) == []


def test_an_invalid_queue_name_on_a_sparkapplication_fails(tmp_path: Path, spark: str) -> None:
    bad = spark.replace(f"{QUEUE}: user-queue", f"{QUEUE}: User_Queue")
    [message] = _kp414(tmp_path, bad)
    assert message.startswith("queue-name 'User_Queue':")
    assert _kp414(tmp_path, bad, "v0.17") == [message]  # the release that added the integration
    # before v0.17 Kueue has no SparkApplication webhook: nothing refuses the label
    assert _kp414(tmp_path, bad, "v0.16") == []
    # nor where the Configuration leaves the integration off (every default install): Kueue ignores it (KP460)
    assert _kp414(tmp_path, bad, config="") == []


def test_max_exec_time_and_prebuilt_workload_on_a_sparkapplication(tmp_path: Path, spark: str) -> None:
    labels = f"{QUEUE}: user-queue\n    kueue.x-k8s.io/max-exec-time-seconds: \"0\"\n" \
             "    kueue.x-k8s.io/prebuilt-workload-name: wl"
    found = _kp414(tmp_path, spark.replace(f"{QUEUE}: user-queue", labels))
    assert any("max-exec-time-seconds must be an integer greater than 0" in m for m in found)
    # validateCreateForPrebuiltWorkload: SparkApplication is not among supportedPrebuiltWlJobGVKs
    assert any("prebuilt-workload-name is not supported for kind SparkApplication" in m for m in found)
    assert len(found) == 2


def test_elastic_job_is_refused_on_a_sparkapplication_from_v0_18(tmp_path: Path, spark: str) -> None:
    elastic = _annotated(spark, '{kueue.x-k8s.io/elastic-job: "true"}')
    [message] = _kp414(tmp_path, elastic)
    assert "not supported for kind SparkApplication" in message and "RayService" in message
    assert _kp414(tmp_path, elastic, "v0.18") == [message]
    # v0.17: only with the alpha ElasticJobsViaWorkloadSlices gate, off by default
    assert _kp414(tmp_path, elastic, "v0.17") == []
    # workloadslicing.Enabled matches exactly "true"
    assert _kp414(tmp_path, _annotated(spark, '{kueue.x-k8s.io/elastic-job: "false"}')) == []


def test_an_elastic_rayservice_is_allowed(tmp_path: Path) -> None:
    """supportedElasticJobGVKs holds RayService, as KP412's advice for an autoscaling RayService assumes."""
    service = ("apiVersion: ray.io/v1\nkind: RayService\nmetadata:\n  name: serve\n  labels:\n"
               f"    {QUEUE}: user-queue\n  annotations:\n    kueue.x-k8s.io/elastic-job: \"true\"\n"
               "spec:\n  rayClusterConfig:\n    enableInTreeAutoscaling: true\n    headGroupSpec:\n"
               "      rayStartParams: {}\n      template:\n        spec:\n          containers:\n"
               "          - name: ray-head\n            image: rayproject/ray:2.9.0\n")
    assert _kp414(tmp_path, service) == []
    assert _kp414(tmp_path, service.replace("RayService", "JobSet").replace("ray.io/v1", "jobset.x-k8s.io/v1alpha2"))


def _configmap(frameworks: str) -> str:
    return ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kueue-manager-config\n  namespace: kueue-system\n"
            "data:\n  controller_manager_config.yaml: |\n    apiVersion: config.kueue.x-k8s.io/v1beta1\n"
            f"    kind: Configuration\n    integrations:\n      frameworks: {frameworks}\n")


@pytest.mark.parametrize("version, refused", [("v0.16", True), ("v0.17", False), (None, False)])
def test_a_release_refuses_an_integration_it_does_not_register(tmp_path: Path, version: str | None,
                                                              refused: bool) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(_configmap("[batch/job, sparkoperator.k8s.io/sparkapplication]"))
    found = [f.message for f in validate([str(path)], policies=[], kueue_version=version).findings
             if f.rule == "KP452"]
    assert found == ([] if not refused else
                     ["integrations.frameworks: 'sparkoperator.k8s.io/sparkapplication' is not an integration Kueue "
                      "knows in v0.16 (it was added in v0.17)"])


def _kp417(tmp_path: Path, text: str, version: str | None = None, config: str = SPARK_ON) -> list[str]:
    path = tmp_path / "job.yaml"
    path.write_text(text + config)
    return [f.message for f in validate([str(path)], policies=[], kueue_version=version).findings
            if f.rule == "KP417"]


def test_a_managed_sparkapplication_runs_in_cluster_mode_without_dynamic_allocation(tmp_path: Path,
                                                                                     spark: str) -> None:
    """sparkapplication_webhook.go validateCreate: Kueue's own example passes; client mode and dynamic
    allocation are refused for a queued SparkApplication, not for one Kueue does not manage, nor before v0.17."""
    assert _kp417(tmp_path, spark) == []
    client = spark.replace("mode: cluster ", "mode: client ")
    [message] = _kp417(tmp_path, client)
    assert message.startswith("mode 'client': only Cluster mode is supported for a kueue managed job")
    dynamic = spark.replace("  driver:\n", "  dynamicAllocation:\n    enabled: true\n  driver:\n")
    [message] = _kp417(tmp_path, dynamic)
    assert "can use dynamicAllocation only when the ElasticJobsViaWorkloadSlices" in message
    unqueued = client.replace(f"  labels:\n    {QUEUE}: user-queue\n", "")
    assert f"{QUEUE}" not in unqueued and _kp417(tmp_path, unqueued) == []
    assert _kp417(tmp_path, client, "v0.16") == []
    # no release's default install enables the integration: no SparkApplication webhook judges it (KP460 says so)
    assert _kp417(tmp_path, client, config="") == []


def test_manage_jobs_without_queue_name_makes_a_sparkapplication_managed(tmp_path: Path, spark: str) -> None:
    unqueued = spark.replace("mode: cluster ", "mode: client ").replace(f"  labels:\n    {QUEUE}: user-queue\n", "")
    config = ("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: kueue-manager-config, namespace: kueue-system}\n"
              "data:\n  controller_manager_config.yaml: |\n    apiVersion: config.kueue.x-k8s.io/v1beta2\n"
              "    kind: Configuration\n    manageJobsWithoutQueueName: true\n    integrations:\n"
              "      frameworks: [batch/job, sparkoperator.k8s.io/sparkapplication]\n")
    assert len(_kp417(tmp_path, unqueued, config=config)) == 1


def test_ray_rules_judge_a_rayservice_only_from_the_release_with_its_integration(tmp_path: Path) -> None:
    """KP412 (in-tree autoscaling without elastic-job) on a queued RayService: Kueue v0.17 added the RayService
    integration (pkg/controller/jobs/rayservice); before it no Kueue webhook sees the object."""
    service = f"""apiVersion: ray.io/v1
kind: RayService
metadata:
  name: svc
  labels:
    {QUEUE}: user-queue
spec:
  rayClusterConfig:
    enableInTreeAutoscaling: true
    headGroupSpec:
      rayStartParams: {{}}
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray:2.9.0
"""
    path = tmp_path / "svc.yaml"
    path.write_text(service)

    def kp412(version: str) -> list[str]:
        return [f.rule for f in validate([str(path)], policies=[], kueue_version=version).findings if f.rule == "KP412"]

    assert kp412("v0.17") == ["KP412"] and kp412("v0.19") == ["KP412"]
    assert kp412("v0.16") == []
