"""A realistic multi-file GitOps repository: cluster-wide admission policies (Kueue's sample, an ODH/MLBatch-style
policy with an owner-reference exemption, allowed priorities from a ConfigMap param), Kueue's Configuration,
team folders and a PlatformPolicy, checked through the command line as CI runs it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kueueplan.cli import main

FILES = {
    "cluster/namespaces.yaml": """
apiVersion: v1
kind: Namespace
metadata:
  name: team-a
  labels: {kueue-managed: "true"}
---
apiVersion: v1
kind: Namespace
metadata:
  name: team-a-dev
---
apiVersion: v1
kind: Namespace
metadata:
  name: kueue-system
""",
    "cluster/kueue-manager-config.yaml": """
apiVersion: v1
kind: ConfigMap
metadata:
  name: kueue-manager-config
  namespace: kueue-system
data:
  controller_manager_config.yaml: |
    apiVersion: config.kueue.x-k8s.io/v1beta1
    kind: Configuration
    manageJobsWithoutQueueName: true
    managedJobsNamespaceSelector:
      matchLabels: {kueue-managed: "true"}
    integrations:
      frameworks: [batch/job, ray.io/rayjob, kubeflow.org/pytorchjob]
""",
    "cluster/admission/queue-name.yaml": """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: kueue-queue-name
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [ray.io]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [rayjobs, rayclusters]
    - apiGroups: [kubeflow.org]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [pytorchjobs]
  matchConditions:
  - name: skip-if-deleting
    expression: "!has(object.metadata.deletionTimestamp)"
  - name: skip-if-owned-by-appwrapper
    expression: >-
      !has(object.metadata.ownerReferences) ||
      !object.metadata.ownerReferences.exists(o, o.kind == 'AppWrapper')
  validations:
  - expression: "has(object.metadata.labels) && 'kueue.x-k8s.io/queue-name' in object.metadata.labels"
    message: workloads in Kueue-managed namespaces name a LocalQueue
    reason: Forbidden
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: kueue-queue-name
spec:
  policyName: kueue-queue-name
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels: {kueue-managed: "true"}
""",
    "cluster/admission/priorities.yaml": """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: allowed-priorities
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - {apiGroups: [ray.io], apiVersions: [v1], operations: [CREATE], resources: [rayjobs]}
  variables:
  - name: priority
    expression: >-
      has(object.metadata.labels) && 'kueue.x-k8s.io/priority-class' in object.metadata.labels
      ? object.metadata.labels['kueue.x-k8s.io/priority-class'] : ''
  validations:
  - expression: "variables.priority == '' || variables.priority in params.data.allowed.split(',')"
    messageExpression: "'priority ' + variables.priority + ' is not allowed here'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: allowed-priorities
spec:
  policyName: allowed-priorities
  validationActions: [Warn]
  paramRef: {name: allowed-priorities, namespace: kueue-system, parameterNotFoundAction: Deny}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: allowed-priorities
  namespace: kueue-system
data:
  allowed: dev-priority,batch-priority
""",
    "teams/team-a/queues.yaml": """
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: default
  namespace: team-a
spec:
  clusterQueue: team-a
""",
    "teams/team-a/jobs.yaml": """
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: prod-train
  namespace: team-a
  labels:
    kueue.x-k8s.io/queue-name: default
    kueue.x-k8s.io/priority-class: prod-priority
spec:
  entrypoint: python train.py
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: no-queue
  namespace: team-a
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers: [{name: pytorch, image: pytorch}]
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: wrapped
  namespace: team-a
  ownerReferences:
  - {apiVersion: workload.codeflare.dev/v1beta2, kind: AppWrapper, name: aw, uid: "1"}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers: [{name: pytorch, image: pytorch}]
""",
    "teams/team-a-dev/jobs.yaml": """
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: bypass
  namespace: team-a-dev
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers: [{name: pytorch, image: pytorch}]
""",
    "policies/platform.yaml": """
apiVersion: policy.kueueplan.io/v1alpha1
kind: PlatformPolicy
metadata:
  name: platform
spec:
  teams:
    team-a: {namespaces: [team-a, "team-a-*"]}
  queues:
    requireQueueName: true
    requiredLocalQueues: [default]
""",
}


def test_gitops_repository_with_admission_policies_and_platform_policy(tmp_path: Path) -> None:
    for name, text in FILES.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.lstrip("\n"))
    args = ["validate", str(tmp_path / "cluster"), str(tmp_path / "teams"), "--policies", str(tmp_path / "policies"),
            "-o", "json", "--fail-on", "error"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    findings = json.loads(result.output)["findings"]
    got = sorted((f["rule"], f["severity"], f["object"]) for f in findings if f["rule"].startswith("KP6"))
    assert got == [
        # the VAP denies the unlabelled PyTorchJob in the managed namespace; the AppWrapper's job is exempt
        ("KP610", "error", "PyTorchJob/team-a/no-queue"),
        # the param ConfigMap allows dev and batch priorities only (Warn)
        ("KP610", "warning", "RayJob/team-a/prod-train"),
        # team-a-dev lacks kueue-managed=true: no VAP applies there and Kueue does not manage the job either
        ("KP620", "error", "PyTorchJob/team-a-dev/bypass"),
        # and team-a-dev has no `default` LocalQueue
        ("KP621", "error", "Namespace/team-a-dev"),
    ]
    by_object = {f["object"]: f for f in findings if f["rule"] == "KP610"}
    denied = by_object["PyTorchJob/team-a/no-queue"]
    assert denied["file"].endswith("teams/team-a/jobs.yaml") and denied["line"] == 12
    assert "'kueue-queue-name' with binding 'kueue-queue-name'" in denied["message"]
    assert "priority prod-priority is not allowed here" in by_object["RayJob/team-a/prod-train"]["message"]
    bypass = next(f for f in findings if f["rule"] == "KP620")
    assert "lacks label kueue-managed=true" in bypass["message"]
    sarif = CliRunner().invoke(main, [*args[:-4], "-o", "sarif"])
    results = json.loads(sarif.output)["runs"][0]["results"]
    assert {r["ruleId"] for r in results} >= {"KP610", "KP620", "KP621"}
