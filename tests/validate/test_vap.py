"""ValidatingAdmissionPolicies among the inputs, evaluated offline as the API server would on create.

Policies are shaped like the public ones (Kueue's sample, ODH/MLBatch owner-reference exemptions, gatekeeper-style
requests and priorities), written for these tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kueueplan.report.findings import render
from kueueplan.validate import Result, validate

KUEUE_SAMPLE = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: sample-validating-admission-policy
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups:   ["batch"]
      apiVersions: ["v1"]
      operations:  ["CREATE", "UPDATE"]
      resources:   ["jobs"]
    - apiGroups:   ["jobset.x-k8s.io"]
      apiVersions: ["v1alpha2"]
      operations:  ["CREATE", "UPDATE"]
      resources:   ["jobsets"]
  validations:
    - expression: "'kueue.x-k8s.io/queue-name' in object.metadata.labels && object.metadata.labels['kueue.x-k8s.io/queue-name'] != ''"
      message: "The label 'kueue.x-k8s.io/queue-name' is either missing or does not have a value set."
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: sample-validating-admission-policy-binding
spec:
  policyName: sample-validating-admission-policy
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels:
        kueue-managed: "true"
"""

NAMESPACES = """
apiVersion: v1
kind: Namespace
metadata:
  name: team-a
  labels: {kueue-managed: "true"}
---
apiVersion: v1
kind: Namespace
metadata:
  name: admin
"""


def job(name: str, namespace: str = "team-a", labels: dict[str, str] | None = None, extra_meta: str = "",
        pod_labels: str = "", resources: str = "") -> str:
    label_text = ""
    if labels is not None:
        label_text = "  labels:\n" + "".join(f"    {k}: {json.dumps(v)}\n" for k, v in labels.items())
    return f"""
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: {namespace}
{label_text}{extra_meta}spec:
  template:
    metadata:
      labels: {{app: train{pod_labels}}}
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
{resources}"""


def run(tmp_path: Path, *docs: str) -> Result:
    folder = tmp_path / "in"
    folder.mkdir(exist_ok=True)
    (folder / "all.yaml").write_text("\n---\n".join(d.strip("\n") for d in docs) + "\n")
    return validate([str(folder)], crds=None, policies=[])


def hits(result: Result, rule: str = "KP610") -> list:
    return [f for f in result.findings if f.rule == rule]


def test_kueue_sample_denies_job_without_queue_name(tmp_path: Path) -> None:
    result = run(tmp_path, KUEUE_SAMPLE, NAMESPACES,
                 job("no-queue", labels={"app": "x"}),
                 job("empty-queue", labels={"kueue.x-k8s.io/queue-name": ""}),
                 job("queued", labels={"kueue.x-k8s.io/queue-name": "user-queue"}),
                 job("admin-job", namespace="admin", labels={"app": "x"}))
    found = {f.object: f for f in hits(result)}
    assert set(found) == {"Job/team-a/no-queue", "Job/team-a/empty-queue"}
    f = found["Job/team-a/no-queue"]
    assert f.severity == "error" and f.file.endswith("all.yaml") and f.line is not None
    assert "'sample-validating-admission-policy'" in f.message
    assert "'sample-validating-admission-policy-binding'" in f.message
    assert "either missing or does not have a value set" in f.message
    text = (tmp_path / "in" / "all.yaml").read_text().splitlines()
    assert text[f.line - 1].startswith("apiVersion: batch/v1") or "no-queue" in "\n".join(text[f.line - 1:f.line + 3])


def test_missing_labels_is_an_evaluation_error_that_fails_closed(tmp_path: Path) -> None:
    # `'x' in object.metadata.labels` errors without labels (no such key); failurePolicy Fail denies.
    result = run(tmp_path, KUEUE_SAMPLE, NAMESPACES, job("bare"))
    [f] = hits(result)
    assert "failurePolicy Fail" not in f.message and "resulted in error" in f.message and "labels" in f.message
    ignoring = KUEUE_SAMPLE.replace("failurePolicy: Fail", "failurePolicy: Ignore")
    result = run(tmp_path, ignoring, NAMESPACES, job("bare"))
    assert hits(result) == []


