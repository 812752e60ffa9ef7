"""Argo CD integration, as pure data: resource health checks (Lua) for ClusterQueue and LocalQueue, and the
`ignoreDifferences` that stop Argo CD fighting the Ray autoscaler and Kueue.

- `health_checks()` -> {"kueue.x-k8s.io/ClusterQueue": lua, ...}
- `argocd_cm(namespace)` -> the `argocd-cm` ConfigMap entries (`resource.customizations.health.<group>_<kind>`),
  as a patch to merge into the Argo CD install (kustomize patch or `kubectl patch --type merge`).
- `ignore_differences()` -> entries for an Application's `spec.ignoreDifferences`.
- `with_argocd_fields(app)` -> a copy of an Application with those entries and `RespectIgnoreDifferences=true`
  (without it a sync still overwrites the ignored fields).

Health, from the queue's `Active` condition (Kueue sets it False with a reason such as FlavorNotFound,
AdmissionCheckNotFound or Stopped): a queue with a stopPolicy is "Suspended" (held on purpose, e.g. while
draining before deletion); Active=True is "Healthy" with its workload counts; Active=False is "Degraded" with
Kueue's reason; no condition yet is "Progressing".
"""

from __future__ import annotations

import copy
from typing import Any

_QUEUE_HEALTH = """\
local hs = {}
if obj.spec ~= nil and obj.spec.stopPolicy ~= nil and obj.spec.stopPolicy ~= "None" then
  hs.status = "Suspended"
  hs.message = "stopPolicy is " .. obj.spec.stopPolicy .. ": Kueue admits nothing new from this queue"
  return hs
end
if obj.status ~= nil and obj.status.conditions ~= nil then
  for _, condition in ipairs(obj.status.conditions) do
    if condition.type == "Active" then
      if condition.status == "True" then
        hs.status = "Healthy"
        hs.message = tostring(obj.status.admittedWorkloads or 0) .. " admitted, " ..
          tostring(obj.status.pendingWorkloads or 0) .. " pending"
      else
        hs.status = "Degraded"
        hs.message = (condition.reason or "Inactive") .. ": " .. (condition.message or "")
      end
      return hs
    end
  end
end
hs.status = "Progressing"
hs.message = "Waiting for Kueue to report the KIND"
return hs
"""

KUEUE_GROUP = "kueue.x-k8s.io"
QUEUE_KINDS = ("ClusterQueue", "LocalQueue")


def health_lua(kind: str) -> str:
    return _QUEUE_HEALTH.replace("KIND", kind)


def health_checks() -> dict[str, str]:
    """`<group>/<kind>` -> Lua health script."""
    return {f"{KUEUE_GROUP}/{kind}": health_lua(kind) for kind in QUEUE_KINDS}


def argocd_cm(namespace: str = "argocd") -> dict[str, Any]:
    """The argocd-cm entries that install the health checks (merge them into Argo CD's ConfigMap)."""
    data = {f"resource.customizations.health.{key.replace('/', '_')}": lua for key, lua in health_checks().items()}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "argocd-cm", "namespace": namespace,
                     "labels": {"app.kubernetes.io/name": "argocd-cm", "app.kubernetes.io/part-of": "argocd"}},
        "data": data,
    }


def ignore_differences() -> list[dict[str, Any]]:
    """Fields other controllers own: the Ray autoscaler sets a RayCluster's worker replicas; Kueue flips
    `spec.suspend` on the jobs it queues. One entry per kind."""
    return [
        {"group": "ray.io", "kind": "RayCluster", "jsonPointers": ["/spec/suspend"],
         "jqPathExpressions": [".spec.workerGroupSpecs[].replicas"]},
        {"group": "ray.io", "kind": "RayJob", "jsonPointers": ["/spec/suspend"]},
        {"group": "batch", "kind": "Job", "jsonPointers": ["/spec/suspend"]},
    ]


def with_argocd_fields(app: dict[str, Any]) -> dict[str, Any]:
    """An Application with `ignoreDifferences` merged in (no duplicates) and RespectIgnoreDifferences on."""
    out = copy.deepcopy(app)
    spec = out.setdefault("spec", {})
    entries = list(spec.get("ignoreDifferences") or [])
    for entry in ignore_differences():
        same = next((e for e in entries if (e.get("group"), e.get("kind")) == (entry["group"], entry["kind"])), None)
        if same is None:
            entries.append(copy.deepcopy(entry))
            continue
        for key in ("jsonPointers", "jqPathExpressions"):
            for path in entry.get(key, []):
                if path not in same.setdefault(key, []):
                    same[key].append(path)
    spec["ignoreDifferences"] = entries
    options = spec.setdefault("syncPolicy", {}).setdefault("syncOptions", [])
    if "RespectIgnoreDifferences=true" not in options:
        options.append("RespectIgnoreDifferences=true")
    return out
