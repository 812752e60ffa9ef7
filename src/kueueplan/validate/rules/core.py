"""Layer 2: built-in Kubernetes kinds against their schemas, and the API server's name and label rules."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kueueplan.validate import coreschema
from kueueplan.validate.model import Context, Obj
from kueueplan.kube.names import (
    dns_label_errors,
    dns_subdomain_errors,
    label_value_errors,
    qualified_name_errors,
)
from kueueplan.validate.registry import Hit, rule
from kueueplan.validate.schema import Issue

# Kinds whose names must be DNS labels rather than subdomains (apimachinery's per-kind name validators).
_LABEL_NAMED = {"Namespace", "Service"}
# Kinds whose name becomes a label value on their pods (batch.kubernetes.io/job-name): ≤63 characters.
_LABEL_LENGTH_NAMED = {"Job"}
_ANNOTATIONS_LIMIT = 256 * 1024


def _dotted(path: tuple[Any, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def builtin_issues(obj: Obj) -> list[Issue]:
    if "builtin" not in obj.cache:
        check = coreschema.check_for(obj.group, obj.version, obj.kind)
        issues: list[Issue] = []
        if check is not None:
            check(obj.data, (), issues)
        obj.cache["builtin"] = issues
    return obj.cache["builtin"]


def _is_api_object(obj: Obj, ctx: Context) -> bool:
    """Objects the API server stores (built-in kinds, loaded CRDs, Kueue and Ray kinds), not config files."""
    if obj.group in ("kueue.x-k8s.io", "ray.io"):
        return True
    if coreschema.is_builtin_group(obj.group):
        return coreschema.check_for(obj.group, obj.version, obj.kind) is not None
    return ctx.crds is not None and ctx.crds.lookup(obj.group, obj.kind, obj.kueue_version) is not None


@rule("KP101", "error", "2 core")
def builtin_schema(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A built-in object (Namespace, PriorityClass, Job, Pod, ...) breaks its Kubernetes schema.

    Checked against kubernetes-validate's bundled strict schemas: wrong types, unknown fields, enums.
    Fix the field named in the message.

    Fails:

    ```yaml
    apiVersion: scheduling.k8s.io/v1
    kind: PriorityClass
    metadata:
      name: high
    value: "1000"
    preemptionPolicy: Sometimes
    ```

    Passes:

    ```yaml
    apiVersion: scheduling.k8s.io/v1
    kind: PriorityClass
    metadata:
      name: high
    value: 1000
    ```
    """
    for path, _kind, message in builtin_issues(obj):
        if path and path[0] == "metadata":
            continue  # KP106 reports metadata for every kind
        yield Hit(obj, path, f"{_dotted(path) or obj.kind}: {message}")


@rule("KP102", "error", "2 core")
def object_name(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """metadata.name is missing or not a valid name for its kind (DNS-1123 subdomain, or label).

    Namespaces and Services need a DNS-1123 label (≤63 characters); everything else a DNS-1123
    subdomain (≤253; Jobs ≤63). Use lowercase letters, digits, '-' (and '.' in subdomains).

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata:
      name: GPU_A100
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata:
      name: gpu-a100
    ```
    """
    meta = obj.metadata
    name = meta.get("name")
    if name is None and not _is_api_object(obj, ctx):
        return  # e.g. a kind cluster config or a Kueue Configuration: files, not API objects
    if name is None:
        if not meta.get("generateName"):
            yield Hit(obj, ("metadata",), "metadata.name is required (or metadata.generateName)")
        return
    if not isinstance(name, str):
        yield Hit(obj, ("metadata", "name"), f"metadata.name must be a string, not {name!r}")
        return
    errors = dns_label_errors(name) if obj.kind in _LABEL_NAMED else dns_subdomain_errors(name)
    if obj.kind in _LABEL_LENGTH_NAMED and len(name) > 63:
        errors.append("must be no more than 63 characters (it becomes a label value on the pods)")
    for err in errors:
        yield Hit(obj, ("metadata", "name"), f"metadata.name {name!r}: {err}")


@rule("KP103", "error", "2 core")
def object_namespace(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """metadata.namespace is not a DNS-1123 label, or is set on a cluster-scoped Kueue object.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: user-queue
      namespace: Team_A
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
    namespace = obj.metadata.get("namespace")
    if namespace is None:
        return
    if not isinstance(namespace, str):
        yield Hit(obj, ("metadata", "namespace"), "metadata.namespace must be a string")
        return
    for err in dns_label_errors(namespace):
        yield Hit(obj, ("metadata", "namespace"), f"metadata.namespace {namespace!r}: {err}")


@rule("KP104", "error", "2 core")
def labels_syntax(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A label key or value breaks Kubernetes label syntax.

    Keys are `[prefix/]name` (prefix a DNS subdomain, name ≤63 of `[A-Za-z0-9_.-]`); values ≤63
    characters of the same alphabet, starting and ending alphanumeric, or empty.

    Fails:

    ```yaml
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      labels:
        kueue.x-k8s.io/queue-name: "team a queue"
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
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      labels:
        kueue.x-k8s.io/queue-name: team-a-queue
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```
    """
    for key, value in obj.labels.items():
        path = ("metadata", "labels", key)
        for err in qualified_name_errors(str(key)):
            yield Hit(obj, path, f"label key {key!r}: {err}")
        if not isinstance(value, str):
            yield Hit(obj, path, f"label {key!r} must have a string value; quote {value!r}")
            continue
        for err in label_value_errors(value):
            yield Hit(obj, path, f"label {key}={value!r}: {err}")


@rule("KP105", "error", "2 core")
def annotations_syntax(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """An annotation key is not a qualified name, a value is not a string, or all values exceed 256 KiB.

    Fails:

    ```yaml
    apiVersion: v1
    kind: Namespace
    metadata:
      name: team-a
      annotations:
        "owner email": ml@example.com
    ```

    Passes:

    ```yaml
    apiVersion: v1
    kind: Namespace
    metadata:
      name: team-a
      annotations:
        example.com/owner: ml@example.com
    ```
    """
    total = 0
    for key, value in obj.annotations.items():
        path = ("metadata", "annotations", key)
        for err in qualified_name_errors(str(key)):
            yield Hit(obj, path, f"annotation key {key!r}: {err}")
        if not isinstance(value, str):
            yield Hit(obj, path, f"annotation {key!r} must have a string value; quote {value!r}")
            continue
        total += len(str(key)) + len(value.encode())
    if total > _ANNOTATIONS_LIMIT:
        yield Hit(obj, ("metadata", "annotations"), f"annotations total {total} bytes; the limit is 256 KiB")


@rule("KP106", "error", "2 core")
def metadata_schema(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """metadata has an unknown field or a wrong type (ObjectMeta schema, for every kind).

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata:
      name: default-flavor
      label:
        team: a
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata:
      name: default-flavor
      labels:
        team: a
    ```
    """
    check = coreschema.object_meta_check()
    meta = obj.data.get("metadata")
    if check is None or meta is None:
        return
    if not isinstance(meta, dict):
        yield Hit(obj, ("metadata",), "metadata must be a mapping")
        return
    issues: list[Issue] = []
    check(meta, ("metadata",), issues)
    for path, _kind, message in issues:
        if len(path) == 3 and path[1] in ("labels", "annotations"):
            continue  # KP104/KP105 explain label and annotation problems better
        yield Hit(obj, path, f"{_dotted(path)}: {message}")