def test_binding_not_in_admin_namespace_like_kueue_docs(tmp_path: Path) -> None:
    binding = KUEUE_SAMPLE.replace("""    namespaceSelector:
      matchLabels:
        kueue-managed: "true"
""", """    namespaceSelector:
      matchExpressions:
      - key: kubernetes.io/metadata.name
        operator: NotIn
        values: ["admin"]
""")
    # team-b is not among the inputs: its name is still known, so the selector is decided.
    result = run(tmp_path, binding, job("a", namespace="admin", labels={"x": "y"}),
                 job("b", namespace="team-b", labels={"x": "y"}))
    assert [f.object for f in hits(result)] == ["Job/team-b/b"]


def test_undeclared_namespace_with_label_selector_is_not_guessed(tmp_path: Path) -> None:
    result = run(tmp_path, KUEUE_SAMPLE, job("a", namespace="team-z", labels={"x": "y"}),
                 job("b", namespace="team-z", labels={"x": "y"}))
    assert hits(result) == []
    [note] = hits(result, "KP612")
    assert note.severity == "info" and "team-z" in note.message and "not among the inputs" in note.message


def test_plural_resources_exclude_rules_object_selector_and_match_policy(tmp_path: Path) -> None:
    policy = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: rayjobs-need-queue
spec:
  matchConstraints:
    matchPolicy: {policy}
    resourceRules:
    - apiGroups: [ray.io]
      apiVersions: [v1alpha1]
      operations: ["*"]
      resources: [rayjobs]
    excludeResourceRules:
    - apiGroups: [ray.io]
      apiVersions: ["*"]
      operations: [CREATE]
      resources: [rayjobs]
      resourceNames: [exempt]
    objectSelector:
      matchExpressions:
      - {{key: team, operator: Exists}}
  validations:
  - expression: "has(object.metadata.labels) && 'kueue.x-k8s.io/queue-name' in object.metadata.labels"
    messageExpression: "'RayJob ' + object.metadata.name + ' needs a queue'"
    reason: Forbidden
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: rayjobs-need-queue
spec:
  policyName: rayjobs-need-queue
  validationActions: [Deny]
"""

    def rayjob(name: str, labels: str) -> str:
        return f"""
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: {name}
  namespace: team-a
  labels: {labels}
spec:
  entrypoint: python x.py
"""
    docs = [rayjob("labelled", "{team: a}"), rayjob("exempt", "{team: a}"), rayjob("other", "{x: y}"),
            rayjob("ok", "{team: a, kueue.x-k8s.io/queue-name: q}")]
    result = run(tmp_path, policy.format(policy="Equivalent"), *docs)
    [f] = hits(result)
    assert f.object == "RayJob/team-a/labelled"
    assert "RayJob labelled needs a queue" in f.message and "reason Forbidden" in f.message
    # Exact: the rule names v1alpha1 only, the RayJob is ray.io/v1.
    assert hits(run(tmp_path, policy.format(policy="Exact"), *docs)) == []


def test_kind_to_resource_mapping() -> None:
    from kueueplan.validate.vap import resource_of

    assert resource_of("PyTorchJob") == "pytorchjobs"
    assert resource_of("WorkloadPriorityClass") == "workloadpriorityclasses"
    assert resource_of("Policy") == "policies"
    assert resource_of("Gateway") == "gateways"
    assert resource_of("Endpoints") == "endpoints"
    assert resource_of("Widget", {"Widget": "widgetz"}) == "widgetz"


MLBATCH_STYLE = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: queue-required-unless-owned
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [batch], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [jobs]}
  matchConditions:
  - name: skip-if-deleting
    expression: "!has(object.metadata.deletionTimestamp)"
  - name: skip-if-owned-by-appwrapper
    expression: >-
      !has(object.metadata.ownerReferences) ||
      !object.metadata.ownerReferences.exists(o, o.apiVersion.startsWith('workload.codeflare.dev/') && o.kind == 'AppWrapper')
  variables:
  - name: queueName
    expression: "has(object.metadata.labels) && 'kueue.x-k8s.io/queue-name' in object.metadata.labels ? object.metadata.labels['kueue.x-k8s.io/queue-name'] : ''"
  validations:
  - expression: "variables.queueName != ''"
    messageExpression: "'Job ' + object.metadata.name + ' in ' + namespaceObject.metadata.name + ' must name a LocalQueue'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: queue-required-unless-owned
spec:
  policyName: queue-required-unless-owned
  validationActions: [Deny]
"""


