"""An Argo CD Application or a Flux Kustomization that syncs one rendered environment, and the annotations
kueueplan's own objects carry for them. docs/workflow.md ("What Argo CD / Flux will do with this PR") explains each
choice with the Argo CD / Flux behaviour behind it.

Argo CD (argo-cd 3.x):
- `ServerSideApply=true` + the `ServerSideDiff=true` compare option: the diff is the API server's dry-run of the
  apply, so CRD defaults (KubeRay's `numOfHosts`, `priority` in `workerGroupSpecs`) and fields other managers
  own (Kueue's `suspend`) are not drift;
- `ApplyOutOfSyncOnly=true`: a sync re-applies only what changed, never an admitted job it has no change for;
- per-object `ignoreDifferences` (compile/argocd.py), and no `RespectIgnoreDifferences`: that option copies the
  live value of an ignored path into the applied object, and for a path inside a list (a worker group) it copies
  the whole live list, dropping Git's change;
- `syncPolicy.retry` (with `refresh`, so a fix pushed meanwhile is what the retry applies).
Flux (kustomize-controller >= 1.9): `spec.ignore` JSON pointers for the same fields, `healthChecks` +
`healthCheckExprs` on the queues instead of `wait: true` (which waits on every job Kueue holds), and
`kustomize.toolkit.fluxcd.io/force: enabled` on LocalQueues only (`flux_force`).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from kueueplan.compile.argocd import KUEUE_GROUP, ignore_differences
from kueueplan.compile.context import MANAGED_BY, EnvContext
from kueueplan.compile.owned import WORKLOAD_KINDS, Platform, json_pointer, owned_fields
from kueueplan.spec.models import Flux

ARGO_SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
ARGO_COMPARE_OPTIONS = "argocd.argoproj.io/compare-options"
FLUX_PRUNE = "kustomize.toolkit.fluxcd.io/prune"
FLUX_FORCE = "kustomize.toolkit.fluxcd.io/force"
# Deleting a Namespace deletes every job in it, including those created with `kubectl create`: both tools
# must ask first (Argo CD: prune and app deletion wait for a manual confirmation; Flux: never prunes it).
NAMESPACE_ANNOTATIONS = {ARGO_SYNC_OPTIONS: "Prune=confirm,Delete=confirm", FLUX_PRUNE: "disabled"}
RETRY = {"limit": 5, "backoff": {"duration": "30s", "factor": 2, "maxDuration": "5m"}, "refresh": True}


def protect_namespace(manifest: dict[str, Any]) -> dict[str, Any]:
    """A Namespace with the annotations that keep Argo CD and Flux from deleting it without a human."""
    if manifest.get("kind") != "Namespace":
        return manifest
    meta = manifest.setdefault("metadata", {})
    annotations = dict(meta.get("annotations") or {})
    for key, value in NAMESPACE_ANNOTATIONS.items():
        annotations.setdefault(key, value)
    meta["annotations"] = dict(sorted(annotations.items()))
    return manifest


# Flux deletes and recreates an object carrying this annotation only when the server-side apply dry-run fails
# as immutable (fluxcd/pkg ssa/manager_apply.go `shouldForceApply`; kustomize-controller sets the ForceSelector
# for every object, internal/controller/kustomization_controller.go), so a standing annotation acts exactly
# where an immutable field changes. Only LocalQueue: its `spec.clusterQueue` is immutable (Kueue's CRD,
# `self == oldSelf`), it has no finalizer, holds no work (workloads point to it by name; Kueue re-queues the
# pending ones when it is created again, pkg/cache/queue/manager.go `addLocalQueueLocked`) and admitted ones
# keep their ClusterQueue's admission. Never on ClusterQueue, ResourceFlavor, AdmissionCheck or Topology
# (Kueue's `kueue.x-k8s.io/resource-in-use` finalizer keeps them Terminating while used: Flux would wait for a
# deletion that never completes) nor on workloads (a recreate kills running work): KP702 gates those.
FLUX_FORCE_KINDS = ("LocalQueue",)


def flux_force(manifest: dict[str, Any]) -> dict[str, Any]:
    """An object Flux may recreate when an immutable field changes (idempotent; other kinds unchanged)."""
    if manifest.get("kind") not in FLUX_FORCE_KINDS:
        return manifest
    meta = manifest.setdefault("metadata", {})
    meta["annotations"] = dict(sorted({**(meta.get("annotations") or {}), FLUX_FORCE: "enabled"}.items()))
    return manifest


def destination(ctx: EnvContext) -> dict[str, str]:
    cfg = ctx.env.model.spec.argocd
    assert cfg is not None
    if cfg.name:
        return {"name": cfg.name}
    return {"server": cfg.server or "https://kubernetes.default.svc"}


def argocd_application(ctx: EnvContext, default_path: str, requested: bool = False,
                       manifests: Iterable[Mapping[str, Any]] = ()) -> dict[str, Any] | None:
    """The Application when the environment configures `argocd`. `requested` (build --argocd) without an
    `argocd:` block is an error: Argo CD needs the repository URL, and a placeholder would sync nothing."""
    cfg = ctx.env.model.spec.argocd
    if cfg is None and requested:
        raise ctx.env.error(f"build --argocd: environment {ctx.name!r} has no argocd.repoURL", ("argocd",),
                            "add `argocd: {repoURL: <the Git URL Argo CD pulls from>, name: <cluster>}` to the "
                            "Environment's spec")
    if cfg is None:
        return None
    path = cfg.path or default_path
    spec: dict[str, Any] = {"project": cfg.project}
    if cfg.sourceHydrator:
        # Argo CD's Source Hydrator renders the dry source (kueueplan's kustomization) and commits the plain
        # manifests to a branch per environment; Argo CD syncs that branch, so what is applied is reviewable.
        spec["sourceHydrator"] = {
            "drySource": {"repoURL": cfg.repoURL, "targetRevision": cfg.targetRevision, "path": path},
            "syncSource": {"targetBranch": cfg.hydratedBranch or f"environments/{ctx.name}", "path": ctx.name},
        }
    else:
        spec["source"] = {"repoURL": cfg.repoURL, "targetRevision": cfg.targetRevision, "path": path}
    spec["destination"] = destination(ctx)
    spec["syncPolicy"] = {"automated": {"prune": True, "selfHeal": True},
                          "syncOptions": ["ServerSideApply=true", "ApplyOutOfSyncOnly=true"],
                          "retry": RETRY}
    ignores = ignore_differences(manifests, ctx.kueue_version)
    if ignores:
        spec["ignoreDifferences"] = ignores
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": f"kueueplan-{ctx.name}", "namespace": cfg.namespace, "labels": dict(MANAGED_BY),
                     "annotations": {ARGO_COMPARE_OPTIONS: "ServerSideDiff=true"}},
        "spec": spec,
    }


# --------------------------------------------------------------------------- Flux

_STOPPED = "(has(spec.stopPolicy) && spec.stopPolicy != 'None')"
_ACTIVE = "(has(status.conditions) && status.conditions.exists(c, c.type == 'Active' && c.status == 'True'))"
_INACTIVE = ("(has(status.conditions) && status.conditions.exists(c, c.type == 'Active' && c.status == 'False'"
             " && c.reason != 'Stopped'))")
_DELETING = "has(metadata.deletionTimestamp)"


def queue_health_exprs(api_version: str) -> list[dict[str, str]]:
    """kustomize-controller `healthCheckExprs` for ClusterQueue and LocalQueue, mutually exclusive so the order
    Flux evaluates them in does not matter: stopped or Active=True is Current; Active=False for any other reason
    (FlavorNotFound, a missing or inactive check, ...) is Failed; terminating is InProgress (and so is no
    condition yet: none of the three holds)."""
    return [{"apiVersion": api_version, "kind": kind,
             "inProgress": _DELETING,
             "current": f"!{_DELETING} && ({_STOPPED} || {_ACTIVE})",
             "failed": f"!{_DELETING} && !{_STOPPED} && {_INACTIVE}"}
            for kind in ("ClusterQueue", "LocalQueue")]


def flux_ignore(manifests: Iterable[Mapping[str, Any]],
                kueue_version: tuple[int, int, int] = (0, 19, 0)) -> list[dict[str, Any]]:
    """`spec.ignore` rules (kustomize-controller 1.9 drift ignore: RFC 6901 pointers, per target object)."""
    objs = list(manifests)
    platform = Platform.of(objs, kueue_version)
    out = []
    for obj in objs:
        meta = obj.get("metadata") or {}
        fields = owned_fields(obj, platform) if "name" in meta else []
        if fields:
            target = {"group": WORKLOAD_KINDS[str(obj["kind"])], "kind": str(obj["kind"]), "name": meta["name"],
                      "namespace": meta.get("namespace", "default")}
            if not target["group"]:
                del target["group"]
            out.append({"paths": list(dict.fromkeys(json_pointer(f) for f in fields)), "target": target})
    return out


def flux_kustomization(ctx: EnvContext, default_path: str, requested: bool = False,
                       manifests: Iterable[Mapping[str, Any]] = ()) -> dict[str, Any] | None:
    """The Kustomization when the environment configures `flux` (or `requested`: then with defaults)."""
    cfg = ctx.env.model.spec.flux
    if cfg is None and requested:
        cfg = Flux(sourceRef={"kind": "GitRepository", "name": "flux-system"})
    if cfg is None:
        return None
    objs = list(manifests)
    interval = cfg.interval if isinstance(cfg.interval, str) else f"{int(cfg.interval)}s"
    spec: dict[str, Any] = {
        "interval": interval,
        "retryInterval": "2m",
        "timeout": "5m",
        "path": "./" + (cfg.path or default_path).lstrip("./"),
        "prune": True,
        "sourceRef": dict(cfg.sourceRef),
    }
    queues = [{"apiVersion": str(m["apiVersion"]), "kind": str(m["kind"]), "name": str(m["metadata"]["name"]),
               **({"namespace": str(m["metadata"]["namespace"])} if m["metadata"].get("namespace") else {})}
              for m in objs if m.get("kind") in ("ClusterQueue", "LocalQueue")]
    if queues:
        spec["healthChecks"] = queues
        spec["healthCheckExprs"] = queue_health_exprs(f"{KUEUE_GROUP}/{ctx.api}")
    ignores = flux_ignore(objs, ctx.kueue_version)
    if ignores:
        spec["ignore"] = ignores
    return {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": f"kueueplan-{ctx.name}", "namespace": cfg.namespace, "labels": dict(MANAGED_BY)},
        "spec": spec,
    }
