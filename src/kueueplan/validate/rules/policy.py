"""Layer 7: platform policies from policies/*.yaml (see kueueplan.validate.policy for the format).

Every rule here runs only when a PlatformPolicy is given, and only checks what the policy states.
"""

from __future__ import annotations

import fnmatch
from collections import defaultdict
from collections.abc import Iterator
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from kueueplan.validate.regex import compile_regex, escape as regex_escape
from kueueplan.kube.configschema import FRAMEWORK_BY_KIND, registered
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


def _priority_refs(obj: Obj, policy: "Policy") -> Iterator[tuple[str, tuple[Any, ...], str]]:
    """(priority, path, what names it): the Kueue label or Workload field, then each pod template's
    priorityClassName; the policy's defaultPriority stands in when the workload names none."""
    name, path = _workload_priority(obj)
    named = False
    if name is not None:
        named = True
        yield name, path, "priority"
    if obj.kind != "Workload":
        from kueueplan.validate.vap import pod_templates

        for tpath, template, _owner in pod_templates(obj):
            spec = template.get("spec")
            pcn = spec.get("priorityClassName") if isinstance(spec, dict) else None
            if pcn and isinstance(pcn, str):  # another type: the schema rules report it
                named = True
                where = ".".join(str(p) for p in tpath)
                yield str(pcn), tpath + ("spec", "priorityClassName"), f"pod template {where} priorityClassName"
    default = policy.spec.priorities.defaultPriority
    if not named and default:
        yield default, ("metadata",), "default priority (names none; priorities.defaultPriority)"


def _glob_in(name: str, globs: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, g) for g in globs)


def _priority_problems(policy: "Policy", obj: Obj, name: str) -> Iterator[str]:
    env = policy.env_of(obj)
    ep = policy.spec.environments.get(env) if env else None
    if ep is not None and ep.priorities is not None and not _glob_in(name, ep.priorities):
        yield f"is not allowed in environment {env} (allowed: {', '.join(ep.priorities) or 'none'})"
    team = policy.team_of_namespace(obj.namespace)
    tp = policy.spec.teams.get(team) if team else None
    if tp is not None and tp.priorities is not None and not _glob_in(name, tp.priorities):
        yield f"is not one team {team} may use (allowed: {', '.join(tp.priorities) or 'none'})"
    rules = dict(policy.spec.priorities.namespaces)
    if tp is not None:
        rules.update(tp.namespacePriorities)
    for glob, allowed in sorted(rules.items()):
        if obj.namespace and fnmatch.fnmatchcase(obj.namespace, glob) and not _glob_in(name, allowed):
            yield f"is not allowed in namespaces {glob} (allowed: {', '.join(allowed) or 'none'})"
    denied = list(policy.spec.priorities.denied) + (tp.deniedPriorities if tp is not None else [])
    hit = next((g for g in denied if fnmatch.fnmatchcase(name, g)), None)
    if hit is not None:
        yield f"is denied by the policy ({hit})"


