"""Layer 3: Kueue and KubeRay objects against their CRDs: OpenAPI v3 schema and CEL rules."""

from __future__ import annotations

from collections.abc import Iterator

from kueueplan.validate import coreschema
from kueueplan.validate.crds import CrdVersion
from kueueplan.validate.model import Context, Obj
from kueueplan.validate.registry import Hit, rule
from kueueplan.validate.rules.core import _dotted
from kueueplan.validate.schema import Issue

# Versions we know to be deprecated even without CRDs (the CRDs mark them `deprecated: true`).
KNOWN_DEPRECATED = {("kueue.x-k8s.io", "v1beta1"): "v1beta2 (Kueue ≥ v0.15)",
                    ("ray.io", "v1alpha1"): "v1 (KubeRay ≥ v1.0)"}


def crd_version(obj: Obj, ctx: Context) -> CrdVersion | None:
    if ctx.crds is None:
        return None
    versions = ctx.crds.lookup(obj.group, obj.kind, obj.kueue_version)
    return versions.get(obj.version) if versions else None


def crd_issues(obj: Obj, ctx: Context) -> list[Issue]:
    """Schema + CEL issues of a custom resource, computed once and shared by KP201-KP204."""
    if "crd" not in obj.cache:
        issues: list[Issue] = []
        crd = crd_version(obj, ctx)
        if crd is not None and crd.served:
            ctx.crds.check_for(crd)(obj.data, (), issues)
        obj.cache["crd"] = issues
    return obj.cache["crd"]


def _hits(obj: Obj, ctx: Context, kind: str) -> Iterator[Hit]:
    for path, issue_kind, message in crd_issues(obj, ctx):
        if issue_kind == kind:
            yield Hit(obj, path, f"{_dotted(path) or obj.kind}: {message}")


@rule("KP201", "error", "3 crd")
def crd_schema(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A custom resource breaks its CRD's OpenAPI v3 schema (type, enum, pattern, min/max, required).

    The CRD is the object's release's, from the built-in schema pack (or `--crds`). Fix the value named in the
    message; enums list the allowed values.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
      queueingStrategy: FIFO
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
      queueingStrategy: StrictFIFO
    ```
    """
    return _hits(obj, ctx, "schema")


@rule("KP202", "error", "3 crd")
def crd_unknown_field(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A custom resource has a field its CRD does not define (kubectl's strict field validation rejects it).

    Often a typo or a field of the other API version (v1beta1 `cohort` vs v1beta2 `cohortName`).

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      cohort: shared
      namespaceSelector: {}
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      cohortName: shared
      namespaceSelector: {}
    ```
    """
    return _hits(obj, ctx, "unknown-field")


@rule("KP203", "error", "3 crd")
def crd_duplicate_key(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """Two entries of a list-map share their key (or a set repeats an item), e.g. a flavor listed twice.

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
        - name: default
          resources:
          - name: cpu
            nominalQuota: 2
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
            nominalQuota: 2
    ```
    """
    return _hits(obj, ctx, "duplicate")


@rule("KP204", "error", "3 crd")
def crd_cel(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A CRD `x-kubernetes-validations` CEL rule fails (or errors, e.g. on a missing field).

    Evaluated like the API server on create: defaults applied first, transition rules (oldSelf) skipped.
    A failure that a webhook rule also reports on the object (KP306, KP308, KP312: same check, exact field,
    values named) is left to that rule, so each fault is reported once.

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
    return _hits(obj, ctx, "cel")


@rule("KP205", "info", "3 crd")
def no_schema(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """No schema is known for this kind (no CRD given for it, not a built-in kind): only generic checks ran.

    Kueue and KubeRay kinds get their release's CRD from the built-in schema pack; for other kinds (JobSet,
    Kubeflow jobs), or a release outside the pack, pass the CRD with `--crds` (or `kueueplan schemas pull`).

    Fails:

    ```yaml
    apiVersion: jobset.x-k8s.io/v1alpha2
    kind: JobSet
    metadata:
      name: sample
    spec: {}
    ```

    Passes:

    ```yaml
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: sample
    data: {}
    ```
    """
    if coreschema.is_config_group(obj.group):
        return  # a configuration file (Kueue's Configuration, a kind cluster), not an API object
    if coreschema.is_builtin_group(obj.group):
        if coreschema.check_for(obj.group, obj.version, obj.kind) is None and coreschema.schema_dir():
            yield Hit(obj, ("kind",), f"no built-in schema for {obj.api_version} {obj.kind}; is the apiVersion "
                                      "right?", severity="warning")
        return
    if ctx.crds is None or ctx.crds.lookup(obj.group, obj.kind, obj.kueue_version) is None:
        if ("KP205", obj.group, obj.kind) in ctx.once:
            return  # once per kind is enough
        ctx.once.add(("KP205", obj.group, obj.kind))
        why = getattr(ctx.crds, "skipped", {}).get(f"{obj.kind}.{obj.group}")
        yield Hit(obj, ("apiVersion",), f"no CRD loaded for {obj.kind}.{obj.group}: its schema and CEL rules "
                                        f"were not checked; {why or 'pass it with --crds'}")


@rule("KP206", "error", "3 crd")
def version_not_served(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """The apiVersion is not served by the CRD (a typo, or a version the installed release removed).

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1
    kind: LocalQueue
    metadata:
      name: q
      namespace: team-a
    spec:
      clusterQueue: cq
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: q
      namespace: team-a
    spec:
      clusterQueue: cq
    ```
    """
    if ctx.crds is None:
        return
    versions = ctx.crds.lookup(obj.group, obj.kind, obj.kueue_version)
    if not versions:
        return
    crd = versions.get(obj.version)
    served = sorted(v for v, c in versions.items() if c.served)
    if crd is None or not crd.served:
        yield Hit(obj, ("apiVersion",), f"{obj.api_version} is not served for {obj.kind}; served versions: "
                                        f"{', '.join(served)}")


@rule("KP207", "warning", "5 hygiene")
def deprecated_version(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """The object uses a deprecated API version (the CRD marks it deprecated, e.g. kueue v1beta1).

    Move to the storage version before the next Kueue / KubeRay upgrade removes it.

    Fails:

    ```yaml
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
    ```
    """
    crd = crd_version(obj, ctx)
    if crd is not None:
        if crd.deprecated:
            versions = ctx.crds.lookup(obj.group, obj.kind, obj.kueue_version)
            storage = next((v for v, c in versions.items() if c.storage), None)
            text = f"{obj.api_version} {obj.kind} is deprecated"
            if crd.deprecation_warning:
                text += f" ({crd.deprecation_warning.rstrip('.')})"
            if storage and obj.env_in_ref and obj.group == "kueue.x-k8s.io":  # the Environment picks the version
                text += (f"; set kueueAPIVersion: {storage} in Environment {obj.env} (or leave it out: the "
                         f"release's own) and rebuild")
            elif storage:
                text += f"; use {obj.group}/{storage}"
            yield Hit(obj, ("apiVersion",), text)
        return
    replacement = KNOWN_DEPRECATED.get((obj.group, obj.version))
    finder = getattr(ctx.crds, "release_without", None)
    if replacement and not (finder and finder(obj.group, obj.kind, obj.kueue_version)):  # else KP318 says it
        yield Hit(obj, ("apiVersion",), f"{obj.api_version} is deprecated; use {replacement}")
