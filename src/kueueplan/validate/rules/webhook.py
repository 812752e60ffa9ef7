"""Layer 4: Kueue's validating webhooks (pkg/webhooks), for ClusterQueue, Cohort, ResourceFlavor, Workload.

These run with or without CRDs; see ../shared/docs/kueue-validation-rules.md for the rule numbers quoted.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kueueplan.kube.quantity import parse_quantity, quantity_hint
from kueueplan.validate import kueue
from kueueplan.validate.model import Context, Obj
from kueueplan.kube.names import label_value_errors, qualified_name_errors
from kueueplan.validate.registry import Hit, rule
from kueueplan.validate.rules.references import dig

_QUEUES = ("ClusterQueue", "Cohort")
_SELECTOR_OPERATORS = {"In", "NotIn", "Exists", "DoesNotExist"}
_TAINT_EFFECTS = {"NoSchedule", "PreferNoSchedule", "NoExecute"}


@rule("KP301", "error", "4 webhook", kinds=_QUEUES)
def resource_order(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A flavor's resources do not match the group's coveredResources in the same order (webhook).

    Kueue requires `flavors[j].resources[i].name == coveredResources[i]`. List the resources of every
    flavor in the order of coveredResources.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu, memory]
        flavors:
        - name: default
          resources:
          - name: memory
            nominalQuota: 16Gi
          - name: cpu
            nominalQuota: 4
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu, memory]
        flavors:
        - name: default
          resources:
          - name: cpu
            nominalQuota: 4
          - name: memory
            nominalQuota: 16Gi
    ```
    """
    if not obj.is_kueue():
        return
    for gi, group in kueue.resource_groups(obj):
        names = kueue.covered(group)
        for fi, flavor in kueue.flavors(group):
            resources = flavor.get("resources") if isinstance(flavor.get("resources"), list) else []
            for ri, res in enumerate(resources):
                if not isinstance(res, dict) or ri >= len(names):
                    continue
                if res.get("name") != names[ri]:
                    yield Hit(obj, ("spec", "resourceGroups", gi, "flavors", fi, "resources", ri, "name"),
                              f"flavor {flavor.get('name')!r} lists {res.get('name')!r} at position {ri}; it must "
                              f"match coveredResources[{ri}] = {names[ri]!r} (same resources, same order)")