def test_owner_reference_exemption_variables_and_namespace_object(tmp_path: Path) -> None:
    owned = """  ownerReferences:
  - {apiVersion: workload.codeflare.dev/v1beta2, kind: AppWrapper, name: aw, uid: "1"}
"""
    result = run(tmp_path, MLBATCH_STYLE, NAMESPACES, job("owned", extra_meta=owned),
                 job("loose", labels={"a": "b"}), job("queued", labels={"kueue.x-k8s.io/queue-name": "q"}))
    [f] = hits(result)
    assert f.object == "Job/team-a/loose"
    assert "Job loose in team-a must name a LocalQueue" in f.message


def test_match_condition_error_takes_failure_policy(tmp_path: Path) -> None:
    policy = MLBATCH_STYLE.replace("!has(object.metadata.deletionTimestamp)", "object.metadata.missing == 1")
    [f] = hits(run(tmp_path, policy, NAMESPACES, job("x", labels={"kueue.x-k8s.io/queue-name": "q"})))
    assert "failurePolicy Fail" in f.message and "skip-if-deleting" in f.message


def test_variable_error_only_where_used(tmp_path: Path) -> None:
    policy = MLBATCH_STYLE.replace("""  validations:""", """  - name: broken
    expression: "object.spec.nothing.here"
  validations:""")
    result = run(tmp_path, policy, NAMESPACES, job("queued", labels={"kueue.x-k8s.io/queue-name": "q"}))
    assert hits(result) == []
    policy2 = policy.replace('expression: "variables.queueName != \'\'"',
                             'expression: "variables.queueName != \'\' && variables.broken == 1"')
    [f] = hits(run(tmp_path, policy2, NAMESPACES, job("queued", labels={"kueue.x-k8s.io/queue-name": "q"})))
    assert "variable 'broken'" in f.message


PRIORITIES_FROM_PARAMS = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: allowed-priorities
spec:
  paramKind: {{apiVersion: v1, kind: ConfigMap}}
  matchConstraints:
    resourceRules:
    - {{apiGroups: [batch], apiVersions: [v1], operations: [CREATE], resources: [jobs]}}
  validations:
  - expression: >-
      !has(object.metadata.labels) || !('kueue.x-k8s.io/priority-class' in object.metadata.labels) ||
      object.metadata.labels['kueue.x-k8s.io/priority-class'] in params.data.allowed.split(',').map(p, p.trim())
    messageExpression: "'priority ' + object.metadata.labels['kueue.x-k8s.io/priority-class'] + ' is not in ' + params.metadata.name"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: allowed-priorities
spec:
  policyName: allowed-priorities
  validationActions: [Deny]
  paramRef:
    {ref}
    parameterNotFoundAction: {action}
"""


def configmap(name: str, namespace: str, allowed: str, labels: str = "{}") -> str:
    return f"""
apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
  namespace: {namespace}
  labels: {labels}
data:
  allowed: "{allowed}"
