"""Argo CD integration, as pure data.

- `health_checks()` -> {"<group>/<kind>": lua}: ClusterQueue, LocalQueue, batch/Job, RayJob, RayCluster.
- `resource_customizations()` -> the `argocd-cm` fragment (`data:` with `resource.customizations.health.*`) that
  users merge into their Argo CD install; never a whole ConfigMap in the synced folder.
- `ignore_differences(manifests, kueue_version)` -> per-object `spec.ignoreDifferences` for exactly the fields
  Kueue writes (compile/owned.py), as `jqPathExpressions`.

Why the health checks look like this: gitops-engine's sync (pkg/sync/sync_context.go) keeps a wave's task
Running until its resource is Healthy (succeeded) or Degraded (failed); Progressing and Suspended wait, and a sync
has no timeout by default. So an intended state must be Healthy: a stopped queue (stopPolicy, Kueue's reason
Stopped) is Healthy with its message; a workload Kueue holds (suspended, queue-name label) is Healthy "queued by
Kueue", where gitops-engine's health_job.go would say Suspended; an admitted batch workload is Healthy while it
runs (a sync must not wait hours for a training job). Kueue's Active=False reasons (FlavorNotFound,
AdmissionCheckNotFound, AdmissionCheckInactive, TopologyNotFound, ...: pkg/cache/scheduler/clusterqueue.go
`inactiveReason`) are Degraded; terminating or no status yet is Progressing.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from kueueplan.compile.owned import WORKLOAD_KINDS, Platform, jq_path, owned_fields

KUEUE_GROUP = "kueue.x-k8s.io"
QUEUE_KINDS = ("ClusterQueue", "LocalQueue")

_QUEUE_HEALTH = """\
local hs = {}
if obj.metadata ~= nil and obj.metadata.deletionTimestamp ~= nil then
  hs.status = "Progressing"
  hs.message = "Terminating: Kueue removes its finalizer once no admitted workload uses the KIND"
  return hs
end
local active = nil
if obj.status ~= nil and obj.status.conditions ~= nil then
  for _, condition in ipairs(obj.status.conditions) do
    if condition.type == "Active" then
      active = condition
    end
  end
end
local stop = nil
if obj.spec ~= nil and obj.spec.stopPolicy ~= nil and obj.spec.stopPolicy ~= "None" then
  stop = obj.spec.stopPolicy
end
if stop ~= nil or (active ~= nil and active.status ~= "True" and active.reason == "Stopped") then
  hs.status = "Healthy"
  hs.message = "Stopped (stopPolicy " .. (stop or "set") .. "): Kueue admits nothing new from this KIND"
  if stop == "HoldAndDrain" then
    hs.message = hs.message .. " and evicts its admitted workloads"
  end
  return hs
end
if active == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for Kueue to report the KIND"
  return hs
end
if active.status == "True" then
  hs.status = "Healthy"
  local status = obj.status
  hs.message = tostring(status.admittedWorkloads or 0) .. " admitted, " ..
    tostring(status.pendingWorkloads or 0) .. " pending"
  return hs
end
hs.status = "Degraded"
hs.message = (active.reason or "Inactive") .. ": " .. (active.message or "")
return hs
"""

# Kueue holds a job by suspending it; the queue-name label says Kueue manages it.
_KUEUE_MANAGED = """\
local function queued(o)
  return o.metadata ~= nil and o.metadata.labels ~= nil and o.metadata.labels["kueue.x-k8s.io/queue-name"] ~= nil
end
-- A suspended object: Healthy while Kueue holds it in its queue (never block a sync on it), else Suspended.
local function held_status(o, held, kind)
  if not held then return nil end
  if queued(o) then
    return {status = "Healthy", message = "Queued by Kueue in LocalQueue " ..
      o.metadata.labels["kueue.x-k8s.io/queue-name"] .. " (suspended until admitted)"}
  end
  return {status = "Suspended", message = kind .. " is suspended"}
end
"""

_JOB_HEALTH = _KUEUE_MANAGED + """\
local hs = {}
local failed, complete, suspended = nil, nil, false
if obj.status ~= nil and obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Failed" and c.status == "True" then failed = c end
    if c.type == "Complete" and c.status == "True" then complete = c end
    if c.type == "Suspended" and c.status == "True" then suspended = true end
  end
end
if failed ~= nil then
  hs.status = "Degraded"
  hs.message = failed.message or "Job failed"
  return hs
end
if complete ~= nil then
  hs.status = "Healthy"
  hs.message = complete.message or "Job completed"
  return hs
end
local held = held_status(obj, suspended or (obj.spec ~= nil and obj.spec.suspend == true), "Job")
if held ~= nil then return held end
if queued(obj) then
  hs.status = "Healthy"
  local active = 0
  if obj.status ~= nil and obj.status.active ~= nil then active = obj.status.active end
  hs.message = "Admitted by Kueue, running: " .. tostring(active) .. " active pod(s)"
  return hs
