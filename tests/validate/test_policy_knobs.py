"""PlatformPolicy knobs of issue 15: queue enforcement tied to Kueue's Configuration, required LocalQueues,
requests, and priority rules that cover pod templates, namespaces, globs and deny-lists."""

from __future__ import annotations

from pathlib import Path

import pytest

from kueueplan.errors import KueueplanError
from kueueplan.validate import Result, validate

POLICY = """
apiVersion: policy.kueueplan.io/v1alpha1
kind: PlatformPolicy
metadata:
  name: platform
spec:
{body}
"""


def config(body: str) -> str:
    text = "\n".join("        " + line for line in body.strip("\n").splitlines())
    return f"""
apiVersion: v1
kind: ConfigMap
metadata:
  name: kueue-manager-config
  namespace: kueue-system
data:
  controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta1
        kind: Configuration
{text}
"""


def namespace(name: str, labels: str = "{}") -> str:
    return f"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {name}\n  labels: {labels}\n"


def job(name: str, ns: str = "team-a", labels: str = "{}", kind: str = "Job", pod: str = "") -> str:
    api = {"Job": "batch/v1", "PyTorchJob": "kubeflow.org/v1"}[kind]
    spec = ("  template:\n" if kind == "Job" else
            "  pytorchReplicaSpecs:\n    Master:\n      replicas: 1\n      template:\n")
    indent = "    " if kind == "Job" else "        "
    return (f"apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: {name}\n  namespace: {ns}\n  labels: {labels}\n"
            f"spec:\n{spec}{indent}spec:\n{indent}  restartPolicy: Never\n{pod.replace('@', indent)}"
            f"{indent}  containers:\n{indent}  - name: main\n{indent}    image: busybox\n")


def run(tmp_path: Path, *docs: str, kueue_version: str | None = None) -> Result:
    folder = tmp_path / "in"
    folder.mkdir(exist_ok=True)
    (folder / "all.yaml").write_text("\n---\n".join(d.strip("\n") for d in docs) + "\n")
    return validate([str(folder)], crds=None, policies=[], kueue_version=kueue_version)


def hits(result: Result, rule: str) -> list:
    return [f for f in result.findings if f.rule == rule]


REQUIRE_QUEUE = POLICY.format(body="  teams:\n    team-a: {namespaces: [team-a, team-a-*]}\n"
                                   "  queues: {requireQueueName: true}")
MANAGED = config("""
manageJobsWithoutQueueName: true
managedJobsNamespaceSelector:
  matchLabels: {kueue-managed: "true"}
integrations:
  frameworks: [batch/job, kubeflow.org/pytorchjob]
""")


def test_unlabelled_namespace_lets_pytorchjobs_bypass_quota(tmp_path: Path) -> None:
    result = run(tmp_path, REQUIRE_QUEUE, MANAGED, namespace("team-a"), namespace("team-a-x", "{kueue-managed: 'true'}"),
                 job("bypass", kind="PyTorchJob"), job("covered", ns="team-a-x", kind="PyTorchJob"),
                 job("queued", labels="{kueue.x-k8s.io/queue-name: q}", kind="PyTorchJob"),
                 job("not-a-team", ns="other", kind="PyTorchJob"))
    f, queued = hits(result, "KP620")
    assert f.object == "PyTorchJob/team-a/bypass" and f.severity == "error"
    assert "lacks label kueue-managed=true" in f.message and "without quota" in f.message
    # since Kueue v0.19 (beta from v0.15) the selector gates jobs that name a queue as well
    assert queued.object == "PyTorchJob/team-a/queued" and "also gates jobs that name a queue" in queued.message
    # a team namespace that is not among the inputs may be labelled on the cluster: a warning
    [w] = hits(run(tmp_path, REQUIRE_QUEUE, MANAGED, job("elsewhere", ns="team-a-y", kind="PyTorchJob")), "KP620")
    assert w.severity == "warning" and "not among the inputs" in w.message