"""


def test_params_by_name_in_a_fixed_namespace(tmp_path: Path) -> None:
    policy = PRIORITIES_FROM_PARAMS.format(ref="name: priorities\n    namespace: kueue-system", action="Deny")
    result = run(tmp_path, policy, configmap("priorities", "kueue-system", "dev, batch"),
                 job("dev", labels={"kueue.x-k8s.io/priority-class": "dev"}),
                 job("prod", labels={"kueue.x-k8s.io/priority-class": "prod"}))
    [f] = hits(result)
    assert f.object == "Job/team-a/prod" and "priority prod is not in priorities" in f.message


def test_params_from_the_request_namespace_by_selector(tmp_path: Path) -> None:
    policy = PRIORITIES_FROM_PARAMS.format(ref="selector: {matchLabels: {kind: priorities}}", action="Allow")
    result = run(tmp_path, policy,
                 configmap("team-a-priorities", "team-a", "dev", "{kind: priorities}"),
                 configmap("unrelated", "team-a", "prod", "{kind: other}"),
                 job("dev", labels={"kueue.x-k8s.io/priority-class": "dev"}),
                 job("prod", labels={"kueue.x-k8s.io/priority-class": "prod"}),
                 job("elsewhere", namespace="team-b", labels={"kueue.x-k8s.io/priority-class": "prod"}))
    assert [f.object for f in hits(result)] == ["Job/team-a/prod"]
    # team-b has no params and the action is Allow: reported as a warning that says so, never as a denial
    [w] = hits(result, "KP613")
    assert w.object == "Job/team-b/elsewhere" and "Allow" in w.message


def test_params_as_custom_resources_and_missing_param_ref(tmp_path: Path) -> None:
    policy = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: max-gpus
spec:
  paramKind: {apiVersion: platform.example.com/v1, kind: GpuLimit}
  matchConstraints:
    resourceRules:
    - {apiGroups: [batch], apiVersions: [v1], operations: [CREATE], resources: [jobs]}
  validations:
  - expression: >-
      object.spec.template.spec.containers.all(c, !has(c.resources) || !has(c.resources.limits) ||
      !('nvidia.com/gpu' in c.resources.limits) || int(c.resources.limits['nvidia.com/gpu']) <= params.spec.maxPerContainer)
    message: too many GPUs
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: max-gpus
spec:
  policyName: max-gpus
  validationActions: [Warn]
  paramRef: {name: limits, namespace: platform, parameterNotFoundAction: Deny}
---
apiVersion: platform.example.com/v1
kind: GpuLimit
metadata:
  name: limits
  namespace: platform
spec:
  maxPerContainer: 4
"""
    gpus = "        resources:\n          limits: {nvidia.com/gpu: 8}\n"
    result = run(tmp_path, policy, job("big", labels={"q": "1"}, resources=gpus), job("small", labels={"q": "1"}))
    [f] = hits(result)
    assert f.object == "Job/team-a/big" and f.severity == "warning" and "too many GPUs" in f.message
    unbound = policy.replace("  paramRef: {name: limits, namespace: platform, parameterNotFoundAction: Deny}\n", "")
    [f] = hits(run(tmp_path, unbound, job("small", labels={"q": "1"})))
    assert "no paramRef" in f.message and f.severity == "warning"


@pytest.mark.parametrize(("actions", "severity"), [("[Deny]", "error"), ("[Warn]", "warning"),
                                                   ("[Audit]", "info"), ("[Warn, Audit]", "warning"),
                                                   ("[Deny, Audit]", "error")])
def test_validation_actions_set_severity(tmp_path: Path, actions: str, severity: str) -> None:
    policy = KUEUE_SAMPLE.replace("validationActions: [Deny]", f"validationActions: {actions}")
    [f] = hits(run(tmp_path, policy, NAMESPACES, job("no-queue", labels={"a": "b"})))
    assert f.severity == severity


def test_user_info_and_authorizer_are_never_guessed(tmp_path: Path) -> None:
    policy = MLBATCH_STYLE.replace("""  - name: skip-if-deleting
    expression: "!has(object.metadata.deletionTimestamp)"
""", """  - name: not-a-controller
    expression: "!request.userInfo.username.startsWith('system:serviceaccount:kube-system:')"
""")
    result = run(tmp_path, policy, NAMESPACES, job("loose", labels={"a": "b"}),
                 job("queued", labels={"kueue.x-k8s.io/queue-name": "q"}))
    assert hits(result) == []
    [note] = hits(result, "KP612")
    assert note.object == "Job/team-a/loose" and note.severity == "info"
    assert "request.userInfo" in note.message and "must name a LocalQueue" in note.message


def test_audit_annotations_are_noted(tmp_path: Path) -> None:
    policy = KUEUE_SAMPLE.replace("  validations:", """  auditAnnotations:
  - key: queue
    valueExpression: "'x'"
  validations:""")
    result = run(tmp_path, policy, NAMESPACES)
    [note] = hits(result, "KP614")
    assert note.severity == "info" and note.object == "ValidatingAdmissionPolicy/sample-validating-admission-policy"


def test_binding_for_a_renamed_policy_is_a_warning(tmp_path: Path) -> None:
    renamed = KUEUE_SAMPLE.replace("  name: sample-validating-admission-policy\n",
                                   "  name: prod-sample-validating-admission-policy\n")
    result = run(tmp_path, renamed, NAMESPACES, job("no-queue", labels={"a": "b"}))
    [w] = hits(result, "KP611")
    assert w.severity == "warning" and "namePrefix" in w.message
    assert hits(result) == []