end
hs.status = "Progressing"
hs.message = "Job is running"
return hs
"""

_RAYJOB_HEALTH = _KUEUE_MANAGED + """\
local hs = {}
local status = obj.status or {}
local deployment = status.jobDeploymentStatus or ""
if deployment == "Failed" or deployment == "ValidationFailed" or status.jobStatus == "FAILED" then
  hs.status = "Degraded"
  hs.message = "RayJob " .. deployment .. ": " .. (status.message or status.reason or "")
  return hs
end
if deployment == "Complete" then
  hs.status = "Healthy"
  hs.message = "RayJob complete: " .. (status.jobStatus or "")
  return hs
end
local held = held_status(obj, obj.spec ~= nil and obj.spec.suspend == true, "RayJob")
if held ~= nil then return held end
if queued(obj) then
  hs.status = "Healthy"
  hs.message = "Admitted by Kueue: " .. (deployment ~= "" and deployment or "starting")
  return hs
end
hs.status = "Progressing"
hs.message = "RayJob " .. (deployment ~= "" and deployment or "starting")
return hs
"""

_RAYCLUSTER_HEALTH = _KUEUE_MANAGED + """\
local hs = {}
local status = obj.status or {}
if status.conditions ~= nil then
  for _, c in ipairs(status.conditions) do
    if c.type == "RayClusterReplicaFailure" and c.status == "True" then
      hs.status = "Degraded"
      hs.message = (c.reason or "ReplicaFailure") .. ": " .. (c.message or "")
      return hs
    end
  end
end
if status.state == "failed" then
  hs.status = "Degraded"
  hs.message = status.reason or "RayCluster failed"
  return hs
end
local held = held_status(obj, obj.spec ~= nil and obj.spec.suspend == true, "RayCluster")
if held ~= nil then return held end
if status.state == "ready" then
  hs.status = "Healthy"
  hs.message = "RayCluster ready: " .. tostring(status.readyWorkerReplicas or 0) .. " ready worker(s)"
  return hs
end
hs.status = "Progressing"
hs.message = "RayCluster starting"
return hs
"""


def health_lua(kind: str) -> str:
    """The Lua health script for one kind (ClusterQueue, LocalQueue, Job, RayJob or RayCluster)."""
    if kind in QUEUE_KINDS:
        return _QUEUE_HEALTH.replace("KIND", kind)
    return {"Job": _JOB_HEALTH, "RayJob": _RAYJOB_HEALTH, "RayCluster": _RAYCLUSTER_HEALTH}[kind]


def health_checks() -> dict[str, str]:
    """`<group>/<kind>` -> Lua health script."""
    out = {f"{KUEUE_GROUP}/{kind}": health_lua(kind) for kind in QUEUE_KINDS}
    out.update({f"{WORKLOAD_KINDS[k]}/{k}": health_lua(k) for k in ("Job", "RayJob", "RayCluster")})
    return out


def resource_customizations() -> dict[str, Any]:
    """The `argocd-cm` fragment: a merge patch carrying only the `data` keys
    `resource.customizations.health.<group>_<kind>` (Argo CD's per-key form). Merge it with
    `kubectl -n argocd patch configmap argocd-cm --type merge --patch-file ...`, as a kustomize patch of your
    Argo CD install, or copy the keys into the Helm chart's `configs.cm`. It names the ConfigMap so tools read
    it as a Kubernetes object, and has no namespace: it is never applied on its own."""
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "argocd-cm"},
            "data": {f"resource.customizations.health.{key.replace('/', '_')}": lua
                     for key, lua in sorted(health_checks().items())}}


def ignore_differences(manifests: Iterable[Mapping[str, Any]],
                       kueue_version: tuple[int, int, int] = (0, 19, 0)) -> list[dict[str, Any]]:
    """One entry per workload that Kueue writes into, naming exactly those fields. jq path expressions, not
    `managedFieldsManagers: [kueue]`: Kueue's merge patch into an atomic list (a RayCluster's
    `workerGroupSpecs`, a pod's `tolerations`, its atomic `nodeSelector`) makes Kueue own the whole list, which
    would hide a Git change of a worker's image or memory."""
    objs = list(manifests)
    platform = Platform.of(objs, kueue_version)
    out = []
    for obj in objs:
        meta = obj.get("metadata") or {}
        if "name" not in meta:
            continue  # generateName: created with kubectl create, not part of the Application
        fields = owned_fields(obj, platform)
        if not fields:
            continue
        paths = list(dict.fromkeys(jq_path(f) for f in fields))
        out.append({"group": WORKLOAD_KINDS[str(obj["kind"])], "kind": obj["kind"], "name": meta["name"],
                    "namespace": meta.get("namespace", "default"), "jqPathExpressions": paths})
    return out
