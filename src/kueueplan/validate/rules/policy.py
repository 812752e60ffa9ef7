"""Layer 7: platform policies from policies/*.yaml (see kueueplan.validate.policy for the format).

Every rule here runs only when a PlatformPolicy is given, and only checks what the policy states.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from kueueplan.validate.regex import compile_regex, escape as regex_escape
from kueueplan.validate import kueue
from kueueplan.validate.model import Context, Obj
from kueueplan.validate.registry import Hit, rule
from kueueplan.validate.rules.references import WORKLOAD_KINDS, namespace_labels, selector_matches

if TYPE_CHECKING:
    from kueueplan.validate.policy import Policy


def _policy(ctx: Context) -> "Policy | None":
    return ctx.policy


def _selected_namespaces(ctx: Context, selector: Any) -> list[str]:
    """Namespaces a selector picks among those the inputs declare or the selector names explicitly."""
    names = {o.name for o in ctx.by_kind.get("Namespace", [])}
    if isinstance(selector, dict):
        labels = selector.get("matchLabels")
        names |= {str(v) for v in (labels.values() if isinstance(labels, dict) else ())}
        for expr in kueue.as_list(selector.get("matchExpressions")):
            if isinstance(expr, dict) and expr.get("key") == "kubernetes.io/metadata.name":
                names |= {str(v) for v in kueue.as_list(expr.get("values"))}
    out = []
    for name in sorted(names):
        labels = namespace_labels(ctx, name) or {"kubernetes.io/metadata.name": name}
        if selector_matches(selector, labels):
            out.append(name)
    return out


@rule("KP601", "error", "7 policy", kinds=("ClusterQueue",))
def queue_selects_foreign_namespace(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """Tenant isolation: a team's ClusterQueue selects a namespace that belongs to another team.

    A team's queue must select only its own namespaces (`teams.<team>.namespaces`); `{}` selects all.

    Fails:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      teams:
        team-a: {namespaces: [team-a], clusterQueues: [team-a]}
        team-b: {namespaces: [team-b], clusterQueues: [team-b]}
    ---
    apiVersion: v1
    kind: Namespace
    metadata:
      name: team-b
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: team-a
    spec:
      namespaceSelector:
        matchExpressions:
        - key: kubernetes.io/metadata.name
          operator: In
          values: [team-a, team-b]
    ```

    Passes:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      teams:
        team-a: {namespaces: [team-a], clusterQueues: [team-a]}
        team-b: {namespaces: [team-b], clusterQueues: [team-b]}
    ---
    apiVersion: v1
    kind: Namespace
    metadata:
      name: team-b
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: team-a
    spec:
      namespaceSelector:
        matchExpressions:
        - key: kubernetes.io/metadata.name
          operator: In
          values: [team-a]
    ```
    """
    policy = _policy(ctx)
    if policy is None or not obj.is_kueue():
        return
    team = policy.team_of_queue(obj.name, obj.labels)
    selector = obj.spec.get("namespaceSelector")
    if team is None or selector is None or policy.is_shared(obj.name):
        return
    for ns in _selected_namespaces(ctx, selector):
        owner = policy.team_of_namespace(ns)
        if owner is not None and owner != team:
            yield Hit(obj, ("spec", "namespaceSelector"), f"team {team}'s ClusterQueue selects namespace {ns!r}, "
                                                          f"which belongs to team {owner}; select only "
                                                          f"{team}'s namespaces")


@rule("KP602", "error", "7 policy", kinds=("Namespace",))
def namespace_claimed_by_other_team(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """Tenant isolation: a Namespace is labelled for a team that the policy does not give it to.

    Catches a team granting itself another team's namespace through the team label.

    Fails:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      teams:
        team-a: {namespaces: [team-a]}
        team-b: {namespaces: [team-b]}
    ---
    apiVersion: v1
    kind: Namespace
    metadata:
      name: team-b
      labels:
        kueueplan.io/team: team-a
    ```

    Passes:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      teams:
        team-a: {namespaces: [team-a]}
        team-b: {namespaces: [team-b]}
    ---
    apiVersion: v1
    kind: Namespace
    metadata:
      name: team-b
      labels:
        kueueplan.io/team: team-b
    ```
    """
    policy = _policy(ctx)
    if policy is None:
        return
    claimed = obj.labels.get(policy.spec.teamLabel)
    owner = policy.team_of_namespace(obj.name)
    if claimed is None:
        return
    if owner is None and policy.spec.teams:
        yield Hit(obj, ("metadata", "labels", policy.spec.teamLabel),
                  f"namespace {obj.name!r} is labelled for team {claimed} but no team owns it in the policy; add it "
                  f"to teams.{claimed}.namespaces")
    elif owner is not None and str(claimed) != owner:
        yield Hit(obj, ("metadata", "labels", policy.spec.teamLabel),
                  f"namespace {obj.name!r} belongs to team {owner} but is labelled for team {claimed}")


@rule("KP603", "error", "7 policy", kinds=("LocalQueue",))
def local_queue_to_foreign_queue(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """Tenant isolation: a LocalQueue in team X's namespace points at team Y's (or a shared) ClusterQueue.

    Fails:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      teams:
        team-a: {namespaces: [team-a], clusterQueues: [team-a]}
        team-b: {namespaces: [team-b], clusterQueues: [team-b]}
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: gpus
      namespace: team-b
    spec:
      clusterQueue: team-a
    ```

    Passes:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      teams:
        team-a: {namespaces: [team-a], clusterQueues: [team-a]}
        team-b: {namespaces: [team-b], clusterQueues: [team-b]}
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: gpus
      namespace: team-b
    spec:
      clusterQueue: team-b
    ```
    """
    policy = _policy(ctx)
    if policy is None or not obj.is_kueue():
        return
    team = policy.team_of_namespace(obj.namespace)
    target = obj.spec.get("clusterQueue")
    if team is None or not target:
        return
    cq = ctx.get("ClusterQueue", str(target))
    owner = policy.team_of_queue(str(target), cq.labels if cq else {})
    if policy.is_shared(str(target)):
        yield Hit(obj, ("spec", "clusterQueue"), f"LocalQueue in team {team}'s namespace points at the shared "
                                                 f"ClusterQueue {target!r}; teams borrow from shared queues through "
                                                 "their cohort, they do not submit to them")
    elif owner is not None and owner != team:
        yield Hit(obj, ("spec", "clusterQueue"), f"LocalQueue in team {team}'s namespace {obj.namespace!r} points "
                                                 f"at team {owner}'s ClusterQueue {target!r}")


def _amount(resource: str, value: Any) -> int | None:
    q = kueue.quantity(value)
    if q is None:
        return None
    return int(q * 1000) if resource == "cpu" else int(q)


@rule("KP604", "error", "7 policy", scope="global")
def physical_capacity(ctx: Context) -> Iterator[Hit]:
    """Physical capacity: the nominal quotas of one flavor exceed the environment's declared capacity × overcommit.

    Sums nominalQuota over every ClusterQueue and Cohort of the environment, per flavor and resource.

    Fails:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      environments:
        prod:
          paths: ["*"]
          capacity:
            gpu-a100: {nvidia.com/gpu: 8}
          overcommit: 1.0
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: team-a
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [nvidia.com/gpu]
        flavors:
        - name: gpu-a100
          resources:
          - name: nvidia.com/gpu
            nominalQuota: 6
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: team-b
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [nvidia.com/gpu]
        flavors:
        - name: gpu-a100
          resources:
          - name: nvidia.com/gpu
            nominalQuota: 4
    ```

    Passes:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      environments:
        prod:
          paths: ["*"]
          capacity:
            gpu-a100: {nvidia.com/gpu: 8}
          overcommit: 1.25
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: team-a
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [nvidia.com/gpu]
        flavors:
        - name: gpu-a100
          resources:
          - name: nvidia.com/gpu
            nominalQuota: 6
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: team-b
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [nvidia.com/gpu]
        flavors:
        - name: gpu-a100
          resources:
          - name: nvidia.com/gpu
            nominalQuota: 4
    ```
    """
    policy = _policy(ctx)
    if policy is None or not policy.spec.environments:
        return
    totals: dict[tuple[str, str, str], int] = defaultdict(int)
    last: dict[tuple[str, str, str], tuple[Obj, tuple[Any, ...]]] = {}
    parts: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for obj in ctx.kueue("ClusterQueue") + ctx.kueue("Cohort"):
        env = policy.env_of(obj)
        if env is None or env not in policy.spec.environments:
            continue
        for q in kueue.quotas(obj):
            amount = _amount(q.resource, q.data.get("nominalQuota"))
            if amount is None:
                continue
            key = (env, q.flavor, q.resource)
            totals[key] += amount
            last[key] = (obj, q.path + ("nominalQuota",))
            parts[key].append(f"{obj.name} {q.data.get('nominalQuota')}")
    for key in sorted(totals):
        env, flavor, resource = key
        ep = policy.spec.environments[env]
        physical, declared = _capacity(ep, flavor, resource)
        if physical is None:
            continue
        allowed = Fraction(physical) * Fraction(str(ep.overcommit))
        if totals[key] > allowed:
            obj, path = last[key]
            shown = " + ".join(parts[key])
            yield Hit(obj, path, f"environment {env}: nominal {resource} quotas of flavor {flavor} add up to "
                                 f"{_show(resource, totals[key])} ({shown}); the flavor has {declared} "
                                 f"× overcommit {ep.overcommit} = {_show(resource, int(allowed))}")


def _capacity(ep: Any, flavor: str, resource: str) -> tuple[int | None, str]:
    """The physical amount of a flavor's resource: declared capacity plus node pools (Kueue units), and how."""
    total, parts = 0, []
    declared = (ep.capacity.get(flavor) or {}).get(resource)
    if declared is not None and _amount(resource, declared) is not None:
        total += _amount(resource, declared)
        parts.append(str(declared))
    pool = ep.nodePools.get(flavor)
    if pool is not None and pool.perNode.get(resource) is not None:
        per = _amount(resource, pool.perNode[resource])
        if per is not None:
            total += pool.nodes * per
            parts.append(f"{pool.nodes} nodes x {pool.perNode[resource]}")
    return (total if parts else None), " + ".join(parts)