REQUESTS_ON_PODS = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: pods-need-requests
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  validations:
  - expression: >-
      object.spec.containers.all(c, has(c.resources) && has(c.resources.requests) &&
      'cpu' in c.resources.requests && 'memory' in c.resources.requests)
    message: every container must request cpu and memory
  - expression: "!has(object.spec.priorityClassName) || object.spec.priorityClassName != 'system-cluster-critical'"
    message: system priorities are reserved
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: pods-need-requests
spec:
  policyName: pods-need-requests
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels: {kueue-managed: "true"}
"""

RAYJOB = """
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: train
  namespace: team-a
  labels: {kueue.x-k8s.io/queue-name: q}
spec:
  entrypoint: python train.py
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          priorityClassName: system-cluster-critical
          containers:
          - name: head
            image: rayproject/ray:2.9.0
            resources:
              requests: {cpu: "1", memory: 2Gi}
    workerGroupSpecs:
    - groupName: gpu
      replicas: 2
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: worker
            image: rayproject/ray:2.9.0
"""


def test_pod_policy_is_evaluated_on_the_pods_workloads_would_create(tmp_path: Path) -> None:
    result = run(tmp_path, REQUESTS_ON_PODS, NAMESPACES, RAYJOB)
    found = sorted(hits(result), key=lambda f: f.line)
    assert len(found) == 2 and all(f.object == "RayJob/team-a/train" for f in found)
    head, worker = found
    assert "would create from its pod template spec.rayClusterSpec.headGroupSpec.template" in head.message
    assert "system priorities are reserved" in head.message and "must request" not in head.message
    assert "workerGroupSpecs.0.template" in worker.message and "must request cpu and memory" in worker.message
    lines = (tmp_path / "in" / "all.yaml").read_text().splitlines()
    assert lines[worker.line - 1].strip().startswith("template:")


def test_pod_labels_come_from_the_template_only(tmp_path: Path) -> None:
    policy = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: pods-labelled
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  matchConditions:
  - name: owned-by-job
    expression: "object.metadata.ownerReferences.exists(o, o.kind == 'Job')"
  validations:
  - expression: "'kueue.x-k8s.io/queue-name' in object.metadata.labels"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: pods-labelled
spec:
  policyName: pods-labelled
  validationActions: [Audit]
"""
    result = run(tmp_path, policy, job("j", labels={"kueue.x-k8s.io/queue-name": "q"}))
    [f] = hits(result)
    assert f.severity == "info" and "Job/team-a/j would create" in f.message and "audits" in f.message


def test_cost_bound_stops_quadratic_expressions(tmp_path: Path) -> None:
    policy = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: expensive
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
  validations:
  - expression: "object.data.all(a, object.data.all(b, object.data.all(c, a + b + c != '')))"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: expensive
spec:
  policyName: expensive
  validationActions: [Deny]
