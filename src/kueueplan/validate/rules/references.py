"""Layer 5: what Kueue accepts but can never work — dangling references, cycles, duplicates.

A reference is an error when the inputs declare objects of the referenced kind (they describe the platform,
so the missing one is missing); when the inputs hold none of that kind (a lone job file), it is only an info
finding, since the object may exist in the cluster.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kueueplan.kube.configschema import FRAMEWORK_KINDS
from kueueplan.validate import kueue
from kueueplan.validate.model import Context, Obj
from kueueplan.validate.registry import Hit, rule

# Every kind some Kueue integration manages, and CronJob (its jobTemplate makes Jobs).
WORKLOAD_KINDS = FRAMEWORK_KINDS + ("CronJob",)


def missing_ref(ctx: Context, kind: str, what: str, path: tuple[Any, ...], obj: Obj,
                severity: str | None = None) -> Hit:
    """A reference to a `kind` object that is not among the inputs: the rule's severity (or `severity`) when the
    inputs declare objects of that kind, else info (it may exist in the cluster)."""
    if ctx.kueue(kind) or (kind in ("PriorityClass", "Namespace") and ctx.has_kind(kind)):
        return Hit(obj, path, what, severity=severity)
    return Hit(obj, path, f"{what} (no {kind} among the inputs; make sure it exists in the cluster)",
               severity="info")


@rule("KP401", "error", "5 never works", kinds=("LocalQueue",))
def lq_missing_cq(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A LocalQueue points at a ClusterQueue that does not exist (or at none): it admits nothing.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: team-a-cq
    spec:
      namespaceSelector: {}
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: user-queue
      namespace: team-a
    spec:
      clusterQueue: team-b-cq
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: team-a-cq
    spec:
      namespaceSelector: {}
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: user-queue
      namespace: team-a
    spec:
      clusterQueue: team-a-cq
    ```
    """
    if not obj.is_kueue():
        return
    cq = obj.spec.get("clusterQueue")
    if not cq:
        yield Hit(obj, ("spec",), "LocalQueue has no spec.clusterQueue, so it admits nothing; set it (it is "
                                  "immutable once created)")
        return
    if ctx.get("ClusterQueue", str(cq)) is None:
        yield missing_ref(ctx, "ClusterQueue", f"ClusterQueue {cq!r} does not exist; workloads in this LocalQueue "
                                               "stay pending forever", ("spec", "clusterQueue"), obj)


