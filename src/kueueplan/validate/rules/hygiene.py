"""Layer 5 warnings: accepted and working, but a trap (admits nothing, drifts in GitOps, confuses)."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from kueueplan.validate import kueue
from kueueplan.validate.model import Context, Obj
from kueueplan.validate.registry import Hit, rule
from kueueplan.validate.rules.references import pod_templates

_BINARY = re.compile(r"[KMGTPE]i$")
_DECIMAL = re.compile(r"[numkMGTPE]$")
_EXPONENT = re.compile(r"[eE][+-]?\d+$")


@rule("KP420", "warning", "5 hygiene", kinds=("ClusterQueue",))
def cq_without_selector(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A ClusterQueue has no namespaceSelector: it admits workloads from no namespace at all.

    Kueue does not default it; `{}` selects every namespace, a matchLabels selector a team's namespaces. A
    lend-only queue (in a cohort, no LocalQueue pointing at it) is left out: selecting nothing is its purpose, it
    only lends its quota to the cohort (kueueplan's `lendOnly`).

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      resourceGroups: []
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector:
        matchLabels:
          kueueplan.io/team: a
    ```
    """
    if obj.is_kueue() and obj.spec.get("namespaceSelector") is None and not _lend_only(obj, ctx):
        yield Hit(obj, ("spec",), "no spec.namespaceSelector: this ClusterQueue admits nothing; set "
                                  "namespaceSelector: {} for all namespaces or a selector for the team's")


def _lend_only(cq: Obj, ctx: Context) -> bool:
    in_cohort = bool(cq.spec.get("cohortName") or cq.spec.get("cohort"))
    return in_cohort and not any(lq.spec.get("clusterQueue") == cq.name for lq in ctx.kueue("LocalQueue"))


@rule("KP421", "warning", "5 hygiene", kinds=("LocalQueue",))
def lq_name_too_long(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A LocalQueue name is longer than 63 characters: jobs cannot name it in their queue-name label.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: a-very-long-local-queue-name-that-no-job-label-can-ever-reference-at-all
      namespace: team-a
    spec:
      clusterQueue: cq
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: user-queue
      namespace: team-a
    spec:
      clusterQueue: cq
    ```
    """
    if obj.is_kueue() and len(obj.name) > 63:
        yield Hit(obj, ("metadata", "name"), f"LocalQueue name has {len(obj.name)} characters; the "
                                             "kueue.x-k8s.io/queue-name label value allows 63, so no job can use it")


def _quantity_paths(obj: Obj) -> Iterator[tuple[tuple[Any, ...], str, Any]]:
    """(path, resource, value) of every quantity we check for canonical form."""
    if obj.is_kueue() and obj.kind in ("ClusterQueue", "Cohort"):
        for q in kueue.quotas(obj):
            for key in ("nominalQuota", "borrowingLimit", "lendingLimit"):
                if q.data.get(key) is not None:
                    yield q.path + (key,), q.resource, q.data[key]
    if obj.group in ("", "batch"):
        for path, spec in pod_templates(obj):
            for field_name in ("containers", "initContainers"):
                for ci, c in enumerate(kueue.as_list(spec.get(field_name))):
                    res = c.get("resources") if isinstance(c, dict) else None
                    for part in ("requests", "limits"):
                        values = res.get(part) if isinstance(res, dict) else None
                        for name, value in (values.items() if isinstance(values, dict) else ()):
                            yield path + (field_name, ci, "resources", part, name), name, value


@rule("KP422", "warning", "5 hygiene", kinds=("ClusterQueue", "Cohort", "Job", "Pod"))
def non_canonical_quantity(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A quantity is not in the API server's canonical form, so GitOps tools show a permanent diff.

    The server stores `12000m` as `12` and `1000Mi`... as written only when canonical; write the canonical form.

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
            nominalQuota: 12000m
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
            nominalQuota: "12"
    ```
    """
    for path, _resource, value in _quantity_paths(obj):
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            continue
        shown = kueue.canonical_form(type(value), value)
        if shown is not None and shown != str(value):
            yield Hit(obj, path, f"quantity {value!r} is stored as {shown!r}; write {shown!r} to avoid a "
                                 "permanent GitOps diff")


def _unit_family(value: Any) -> str:
    text = str(value).strip()
    if _BINARY.search(text):
        return "binary (Ki, Mi, Gi)"
    if _EXPONENT.search(text):
        return "exponent (e3)"
    if _DECIMAL.search(text) and not text.endswith("m"):
        return "decimal (k, M, G)"
    return "plain"


@rule("KP423", "warning", "5 hygiene", scope="global")
def mixed_units_in_cohort(ctx: Context) -> Iterator[Hit]:
    """One resource is written in mixed unit families (e.g. 64Gi and 64G) within a cohort.

    64G is 64·10⁹ bytes, 64Gi is 64·2³⁰: mixing them in quotas that borrow from each other is a
    common source of "it should fit" surprises. Pick one family per resource.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: a
    spec:
      cohortName: org
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [memory]
        flavors:
        - name: default
          resources:
          - name: memory
            nominalQuota: 64Gi
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: b
    spec:
      cohortName: org
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [memory]
        flavors:
        - name: default
          resources:
          - name: memory
            nominalQuota: 64G
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: a
    spec:
      cohortName: org
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [memory]
        flavors:
        - name: default
          resources:
          - name: memory
            nominalQuota: 64Gi
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: b
    spec:
      cohortName: org
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [memory]
        flavors:
        - name: default
          resources:
          - name: memory
            nominalQuota: 32Gi
    ```
    """
    # (cohort, resource) -> family -> first (obj, path, value)
    seen: dict[tuple[str, str], dict[str, tuple[Obj, tuple[Any, ...], Any]]] = defaultdict(dict)
    for obj in ctx.kueue("ClusterQueue") + ctx.kueue("Cohort"):
        cohort = kueue.cohort_of(obj)[0] if obj.kind == "ClusterQueue" else obj.name
        if not cohort:
            continue
        for q in kueue.quotas(obj):
            value = q.data.get("nominalQuota")
            if value is None or str(value).strip() in ("0", ""):
                continue
            family = _unit_family(value)
            if family == "plain" and q.resource != "memory" and not q.resource.endswith("storage"):
                continue
            seen[(cohort, q.resource)].setdefault(family, (obj, q.path + ("nominalQuota",), value))
    for (cohort, resource), families in sorted(seen.items()):
        if len(families) < 2:
            continue
        ordered = sorted(families.items())
        first_family, (first_obj, _p, first_value) = ordered[0]
        for family, (obj, path, value) in ordered[1:]:
            yield Hit(obj, path, f"{resource} {value!r} in cohort {cohort!r} uses {family} units while "
                                 f"{first_obj.ref} writes {first_value!r} ({first_family}); use one unit family")