"""
    data = "".join(f"  k{i}: v\n" for i in range(200))
    cm = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n  namespace: team-a\ndata:\n{data}"
    result = run(tmp_path, policy, cm)
    [note] = hits(result, "KP612")
    assert "cost" in note.message and note.severity == "warning"
    assert hits(result) == []


def test_denial_in_every_output_format(tmp_path: Path) -> None:
    from kueueplan.report.check import markdown
    from kueueplan.workflow.check import CheckReport
    from kueueplan.workflow.prcomment import prepare_body

    result = run(tmp_path, KUEUE_SAMPLE, NAMESPACES, job("no-queue", labels={"a": "b"}))
    text = render(result, "text")
    assert "error KP610 Job/team-a/no-queue" in text
    data = json.loads(render(result, "json"))
    assert [f["severity"] for f in data["findings"] if f["rule"] == "KP610"] == ["error"]
    sarif = json.loads(render(result, "sarif"))
    levels = [r["level"] for r in sarif["runs"][0]["results"] if r["ruleId"] == "KP610"]
    assert levels == ["error"]
    report = CheckReport(str(tmp_path), "-")
    report.gen_checked = False
    report.findings = list(result.findings)
    body = prepare_body(markdown(report))
    assert "error KP610 Job/team-a/no-queue" in body and "❌" in body


def test_hostile_message_expression_is_escaped_in_markdown(tmp_path: Path) -> None:
    from kueueplan.report.check import markdown
    from kueueplan.workflow.check import CheckReport

    policy = KUEUE_SAMPLE.replace(
        'message: "The label',
        "messageExpression: \"'<img src=x onerror=alert(1)> @org/team [x](javascript:y) | ' + object.metadata.name\"\n"
        '      message: "The label')
    result = run(tmp_path, policy, NAMESPACES, job("no-queue", labels={"a": "b"}))
    report = CheckReport(str(tmp_path), "-")
    report.gen_checked = False
    report.findings = list(result.findings)
    out = markdown(report)
    assert "<img" not in out and "&lt;img" in out and "[x](javascript" not in out


def test_celk8s_library(tmp_path: Path) -> None:
    from kueueplan.validate import celk8s
    from kueueplan.validate.celrules import cel

    def ev(expr: str, **variables: object) -> object:
        return cel.compile(expr).execute(celk8s.context(dict(variables), expr))

    assert ev("'ABC'.lowerAscii() + 'abc'.upperAscii()") == "abcABC"
    assert ev("'a,b,c'.split(',')") == ["a", "b", "c"] and ev("'a,b,c'.split(',', 2)") == ["a", "b,c"]
    assert ev("['a', 'b'].join('/')") == "a/b" and ev("'hello'.substring(1, 3)") == "el"
    assert ev("' x '.trim()") == "x" and ev("'banana'.lastIndexOf('a')") == 5 and ev("'abc'.charAt(1)") == "b"
    assert ev("'aaa'.replace('a', 'b', 2)") == "bba" and ev("'abc'.reverse()") == "cba"
    assert ev("'%s=%d'.format(['x', 3])") == "x=3" and ev("strings.quote('a\"b')") == '"a\\"b"'
    assert ev("[1, 2, 3].isSorted() && [3, 1, 2].sum() == 6 && [3, 1].min() == 1 && [3, 1].max() == 3")
    assert ev("[1, 2, 3].indexOf(3)") == 2 and ev("[1, 2, 3].slice(1, 3)") == [2, 3]
    assert ev("'v1.2.3'.find('[0-9]+')") == "1" and ev("'a1b22'.findAll('[0-9]+')") == ["1", "22"]
    assert ev("quantity('1Gi').isGreaterThan(quantity('1G'))") is True
    assert ev("quantity('500m').add(quantity('1500m')).compareTo(quantity('2')) == 0") is True
    assert ev("isQuantity('1.5Gi') && !isQuantity('1.5 Gi')") is True
    assert ev("quantity('2').asInteger() == 2 && quantity('1k').sign() == 1 && !quantity('1.5').isInteger()")
    assert ev("sets.contains(['a', 'b'], ['a']) && sets.intersects([1], [1, 2]) && !sets.equivalent([1], [2])")
    assert ev("url('https://example.com:8443/p').getPort()") == "8443"
    with pytest.raises(Exception):
        ev("'abc'.charAt(9)")
    with pytest.raises(Exception):
        ev("quantity('not a quantity')")
    # RE2, linear time: Python's re would take 2^60 steps here
    assert ev("name.find('^(a+)+$') == ''", name="a" * 60 + "b") is True
    assert celk8s.macro_depth("a.all(x, x.b.exists(y, y == ')'))") == 2
    assert not celk8s.within_budget("a.all(x, a.all(y, a.all(z, true)))", 1000)


def test_namespace_object_of_an_undeclared_namespace_is_not_guessed(tmp_path: Path) -> None:
    policy = KUEUE_SAMPLE.replace(
        "- expression: \"'kueue.x-k8s.io/queue-name' in",
        "- expression: \"!('kueue-managed' in namespaceObject.metadata.labels) || 'kueue.x-k8s.io/queue-name' in"
    ).replace("""  matchResources:
    namespaceSelector:
      matchLabels:
        kueue-managed: "true"