@rule("KP605", "error", "7 policy", kinds=WORKLOAD_KINDS + ("Workload",))
def priority_not_allowed(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """Priority policy: a workload or one of its pod templates uses a priority its environment, team or namespace
    may not use, or one the policy denies.

    Checks the `kueue.x-k8s.io/priority-class` label and every pod template's `priorityClassName` (a RayJob's
    head, a Job's pods) against `environments.<env>.priorities`, `teams.<team>.priorities`, per-namespace lists
    (`priorities.namespaces`, `teams.<team>.namespacePriorities`: globs of namespaces, e.g. a team's `*-dev`
    namespaces may use only dev-priority) and the deny-lists (`priorities.denied`, `teams.<team>.deniedPriorities`).
    Lists take globs. A workload that names no priority is checked as `priorities.defaultPriority`.

    Fails:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      teams:
        team-a:
          namespaces: [team-a, team-a-dev]
          priorities: [dev-priority, prod-priority]
          namespacePriorities: {"*-dev": [dev-priority]}
      priorities:
        denied: ["system-*"]
    ---
    apiVersion: ray.io/v1
    kind: RayJob
    metadata:
      name: train
      namespace: team-a-dev
      labels:
        kueue.x-k8s.io/queue-name: user-queue
        kueue.x-k8s.io/priority-class: dev-priority
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
    ```

    Passes:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      teams:
        team-a:
          namespaces: [team-a, team-a-dev]
          priorities: [dev-priority, prod-priority]
          namespacePriorities: {"*-dev": [dev-priority]}
      priorities:
        denied: ["system-*"]
    ---
    apiVersion: ray.io/v1
    kind: RayJob
    metadata:
      name: train
      namespace: team-a-dev
      labels:
        kueue.x-k8s.io/queue-name: user-queue
        kueue.x-k8s.io/priority-class: dev-priority
    spec:
      entrypoint: python train.py
      rayClusterSpec:
        headGroupSpec:
          rayStartParams: {}
          template:
            spec:
              containers:
              - name: head
                image: rayproject/ray:2.9.0
    ```
    """
    policy = _policy(ctx)
    if policy is None:
        return
    for name, path, what in _priority_refs(obj, policy):
        problems = list(_priority_problems(policy, obj, name))
        if problems:
            yield Hit(obj, path, f"{what} {name!r} {'; and '.join(problems)}")


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


# ---------------------------------------------------------------------------------------------------------------
# Queue enforcement tied to Kueue's Configuration (issue 15): `queues:` and `priorities:` knobs.

# Kinds -> Kueue's integration (framework) names, as in integrations.frameworks; a CronJob's Jobs are batch/job.
FRAMEWORK_OF = FRAMEWORK_BY_KIND | {"CronJob": "batch/job"}
ALWAYS_RESPECTED_GATE = "ManagedJobsNamespaceSelectorAlwaysRespected"


def kueue_configuration(ctx: Context, obj: Obj) -> tuple[Any, str, tuple[int, int]]:
    """Kueue's effective Configuration for `obj`'s apply unit (kueueplan.validate.configuration: the
    `kueue-manager-config` ConfigMap among the inputs, else the release's defaults), where it came from, and the
    release; None when it cannot be read (KP450 reports that)."""
    from kueueplan.kube.podsets import version_tuple
    from kueueplan.validate.configuration import universe_configuration

    effective = universe_configuration(ctx, obj)
    if effective is None:
        return None, "an unreadable Configuration", version_tuple(ctx.kueue_version)
    source = (f"the Configuration in {effective.view.file}" if effective.view is not None
              else "no kueue-manager-config ConfigMap among the inputs, so Kueue's defaults")
    return effective.config, source, effective.release


def _queue_label(obj: Obj) -> str | None:
    if obj.kind == "Workload":
        q = obj.spec.get("queueName")
        return str(q) if q else None
    labels = obj.labels
    if obj.kind == "CronJob":  # the Jobs it creates carry the job template's labels
        meta = ((obj.spec.get("jobTemplate") or {}).get("metadata") or {}) if isinstance(
            obj.spec.get("jobTemplate"), dict) else {}
        labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
    q = labels.get(kueue.QUEUE_LABEL)
    return str(q) if q else None


def _coverage(ctx: Context, obj: Obj, named: bool) -> tuple[bool, str]:
    """(does Kueue manage this workload, why) from the Configuration, the namespace's labels and the kind."""
    cfg, source, release = kueue_configuration(ctx, obj)
    if cfg is None:
        return True, source  # cannot tell: the Configuration rules report the file
    framework = FRAMEWORK_OF.get(obj.kind)
    enabled = set(cfg.frameworks) | set((cfg.integrations.external_frameworks or []) if cfg.integrations else [])
    if framework and framework not in enabled:
        return False, f"{framework} is not in integrations.frameworks ({source}), so Kueue ignores {obj.kind}s"
    if framework and not registered(framework, release):
        return False, (f"Kueue v{release[0]}.{release[1]} has no {framework} integration, so it ignores "
                       f"{obj.kind}s")
    selector = cfg.managed_jobs_namespace_selector
    labels = namespace_labels(ctx, obj.namespace or "") or {"kubernetes.io/metadata.name": obj.namespace or ""}
    in_selector = selector is None or selector_matches(selector, labels)
    missing = _selector_gap(selector, labels) if not in_selector else ""
    declared = ctx.get("Namespace", obj.namespace or "") is not None
    unknown = "" if declared else f" (namespace {obj.namespace} is not among the inputs: only its name is known)"
    if not named and in_selector and _defaults_to_local_queue(ctx, cfg, obj, release):
        return True, ""  # Kueue's webhook gives it the namespace's `default` LocalQueue
    if named:
        if not in_selector and _always_respected(cfg, release):
            return False, (f"namespace {obj.namespace} is outside managedJobsNamespaceSelector{missing}, which "
                           f"also gates jobs that name a queue ({ALWAYS_RESPECTED_GATE}; {source}){unknown}")
        return True, ""
    if not cfg.manage_jobs_without_queue_name:
        return False, f"manageJobsWithoutQueueName is false ({source})"
    if not in_selector:
        return False, (f"namespace {obj.namespace} is outside managedJobsNamespaceSelector{missing} ({source})"
                       f"{unknown}")
    return True, ""


def _always_respected(cfg: Any, release: tuple[int, int]) -> bool:
    """ManagedJobsNamespaceSelectorAlwaysRespected: alpha in Kueue v0.13 (off), beta v0.15 (on), GA v0.19
    (pkg/features/kube_features.go): the selector then gates jobs with a queue name too."""
    if release < (0, 13):
        return False
    if release >= (0, 19):
        return True
    return bool(cfg.feature_gates.get(ALWAYS_RESPECTED_GATE, release >= (0, 15)))


def _defaults_to_local_queue(ctx: Context, cfg: Any, obj: Obj, release: tuple[int, int]) -> bool:
    """LocalQueueDefaulting (beta, on by default since Kueue v0.12, GA in v0.17): a job that names no queue, in a
    namespace with a LocalQueue named `default` that managedJobsNamespaceSelector selects, gets that queue
    (pkg/controller/jobframework ApplyDefaultLocalQueue)."""
    if release < (0, 12) or cfg.feature_gates.get("LocalQueueDefaulting") is False:
        return False
    return any(lq.namespace == obj.namespace and lq.name == "default" for lq in ctx.kueue("LocalQueue"))


def _selector_gap(selector: Any, labels: dict[str, str]) -> str:
    """What a namespace lacks for a selector, e.g. ": it lacks label kueue-managed=true"."""
    if not isinstance(selector, dict):
        return ""
    need = [f"{k}={v}" for k, v in (selector.get("matchLabels") or {}).items() if labels.get(str(k)) != str(v)]
    for expr in kueue.as_list(selector.get("matchExpressions")):
        if isinstance(expr, dict) and expr.get("operator") in ("In", "Exists") and str(expr.get("key")) not in labels:
            vals = ",".join(str(v) for v in kueue.as_list(expr.get("values")))
            need.append(f"{expr.get('key')}" + (f" in ({vals})" if vals else ""))
    return f": it lacks label {', '.join(need)}" if need else ""


@rule("KP620", "error", "7 policy", kinds=WORKLOAD_KINDS)
def workload_bypasses_quota(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """Queue enforcement: a workload in a team namespace escapes Kueue (no queue, and Kueue's Configuration does
    not manage it), so it runs without quota.

    With `queues.requireQueueName` (or `teams.<team>.requireQueueName`), every workload in a team namespace must
    name a queue (`kueue.x-k8s.io/queue-name`) or be covered by Kueue's Configuration: `manageJobsWithoutQueueName`
    plus a `managedJobsNamespaceSelector` that selects its namespace, and its kind among `integrations.frameworks`
    (a selected namespace with a LocalQueue named `default` covers it too: Kueue's LocalQueueDefaulting). From
    Kueue v0.15 (ManagedJobsNamespaceSelectorAlwaysRespected, GA in v0.19) the selector gates jobs that name a
    queue as well, so those outside it are reported too; `--kueue-version` picks the release.
    The Configuration is read from the `kueue-manager-config` ConfigMap among the inputs (Kueue's defaults when
    absent). This cross-checks objects a ValidatingAdmissionPolicy sees one at a time: a team namespace that lacks
    the label the selector needs lets an unlabelled PyTorchJob bypass quota.

    Fails:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      teams:
        team-a: {namespaces: [team-a]}
      queues:
        requireQueueName: true
    ---
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
          matchLabels:
            kueue-managed: "true"
        integrations:
          frameworks: [batch/job, kubeflow.org/pytorchjob]
    ---
    apiVersion: v1
    kind: Namespace
    metadata:
      name: team-a
    ---
    apiVersion: kubeflow.org/v1
    kind: PyTorchJob
    metadata:
      name: train
      namespace: team-a
    spec:
      pytorchReplicaSpecs:
        Master:
          replicas: 1
          template:
            spec:
              containers:
              - name: pytorch
                image: pytorch
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
      queues:
        requireQueueName: true
    ---
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
          matchLabels:
            kueue-managed: "true"
        integrations:
          frameworks: [batch/job, kubeflow.org/pytorchjob]
    ---
    apiVersion: v1
    kind: Namespace
    metadata:
      name: team-a
      labels:
        kueue-managed: "true"
    ---
    apiVersion: kubeflow.org/v1
    kind: PyTorchJob
    metadata:
      name: train
      namespace: team-a
    spec:
      pytorchReplicaSpecs:
        Master:
          replicas: 1
          template:
            spec:
              containers:
              - name: pytorch
                image: pytorch
    ```
    """
    policy = _policy(ctx)
    if policy is None or not policy.applies_to(obj.namespace) or not policy.team_setting(obj.namespace,
                                                                                          "requireQueueName"):
        return
    if obj.kind == "Pod" and obj.metadata.get("ownerReferences"):
        return  # a controller's pod: its owner is the workload
    queue = _queue_label(obj)
    managed, why = _coverage(ctx, obj, named=queue is not None)
    if managed:
        return
    team = policy.team_of_namespace(obj.namespace)
    whose = f"team {team}'s namespace" if team else "namespace"
    # An undeclared namespace may carry the selector's label on the cluster: a warning, not a verdict.
    level = "warning" if "is not among the inputs" in why else None
    if queue is None:
        yield Hit(obj, ("metadata", "labels") if obj.labels else ("metadata",),
                  f"{obj.kind} in {whose} {obj.namespace} names no queue (kueue.x-k8s.io/queue-name) and Kueue "
                  f"does not manage it: {why}; it runs without quota. Name a LocalQueue, or label the namespace "
                  "for managedJobsNamespaceSelector with manageJobsWithoutQueueName on", severity=level)
    else:
        yield Hit(obj, ("metadata", "labels", kueue.QUEUE_LABEL),
                  f"{obj.kind} names queue {queue!r} but Kueue does not manage it: {why}; it runs without quota",
                  severity=level)


def _team_namespaces(ctx: Context, policy: "Policy") -> dict[str, Obj]:
    """Team namespaces the inputs show: declared Namespaces, else the first object seen in each."""
    out: dict[str, Obj] = {}
    for ns in ctx.by_kind.get("Namespace", []):
        if ns.group == "" and policy.team_of_namespace(ns.name):
            out[ns.name] = ns
    for obj in ctx.objects:
        if obj.namespace and obj.namespace not in out and policy.team_of_namespace(obj.namespace):
            out[obj.namespace] = obj
    return out


@rule("KP621", "error", "7 policy", scope="global")
def team_namespace_lacks_local_queue(ctx: Context) -> Iterator[Hit]:
    """Queue enforcement: a team namespace lacks a LocalQueue the policy requires (e.g. `default`, which Kueue's
    LocalQueueDefaulting gives to workloads that name no queue).

    Set `queues.requiredLocalQueues` (or `teams.<team>.requiredLocalQueues`).

    Fails:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      teams:
        team-a: {namespaces: [team-a]}
      queues:
        requiredLocalQueues: [default]
    ---
    apiVersion: v1
    kind: Namespace
    metadata:
      name: team-a
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
      queues:
        requiredLocalQueues: [default]
    ---
    apiVersion: v1
    kind: Namespace
    metadata:
      name: team-a
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: default
      namespace: team-a
    spec:
      clusterQueue: team-a
    ```
    """
    policy = _policy(ctx)
    if policy is None:
        return
    have = {(o.namespace, o.name) for o in ctx.kueue("LocalQueue")}
    for ns, where in sorted(_team_namespaces(ctx, policy).items()):
        required = policy.team_setting(ns, "requiredLocalQueues") or []
        for name in required:
            if (ns, name) not in have:
                team = policy.team_of_namespace(ns)
                yield Hit(where, ("metadata",), f"team {team}'s namespace {ns} has no LocalQueue {name!r} (the policy "
                                                f"requires {', '.join(required)})")


def _covered_resources(ctx: Context, obj: Obj) -> tuple[set[str], str]:
    """Resources the workload's ClusterQueue covers (via its LocalQueue), else cpu and memory."""
    queue = _queue_label(obj)
    lq = ctx.get("LocalQueue", queue, obj.namespace) if queue else None
    cq = ctx.get("ClusterQueue", str(lq.spec.get("clusterQueue"))) if lq is not None else None
    if cq is not None:
        covered = {str(r) for rg in kueue.as_list(cq.spec.get("resourceGroups")) if isinstance(rg, dict)
                   for r in kueue.as_list(rg.get("coveredResources"))}
        if covered:
            return covered, f"ClusterQueue {cq.name} covers"
    return {"cpu", "memory"}, "Kueue counts"


@rule("KP622", "error", "7 policy", kinds=WORKLOAD_KINDS)
def requests_missing(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """Queue enforcement: a pod template requests nothing its ClusterQueue covers, so Kueue admits it at zero quota.

    With `queues.requireRequests` (or `teams.<team>.requireRequests`), every pod template of a workload in a team
    namespace must request (or limit) at least one resource its ClusterQueue covers (cpu and memory when the
    queue is not among the inputs); otherwise its pods use the nodes without counting against any quota.

    Fails:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      queues:
        requireRequests: true
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
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

    Passes:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      queues:
        requireRequests: true
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
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
            resources:
              requests: {cpu: 500m, memory: 256Mi}
    ```
    """
    policy = _policy(ctx)
    if policy is None or not policy.applies_to(obj.namespace) or not policy.team_setting(obj.namespace,
                                                                                          "requireRequests"):
        return
    if obj.kind == "Pod" and obj.metadata.get("ownerReferences"):
        return
    from kueueplan.errors import KueueplanError
    from kueueplan.kube.podsets import pod_requests
    from kueueplan.validate.vap import pod_templates

    covered, how = _covered_resources(ctx, obj)
    templates = [(("spec",), {"spec": obj.spec})] if obj.kind == "Pod" else \
        [(path, tpl) for path, tpl, _ in pod_templates(obj)]
    for path, template in templates:
        spec = template.get("spec") if isinstance(template.get("spec"), dict) else {}
        try:
            requests = pod_requests(spec)
        except KueueplanError:
            continue  # a malformed quantity: the schema rules report it
        if not set(requests) & covered:
            where = ".".join(str(p) for p in path)
            yield Hit(obj, path, f"pod template {where} requests none of what {how} "
                                 f"({', '.join(sorted(covered))}): Kueue would admit it at zero quota; set "
                                 "resources.requests on its containers")


@rule("KP623", "error", "7 policy", kinds=WORKLOAD_KINDS + ("Workload",))
def priority_required(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """Priority policy: a workload names no priority although `priorities.requirePriority` asks for one.

    A priority is the `kueue.x-k8s.io/priority-class` label (a Workload's priorityClassRef) or a pod template's
    `priorityClassName`. With `priorities.defaultPriority` set, such a workload is instead checked as that one
    (KP605).

    Fails:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      priorities:
        requirePriority: true
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
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

    Passes:

    ```yaml
    apiVersion: policy.kueueplan.io/v1alpha1
    kind: PlatformPolicy
    metadata:
      name: platform
    spec:
      priorities:
        requirePriority: true
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      namespace: team-a
      labels:
        kueue.x-k8s.io/queue-name: user-queue
        kueue.x-k8s.io/priority-class: batch
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
    if policy is None or not policy.spec.priorities.requirePriority or policy.spec.priorities.defaultPriority:
        return
    if obj.kind == "Pod" and obj.metadata.get("ownerReferences"):
        return
    if not any(True for _ in _priority_refs(obj, policy)):
        yield Hit(obj, ("metadata",), f"{obj.kind} names no priority (kueue.x-k8s.io/priority-class label or pod "
                                      "template priorityClassName); the policy requires one")