def test_without_configuration_kueues_defaults_do_not_manage_unlabelled_jobs(tmp_path: Path) -> None:
    result = run(tmp_path, REQUIRE_QUEUE, namespace("team-a"), job("bare"),
                 job("queued", labels="{kueue.x-k8s.io/queue-name: q}"))
    [f] = hits(result, "KP620")
    assert f.object == "Job/team-a/bare"
    assert "manageJobsWithoutQueueName is false" in f.message and "no kueue-manager-config" in f.message


def test_a_default_local_queue_covers_jobs_without_a_queue_name(tmp_path: Path) -> None:
    lq = ("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: default\n  namespace: team-a\n"
          "spec:\n  clusterQueue: x\n")
    selector = config("managedJobsNamespaceSelector:\n  matchLabels: {kueue-managed: 'true'}\n")
    labelled = namespace("team-a", "{kueue-managed: 'true'}")
    assert hits(run(tmp_path, REQUIRE_QUEUE, selector, labelled, lq, job("bare")), "KP620") == []
    # outside the selector, or with LocalQueueDefaulting off, the default LocalQueue does not help
    assert hits(run(tmp_path, REQUIRE_QUEUE, selector, namespace("team-a"), lq, job("bare")), "KP620")
    gated = config("featureGates: {LocalQueueDefaulting: false}\n")
    assert hits(run(tmp_path, REQUIRE_QUEUE, gated, labelled, lq, job("bare")), "KP620")


def test_a_kind_kueue_does_not_integrate_bypasses_even_with_a_queue(tmp_path: Path) -> None:
    jobs_only = config("manageJobsWithoutQueueName: true\nintegrations:\n  frameworks: [batch/job]\n")
    result = run(tmp_path, REQUIRE_QUEUE, jobs_only, namespace("team-a"),
                 job("queued", labels="{kueue.x-k8s.io/queue-name: q}", kind="PyTorchJob"))
    [f] = hits(result, "KP620")
    assert "kubeflow.org/pytorchjob is not in integrations.frameworks" in f.message


def spark_application(name: str, labels: str = "{}") -> str:
    """A minimal valid SparkApplication (cluster mode, one driver, one executor) in team-a."""
    return (f"apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata:\n  name: {name}\n"
            f"  namespace: team-a\n  labels: {labels}\nspec:\n  type: Scala\n  mode: cluster\n"
            "  sparkVersion: 4.0.0\n  image: spark:4.0.0\n  mainClass: org.apache.spark.examples.SparkPi\n"
            "  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples.jar\n"
            "  driver: {coreRequest: '1', memory: 1g}\n  executor: {instances: 2, coreRequest: '1', memory: 1g}\n")


def test_a_sparkapplication_whose_integration_is_disabled_bypasses(tmp_path: Path) -> None:
    """Kueue registers sparkoperator.k8s.io/sparkapplication from v0.17 but ships it disabled: a queued
    SparkApplication then runs outside every quota."""
    queued = spark_application("pi", labels="{kueue.x-k8s.io/queue-name: q}")
    jobs_only = config("manageJobsWithoutQueueName: true\nintegrations:\n  frameworks: [batch/job]\n")
    [f] = hits(run(tmp_path, REQUIRE_QUEUE, jobs_only, namespace("team-a"), queued), "KP620")
    assert f.object == "SparkApplication/team-a/pi"
    assert "sparkoperator.k8s.io/sparkapplication is not in integrations.frameworks" in f.message
    # the release's defaults leave it out as well
    [f] = hits(run(tmp_path, REQUIRE_QUEUE, namespace("team-a"), queued), "KP620")
    assert "sparkapplication is not in integrations.frameworks" in f.message and "Kueue's defaults" in f.message
    enabled = config("integrations:\n  frameworks: [batch/job, sparkoperator.k8s.io/sparkapplication]\n")
    assert hits(run(tmp_path, REQUIRE_QUEUE, enabled, namespace("team-a"), queued), "KP620") == []
    # manageJobsWithoutQueueName covers one without a queue name, as for every integration
    managed = config("manageJobsWithoutQueueName: true\nintegrations:\n"
                     "  frameworks: [batch/job, sparkoperator.k8s.io/sparkapplication]\n")
    assert hits(run(tmp_path, REQUIRE_QUEUE, managed, namespace("team-a"), spark_application("bare")), "KP620") == []
    [f] = hits(run(tmp_path, REQUIRE_QUEUE, enabled, namespace("team-a"), spark_application("bare")), "KP620")
    assert "manageJobsWithoutQueueName is false" in f.message