@rule("KP302", "error", "4 webhook", kinds=_QUEUES)
def resource_name_syntax(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A covered resource name is not a qualified name (e.g. `nvidia.com/gpu` is fine, `GPU count` is not).

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: Cohort
    metadata:
      name: org
    spec:
      resourceGroups:
      - coveredResources: ["gpu count"]
        flavors:
        - name: default
          resources:
          - name: "gpu count"
            nominalQuota: 4
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: Cohort
    metadata:
      name: org
    spec:
      resourceGroups:
      - coveredResources: [nvidia.com/gpu]
        flavors:
        - name: default
          resources:
          - name: nvidia.com/gpu
            nominalQuota: 4
    ```
    """
    if not obj.is_kueue():
        return
    for gi, group in kueue.resource_groups(obj):
        for ri, name in enumerate(kueue.covered(group)):
            for err in qualified_name_errors(name):
                yield Hit(obj, ("spec", "resourceGroups", gi, "coveredResources", ri),
                          f"covered resource {name!r}: {err}")


@rule("KP303", "error", "4 webhook", kinds=_QUEUES)
def resource_in_one_group(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A resource or a flavor appears in more than one resource group (webhook: Duplicate value).

    Put every resource in exactly one group; a flavor belongs to one group only.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu]
        flavors:
        - name: default
          resources:
          - name: cpu
            nominalQuota: 4
      - coveredResources: [cpu]
        flavors:
        - name: spot
          resources:
          - name: cpu
            nominalQuota: 4
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu]
        flavors:
        - name: default
          resources:
          - name: cpu
            nominalQuota: 4
        - name: spot
          resources:
          - name: cpu
            nominalQuota: 4
    ```
    """
    if not obj.is_kueue():
        return
    seen_res: dict[str, int] = {}
    seen_flavor: dict[str, int] = {}
    for gi, group in kueue.resource_groups(obj):
        for ri, name in enumerate(kueue.covered(group)):
            if name in seen_res:
                yield Hit(obj, ("spec", "resourceGroups", gi, "coveredResources", ri),
                          f"resource {name!r} is already covered by resourceGroups[{seen_res[name]}]; a resource "
                          "may be listed once, in only one resource group")
            seen_res.setdefault(name, gi)
        for fi, flavor in kueue.flavors(group):
            name = flavor.get("name")
            if not isinstance(name, str):
                continue
            if name in seen_flavor:
                yield Hit(obj, ("spec", "resourceGroups", gi, "flavors", fi, "name"),
                          f"flavor {name!r} is already used in resourceGroups[{seen_flavor[name]}]; a flavor may be "
                          "in only one resource group")
            seen_flavor.setdefault(name, gi)


@rule("KP304", "error", "4 webhook", kinds=("ClusterQueue",))
def cq_totals(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A ClusterQueue exceeds the webhook's totals: 256 flavors, 256 covered resources, 512 flavor×resource per group.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    x-group: &g  # 17 flavors, repeated in 16 groups: 272 flavors
      coveredResources: [cpu]
      flavors:
      - {name: f0, resources: &q [{name: cpu, nominalQuota: 1}]}
      - {name: f1, resources: *q}
      - {name: f2, resources: *q}
      - {name: f3, resources: *q}
      - {name: f4, resources: *q}
      - {name: f5, resources: *q}
      - {name: f6, resources: *q}
      - {name: f7, resources: *q}
      - {name: f8, resources: *q}
      - {name: f9, resources: *q}
      - {name: f10, resources: *q}
      - {name: f11, resources: *q}
      - {name: f12, resources: *q}
      - {name: f13, resources: *q}
      - {name: f14, resources: *q}
      - {name: f15, resources: *q}
      - {name: f16, resources: *q}
    spec:
      namespaceSelector: {}
      resourceGroups: [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g, *g, *g, *g, *g, *g, *g]
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
    ```
    """
    if not obj.is_kueue():
        return
    groups = kueue.resource_groups(obj)
    total_flavors = sum(len(kueue.flavors(g)) for _, g in groups)
    total_covered = sum(len(kueue.covered(g)) for _, g in groups)
    if total_flavors > 256:
        yield Hit(obj, ("spec", "resourceGroups"), f"{total_flavors} flavors in total; at most 256 are allowed")
    if total_covered > 256:
        yield Hit(obj, ("spec", "resourceGroups"), f"{total_covered} covered resources in total; at most 256 "
                                                   "are allowed")
    for gi, group in groups:
        combos = sum(len(kueue.as_list(f.get("resources"))) for _, f in kueue.flavors(group))
        if combos > 512:
            yield Hit(obj, ("spec", "resourceGroups", gi), f"{combos} flavor×resource quotas in one group; at "
                                                           "most 512 are allowed")


def _quantity(value: Any) -> Any:
    return kueue.quantity(value)


@rule("KP305", "error", "4 webhook", kinds=_QUEUES)
def quota_values(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A nominalQuota, borrowingLimit or lendingLimit is negative or not a quantity.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: Cohort
    metadata:
      name: org
    spec:
      resourceGroups:
      - coveredResources: [cpu]
        flavors:
        - name: default
          resources:
          - name: cpu
            nominalQuota: "-4"
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: Cohort
    metadata:
      name: org
    spec:
      resourceGroups:
      - coveredResources: [cpu]
        flavors:
        - name: default
          resources:
          - name: cpu
            nominalQuota: "4"
    ```
    """
    if not obj.is_kueue():
        return
    for q in kueue.quotas(obj):
        for key in ("nominalQuota", "borrowingLimit", "lendingLimit"):
            if key not in q.data or q.data[key] is None:
                continue
            value = _quantity(q.data[key])
            if value is None:
                yield Hit(obj, q.path + (key,), f"{key} {q.data[key]!r} of {q.flavor}/{q.resource} is not a "
                                                f"quantity: {quantity_hint(str(q.data[key]))}")
            elif value < 0:
                yield Hit(obj, q.path + (key,), f"{key} of {q.flavor}/{q.resource} must be non-negative, is "
                                                f"{q.data[key]}")


@rule("KP306", "error", "4 webhook", kinds=_QUEUES,
      covers_cel=(("borrowingLimit must be nil when cohort is empty", "borrowingLimit of"),))
def limits_need_cohort(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """borrowingLimit or lendingLimit is set on a queue without a cohort (or a Cohort without a parent).

    Limits only make sense inside a cohort: set `cohortName` (Cohort: `parentName`) or drop the limit.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu]
        flavors:
        - name: default
          resources:
          - name: cpu
            nominalQuota: 4
            lendingLimit: 2
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      cohortName: org
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu]
        flavors:
        - name: default
          resources:
          - name: cpu
            nominalQuota: 4
            lendingLimit: 2
    ```
    """
    if not obj.is_kueue():
        return
    if obj.kind == "ClusterQueue":
        has_parent, what = kueue.cohort_of(obj)[0] is not None, "cohort"
    else:
        has_parent, what = kueue.parent_of(obj) is not None, "parent"
    if has_parent:
        return
    for q in kueue.quotas(obj):
        for key in ("borrowingLimit", "lendingLimit"):
            if q.data.get(key) is not None:
                yield Hit(obj, q.path + (key,), f"{key} of {q.flavor}/{q.resource} must be nil when {what} is "
                                                f"empty; set spec.{'cohortName' if what == 'cohort' else 'parentName'}"
                                                " or remove it")


@rule("KP307", "error", "4 webhook", kinds=("ClusterQueue",))
def lending_over_nominal(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A ClusterQueue's lendingLimit exceeds its nominalQuota (a queue cannot lend more than it has).

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      cohortName: org
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu]
        flavors:
        - name: default
          resources:
          - name: cpu
            nominalQuota: 4
            lendingLimit: 6
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      cohortName: org
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu]
        flavors:
        - name: default
          resources:
          - name: cpu
            nominalQuota: 4
            lendingLimit: 4
    ```
    """
    if not obj.is_kueue():
        return
    for q in kueue.quotas(obj):
        nominal, lending = _quantity(q.data.get("nominalQuota")), _quantity(q.data.get("lendingLimit"))
        if nominal is not None and lending is not None and q.data.get("lendingLimit") is not None and lending > nominal:
            yield Hit(obj, q.path + ("lendingLimit",), f"lendingLimit {q.data['lendingLimit']} of {q.flavor}/"
                                                       f"{q.resource} must be less than or equal to the nominalQuota "
                                                       f"{q.data.get('nominalQuota')}")


@rule("KP308", "error", "4 webhook", kinds=("ClusterQueue",),
      covers_cel=(("preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor",
                   "preference can only be set"),
                  ("reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never", "needs reclaimWithinCohort")))
def fungibility_and_preemption(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """flavorFungibility.preference without both TryNextFlavor, or reclaimWithinCohort Never with borrowWithinCohort.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
      preemption:
        reclaimWithinCohort: Never
        borrowWithinCohort:
          policy: LowerPriority
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
      preemption:
        reclaimWithinCohort: Any
        borrowWithinCohort:
          policy: LowerPriority
    ```
    """
    if not obj.is_kueue():
        return
    fung = obj.spec.get("flavorFungibility")
    if isinstance(fung, dict) and fung.get("preference") is not None:
        borrow = fung.get("whenCanBorrow", "MayStopSearch")
        preempt = fung.get("whenCanPreempt", "TryNextFlavor")
        if borrow != "TryNextFlavor" or preempt != "TryNextFlavor":
            yield Hit(obj, ("spec", "flavorFungibility", "preference"),
                      "preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor "
                      f"(they are {borrow} and {preempt})")
    pre = obj.spec.get("preemption")
    if isinstance(pre, dict):
        bwc = pre.get("borrowWithinCohort")
        policy = bwc.get("policy", "Never") if isinstance(bwc, dict) else "Never"
        if pre.get("reclaimWithinCohort", "Never") == "Never" and policy != "Never":
            yield Hit(obj, ("spec", "preemption", "borrowWithinCohort", "policy"),
                      f"borrowWithinCohort.policy {policy} needs reclaimWithinCohort other than Never "
                      "(reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never)")


@rule("KP309", "error", "4 webhook", kinds=("ClusterQueue",))
def check_on_unknown_flavor(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """An admission check's `onFlavors` names a flavor that is not in the ClusterQueue's resource groups.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu]
        flavors:
        - name: default
          resources:
          - name: cpu
            nominalQuota: 4
      admissionChecksStrategy:
        admissionChecks:
        - name: prov
          onFlavors: [spot]
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu]
        flavors:
        - name: default
          resources:
          - name: cpu
            nominalQuota: 4
      admissionChecksStrategy:
        admissionChecks:
        - name: prov
          onFlavors: [default]
    ```
    """
    if not obj.is_kueue():
        return
    strategy = obj.spec.get("admissionChecksStrategy")
    if not isinstance(strategy, dict) or not isinstance(strategy.get("admissionChecks"), list):
        return
    known = {name for name, _ in kueue.flavor_names(obj)}
    for ci, check in enumerate(strategy["admissionChecks"]):
        if not isinstance(check, dict) or not isinstance(check.get("onFlavors"), list):
            continue
        for fi, flavor in enumerate(check["onFlavors"]):
            if not isinstance(flavor, str) or flavor not in known:
                yield Hit(obj, ("spec", "admissionChecksStrategy", "admissionChecks", ci, "onFlavors", fi),
                          f"admission check {check.get('name')!r} applies onFlavors {flavor!r}, which is not a "
                          f"flavor of this ClusterQueue (flavors: {', '.join(sorted(known)) or 'none'})")


@rule("KP310", "error", "4 webhook", kinds=_QUEUES + ("LocalQueue",))
def fair_sharing_weight(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """fairSharing.weight is negative, not a quantity, or in (0, 1e-9] (webhook: must be > 10e-9 when not 0).

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
      fairSharing:
        weight: "-1"
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
      fairSharing:
        weight: "2"
    ```
    """
    if not obj.is_kueue() or obj.kind == "LocalQueue":
        return
    fs = obj.spec.get("fairSharing")
    if not isinstance(fs, dict) or fs.get("weight") is None:
        return
    weight = _quantity(fs["weight"])
    path = ("spec", "fairSharing", "weight")
    if weight is None:
        yield Hit(obj, path, f"weight {fs['weight']!r} is not a quantity")
    elif weight < 0:
        yield Hit(obj, path, f"weight must be non-negative, is {fs['weight']}")
    elif 0 < weight <= parse_quantity("1n"):
        yield Hit(obj, path, f"when not 0, weight must be > 10e-9, is {fs['weight']}")


def selector_errors(selector: Any) -> list[str]:
    """metav1.LabelSelector validation: keys qualified names, operators known, values as the operator needs."""
    if not isinstance(selector, dict):
        return ["must be a mapping with matchLabels and/or matchExpressions"]
    errs: list[str] = []
    labels = selector.get("matchLabels") or {}
    if not isinstance(selector.get("matchExpressions") or [], list):
        errs.append("matchExpressions must be a list")
    if isinstance(labels, dict):
        for key, value in labels.items():
            errs += [f"matchLabels key {key!r}: {e}" for e in qualified_name_errors(str(key))]
            errs += [f"matchLabels {key}={value!r}: {e}" for e in label_value_errors(str(value))]
    exprs = selector.get("matchExpressions") or []
    for i, expr in enumerate(exprs if isinstance(exprs, list) else []):
        if not isinstance(expr, dict):
            errs.append(f"matchExpressions[{i}] must be a mapping")
            continue
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        op = op if isinstance(op, str) else repr(op)
        if not key:
            errs.append(f"matchExpressions[{i}].key is required")
        else:
            errs += [f"matchExpressions[{i}].key {key!r}: {e}" for e in qualified_name_errors(str(key))]
        if op not in _SELECTOR_OPERATORS:
            errs.append(f"matchExpressions[{i}].operator {op!r} is not one of In, NotIn, Exists, DoesNotExist")
        elif op in ("In", "NotIn") and not values:
            errs.append(f"matchExpressions[{i}]: operator {op} needs at least one value")
        elif op in ("Exists", "DoesNotExist") and values:
            errs.append(f"matchExpressions[{i}]: operator {op} takes no values")
    return errs


@rule("KP311", "error", "4 webhook", kinds=("ClusterQueue",))
def namespace_selector_syntax(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """spec.namespaceSelector is not a valid label selector (bad key, unknown operator, values mismatch).

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector:
        matchExpressions:
        - key: team
          operator: Equals
          values: [a]
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector:
        matchExpressions:
        - key: team
          operator: In
          values: [a]
    ```
    """
    if not obj.is_kueue() or obj.spec.get("namespaceSelector") is None:
        return
    for err in selector_errors(obj.spec["namespaceSelector"]):
        yield Hit(obj, ("spec", "namespaceSelector"), f"namespaceSelector: {err}")


@rule("KP312", "error", "4 webhook", kinds=("ResourceFlavor",),
      covers_cel=(("supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'", "taint effect"),))
def flavor_labels_taints(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A ResourceFlavor's nodeLabels, nodeTaints or tolerations break label/taint syntax or repeat a taint.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata:
      name: gpu
    spec:
      nodeTaints:
      - key: nvidia.com/gpu
        value: "true"
        effect: NoSchedule
      - key: nvidia.com/gpu
        value: "false"
        effect: NoSchedule
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata:
      name: gpu
    spec:
      nodeLabels:
        cloud.example.com/accelerator: a100
      nodeTaints:
      - key: nvidia.com/gpu
        value: "true"
        effect: NoSchedule
    ```
    """
    if not obj.is_kueue():
        return
    labels = obj.spec.get("nodeLabels")
    if isinstance(labels, dict):
        for key, value in labels.items():
            path = ("spec", "nodeLabels", key)
            for err in qualified_name_errors(str(key)):
                yield Hit(obj, path, f"nodeLabels key {key!r}: {err}")
            for err in label_value_errors(str(value)):
                yield Hit(obj, path, f"nodeLabels {key}={value!r}: {err}")
    seen: set[tuple[Any, Any]] = set()
    taints = obj.spec.get("nodeTaints")
    for i, taint in enumerate(taints if isinstance(taints, list) else []):
        if not isinstance(taint, dict):
            continue
        path = ("spec", "nodeTaints", i)
        key = str(taint.get("key", ""))
        for err in qualified_name_errors(key):
            yield Hit(obj, path + ("key",), f"taint key {key!r}: {err}")
        for err in label_value_errors(str(taint.get("value", ""))):
            yield Hit(obj, path + ("value",), f"taint value {taint.get('value')!r}: {err}")
        effect = taint.get("effect")
        effect = effect if isinstance(effect, str) else repr(effect)
        if effect not in _TAINT_EFFECTS:
            yield Hit(obj, path + ("effect",), f"taint effect {taint.get('effect')!r} is not one of "
                                               "NoSchedule, PreferNoSchedule, NoExecute")
        pair = (key, effect)
        if pair in seen:
            yield Hit(obj, path, f"taint {key}:{taint.get('effect')} is listed twice; taints must be unique by "
                                 "key and effect")
        seen.add(pair)
    tolerations = obj.spec.get("tolerations")
    for i, tol in enumerate(tolerations if isinstance(tolerations, list) else []):
        if isinstance(tol, dict) and tol.get("key"):
            for err in qualified_name_errors(str(tol["key"])):
                yield Hit(obj, ("spec", "tolerations", i, "key"), f"toleration key {tol['key']!r}: {err}")


@rule("KP313", "error", "4 webhook", kinds=("Workload",))
def workload_webhook(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A Workload breaks Kueue's webhook: several pod sets with minCount, `pods` in resources, negative requests.

    Also: pod-set template labels and annotations must be valid (WorkloadValidationForPodSetMetadata).

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: Workload
    metadata:
      name: wl
      namespace: team-a
    spec:
      queueName: user-queue
      podSets:
      - name: main
        count: 1
        template:
          spec:
            containers:
            - name: c
              image: busybox
              resources:
                requests:
                  pods: "1"
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: Workload
    metadata:
      name: wl
      namespace: team-a
    spec:
      queueName: user-queue
      podSets:
      - name: main
        count: 1
        template:
          spec:
            containers:
            - name: c
              image: busybox
              resources:
                requests:
                  cpu: "1"
    ```
    """
    if not obj.is_kueue():
        return
    pod_sets = obj.spec.get("podSets") if isinstance(obj.spec.get("podSets"), list) else []
    with_min = [i for i, ps in enumerate(pod_sets) if isinstance(ps, dict) and ps.get("minCount") is not None]
    if len(with_min) > 1:
        yield Hit(obj, ("spec", "podSets", with_min[1], "minCount"), "at most one podSet can use minCount")
    for i, ps in enumerate(pod_sets):
        spec = dig(ps, "template", "spec")
        if not isinstance(spec, dict):
            continue
        meta = dig(ps, "template", "metadata")
        if isinstance(meta, dict):
            yield from _template_metadata_hits(obj, ("spec", "podSets", i, "template", "metadata"), meta)
        base = ("spec", "podSets", i, "template", "spec")
        for field_name in ("containers", "initContainers"):
            for ci, container in enumerate(kueue.as_list(spec.get(field_name))):
                resources = container.get("resources") if isinstance(container, dict) else None
                if isinstance(resources, dict):
                    yield from _resource_list_hits(obj, base + (field_name, ci, "resources"), resources)
        if isinstance(spec.get("resources"), dict):
            yield from _resource_list_hits(obj, base + ("resources",), spec["resources"])


def _template_metadata_hits(obj: Obj, path: tuple[Any, ...], meta: dict[str, Any]) -> Iterator[Hit]:
    """Pod-set template labels and annotations must be valid (gate WorkloadValidationForPodSetMetadata, on)."""
    labels = meta.get("labels")
    for key, value in (labels.items() if isinstance(labels, dict) else ()):
        for err in qualified_name_errors(str(key)) + label_value_errors(str(value)):
            yield Hit(obj, path + ("labels", key), f"pod set template label {key}={value!r}: {err}")
    annotations = meta.get("annotations")
    for key in (annotations if isinstance(annotations, dict) else ()):
        for err in qualified_name_errors(str(key)):
            yield Hit(obj, path + ("annotations", key), f"pod set template annotation {key!r}: {err}")


def _resource_list_hits(obj: Obj, path: tuple[Any, ...], resources: dict[str, Any]) -> Iterator[Hit]:
    for part in ("requests", "limits"):
        values = resources.get(part)
        if not isinstance(values, dict):
            continue
        for name, value in values.items():
            if name == "pods":
                yield Hit(obj, path + (part, name), "the resource 'pods' is reserved for internal kueue use")
                continue
            q = _quantity(value)
            if q is not None and q < 0:
                yield Hit(obj, path + (part, name), f"{part} {name} must be non-negative, is {value}")


_FS_STRATEGIES = (["LessThanOrEqualToFinalShare"], ["LessThanInitialShare"],
                  ["LessThanOrEqualToFinalShare", "LessThanInitialShare"])


def _seconds(value: Any) -> float | None:
    """A Go duration ("5m", "1h30m", "300s") in seconds, or None if it is not one."""
    import re

    if not isinstance(value, str) or not value:
        return None
    total, pos = 0.0, 0
    for m in re.finditer(r"(-?\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)", value):
        if m.start() != pos:
            return None
        total += float(m.group(1)) * {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "m": 60,
                                      "h": 3600}[m.group(2)]
        pos = m.end()
    return total if pos == len(value) else (0.0 if value == "0" else None)


@rule("KP314", "error", "4 webhook", kinds=("Configuration",))
def kueue_configuration(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A Kueue Configuration that the controller refuses at start-up (pkg/config/validation.go).

    fairSharing.preemptionStrategies must be one of the three supported lists; waitForPodsReady.timeout > 0;
    quotaCheckStrategy BlockUndeclared or IgnoreUndeclared (the latter without excludeResourcePrefixes);
    resource transformations need a unique input and strategy Retain or Replace.

    Fails:

    ```yaml
    apiVersion: config.kueue.x-k8s.io/v1beta2
    kind: Configuration
    fairSharing:
      preemptionStrategies: [LessThanInitialShare, LessThanOrEqualToFinalShare]
    ```

    Passes:

    ```yaml
    apiVersion: config.kueue.x-k8s.io/v1beta2
    kind: Configuration
    fairSharing:
      preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]
    ```
    """
    if obj.group != "config.kueue.x-k8s.io":
        return
    data = obj.data
    fs = data.get("fairSharing")
    if isinstance(fs, dict) and "preemptionStrategies" in fs and fs["preemptionStrategies"] not in _FS_STRATEGIES:
        yield Hit(obj, ("fairSharing", "preemptionStrategies"),
                  f"preemptionStrategies {fs['preemptionStrategies']!r} is not supported; use "
                  "[LessThanOrEqualToFinalShare], [LessThanInitialShare] or both in that order")
    wait = data.get("waitForPodsReady")
    if isinstance(wait, dict):
        if "timeout" in wait:
            seconds = _seconds(wait["timeout"])
            if seconds is None or seconds <= 0:
                yield Hit(obj, ("waitForPodsReady", "timeout"), f"timeout {wait['timeout']!r} must be a duration > 0")
        strategy = wait.get("requeuingStrategy")
        if isinstance(strategy, dict):
            if strategy.get("timestamp") not in (None, "Eviction", "Creation"):
                yield Hit(obj, ("waitForPodsReady", "requeuingStrategy", "timestamp"),
                          f"timestamp {strategy['timestamp']!r} must be Eviction or Creation")
            for key in ("backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds"):
                value = strategy.get(key)
                if isinstance(value, int) and value < 0:
                    yield Hit(obj, ("waitForPodsReady", "requeuingStrategy", key), f"{key} must be >= 0")
    resources = data.get("resources")
    if isinstance(resources, dict):
        strategy = resources.get("quotaCheckStrategy")
        if strategy not in (None, "BlockUndeclared", "IgnoreUndeclared"):
            yield Hit(obj, ("resources", "quotaCheckStrategy"),
                      f"quotaCheckStrategy {strategy!r} must be BlockUndeclared or IgnoreUndeclared")
        if strategy == "IgnoreUndeclared" and resources.get("excludeResourcePrefixes"):
            yield Hit(obj, ("resources", "excludeResourcePrefixes"),
                      "excludeResourcePrefixes cannot be combined with quotaCheckStrategy IgnoreUndeclared")
        seen: set[Any] = set()
        for i, t in enumerate(kueue.as_list(resources.get("transformations"))):
            if not isinstance(t, dict):
                continue
            if t.get("strategy") not in (None, "Retain", "Replace"):
                yield Hit(obj, ("resources", "transformations", i, "strategy"),
                          f"strategy {t.get('strategy')!r} must be Retain or Replace")
            source = repr(t.get("input"))
            if source in seen:
                yield Hit(obj, ("resources", "transformations", i, "input"), f"input {t.get('input')!r} is "
                                                                             "transformed twice")
            seen.add(source)
