"""Reading manifest folders and comparing objects semantically.

"Semantic" means what the API server would hold: key order, YAML formatting, quantity spelling (`8Gi` vs
`8589934592`), Kueue API version (v1beta1 vs v1beta2) and server-managed fields (status, managedFields,
resourceVersion, ...) do not count. Kueue objects are compared through `kueueplan.kube.objects`, which
applies Kueue's defaults and conversions; other objects (RayJob, Namespace, RoleBinding, ...) are compared
as cleaned dicts with their container resource quantities made canonical.
"""

from __future__ import annotations

import copy
import dataclasses
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterable, Mapping

from kueueplan.errors import InputRefusedError, KueueplanError
from kueueplan.kube import objects
from kueueplan.kube.apiversion import KUEUEPLAN_API
from kueueplan.kube.configuration import CONFIGMAP_KEY, CONFIGMAP_NAME
from kueueplan.kube.quantity import QuantityError, canonical
from kueueplan.kube import yamlio
from kueueplan.kube.yamlio import Document, load_file

# Labels/annotations kueueplan writes itself; they say nothing about the cluster's behaviour.
OWN_PREFIXES = ("kueueplan.io/",)
# Fields the API server fills in; a `kubectl get -o yaml` export carries them.
SERVER_METADATA = ("managedFields", "resourceVersion", "uid", "creationTimestamp", "generation", "selfLink",
                   "deletionTimestamp", "deletionGracePeriodSeconds", "finalizers")
SERVER_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration", "deployment.kubernetes.io/revision")

Key = tuple[str, str, str]  # kind, namespace ("" when cluster-scoped), name


def yaml_files(path: Path) -> list[Path]:
    """Every YAML file under a folder (sorted, hidden folders skipped), or the file itself."""
    if path.is_file():
        yamlio.refuse_linked_out(path)
        return [path]
    if not path.is_dir():
        raise KueueplanError("no such file or folder", file=str(path))
    return yamlio.yaml_files(path)


def load_documents(paths: Iterable[Path], read: dict[Path, list[Document]] | None = None) -> list[Document]:
    """All documents of the given files/folders, `List` kinds (kubectl exports) flattened. `read`, if given,
    receives each file's documents as read (so that a caller needs not read a file twice)."""
    out: list[Document] = []
    for path in paths:
        scanning = Path(path).is_dir()
        for file in yaml_files(Path(path)):
            docs = load_file(file)
            if read is not None:
                read[file] = docs
            if scanning and not any(_looks_like_object(d.data) for d in docs):
                continue  # a folder may hold other YAML (CI configs, SkyPilot tasks): not ours to read
            for doc in docs:
                out.extend(_flatten(doc))
        if scanning and not out:
            raise KueueplanError("no Kubernetes objects found", file=str(path),
                                 hint="point at the folder or files that hold your manifests")
    return out


def read_stdin_text(stream: Any = None) -> str:
    """`-`: standard input as text (e.g. `kustomize build | kueueplan simulate -`), size-bounded."""
    import sys

    raw = (stream or sys.stdin.buffer).read(yamlio.MAX_FILE_BYTES + 1)
    if isinstance(raw, str):
        raw = raw.encode("utf-8")
    if len(raw) > yamlio.MAX_FILE_BYTES:
        raise KueueplanError(f"standard input is larger than {yamlio.MAX_FILE_BYTES} bytes", file="<stdin>",
                             hint="split the manifests, or pass a folder")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise KueueplanError("standard input is not UTF-8 text", file="<stdin>") from None


def documents_from_text(text: str, file: str = "<stdin>") -> list[Document]:
    """The objects of one YAML stream (`List` kinds flattened), as `load_documents` reads a file."""
    out: list[Document] = []
    for doc in yamlio.load_text(text, file):
        out.extend(_flatten(doc))
    if not out:
        raise KueueplanError("no Kubernetes objects on standard input", file=file,
                             hint="pipe manifests in, e.g. kustomize build overlays/prod | kueueplan simulate -")
    return out


