"""Where a compiled manifest's field was written in the spec, so that validate's findings on a spec folder
point at that line (in the environment's overlay when the overlay set it) rather than at the document.

`spec_paths` maps a path inside a manifest to paths inside the spec document's `spec`, the first one written
wins (a ClusterQueue's namespaceSelector is either the team's own or made from its namespaces). Quota lists are
matched by flavor name (`ByFlavor`), because an overlay merges them by flavor and may drop some, so list
indexes differ between the base document, the overlay and the compiled object; a team's `clusterQueues` entries
likewise by name (`ByName`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Path = tuple[Any, ...]


@dataclass(frozen=True)
class ByFlavor:
    """The item of a `quotas` list whose `flavor` is `name`."""

    name: str
    key = "flavor"


@dataclass(frozen=True)
class ByName:
    """The item of a team's `clusterQueues` list whose `name` is `name` (overlays merge them by name)."""

    name: str
    key = "name"


def queue_paths(candidates: tuple[Path, ...], queue: str) -> tuple[Path, ...]:
    """Candidates for a ClusterQueue of a team with `clusterQueues`: inside its entry first (where the entry
    sets the field), then the team's own field (its default)."""
    return tuple(("clusterQueues", ByName(queue)) + c for c in candidates if c) + candidates


_QUOTA_FIELDS = ("nominalQuota", "borrowingLimit", "lendingLimit")
_RENAMED = {  # manifest spec field -> spec field, per kind (fields not listed keep their name)
    "ClusterQueue": {"cohortName": "cohort", "admissionChecksStrategy": "admissionChecks"},
    "Cohort": {"parentName": "parent"},
}


def spec_paths(manifest: dict[str, Any], path: Path) -> tuple[Path, ...]:
    """Where in the spec document's `spec` `path` of `manifest` may have been written, most likely first;
    () is the document as a whole (metadata, workloads)."""
    kind = manifest.get("kind")
    if kind == "WorkloadPriorityClass":
        return (path[:1] if path[:1] in (("value",), ("description",)) else (),)
    if kind == "LocalQueue":
        return (("localQueues",),)
    if kind == "Namespace":
        return (("namespaces",),)
    if kind not in ("ClusterQueue", "Cohort", "ResourceFlavor", "ProvisioningRequestConfig") or path[:1] != ("spec",):
        return ((),)
    rest = path[1:]
    if kind == "ProvisioningRequestConfig":
        return (("provisioningRequest",) + rest,)
    if not rest:
        return ((),)
    head = rest[0]
    if head == "resourceGroups":
        return (_quota_path(manifest["spec"], rest),)
    if head == "namespaceSelector":
        return (rest, ("namespaces",))
    renamed = _RENAMED.get(kind, {}).get(head)
    return ((renamed,) if renamed else rest,)


def _quota_path(spec: dict[str, Any], rest: Path) -> Path:
    """resourceGroups[g].flavors[f].resources[r].field -> quotas[flavor].resources.<resource>.field"""
    try:
        flavor = spec["resourceGroups"][rest[1]]["flavors"][rest[3]]
    except (IndexError, KeyError, TypeError):
        return ("quotas",)
    out: Path = ("quotas", ByFlavor(str(flavor.get("name"))))
    if len(rest) > 5 and rest[4] == "resources":
        try:
            resource = flavor["resources"][rest[5]]["name"]
        except (IndexError, KeyError, TypeError):
            return out
        out += ("resources", resource)
        if len(rest) > 6 and rest[6] in _QUOTA_FIELDS:
            out += (rest[6],)
    return out