@rule("KP402", "error", "5 never works", kinds=("ClusterQueue",))
def cq_missing_flavor(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A ClusterQueue names a ResourceFlavor that does not exist: Kueue keeps the queue inactive.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata:
      name: default-flavor
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu]
        flavors:
        - name: on-demand
          resources:
          - name: cpu
            nominalQuota: 4
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata:
      name: on-demand
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu]
        flavors:
        - name: on-demand
          resources:
          - name: cpu
            nominalQuota: 4
    ```
    """
    if not obj.is_kueue():
        return
    for name, path in kueue.flavor_names(obj):
        if ctx.get("ResourceFlavor", name) is None:
            yield missing_ref(ctx, "ResourceFlavor", f"ResourceFlavor {name!r} does not exist; the ClusterQueue "
                                                     "stays inactive and admits nothing", path, obj)


@rule("KP403", "error", "5 never works", kinds=("ClusterQueue",))
def cq_missing_check(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A ClusterQueue names an AdmissionCheck that does not exist: Kueue keeps the queue inactive.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: AdmissionCheck
    metadata:
      name: other
    spec:
      controllerName: kueue.x-k8s.io/provisioning-request
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
      admissionChecksStrategy:
        admissionChecks:
        - name: prov
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: AdmissionCheck
    metadata:
      name: prov
    spec:
      controllerName: kueue.x-k8s.io/provisioning-request
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
      admissionChecksStrategy:
        admissionChecks:
        - name: prov
    ```
    """
    if not obj.is_kueue():
        return
    for name, path in kueue.admission_check_refs(obj):
        if ctx.get("AdmissionCheck", name) is None:
            yield missing_ref(ctx, "AdmissionCheck", f"AdmissionCheck {name!r} does not exist; the ClusterQueue "
                                                     "stays inactive and admits nothing", path, obj)


@rule("KP404", "error", "5 never works", scope="global")
def cohort_cycle(ctx: Context) -> Iterator[Hit]:
    """Cohorts form a cycle through parentName: Kueue deactivates every ClusterQueue in it.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: Cohort
    metadata:
      name: a
    spec:
      parentName: b
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: Cohort
    metadata:
      name: b
    spec:
      parentName: a
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: Cohort
    metadata:
      name: a
    spec:
      parentName: b
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: Cohort
    metadata:
      name: b
    ```
    """
    cohorts = {o.name: o for o in ctx.kueue("Cohort")}
    reported: set[str] = set()
    for start in sorted(cohorts):
        chain: list[str] = []
        current: str | None = start
        while current is not None and current in cohorts and current not in chain:
            chain.append(current)
            current = kueue.parent_of(cohorts[current])
        if current is None or current not in chain:
            continue
        cycle = chain[chain.index(current):]
        if cycle[0] != start or start in reported:
            continue
        reported.update(cycle)
        obj = cohorts[start]
        yield Hit(obj, ("spec", "parentName"), f"cohort cycle {' -> '.join(cycle + [cycle[0]])}: Kueue deactivates "
                                               "the ClusterQueues of these cohorts; break the cycle")


def queue_of(obj: Obj) -> tuple[str | None, tuple[Any, ...]]:
    if obj.kind == "Workload" and obj.is_kueue():
        name = obj.spec.get("queueName")
        return (str(name) if name else None), ("spec", "queueName")
    value = obj.labels.get(kueue.QUEUE_LABEL)
    return (str(value) if value else None), ("metadata", "labels", kueue.QUEUE_LABEL)


@rule("KP405", "error", "5 never works", kinds=WORKLOAD_KINDS + ("Workload",))
def workload_missing_queue(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A workload's `kueue.x-k8s.io/queue-name` label names no LocalQueue in its namespace.

    Kueue creates the Workload but it never leaves the queue. Check the spelling and the namespace.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: user-queue
      namespace: team-a
    spec:
      clusterQueue: cq
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      namespace: team-b
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

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: user-queue
      namespace: team-b
    spec:
      clusterQueue: cq
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      namespace: team-b
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
    name, path = queue_of(obj)
    if name is None:
        return
    if ctx.get("LocalQueue", name, obj.namespace) is None:
        others = sorted(o.namespace or "" for o in ctx.kueue("LocalQueue") if o.name == name)
        where = f" (a LocalQueue {name!r} exists in: {', '.join(others)})" if others else ""
        yield missing_ref(ctx, "LocalQueue", f"queue-name {name!r} names no LocalQueue in namespace "
                                             f"{obj.namespace!r}{where}", path, obj)


def dig(value: Any, *keys: str) -> Any:
    """value[k1][k2]..., or None as soon as a level is not a mapping (inputs can be any shape)."""
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def pod_templates(obj: Obj) -> Iterator[tuple[tuple[Any, ...], dict[str, Any]]]:
    """(path, pod spec) of every pod template of a workload object we know how to read."""
    spec = obj.spec
    if obj.kind == "Pod":
        yield ("spec",), spec
        return
    if obj.kind == "Job":
        tpl = dig(spec, "template", "spec")
        if isinstance(tpl, dict):
            yield ("spec", "template", "spec"), tpl
        return
    cluster, base = None, ("spec",)
    if obj.kind == "RayCluster":
        cluster = spec
    elif obj.kind == "RayJob":
        cluster, base = spec.get("rayClusterSpec"), ("spec", "rayClusterSpec")
        sub = spec.get("submitterPodTemplate")
        if isinstance(sub, dict) and isinstance(sub.get("spec"), dict):
            yield ("spec", "submitterPodTemplate", "spec"), sub["spec"]
    elif obj.kind == "RayService":
        cluster, base = spec.get("rayClusterConfig"), ("spec", "rayClusterConfig")
    elif obj.kind == "Workload":
        pod_sets = spec.get("podSets")
        for i, ps in enumerate(pod_sets if isinstance(pod_sets, list) else []):
            tpl = dig(ps, "template", "spec")
            if isinstance(tpl, dict):
                yield ("spec", "podSets", i, "template", "spec"), tpl
        return
    if not isinstance(cluster, dict):
        return
    head = cluster.get("headGroupSpec")
    tpl = dig(head, "template", "spec")
    if isinstance(tpl, dict):
        yield base + ("headGroupSpec", "template", "spec"), tpl
    groups = cluster.get("workerGroupSpecs")
    for i, group in enumerate(groups if isinstance(groups, list) else []):
        tpl = dig(group, "template", "spec")
        if isinstance(tpl, dict):
            yield base + ("workerGroupSpecs", i, "template", "spec"), tpl


@rule("KP406", "error", "5 never works", kinds=WORKLOAD_KINDS + ("Workload",))
def workload_missing_priority(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """The `kueue.x-k8s.io/priority-class` label (or a pod template's priorityClassName) names nothing.

    Kueue cannot compute the priority, so it never creates the Workload (pods: the API server rejects them).

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: WorkloadPriorityClass
    metadata:
      name: prod
    value: 1000
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      labels:
        kueue.x-k8s.io/priority-class: production
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
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: WorkloadPriorityClass
    metadata:
      name: prod
    value: 1000
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      labels:
        kueue.x-k8s.io/priority-class: prod
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```
    """
    label = obj.labels.get(kueue.PRIORITY_LABEL)
    if label and ctx.get("WorkloadPriorityClass", str(label)) is None:
        yield missing_ref(ctx, "WorkloadPriorityClass", f"priority-class {label!r} names no WorkloadPriorityClass",
                          ("metadata", "labels", kueue.PRIORITY_LABEL), obj)
    builtin = {"system-cluster-critical", "system-node-critical"}
    for path, spec in pod_templates(obj):
        name = spec.get("priorityClassName")
        if name and isinstance(name, str) and name not in builtin and ctx.get("PriorityClass", name) is None:
            yield missing_ref(ctx, "PriorityClass", f"priorityClassName {name!r} names no PriorityClass",
                              path + ("priorityClassName",), obj)


@rule("KP407", "error", "5 never works", scope="global")
def duplicate_objects(ctx: Context) -> Iterator[Hit]:
    """The same object (group, kind, namespace, name) is declared twice: one silently overwrites the other.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata:
      name: default-flavor
    ---
    apiVersion: kueue.x-k8s.io/v1beta1
    kind: ResourceFlavor
    metadata:
      name: default-flavor
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata:
      name: default-flavor
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata:
      name: spot
    ```
    """
    first: dict[tuple[str, str, str | None, str], Obj] = {}
    for obj in ctx.objects:
        if not obj.name or not obj.metadata.get("name"):
            continue  # generateName objects are distinct by design
        key = (obj.group, obj.kind, obj.namespace, obj.name)
        if key in first:
            other = first[key]
            where = f"{other.file}:{other.line_of(()) or '?'}"
            yield Hit(obj, ("metadata", "name"), f"{obj.ref} is already declared at {where}; remove one")
        else:
            first[key] = obj


def namespace_labels(ctx: Context, namespace: str) -> dict[str, str] | None:
    """A namespace's labels as the API server sets them (plus kubernetes.io/metadata.name), if declared."""
    ns = ctx.get("Namespace", namespace)
    if ns is None:
        return None
    labels = {str(k): str(v) for k, v in ns.labels.items()}
    labels["kubernetes.io/metadata.name"] = namespace
    return labels


def selector_matches(selector: Any, labels: dict[str, str]) -> bool:
    """metav1.LabelSelector semantics; a malformed selector matches nothing (the webhook rejects it anyway)."""
    if not isinstance(selector, dict):
        return False
    match_labels = selector.get("matchLabels") or {}
    exprs = selector.get("matchExpressions") or []
    if not isinstance(match_labels, dict) or not isinstance(exprs, list):
        return False
    for key, value in match_labels.items():
        if labels.get(str(key)) != str(value):
            return False
    for expr in exprs:
        if not isinstance(expr, dict):
            return False
        key, op = str(expr.get("key")), expr.get("operator")
        raw = expr.get("values") or []
        values = {str(v) for v in raw} if isinstance(raw, list) else set()
        present = key in labels
        if op == "In" and not (present and labels[key] in values):
            return False
        if op == "NotIn" and present and labels[key] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False
    return True


@rule("KP408", "error", "5 never works", kinds=("LocalQueue",))
def lq_namespace_not_selected(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A LocalQueue's ClusterQueue does not select the LocalQueue's namespace: its workloads are never admitted.

    Fails:

    ```yaml
    apiVersion: v1
    kind: Namespace
    metadata:
      name: team-b
      labels:
        team: b
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: team-a-cq
    spec:
      namespaceSelector:
        matchLabels:
          team: a
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: user-queue
      namespace: team-b
    spec:
      clusterQueue: team-a-cq
    ```

    Passes:

    ```yaml
    apiVersion: v1
    kind: Namespace
    metadata:
      name: team-a
      labels:
        team: a
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: team-a-cq
    spec:
      namespaceSelector:
        matchLabels:
          team: a
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: user-queue
      namespace: team-a
    spec:
      clusterQueue: team-a-cq
    ```
    """
    if not obj.is_kueue() or not obj.namespace:
        return
    cq = ctx.get("ClusterQueue", str(obj.spec.get("clusterQueue") or ""))
    if cq is None or cq.spec.get("namespaceSelector") is None:
        return  # KP401 / KP420 report these
    labels = namespace_labels(ctx, obj.namespace)
    if labels is None:
        return
    if not selector_matches(cq.spec["namespaceSelector"], labels):
        yield Hit(obj, ("spec", "clusterQueue"), f"ClusterQueue {cq.name!r} does not select namespace "
                                                 f"{obj.namespace!r} (its namespaceSelector does not match the "
                                                 "namespace's labels); workloads here are never admitted")


@rule("KP409", "error", "5 never works", kinds=("LocalQueue",))
def lq_missing_namespace(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A LocalQueue lives in a namespace that the inputs do not declare (while they declare others).

    Fails:

    ```yaml
    apiVersion: v1
    kind: Namespace
    metadata:
      name: team-a
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: user-queue
      namespace: team-x
    spec:
      clusterQueue: cq
    ```

    Passes:

    ```yaml
    apiVersion: v1
    kind: Namespace
    metadata:
      name: team-a
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: user-queue
      namespace: team-a
    spec:
      clusterQueue: cq
    ```
    """
    if not obj.is_kueue() or not obj.namespace or obj.namespace == "default" or obj.namespace.startswith("kube-"):
        return
    if ctx.has_kind("Namespace") and ctx.get("Namespace", obj.namespace) is None:
        yield Hit(obj, ("metadata", "namespace"), f"namespace {obj.namespace!r} is not declared among the inputs; "
                                                  "the apply fails unless it already exists")
