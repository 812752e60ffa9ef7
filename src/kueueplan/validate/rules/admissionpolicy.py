"""Layer 7: the cluster's own ValidatingAdmissionPolicies among the inputs, evaluated offline for a create.

The evaluation itself (matching, params, matchConditions, variables, validations) is
kueueplan.validate.vap; these rules turn its outcomes into findings.
"""

from __future__ import annotations

from collections.abc import Iterator

from kueueplan.validate import vap
from kueueplan.validate.model import Context
from kueueplan.validate.registry import Hit, rule

LAYER = "7 policy"


def _hits(ctx: Context, what: str) -> Iterator[Hit]:
    for out in vap.evaluate(ctx):
        if out.what == what:
            yield Hit(out.obj, out.path, out.message, severity=out.severity)


@rule("KP610", "error", LAYER, scope="global")
def vap_denies(ctx: Context) -> Iterator[Hit]:
    """A ValidatingAdmissionPolicy among the inputs rejects an object (Deny: error, Warn: warning, Audit: info).

    Evaluated as the API server would on create, through every ValidatingAdmissionPolicyBinding: match
    constraints and the binding's matchResources (namespace selectors read the Namespaces among the inputs),
    matchConditions, variables, validations with their message or messageExpression, params from ConfigMaps or
    custom resources among the inputs, failurePolicy. A policy that matches Pods is evaluated on the pods the
    inputs' workloads would create from their pod templates, and the finding says so. Kueue's sample policy:

    Fails:

    ```yaml
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicy
    metadata:
      name: queue-name-required
    spec:
      failurePolicy: Fail
      matchConstraints:
        resourceRules:
        - apiGroups: [batch]
          apiVersions: [v1]
          operations: [CREATE, UPDATE]
          resources: [jobs]
      validations:
      - expression: "'kueue.x-k8s.io/queue-name' in object.metadata.labels && object.metadata.labels['kueue.x-k8s.io/queue-name'] != ''"
        message: "The label 'kueue.x-k8s.io/queue-name' is either missing or does not have a value set."
    ---
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicyBinding
    metadata:
      name: queue-name-required
    spec:
      policyName: queue-name-required
      validationActions: [Deny]
      matchResources:
        namespaceSelector:
          matchLabels:
            kueue-managed: "true"
    ---
    apiVersion: v1
    kind: Namespace
    metadata:
      name: team-a
      labels:
        kueue-managed: "true"
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: no-queue
      namespace: team-a
      labels:
        app: train
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```

    Passes:

    ```yaml
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicy
    metadata:
      name: queue-name-required
    spec:
      failurePolicy: Fail
      matchConstraints:
        resourceRules:
        - apiGroups: [batch]
          apiVersions: [v1]
          operations: [CREATE, UPDATE]
          resources: [jobs]
      validations:
      - expression: "'kueue.x-k8s.io/queue-name' in object.metadata.labels && object.metadata.labels['kueue.x-k8s.io/queue-name'] != ''"
        message: "The label 'kueue.x-k8s.io/queue-name' is either missing or does not have a value set."
    ---
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicyBinding
    metadata:
      name: queue-name-required
    spec:
      policyName: queue-name-required
      validationActions: [Deny]
      matchResources:
        namespaceSelector:
          matchLabels:
            kueue-managed: "true"
    ---
    apiVersion: v1
    kind: Namespace
    metadata:
      name: team-a
      labels:
        kueue-managed: "true"
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: with-queue
      namespace: team-a
      labels:
        kueue.x-k8s.io/queue-name: user-queue
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```
    """
    return _hits(ctx, "denied")


@rule("KP611", "warning", LAYER, scope="global")
def vap_binding_without_policy(ctx: Context) -> Iterator[Hit]:
    """A ValidatingAdmissionPolicyBinding names a policy that is not among the inputs.

    Typically a kustomize `namePrefix` renamed the policy but not the binding's `spec.policyName`; the API
    server then enforces nothing for that binding.

    Fails:

    ```yaml
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicy
    metadata:
      name: prod-queue-name-required
    spec:
      matchConstraints:
        resourceRules:
        - {apiGroups: [batch], apiVersions: [v1], operations: [CREATE], resources: [jobs]}
      validations:
      - expression: "has(object.metadata.labels)"
    ---
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicyBinding
    metadata:
      name: prod-queue-name-required
    spec:
      policyName: queue-name-required
      validationActions: [Deny]
    ```

    Passes:

    ```yaml
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicy
    metadata:
      name: prod-queue-name-required
    spec:
      matchConstraints:
        resourceRules:
        - {apiGroups: [batch], apiVersions: [v1], operations: [CREATE], resources: [jobs]}
      validations:
      - expression: "has(object.metadata.labels)"
    ---
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicyBinding
    metadata:
      name: prod-queue-name-required
    spec:
      policyName: prod-queue-name-required
      validationActions: [Deny]
    ```
    """
    return _hits(ctx, "orphan")