def _looks_like_object(data: Any) -> bool:
    return isinstance(data, Mapping) and bool(data.get("apiVersion") or data.get("kind"))


def _flatten(doc: Document) -> list[Document]:
    data = doc.data
    items = objects.list_items(data)
    if items is not None:
        return [Document(data=item, file=doc.file, index=doc.index, line=doc.line)
                for item in items if isinstance(item, Mapping)]
    if isinstance(data, Mapping) and str(data.get("apiVersion", "")).startswith("kustomize.config.k8s.io/"):
        return []  # kustomize's build file, not an object on the cluster
    if not isinstance(data, Mapping):
        raise KueueplanError(f"not a Kubernetes object: the document is a {type(data).__name__}, not a mapping",
                             file=doc.file, line=doc.line, hint="each YAML document must be one object with "
                             "apiVersion, kind and metadata")
    if not data.get("apiVersion") or not data.get("kind"):
        missing = "apiVersion" if not data.get("apiVersion") else "kind"
        raise KueueplanError(f"not a Kubernetes object: it has no {missing}", file=doc.file, line=doc.line,
                             hint=f"add {missing}: to the document, or remove the file from the inputs")
    return [doc]


def is_spec_document(data: Any) -> bool:
    """A kueueplan spec document (not a Scenario, which is a simulation input)."""
    return isinstance(data, Mapping) and data.get("apiVersion") == KUEUEPLAN_API and data.get("kind") != "Scenario"


# Kinds without a namespace; every other kind applied without one lands in `default`.
CLUSTER_SCOPED = {"Namespace", "ResourceFlavor", "ClusterQueue", "Cohort", "WorkloadPriorityClass", "PriorityClass",
                  "AdmissionCheck", "ProvisioningRequestConfig", "Topology", "MultiKueueConfig", "MultiKueueCluster",
                  "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "StorageClass", "PersistentVolume",
                  "Node", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
                  "ClusterTrainingRuntime"}  # kubeflow trainer: the runtime a TrainJob names by default


def key_of(data: Mapping[str, Any]) -> Key:
    meta = objects.meta(data)
    name = meta.get("name") or (f"{meta.get('generateName')}*" if meta.get("generateName") else "")
    kind = str(data.get("kind", ""))
    namespace = "" if kind in CLUSTER_SCOPED else str(meta.get("namespace") or "default")
    return kind, namespace, str(name)


def key_text(key: Key) -> str:
    kind, namespace, name = key
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


# --------------------------------------------------------------------------- cleaning


def clean(data: Mapping[str, Any]) -> dict[str, Any]:
    """A copy without status and server-managed metadata (what a `kubectl get -o yaml` export adds)."""
    out = copy.deepcopy(dict(data))
    out.pop("status", None)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        for field in SERVER_METADATA:
            meta.pop(field, None)
        annotations = meta.get("annotations")
        if isinstance(annotations, dict):
            for key in SERVER_ANNOTATIONS:
                annotations.pop(key, None)
            if not annotations:
                meta.pop("annotations")
    return out


# Written by `kueueplan build` on every object: the apply order and the owner. Not part of what an object does.
OWN_KEYS = {"argocd.argoproj.io/sync-wave": None, "app.kubernetes.io/managed-by": "kueueplan",
            # the Namespace protection build writes (compile/gitops.py NAMESPACE_ANNOTATIONS)
            "argocd.argoproj.io/sync-options": "Prune=confirm,Delete=confirm",
            "kustomize.toolkit.fluxcd.io/prune": "disabled",
            # Kueue's install labels build gives kueue-manager-config (compile/configuration.py KUEUE_LABELS); Kueue
            # reads the ConfigMap by name, so a hand-written one without them is the same configuration
            "app.kubernetes.io/name": "kueue", "control-plane": "controller-manager"}