""", "")
    result = run(tmp_path, policy, NAMESPACES, job("loose", namespace="team-q", labels={"a": "b"}),
                 job("declared", labels={"a": "b"}))
    [note] = hits(result, "KP612")
    assert "namespaceObject" in note.message and "team-q" in note.message
    assert [f.object for f in hits(result)] == ["Job/team-a/declared"]


def test_long_messages_are_bounded(tmp_path: Path) -> None:
    long = KUEUE_SAMPLE.replace("message: \"The label 'kueue.x-k8s.io/queue-name' is either missing or does not "
                                "have a value set.\"", "message: \"" + "x" * 5000 + "\"")
    [f] = hits(run(tmp_path, long, NAMESPACES, job("no-queue", labels={"a": "b"})))
    assert len(f.message) < 1000 and f.message.endswith("...")


@pytest.mark.parametrize(("expression", "why"), [
    ("'a'.find('(?=a)a') == ''", "Unsupported regex"),  # a look-ahead: RE2 (the server's engine) refuses it
    ("variables.v9.size() > 0", "too large"),  # doubling variables: stopped by the size bound
    ("object.metadata.name.replace('', object.metadata.name).replace('', object.metadata.name)"
     ".replace('', object.metadata.name).size() > 0", "cost budget"),
])
def test_hostile_expressions_are_bounded_not_guessed(tmp_path: Path, expression: str, why: str) -> None:
    doubling = "".join(f"  - name: v{i}\n    expression: \"variables.v{i - 1} + variables.v{i - 1}\"\n"
                       for i in range(1, 40))
    policy = f"""
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: hostile
spec:
  matchConstraints:
    resourceRules:
    - {{apiGroups: [batch], apiVersions: [v1], operations: [CREATE], resources: [jobs]}}
  variables:
  - name: v0
    expression: "'{'x' * 2000}'"
{doubling}  validations:
  - expression: "{expression}"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: hostile
spec:
  policyName: hostile
  validationActions: [Deny]
"""
    result = run(tmp_path, policy, job("x" * 60, labels={"a": "b"}))
    assert hits(result) == []
    [note] = hits(result, "KP612")
    assert "not evaluated" in note.message and why in note.message


LQ_POLICY = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: lq-owner
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [kueue.x-k8s.io], apiVersions: ["*"], operations: [CREATE], resources: [localqueues]}
  validations:
  - expression: "has(object.metadata.labels) && 'owner' in object.metadata.labels"
    message: LocalQueues carry an owner label
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: lq-owner
spec:
  policyName: lq-owner
  validationActions: [Warn]
"""


def test_a_loose_policy_folder_guards_kustomize_overlays(tmp_path: Path) -> None:
    overlay = tmp_path / "repo" / "overlays" / "dev"
    overlay.mkdir(parents=True)
    (overlay / "kustomization.yaml").write_text("resources: [lq.yaml]\n")
    (overlay / "lq.yaml").write_text("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: q\n"
                                     "  namespace: team-a\nspec:\n  clusterQueue: cq\n")
    (tmp_path / "repo" / "cluster-policies").mkdir()
    (tmp_path / "repo" / "cluster-policies" / "vap.yaml").write_text(LQ_POLICY)
    result = validate([str(tmp_path / "repo")], crds=None, policies=[])
    [f] = hits(result)
    assert f.object == "LocalQueue/team-a/q" and f.severity == "warning" and f.file.endswith("lq.yaml")


def test_a_loose_policy_folder_guards_a_spec(tmp_path: Path) -> None:
    import shutil

    spec = Path(__file__).resolve().parents[2] / "examples" / "cohort-borrow" / "environments"
    if not spec.is_dir():
        pytest.skip("examples/cohort-borrow is not in this checkout")
    shutil.copytree(spec, tmp_path / "repo" / "environments")
    (tmp_path / "repo" / "cluster").mkdir()
    (tmp_path / "repo" / "cluster" / "vap.yaml").write_text(LQ_POLICY)
    result = validate([str(tmp_path / "repo")], crds=None, policies=[])
    found = hits(result)
    assert found and all(f.object.startswith("LocalQueue/") and "@" in f.object for f in found)
    assert all("environments" in f.file and f.line for f in found)