@rule("KP612", "warning", LAYER, scope="global")
def vap_not_evaluated(ctx: Context) -> Iterator[Hit]:
    """A ValidatingAdmissionPolicy could not be evaluated offline on an object; it is reported, never guessed.

    `authorizer` and `request.userInfo` (RBAC, the requesting user) are never known offline (info); an
    expression the CEL engine cannot compile or that exceeds the cost budget, or a namespace selector on a
    Namespace that is not among the inputs, is reported too.

    Fails:

    ```yaml
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicy
    metadata:
      name: only-admins-skip-queues
    spec:
      matchConstraints:
        resourceRules:
        - {apiGroups: [batch], apiVersions: [v1], operations: [CREATE], resources: [jobs]}
      validations:
      - expression: "authorizer.group('kueue.x-k8s.io').resource('clusterqueues').check('update').allowed()"
    ---
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicyBinding
    metadata:
      name: only-admins-skip-queues
    spec:
      policyName: only-admins-skip-queues
      validationActions: [Deny]
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      namespace: team-a
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```

    Passes:

    ```yaml
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicy
    metadata:
      name: labels-required
    spec:
      matchConstraints:
        resourceRules:
        - {apiGroups: [batch], apiVersions: [v1], operations: [CREATE], resources: [jobs]}
      validations:
      - expression: "has(object.metadata.labels)"
    ---
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicyBinding
    metadata:
      name: labels-required
    spec:
      policyName: labels-required
      validationActions: [Deny]
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      namespace: team-a
      labels: {app: x}
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```
    """
    return _hits(ctx, "unevaluated")


@rule("KP613", "warning", LAYER, scope="global")
def vap_params_missing(ctx: Context) -> Iterator[Hit]:
    """A binding's paramRef finds no params among the inputs for an object its policy applies to.

    With `parameterNotFoundAction: Deny` the API server denies the object unless the params exist in the
    cluster; with `Allow` it skips the policy.

    Fails:

    ```yaml
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicy
    metadata:
      name: allowed-priorities
    spec:
      paramKind: {apiVersion: v1, kind: ConfigMap}
      matchConstraints:
        resourceRules:
        - {apiGroups: [batch], apiVersions: [v1], operations: [CREATE], resources: [jobs]}
      validations:
      - expression: "object.metadata.labels['kueue.x-k8s.io/priority-class'] in params.data.allowed.split(',')"
    ---
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicyBinding
    metadata:
      name: allowed-priorities
    spec:
      policyName: allowed-priorities
      validationActions: [Deny]
      paramRef:
        name: allowed-priorities
        namespace: kueue-system
        parameterNotFoundAction: Deny
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      namespace: team-a
      labels: {kueue.x-k8s.io/priority-class: dev}
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```

    Passes:

    ```yaml
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicy
    metadata:
      name: allowed-priorities
    spec:
      paramKind: {apiVersion: v1, kind: ConfigMap}
      matchConstraints:
        resourceRules:
        - {apiGroups: [batch], apiVersions: [v1], operations: [CREATE], resources: [jobs]}
      validations:
      - expression: "object.metadata.labels['kueue.x-k8s.io/priority-class'] in params.data.allowed.split(',')"
    ---
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicyBinding
    metadata:
      name: allowed-priorities
    spec:
      policyName: allowed-priorities
      validationActions: [Deny]
      paramRef:
        name: allowed-priorities
        namespace: kueue-system
        parameterNotFoundAction: Deny
    ---
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: allowed-priorities
      namespace: kueue-system
    data:
      allowed: dev,batch
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      namespace: team-a
      labels: {kueue.x-k8s.io/priority-class: dev}
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```
    """
    return _hits(ctx, "params")


@rule("KP614", "info", LAYER, scope="global")
def vap_audit_annotations(ctx: Context) -> Iterator[Hit]:
    """A ValidatingAdmissionPolicy has auditAnnotations: they only reach the audit log, so they are not evaluated.

    Fails:

    ```yaml
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicy
    metadata:
      name: note-queue
    spec:
      matchConstraints:
        resourceRules:
        - {apiGroups: [batch], apiVersions: [v1], operations: [CREATE], resources: [jobs]}
      auditAnnotations:
      - key: queue
        valueExpression: "object.metadata.labels['kueue.x-k8s.io/queue-name']"
    ```

    Passes:

    ```yaml
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicy
    metadata:
      name: note-queue
    spec:
      matchConstraints:
        resourceRules:
        - {apiGroups: [batch], apiVersions: [v1], operations: [CREATE], resources: [jobs]}
      validations:
      - expression: "has(object.metadata.labels)"
    ```
    """
    return _hits(ctx, "audit")
