"""The objects under validation and the index that cross-object rules look things up in."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable

from kueueplan.kube.yamlio import Document

KUEUE_GROUP = "kueue.x-k8s.io"
RAY_GROUP = "ray.io"

# Kinds whose objects live in a namespace (for the object label and duplicate detection).
CLUSTER_SCOPED = {
    "Namespace", "PriorityClass", "ClusterQueue", "Cohort", "ResourceFlavor", "WorkloadPriorityClass",
    "AdmissionCheck", "ProvisioningRequestConfig", "Topology", "MultiKueueCluster", "MultiKueueConfig",
    "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "StorageClass", "Node",
    "PersistentVolume", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
    "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "RuntimeClass", "IngressClass",
    "APIService", "ValidatingAdmissionPolicy", "DeviceClass",
}


@dataclass(eq=False)
class Obj:
    """One Kubernetes object from the inputs, with what rules need to name and locate it."""

    data: dict[str, Any]
    doc: Document | None
    file: str
    api_version: str
    kind: str
    name: str
    namespace: str | None
    origin_line: int | None = None  # for compiled objects: the spec line they came from
    origin: Callable[[tuple[str | int, ...]], tuple[str, int | None]] | None = None  # compiled: path -> spec file, line
    cache: dict[str, Any] = field(default_factory=dict)  # per-object results shared by sibling rules
    universe: str = ""  # objects applied together (one kustomization root / one spec environment)
    env: str | None = None  # the environment, when known (spec environments, gen/<env>/ folders)
    env_in_ref: bool = False  # compiled from a spec: the same object exists once per environment
    kueue_version: str | None = None  # the Kueue release the object targets (None: the newest modelled)
    path_prefix: tuple[str | int, ...] = ()  # where the object sits in its document (items of a List)

    @property
    def group(self) -> str:
        return self.api_version.rsplit("/", 1)[0] if "/" in self.api_version else ""

    @property
    def version(self) -> str:
        return self.api_version.rsplit("/", 1)[-1]

    @property
    def ref(self) -> str:
        ref = f"{self.kind}/{self.namespace}/{self.name}" if self.namespace else f"{self.kind}/{self.name}"
        return f"{ref}@{self.env}" if self.env_in_ref else ref

    @property
    def metadata(self) -> dict[str, Any]:
        meta = self.data.get("metadata")
        return meta if isinstance(meta, dict) else {}

    @property
    def labels(self) -> dict[str, Any]:
        labels = self.metadata.get("labels")
        return labels if isinstance(labels, dict) else {}

    @property
    def annotations(self) -> dict[str, Any]:
        ann = self.metadata.get("annotations")
        return ann if isinstance(ann, dict) else {}

    @property
    def spec(self) -> dict[str, Any]:
        spec = self.data.get("spec")
        return spec if isinstance(spec, dict) else {}

    def is_kueue(self, kind: str | None = None) -> bool:
        return self.group == KUEUE_GROUP and (kind is None or self.kind == kind)

    def line_of(self, path: tuple[str | int, ...]) -> int | None:
        return self.where(path)[1]

    def where(self, path: tuple[str | int, ...]) -> tuple[str, int | None]:
        """File and line of `path` inside the object; for a compiled object, where the spec wrote it."""
        if self.doc is not None:
            return self.file, self.doc.line_of(self.path_prefix + tuple(path))
        if self.origin is not None:
            return self.origin(tuple(path))
        return self.file, self.origin_line


def make_obj(data: dict[str, Any], doc: Document | None, file: str) -> Obj:
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    kind = str(data.get("kind") or "")
    namespace = meta.get("namespace")
    if kind in CLUSTER_SCOPED:
        namespace = None
    elif namespace is None:
        namespace = "default"  # kubectl/Argo CD apply namespaced objects to the default namespace
    return Obj(data=data, doc=doc, file=file, api_version=str(data.get("apiVersion") or ""), kind=kind,
               name=str(meta.get("name") or meta.get("generateName") or ""),
               namespace=str(namespace) if namespace is not None else None)


@dataclass
class Context:
    """Everything rules may consult: all objects, indexes by kind and name, CRDs and policies."""

    objects: list[Obj]
    crds: Any = None  # kueueplan.validate.crds.CrdSet | None
    policy: Any = None  # kueueplan.validate.policy.Policy | None
    by_kind: dict[str, list[Obj]] = field(default_factory=lambda: defaultdict(list))
    by_key: dict[tuple[str, str | None, str], Obj] = field(default_factory=dict)
    once: set[Any] = field(default_factory=set)  # keys of notes that should be reported once per run
    kueue_version: str | None = None  # --kueue-version: the release manifests are checked against

    def __post_init__(self) -> None:
        for obj in self.objects:
            self.by_kind[obj.kind].append(obj)
            self.by_key.setdefault((obj.kind, obj.namespace, obj.name), obj)

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        return self.by_key.get((kind, namespace, name))

    def has_kind(self, kind: str) -> bool:
        return bool(self.by_kind.get(kind))

    def kueue(self, kind: str) -> list[Obj]:
        return [o for o in self.by_kind.get(kind, []) if o.group == KUEUE_GROUP]