def _own(key: str, value: str | None = None) -> bool:
    if key.startswith(OWN_PREFIXES):
        return True
    return key in OWN_KEYS and (OWN_KEYS[key] is None or OWN_KEYS[key] == value)


def _user_map(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    pairs = ((str(k), "" if v is None else str(v)) for k, v in sorted(value.items(), key=lambda kv: str(kv[0])))
    return {k: v for k, v in pairs if not _own(k, v)}


def _canonical_resources(value: Any, parent: str | None = None) -> Any:
    """Recursively canonicalise quantities under `resources.{limits,requests}` maps; drop null values."""
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if v is None:
                continue
            if parent in ("limits", "requests") and isinstance(v, (str, int, float)) and not isinstance(v, bool):
                try:
                    out[k] = canonical(v)
                    continue
                except QuantityError:
                    pass
            out[k] = _canonical_resources(v, str(k))
        return out
    if isinstance(value, list):
        return [_canonical_resources(v, parent) for v in value]
    return value


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _plain(value: Any) -> Any:
    """Dataclass trees -> JSON-friendly values (Fractions become canonical quantity strings)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # camelCase keys, so changed fields read like the manifests (resourceGroups, nominalQuota, ...)
        return {_camel(f.name): _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Fraction):
        return canonical(value)
    return value


def semantic(data: Mapping[str, Any], file: str | None = None, line: int | None = None) -> dict[str, Any]:
    """The comparable form of one manifest (see the module docstring)."""
    cleaned = clean(data)
    meta = objects.meta(cleaned)
    head = {"labels": _user_map(meta.get("labels")), "annotations": _user_map(meta.get("annotations"))}
    obj = objects.read_object(cleaned, file, line)
    if isinstance(obj, objects.Namespace):
        # The API server adds the name label to every namespace; written or not, it is the same object.
        head["labels"] = _user_map(obj.label_map)
        return {"kind": "Namespace", **head}
    if obj is not None:
        body = _plain(obj)
        body.pop("admissionMode", None)  # compared as written, under otherSpec.admissionScope
        if "resourceGroups" in body:
            body["resourceGroups"] = _sorted_groups(body["resourceGroups"])
        if isinstance(obj, objects.WorkloadPriorityClass):
            body["description"] = cleaned.get("description")
        spec = cleaned.get("spec")
        if isinstance(spec, Mapping):
            # Fields the model does not read still count: compare them as written.
            other = {k: v for k, v in spec.items() if k not in MODELLED_SPEC.get(obj.kind, set())}
            if other:
                body["otherSpec"] = _canonical_resources(other)
        return {**head, **body}
    rest = {k: v for k, v in cleaned.items() if k not in ("apiVersion", "metadata")}
    if cleaned.get("kind") == "ConfigMap" and meta.get("name") == CONFIGMAP_NAME:
        rest = _with_configuration(rest)
    group, _version = objects.api_version_of(cleaned)
    if group == "ray.io":
        _ray_defaults(rest.get("spec"))
    return {"group": group, **head, **_canonical_resources(rest)}


def _with_configuration(rest: dict[str, Any]) -> dict[str, Any]:
    """Kueue's Configuration compared field by field (`data.controller_manager_config.yaml.waitForPodsReady...`),
    not as one block of text; left as text when it does not parse (validate says why)."""
    data = rest.get("data")
    text = data.get(CONFIGMAP_KEY) if isinstance(data, Mapping) else None
    if not isinstance(text, str):
        return rest
    try:
        docs = yamlio.load_text(text, file="<kueue-manager-config>")
    except InputRefusedError:
        raise
    except KueueplanError:
        return rest
    if len(docs) != 1:
        return rest
    return {**rest, "data": {**data, CONFIGMAP_KEY: docs[0].data}}


def _ray_defaults(spec: Any) -> None:
    """KubeRay's CRD defaults, so a field left out and the same field at its default compare equal."""
    if not isinstance(spec, dict):
        return
    cluster = spec.get("rayClusterSpec") if isinstance(spec.get("rayClusterSpec"), dict) else spec
    head = cluster.get("headGroupSpec")
    if isinstance(head, dict) and not head.get("rayStartParams"):
        head.pop("rayStartParams", None)
    for group in cluster.get("workerGroupSpecs") or []:
        if not isinstance(group, dict):
            continue
        group.setdefault("minReplicas", 0)
        group.setdefault("maxReplicas", 2**31 - 1)
        group.setdefault("numOfHosts", 1)
        group.setdefault("replicas", group["minReplicas"])
        if not group.get("rayStartParams"):
            group.pop("rayStartParams", None)


# Spec fields `kueueplan.kube.objects` reads (with Kueue's defaults and version conversions applied).
MODELLED_SPEC = {
    "ClusterQueue": {"cohort", "cohortName", "resourceGroups", "preemption", "queueingStrategy", "flavorFungibility",
                     "stopPolicy", "namespaceSelector", "admissionChecks", "admissionChecksStrategy", "fairSharing"},
    "Cohort": {"parent", "parentName", "resourceGroups", "fairSharing"},
    "ResourceFlavor": {"nodeLabels", "nodeTaints", "tolerations", "topologyName"},
    "LocalQueue": {"clusterQueue", "stopPolicy", "fairSharing"},
    "AdmissionCheck": {"controllerName", "parameters"},
    "ProvisioningRequestConfig": {"provisioningClassName", "managedResources"},
}


def _sorted_groups(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Group order and resource order carry no meaning in Kueue (flavor order does: it is the preference)."""
    out = []
    for g in groups:
        flavors = [{**f, "resources": sorted(f["resources"], key=lambda r: r["name"])} for f in g["flavors"]]
        out.append({"coveredResources": sorted(g["coveredResources"]), "flavors": flavors})
    return sorted(out, key=lambda g: g["coveredResources"])


def index(docs: Iterable[Document | Mapping[str, Any]]) -> dict[Key, dict[str, Any]]:
    """Semantic forms keyed by (kind, namespace, name); a duplicate key is an error (the last would win)."""
    out: dict[Key, dict[str, Any]] = {}
    for doc in docs:
        data = getattr(doc, "data", doc)
        if not isinstance(data, Mapping) or is_spec_document(data):
            continue
        key = key_of(data)
        if key in out:
            raise KueueplanError(f"{key_text(key)} is defined twice", file=getattr(doc, "file", None),
                                 line=getattr(doc, "line", None), hint="keep one definition per object")
        out[key] = semantic(data, getattr(doc, "file", None), getattr(doc, "line", None))
    return out


def changed_paths(before: Any, after: Any, prefix: str = "") -> list[str]:
    """Dotted paths where two semantic forms differ (for "changed" lines in a diff)."""
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        out: list[str] = []
        for k in sorted(set(before) | set(after), key=str):
            out.extend(changed_paths(before.get(k), after.get(k), f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(before, list) and isinstance(after, list):
        named_b, named_a = _by_name(before), _by_name(after)
        if named_b is not None and named_a is not None:  # match list items by name, as people read them
            out = []
            for name in sorted(set(named_b) | set(named_a)):
                out.extend(changed_paths(named_b.get(name), named_a.get(name), f"{prefix}[{name}]"))
            return out
        if len(before) == len(after):
            out = []
            for i, (b, a) in enumerate(zip(before, after)):
                out.extend(changed_paths(b, a, f"{prefix}[{i}]"))
            return out
    return [] if before == after else [prefix or "(object)"]


def _by_name(items: list[Any]) -> dict[str, Any] | None:
    names = [i.get("name") for i in items if isinstance(i, Mapping)]
    if len(names) != len(items) or not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        return None
    return dict(zip(names, items))
