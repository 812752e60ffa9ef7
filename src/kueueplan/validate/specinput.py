"""Spec folders: load with the spec helper's loader, compile every environment, validate the manifests.

Each environment's manifests form their own universe, so the same ClusterQueue in dev and prod is not a
duplicate. A compiled object points at the spec document it came from (file and line), and its name carries
the environment (`ClusterQueue/team-a@dev`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kueueplan.kube.apiversion import TEAM_LABEL
from kueueplan.kube.podsets import JOB_KINDS
from kueueplan.validate.model import Obj, make_obj

# Which spec kinds a compiled kind comes from.
_SOURCES = {
    "ConfigMap": ("Environment",),  # kueue-manager-config: the Environment's `configuration`
    "ResourceFlavor": ("ResourceFlavor",), "WorkloadPriorityClass": ("Priority",), "PriorityClass": ("Priority",),
    "Cohort": ("Cohort",), "AdmissionCheck": ("AdmissionCheck",), "ProvisioningRequestConfig": ("AdmissionCheck",),
    "ClusterQueue": ("Team",), "LocalQueue": ("Team",), "Namespace": ("Team",),
    **dict.fromkeys(JOB_KINDS, ("Workload",)),
    "Topology": ("Topology",), "MultiKueueCluster": ("MultiKueueCluster",), "MultiKueueConfig": ("AdmissionCheck",),
}


def compiled_objects(folder: Path) -> list[Obj]:
    from kueueplan.compile import compile_environment, environment_names
    from kueueplan.spec.load import load_spec

    platform = load_spec(folder)
    objects: list[Obj] = []
    for env in sorted(environment_names(platform)):
        version = platform.environment(env).model.spec.kueueVersion
        entries = platform.resolve(env)  # with the environment's overlays: findings may point into them
        entries["Environment"] = [platform.environment(env)]  # Kueue's Configuration comes from it
        for manifest in compile_environment(platform, env):
            if not isinstance(manifest, dict):
                continue
            obj = make_obj(manifest, None, str(folder))
            obj.universe, obj.env, obj.env_in_ref = f"spec:{folder}:{env}", env, True
            obj.kueue_version = version
            _locate(obj, entries)
            objects.append(obj)
    return objects


def _locate(obj: Obj, entries: dict[str, list[Any]]) -> None:
    """Point the object at its spec document (same name, or the team named by its team label), and its
    fields at the spec lines that wrote them, in the environment's overlay where it set them."""
    from kueueplan.compile.origin import queue_paths, spec_paths

    names = {obj.name, str(obj.labels.get(TEAM_LABEL, "")), obj.namespace or ""}
    if obj.kind == "ConfigMap":
        env = entries["Environment"][0]
        obj.file, obj.origin_line = env.doc.file, env.doc.line
        obj.origin = lambda path, entry=env: entry.locate([_config_path(path)])
        return
    for spec_kind in _SOURCES.get(obj.kind, ()):
        for entry in entries.get(spec_kind, []):
            if _one_of_teams_queues(obj, entry):
                obj.file, obj.origin_line = entry.doc.file, entry.doc.line
                obj.origin = lambda path, entry=entry, data=obj.data: entry.locate(
                    queue_paths(spec_paths(data, path), data["metadata"]["name"]))
                return
            if entry.name in names:
                obj.file, obj.origin_line = entry.doc.file, entry.doc.line
                obj.origin = lambda path, entry=entry, data=obj.data: entry.locate(spec_paths(data, path))
                return


def _one_of_teams_queues(obj: Obj, entry: Any) -> bool:
    """A ClusterQueue from one of the `clusterQueues` entries of the Team `entry`."""
    queues = getattr(entry.model.spec, "clusterQueues", None) if obj.kind == "ClusterQueue" else None
    return bool(queues) and any(queue.name == obj.name for queue in queues)


def _config_path(path: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """A path inside the ConfigMap's embedded file -> the path inside the Environment's spec that wrote it."""
    from kueueplan.kube.configuration import CONFIGMAP_KEY

    if tuple(path[:2]) == ("data", CONFIGMAP_KEY):
        return ("configuration",) + tuple(path[2:])
    return ("configuration",)