def _show(resource: str, amount: int) -> str:
    from kueueplan.kube.quantity import format_resource_value

    return format_resource_value(resource, amount)


def _workload_priority(obj: Obj) -> tuple[str | None, tuple[Any, ...]]:
    if obj.kind == "Workload" and obj.is_kueue():
        ref = obj.spec.get("priorityClassRef")
        name = ref.get("name") if isinstance(ref, dict) else obj.spec.get("priorityClassName")
        return (str(name) if name else None), ("spec", "priorityClassRef")
    label = obj.labels.get(kueue.PRIORITY_LABEL)
    return (str(label) if label else None), ("metadata", "labels", kueue.PRIORITY_LABEL)


@rule("KP605", "error", "7 policy", kinds=WORKLOAD_KINDS + ("Workload",))
def priority_not_allowed(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """Priority policy: a workload uses a priority its environment or its team may not use (e.g. prod in dev).

    Fails:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      environments:
        dev: {paths: ["*"], priorities: [dev-priority]}
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      namespace: team-a
      labels:
        kueue.x-k8s.io/priority-class: prod-priority
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
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      environments:
        dev: {paths: ["*"], priorities: [dev-priority]}
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      namespace: team-a
      labels:
        kueue.x-k8s.io/priority-class: dev-priority
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```
    """
    policy = _policy(ctx)
    if policy is None:
        return
    name, path = _workload_priority(obj)
    if name is None:
        return
    env = policy.env_of(obj)
    ep = policy.spec.environments.get(env) if env else None
    if ep is not None and ep.priorities is not None and name not in ep.priorities:
        yield Hit(obj, path, f"priority {name!r} is not allowed in environment {env} (allowed: "
                             f"{', '.join(ep.priorities) or 'none'})")
    team = policy.team_of_namespace(obj.namespace)
    tp = policy.spec.teams.get(team) if team else None
    if tp is not None and tp.priorities is not None and name not in tp.priorities:
        yield Hit(obj, path, f"team {team} may not use priority {name!r} (allowed: "
                             f"{', '.join(tp.priorities) or 'none'})")


@rule("KP606", "error", "7 policy", scope="global")
def priority_order(ctx: Context) -> Iterator[Hit]:
    """Priority policy: WorkloadPriorityClass values break the declared order (e.g. prod must be above dev).

    Fails:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      priorityOrder: [prod-priority, dev-priority]
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: WorkloadPriorityClass
    metadata:
      name: prod-priority
    value: 100
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: WorkloadPriorityClass
    metadata:
      name: dev-priority
    value: 1000
    ```

    Passes:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      priorityOrder: [prod-priority, dev-priority]
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: WorkloadPriorityClass
    metadata:
      name: prod-priority
    value: 1000
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: WorkloadPriorityClass
    metadata:
      name: dev-priority
    value: 100
    ```
    """
    policy = _policy(ctx)
    if policy is None or len(policy.spec.priorityOrder) < 2:
        return
    present = [(name, ctx.get("WorkloadPriorityClass", name)) for name in policy.spec.priorityOrder]
    present = [(n, o) for n, o in present if o is not None and isinstance(o.data.get("value"), int)]
    for (hi_name, hi), (lo_name, lo) in zip(present, present[1:]):
        if hi.data["value"] <= lo.data["value"]:
            yield Hit(lo, ("value",), f"{lo_name} ({lo.data['value']}) must be below {hi_name} "
                                      f"({hi.data['value']}): the policy orders {' > '.join(policy.spec.priorityOrder)}")


@rule("KP607", "error", "7 policy", kinds=("ClusterQueue",))
def flavor_access(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """GPU access: a team's ClusterQueue holds quota in a flavor the team may not use.

    A flavor in `restrictedFlavors` is usable only by teams that list it in `teams.<team>.flavors`; a team
    with a `flavors` list may use only those. The default is deny: a ClusterQueue of a team the policy does
    not list (or of no team at all) gets no restricted flavor; list the team under `teams` with its
    `clusterQueues` and `flavors`. Only the platform's `sharedQueues` are exempt.

    Fails:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      restrictedFlavors: [gpu-h100]
      teams:
        team-a: {clusterQueues: [team-a], flavors: [gpu-h100, cpu]}
        team-b: {clusterQueues: [team-b], flavors: [cpu]}
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: team-b
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [nvidia.com/gpu]
        flavors:
        - name: gpu-h100
          resources:
          - name: nvidia.com/gpu
            nominalQuota: 8
    ```

    Passes:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      restrictedFlavors: [gpu-h100]
      teams:
        team-a: {clusterQueues: [team-a], flavors: [gpu-h100, cpu]}
        team-b: {clusterQueues: [team-b], flavors: [cpu]}
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: team-a
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [nvidia.com/gpu]
        flavors:
        - name: gpu-h100
          resources:
          - name: nvidia.com/gpu
            nominalQuota: 8
    ```
    """
    policy = _policy(ctx)
    if policy is None or not obj.is_kueue():
        return
    team = policy.team_of_queue(obj.name, obj.labels)
    tp = policy.spec.teams.get(team) if team is not None else None
    if tp is None:
        # Default deny: a queue of a team the policy does not list gets no restricted flavor.
        if policy.is_shared(obj.name):
            return
        for flavor, path in kueue.flavor_names(obj):
            if flavor in policy.spec.restrictedFlavors:
                who = f"its team {team!r} is not listed" if team else "it belongs to no team listed"
                yield Hit(obj, path, f"flavor {flavor!r} is restricted and {who} in the policy; list the team: "
                                     f"teams.{team or '<team>'}: {{clusterQueues: [{obj.name}], flavors: [{flavor}]}}")
        return
    allowed = set(tp.flavors) if tp.flavors is not None else None
    for flavor, path in kueue.flavor_names(obj):
        if allowed is not None and flavor not in allowed:
            yield Hit(obj, path, f"team {team} may not use flavor {flavor!r} (allowed: {', '.join(sorted(allowed))})")
        elif allowed is None and flavor in policy.spec.restrictedFlavors:
            yield Hit(obj, path, f"flavor {flavor!r} is restricted; team {team} is not granted it "
                                 f"(add it to teams.{team}.flavors)")


@rule("KP608", "error", "7 policy", kinds=("ClusterQueue",))
def borrowing_limit_required(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """Borrowing limits: a team that must cap its borrowing has a quota without (or above) a borrowingLimit.

    Fails:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      teams:
        team-b: {clusterQueues: [team-b], requireBorrowingLimit: true}
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: team-b
    spec:
      cohortName: org
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu]
        flavors:
        - name: default
          resources:
          - name: cpu
            nominalQuota: 16
    ```

    Passes:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      teams:
        team-b: {clusterQueues: [team-b], requireBorrowingLimit: true}
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: team-b
    spec:
      cohortName: org
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu]
        flavors:
        - name: default
          resources:
          - name: cpu
            nominalQuota: 16
            borrowingLimit: 8
    ```
    """
    policy = _policy(ctx)
    if policy is None or not obj.is_kueue() or kueue.cohort_of(obj)[0] is None:
        return
    team = policy.team_of_queue(obj.name, obj.labels)
    tp = policy.spec.teams.get(team) if team else None
    if tp is None:
        return
    for q in kueue.quotas(obj):
        limit = q.data.get("borrowingLimit")
        if tp.requireBorrowingLimit and limit is None:
            yield Hit(obj, q.path, f"team {team} must set a borrowingLimit on {q.flavor}/{q.resource} (it could "
                                   "otherwise borrow the whole cohort)")
        cap = tp.maxBorrowingLimit.get(q.resource)
        if cap is not None and limit is not None:
            have, most = kueue.quantity(limit), kueue.quantity(cap)
            if have is not None and most is not None and have > most:
                yield Hit(obj, q.path + ("borrowingLimit",), f"borrowingLimit {limit} of {q.flavor}/{q.resource} "
                                                             f"exceeds team {team}'s maximum {cap}")


@rule("KP609", "error", "7 policy")
def naming_convention(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """Naming conventions: an object's name does not match the policy's pattern for its kind.

    `{team}` in a pattern stands for the owning team (of the namespace, or of the ClusterQueue).

    Fails:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      teams:
        team-a: {namespaces: [team-a]}
      naming:
        LocalQueue: "^{team}-[a-z0-9-]+$"
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: gpus
      namespace: team-a
    spec:
      clusterQueue: team-a
    ```

    Passes:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      teams:
        team-a: {namespaces: [team-a]}
      naming:
        LocalQueue: "^{team}-[a-z0-9-]+$"
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: team-a-gpus
      namespace: team-a
    spec:
      clusterQueue: team-a
    ```
    """
    policy = _policy(ctx)
    if policy is None or obj.kind not in policy.spec.naming:
        return
    pattern = policy.spec.naming[obj.kind]
    if obj.kind in ("ClusterQueue",):
        team = policy.team_of_queue(obj.name, obj.labels)
    elif obj.kind == "Namespace":
        team = policy.team_of_namespace(obj.name)
    else:
        team = policy.team_of_namespace(obj.namespace)
    if "{team}" in pattern:
        if team is None:
            return
        pattern = pattern.replace("{team}", regex_escape(team))
    if not compile_regex(pattern).search(obj.name):
        yield Hit(obj, ("metadata", "name"), f"{obj.kind} name {obj.name!r} does not match the naming convention "
                                             f"{policy.spec.naming[obj.kind]!r}")