def test_a_release_without_the_sparkapplication_integration_ignores_it(tmp_path: Path) -> None:
    enabled = config("integrations:\n  frameworks: [batch/job, sparkoperator.k8s.io/sparkapplication]\n")
    queued = spark_application("pi", labels="{kueue.x-k8s.io/queue-name: q}")
    result = run(tmp_path, REQUIRE_QUEUE, enabled, namespace("team-a"), queued, kueue_version="v0.16")
    [f] = hits(result, "KP620")
    assert "Kueue v0.16 has no sparkoperator.k8s.io/sparkapplication integration" in f.message
    assert hits(result, "KP452")  # and that Configuration stops a v0.16 manager


def test_the_selector_gates_labelled_jobs_too_from_kueue_v0_15(tmp_path: Path) -> None:
    selector = config("""
managedJobsNamespaceSelector:
  matchLabels: {kueue-managed: "true"}
""")
    docs = (REQUIRE_QUEUE, selector, namespace("team-a"), job("queued", labels="{kueue.x-k8s.io/queue-name: q}"))
    [f] = hits(run(tmp_path, *docs), "KP620")  # the newest release: ManagedJobsNamespaceSelectorAlwaysRespected is GA
    assert "ManagedJobsNamespaceSelectorAlwaysRespected" in f.message
    assert hits(run(tmp_path, *docs, kueue_version="v0.14"), "KP620") == []  # alpha, off by default
    gate_off = docs[1].replace("managedJobsNamespaceSelector:", "featureGates: {ManagedJobsNamespaceSelectorAlwaysRespected: false}\n        managedJobsNamespaceSelector:")
    assert hits(run(tmp_path, docs[0], gate_off, *docs[2:], kueue_version="v0.16"), "KP620") == []
    assert hits(run(tmp_path, *docs, kueue_version="v0.16"), "KP620")  # beta, on by default


def test_team_override_turns_the_knob_off(tmp_path: Path) -> None:
    policy = POLICY.format(body="  teams:\n    team-a: {namespaces: [team-a], requireQueueName: false}\n"
                                "  queues: {requireQueueName: true}")
    assert hits(run(tmp_path, policy, namespace("team-a"), job("bare")), "KP620") == []


def test_required_local_queue_per_team(tmp_path: Path) -> None:
    policy = POLICY.format(body="  teams:\n    team-a: {namespaces: [team-a]}\n"
                                "    team-b: {namespaces: [team-b], requiredLocalQueues: []}\n"
                                "  queues: {requiredLocalQueues: [default]}")
    lq = ("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: default\n  namespace: team-c\n"
          "spec:\n  clusterQueue: x\n")
    result = run(tmp_path, policy, namespace("team-b"), job("j", ns="team-a"), lq)
    # team-a is not declared: its first object carries the finding; team-b opted out; team-c is no team's
    [f] = hits(result, "KP621")
    assert f.object == "Job/team-a/j" and "no LocalQueue 'default'" in f.message


def test_requests_checked_against_the_cluster_queues_covered_resources(tmp_path: Path) -> None:
    policy = POLICY.format(body="  queues: {requireRequests: true}")
    queues = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: gpus, namespace: team-a}
spec: {clusterQueue: gpus}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: gpus}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: a100
      resources: [{name: nvidia.com/gpu, nominalQuota: 8}]
