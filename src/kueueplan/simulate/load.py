"""Manifests as load (second edition of the scenario contract).

A workload object (any kind kube/podsets.py derives pod sets for: RayJob, RayCluster, Job, Pod, Workload, the
other integrations' kinds such as JobSet, the Kubeflow jobs or RayService) found in a scenario's `manifests` or
`manifestFiles`, or in plain manifests given to `simulate`/`check`/`diff`, is load: created at 0, before
the `workloads` entries of that instant (a `generateName` gets the ordinal of its place among the load
objects; `workloads` entries keep the first edition's numbering), in the order of `manifests` then `manifestFiles` (files in sorted
path order, documents in file order), never finishing by itself. The `kueueplan.io/*` annotations below
set its arrival, run time, pod readiness delay and copies. A `workloads` entry may instead name such an
object with `ref: {kind, namespace, name}` (`name` may be an object's `generateName`); a referenced object
is not load by itself, it arrives as the entry says.

`entries()` turns all of it into `workloads` entries (plain mappings, as a scenario author would write
them) with where they came from, so scenario.py expands every entry the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kueueplan.errors import KueueplanError
from kueueplan.kube.configschema import FRAMEWORK_OF_KIND
from kueueplan.kube.objects import MULTIKUEUE_CONTROLLER, api_version_of, meta, read_object
from kueueplan.kube.podsets import RUNTIME_KINDS, SUPPORTED_KINDS, runtime_objects, trainjob_runtime_key

ARRIVE_AT = "kueueplan.io/arrive-at"
RUN_FOR = "kueueplan.io/run-for"
PODS_READY_AFTER = "kueueplan.io/pods-ready-after"
COUNT = "kueueplan.io/count"
ANNOTATIONS = {ARRIVE_AT: "at", RUN_FOR: "runFor", PODS_READY_AFTER: "podsReadyAfter", COUNT: "count"}

# kind -> API group of the workload kinds the simulator derives pod sets for (kube/podsets.py SUPPORTED_KINDS), and
# of Kueue's other integrations (pkg/controller/jobs): queued on a real cluster, not simulated here yet. Whether a
# release has a kind's integration, and the Configuration enables it, is the job controller's (unmanaged) call.
WORKLOAD_KINDS = {"Workload": "kueue.x-k8s.io"} | {kind: group for (group, kind) in FRAMEWORK_OF_KIND
                                                   if kind in SUPPORTED_KINDS}
OTHER_INTEGRATIONS = {kind: group for (group, kind) in FRAMEWORK_OF_KIND if kind not in SUPPORTED_KINDS}
# Objects that change nothing about admission: no warning for them.
NO_EFFECT = {"Service", "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding", "Secret",
             "PersistentVolumeClaim", "NetworkPolicy", "CustomResourceDefinition", "ValidatingAdmissionPolicy",
             "ValidatingAdmissionPolicyBinding", "ResourceQuota", "LimitRange", "StorageClass", "Ingress"}
CONFIG_MAP_NAME = "kueue-manager-config"
_LISTED = 5  # names listed per kind in one warning

Obj = tuple[dict[str, Any], str, "int | None"]  # (data, file, line), as Scenario.manifests


class At(tuple):
    """A `where` path into an object outside the scenario document: `at + (...)` keeps the file and line."""

    file: str
    line: int | None

    def __new__(cls, file: str, line: int | None, path: Sequence[Any] = ()) -> "At":
        self = super().__new__(cls, tuple(path))
        self.file, self.line = file, line
        return self

    def __add__(self, other: Any) -> "At":  # type: ignore[override]
        return At(self.file, self.line, tuple(self) + tuple(other))


@dataclass
class Entry:
    data: dict[str, Any]  # a `workloads` entry with `manifest` (refs resolved)
    where: tuple  # ("spec", "workloads", i), or an At for an object of the manifests
    first_given: int = -1  # index of the first `workloads` entry (generateName ordinals restart there)


def is_workload(data: Mapping[str, Any]) -> bool:
    kind = str(data.get("kind", ""))
    return kind in WORKLOAD_KINDS and api_version_of(data)[0] == WORKLOAD_KINDS[kind]


def _key(data: Mapping[str, Any]) -> tuple[str, str]:
    m = meta(data)
    return str(data.get("kind")), str(m.get("namespace") or "default")


def _annotation_entry(obj: Obj) -> Entry:
    """The `workloads` entry for an unreferenced workload object, from its kueueplan.io/* annotations."""
    data, file, line = obj
    annotations = meta(data).get("annotations")
    entry: dict[str, Any] = {"at": 0}
    if isinstance(annotations, Mapping):
        for name, field in ANNOTATIONS.items():
            value = annotations.get(name)
            if value is None:
                continue
            if field == "count":
                text = str(value).strip()
                if not text.isdigit() or int(text) < 1:
                    raise KueueplanError(f"annotation {name}: {value!r} is not a positive integer", file=file,
                                         line=line, hint=f"e.g. {name}: \"3\"")
                entry[field] = int(text)
            else:
                entry[field] = value  # durations are parsed, with this object's file and line, by the reader
    entry["manifest"] = data
    return Entry(entry, At(file, line, ()))


def _find(ref: Mapping[str, Any], objects: list[Obj], err: Callable[[str, tuple], Exception],
          where: tuple) -> Obj:
    kind, name = ref.get("kind"), ref.get("name")
    if not kind or not name:
        raise err("ref needs kind and name (and namespace, default `default`)", where + ("ref",))
    if str(kind) not in WORKLOAD_KINDS:
        raise err(f"ref {kind}: not a workload kind the simulator runs", where + ("ref", "kind"),
                  hint=f"refer to one of {', '.join(WORKLOAD_KINDS)}")
    namespace = str(ref.get("namespace") or "default")
    named = [o for o in objects if _key(o[0]) == (str(kind), namespace) and meta(o[0]).get("name") == name]
    if not named:  # an object created with generateName is referred to by that prefix
        named = [o for o in objects if _key(o[0]) == (str(kind), namespace) and not meta(o[0]).get("name")
                 and meta(o[0]).get("generateName") == name]
    if not named:
        raise err(f"ref {kind} {namespace}/{name}: no such object in manifests or manifestFiles", where + ("ref",))
    if len(named) > 1:
        raise err(f"ref {kind} {namespace}/{name} matches {len(named)} objects "
                  f"({', '.join(f'{f}:{ln}' for _, f, ln in named)})", where + ("ref",))
    return named[0]


def entries(workloads: list[Any], objects: list[Obj], err: Callable[..., Exception]) -> list[Entry]:
    """Load objects first (they arrive before the `workloads` entries of their instant), then `workloads`.

    `objects` are the scenario's manifests in contract order; `err(message, where)` builds the reader's error.
    """
    referenced: set[int] = set()
    given: list[Entry] = []
    for i, w in enumerate(workloads):
        where = ("spec", "workloads", i)
        if isinstance(w, Mapping) and w.get("ref") is not None:
            if w.get("manifest") is not None:
                raise err("a workload has either manifest or ref, not both", where)
            if not isinstance(w["ref"], Mapping):
                raise err("ref must be a mapping {kind, namespace, name}", where + ("ref",))
            found = _find(w["ref"], objects, err, where)
            referenced.add(id(found))
            w = {k: v for k, v in w.items() if k != "ref"} | {"manifest": found[0]}
        given.append(Entry(w, where))
    load = [_annotation_entry(o) for o in objects if is_workload(o[0]) and id(o) not in referenced]
    for e in load + given:
        e.first_given = len(load)
    return load + given


def split(objects: list[Obj]) -> tuple[list[Obj], list[Obj]]:
    """(cluster objects, workload objects): workloads arrive as load and are not applied as cluster state; one
    whose pod sets cannot be known is neither (warnings_for names it)."""
    unknown = unknown_pod_sets(objects)
    return ([o for o in objects if not is_workload(o[0])],
            [o for o in objects if is_workload(o[0]) and id(o) not in unknown])


def unknown_pod_sets(objects: list[Obj]) -> dict[int, str]:
    """Workload objects whose pod sets the inputs do not say, by id: a TrainJob whose Trainer runtime is installed
    on the cluster (by the Trainer operator) but is not among the inputs. Not load, and named, never guessed."""
    runtimes = runtime_objects(o[0] for o in objects)
    out = {}
    for o in objects:
        if o[0].get("kind") == "TrainJob" and is_workload(o[0]) and trainjob_runtime_key(o[0]) not in runtimes:
            kind, _, name = trainjob_runtime_key(o[0])
            out[id(o)] = (f"its runtime {kind} {name} is not among the inputs, so its pod sets are unknown: it is not "
                          "part of the load (add the runtime's manifest to the inputs)")
    return out


def ordered(inline: list[Obj], from_files: list[Obj]) -> list[Obj]:
    """The contract's order: `manifests`, then `manifestFiles` in sorted path order (documents in file order)."""
    return inline + sorted(from_files, key=lambda o: o[1])


def warnings_for(objects: list[Obj]) -> list[str]:
    """One warning per kind the simulator does not understand: nothing is dropped silently."""
    unknown: dict[str, list[str]] = {}
    no_pod_sets = unknown_pod_sets(objects)
    out = _range_warnings(objects) + _unmodelled_features(objects)
    for obj in objects:
        data = obj[0]
        kind = str(data.get("kind", ""))
        if id(obj) in no_pod_sets:
            m = meta(data)
            out.append(f"{kind} {m.get('namespace') or 'default'}/{m.get('name')}: {no_pod_sets[id(obj)]}")
            continue
        if is_workload(data) or kind in NO_EFFECT or _understood(data) or _build_file(data):
            continue
        m = meta(data)
        name = str(m.get("name") or f"{m.get('generateName') or '?'}*")
        ns = m.get("namespace")
        unknown.setdefault(kind, []).append(f"{ns}/{name}" if ns else name)
    for kind, names in sorted(unknown.items()):
        shown = _listed(names)
        if kind in OTHER_INTEGRATIONS:
            why = "a Kueue integration the simulator does not run yet: it is not part of the load"
        else:
            why = "not modelled by the simulator: ignored"
        out.append(f"{kind} {shown}: {why}")
    return out




def _unmodelled_features(objects: list[Obj]) -> list[str]:
    """Kueue objects the simulator reads, but only in part: TAS flavors and MultiKueue checks (not silently plain)."""
    tas, multikueue = [], []
    for data, _file, _line in objects:
        if api_version_of(data)[0] != "kueue.x-k8s.io" or not isinstance(data.get("spec"), Mapping):
            continue
        name = str(meta(data).get("name") or "?")
        if data.get("kind") == "ResourceFlavor" and data["spec"].get("topologyName"):
            tas.append(name)
        elif data.get("kind") == "AdmissionCheck" and data["spec"].get("controllerName") == MULTIKUEUE_CONTROLLER:
            multikueue.append(name)
    out = []
    if tas:
        out.append(f"ResourceFlavor {_listed(tas)}: topologyName (topology-aware scheduling) is not modelled: "
                   "workloads are admitted on quota alone, without a topology placement")
    if multikueue:
        out.append(f"AdmissionCheck {_listed(multikueue)}: MultiKueue dispatch to worker clusters is not modelled: "
                   "workloads run on this cluster's quota and the check turns Ready as the scenario's "
                   "admissionChecks model says (at once without one)")
    return out


def _listed(names: list[str]) -> str:
    return ", ".join(names[:_LISTED]) + (f" and {len(names) - _LISTED} more" if len(names) > _LISTED else "")


def _build_file(data: Mapping[str, Any]) -> bool:
    """kustomize's kustomization.yaml: a build input that a manifestFiles folder may hold, not a cluster object."""
    return api_version_of(data)[0].startswith("kustomize.config.k8s.io")


def _understood(data: Mapping[str, Any]) -> bool:
    if data.get("kind") in RUNTIME_KINDS:
        return True  # Trainer runtimes: a TrainJob's pod sets are read from its runtime (kube.podsets)
    if data.get("kind") == "ConfigMap":
        return meta(data).get("name") == CONFIG_MAP_NAME  # Kueue's Configuration: the simulator reads it
    try:
        return read_object(data) is not None
    except KueueplanError:
        return True  # a malformed Kueue object: the reader reports it, not a warning


def _range_warnings(objects: list[Obj]) -> list[str]:
    """Quotas beyond Kueue's int64 arithmetic, in words (what they become), as `validate` KP430 says them."""
    from kueueplan.kube.quantity import QuantityError, out_of_range

    out = []
    for data, _file, _line in objects:
        if data.get("kind") not in ("ClusterQueue", "Cohort") or api_version_of(data)[0] != "kueue.x-k8s.io":
            continue
        spec = data.get("spec") if isinstance(data.get("spec"), Mapping) else {}
        for group in spec.get("resourceGroups") or []:
            for flavor in (group.get("flavors") or []) if isinstance(group, Mapping) else []:
                for res in (flavor.get("resources") or []) if isinstance(flavor, Mapping) else []:
                    if not isinstance(res, Mapping):
                        continue
                    for key in ("nominalQuota", "borrowingLimit", "lendingLimit"):
                        value = res.get(key)
                        if value is None or isinstance(value, bool):
                            continue
                        try:
                            note = out_of_range(str(res.get("name")), value, quota=True)
                        except QuantityError:
                            continue
                        if note:
                            out.append(f"{data.get('kind')} {meta(data).get('name')}: {res.get('name')} {key} "
                                       f"{value!r} on flavor {flavor.get('name')}: {note}")
    return out