def test_binding_match_resources_narrow_and_policy_without_rules_matches_nothing(tmp_path: Path) -> None:
    narrowed = KUEUE_SAMPLE.replace("""  matchResources:
    namespaceSelector:
      matchLabels:
        kueue-managed: "true"
""", """  matchResources:
    resourceRules:
    - {apiGroups: [jobset.x-k8s.io], apiVersions: ["*"], operations: ["*"], resources: [jobsets]}
""")
    assert hits(run(tmp_path, narrowed, NAMESPACES, job("no-queue", labels={"a": "b"}))) == []
    unbound = KUEUE_SAMPLE.replace("""  matchResources:
    namespaceSelector:
      matchLabels:
        kueue-managed: "true"
""", "")
    assert [f.object for f in hits(run(tmp_path, unbound, job("x", namespace="anywhere", labels={"a": "b"})))] == [
        "Job/anywhere/x"]
    no_rules = KUEUE_SAMPLE.replace("""  matchConstraints:
    resourceRules:""", """  matchConstraintz:
    resourceRules:""")
    assert hits(run(tmp_path, no_rules, NAMESPACES, job("no-queue", labels={"a": "b"}))) == []


SHAPES = [None, "x", 1, [], {}, [1], ["x"], {"a": 1}, [{}], True]


@pytest.mark.parametrize("where", ["policy", "binding", "params"])
def test_malformed_policies_never_crash_the_evaluation(where: str) -> None:
    fields = {"policy": ["spec", "matchConstraints", "validations", "matchConditions", "variables", "paramKind",
                         "failurePolicy", "auditAnnotations"],
              "binding": ["spec", "policyName", "validationActions", "matchResources", "paramRef"],
              "params": ["paramRef"]}[where]
    for field_name in fields:
        for shape in SHAPES:
            pol = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
                   "metadata": {"name": "p"},
                   "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": ["*"], "apiVersions": ["*"],
                                                                    "operations": ["*"], "resources": ["*"]}]},
                            "validations": [{"expression": "object.metadata.name != ''"}]}}
            binding = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
                       "metadata": {"name": "b"}, "spec": {"policyName": "p", "validationActions": ["Deny"]}}
            target = pol if where == "policy" else binding
            if where == "params":
                pol["spec"]["paramKind"] = {"apiVersion": "v1", "kind": "ConfigMap"}
                shape = {"selector": shape, "namespace": shape, "name": shape, "parameterNotFoundAction": shape}
            if field_name == "spec":
                target["spec"] = shape
            else:
                target["spec"][field_name] = shape
            docs = [pol, binding, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "a",
                                                                                           "labels": shape}},
                    {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "a",
                                                                          "labels": shape},
                     "spec": {"template": shape}}]
            text = "\n---\n".join(json.dumps(d) for d in docs)
            result = validate(["-"], stdin_text=text, crds=None, policies=[])
            assert not [f for f in result.findings if "internal error" in f.message], (field_name, shape)


def test_control_characters_in_policy_text_never_reach_the_output(tmp_path: Path) -> None:
    policy = KUEUE_SAMPLE.replace(
        "message: \"The label 'kueue.x-k8s.io/queue-name' is either missing or does not have a value set.\"",
        'message: "bad\\u001b[2J\\u202e\\nline ::error::x"')
    [f] = hits(run(tmp_path, policy, NAMESPACES, job("no-queue", labels={"a": "b"})))
    assert "\x1b" not in f.message and "\u202e" not in f.message and "\n" not in f.message
    assert "bad [2J line ::error::x" in f.message


def test_request_is_a_create_without_old_object_and_scope_is_honoured(tmp_path: Path) -> None:
    policy = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: offline-request
spec:
  matchConstraints:
    resourceRules:
    - {{apiGroups: [batch], apiVersions: [v1], operations: [CREATE], resources: [jobs], scope: {scope}}}
  validations:
  - expression: >-
      !(request.operation == 'CREATE' && oldObject == null && request.kind.kind == 'Job' &&
      request.resource.resource == 'jobs' && request.namespace == 'team-a' && request.name == 'x')
    message: seen as a create
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: offline-request
spec:
  policyName: offline-request
  validationActions: [Deny]
"""
    [f] = hits(run(tmp_path, policy.format(scope="Namespaced"), job("x", labels={"a": "b"})))
    assert "seen as a create" in f.message
    assert hits(run(tmp_path, policy.format(scope="Cluster"), job("x", labels={"a": "b"}))) == []