"""
    cpu_only = job("cpu-only", labels="{kueue.x-k8s.io/queue-name: gpus}").replace(
        "image: busybox\n", "image: busybox\n        resources: {requests: {cpu: '1'}}\n")
    gpu = job("gpu", labels="{kueue.x-k8s.io/queue-name: gpus}").replace(
        "image: busybox\n", "image: busybox\n        resources: {limits: {nvidia.com/gpu: 1}}\n")
    result = run(tmp_path, policy, queues, cpu_only, gpu)
    [f] = hits(result, "KP622")
    assert f.object == "Job/team-a/cpu-only" and "ClusterQueue gpus covers" in f.message and "zero quota" in f.message


PRIORITIES = POLICY.format(body="""  teams:
    team-a:
      namespaces: [team-a-prod, team-a-dev]
      priorities: [dev-*, prod-priority]
      namespacePriorities: {"*-dev": [dev-*]}
  priorities:
    denied: [system-*]
    defaultPriority: prod-priority""")


def test_dev_namespaces_only_dev_priority_prod_namespaces_both(tmp_path: Path) -> None:
    result = run(tmp_path, PRIORITIES,
                 job("prod-in-prod", ns="team-a-prod", labels="{kueue.x-k8s.io/priority-class: prod-priority}"),
                 job("dev-in-prod", ns="team-a-prod", labels="{kueue.x-k8s.io/priority-class: dev-low}"),
                 job("prod-in-dev", ns="team-a-dev", labels="{kueue.x-k8s.io/priority-class: prod-priority}"),
                 job("dev-in-dev", ns="team-a-dev", labels="{kueue.x-k8s.io/priority-class: dev-low}"),
                 job("default-in-dev", ns="team-a-dev"),
                 job("pod-priority", ns="team-a-prod", labels="{kueue.x-k8s.io/priority-class: prod-priority}",
                     pod="@  priorityClassName: system-node-critical\n"))
    by_object = {f.object: f.message for f in hits(result, "KP605")}
    assert set(by_object) == {"Job/team-a-dev/prod-in-dev", "Job/team-a-dev/default-in-dev",
                              "Job/team-a-prod/pod-priority"}
    assert "not allowed in namespaces *-dev" in by_object["Job/team-a-dev/prod-in-dev"]
    assert "default priority" in by_object["Job/team-a-dev/default-in-dev"]
    assert "pod template spec.template priorityClassName 'system-node-critical'" in by_object[
        "Job/team-a-prod/pod-priority"]
    assert "denied by the policy (system-*)" in by_object["Job/team-a-prod/pod-priority"]


def test_require_priority_counts_pod_template_priority(tmp_path: Path) -> None:
    policy = POLICY.format(body="  priorities: {requirePriority: true}")
    result = run(tmp_path, policy, job("none"), job("pod", pod="@  priorityClassName: batch\n"))
    assert [f.object for f in hits(result, "KP623")] == ["Job/team-a/none"]


def test_unmanaged_namespace_knob_only_sets_the_configuration_rules_severity(tmp_path: Path) -> None:
    # KP461 (issue 13's rule): a LocalQueue in a namespace managedJobsNamespaceSelector leaves out; a warning.
    selector = config("managedJobsNamespaceSelector:\n  matchLabels: {kueue-managed: 'true'}\n")
    lq = ("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: q\n  namespace: team-a\n"
          "spec:\n  clusterQueue: x\n")
    base = POLICY.format(body="  queues: {{unmanagedNamespace: {level}}}")
    plain = POLICY.format(body="  teams: {}")
    assert [f.severity for f in hits(run(tmp_path, plain, selector, namespace("team-a"), lq), "KP461")] == ["warning"]
    assert [f.severity for f in hits(run(tmp_path, base.format(level="error"), selector, namespace("team-a"), lq),
                                     "KP461")] == ["error"]
    assert hits(run(tmp_path, base.format(level="off"), selector, namespace("team-a"), lq), "KP461") == []


def test_a_bad_knob_is_a_usage_error(tmp_path: Path) -> None:
    policy = POLICY.format(body="  queues: {unmanagedNamespace: loud}")
    with pytest.raises(KueueplanError) as err:
        run(tmp_path, policy)
    assert "unmanagedNamespace" in str(err.value.message) and err.value.line
