"""An Argo CD Application or a Flux Kustomization that syncs one rendered environment."""

from __future__ import annotations

from typing import Any

from kueueplan.compile.context import MANAGED_BY, EnvContext
from kueueplan.spec.models import ArgoCD, Flux

PLACEHOLDER_REPO = "https://example.com/CHANGE-ME.git"

# Kueue flips spec.suspend on jobs it manages; without this Argo CD reports them OutOfSync forever.
_IGNORE_SUSPEND = [
    {"group": group, "kind": kind, "jsonPointers": ["/spec/suspend"]}
    for group, kind in (("ray.io", "RayCluster"), ("ray.io", "RayJob"), ("batch", "Job"))
]


def argocd_application(ctx: EnvContext, default_path: str, requested: bool = False) -> dict[str, Any] | None:
    """The Application when the environment configures `argocd` (or `requested`: then with placeholders)."""
    cfg = ctx.env.model.spec.argocd
    if cfg is None and requested:
        cfg = ArgoCD(repoURL=PLACEHOLDER_REPO)
    if cfg is None:
        return None
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": f"kueueplan-{ctx.name}", "namespace": cfg.namespace, "labels": dict(MANAGED_BY)},
        "spec": {
            "project": cfg.project,
            "source": {"repoURL": cfg.repoURL, "targetRevision": cfg.targetRevision, "path": cfg.path or default_path},
            "destination": {"server": cfg.server},
            "syncPolicy": {"automated": {"prune": True, "selfHeal": True},
                           "syncOptions": ["ServerSideApply=true"]},
            "ignoreDifferences": _IGNORE_SUSPEND,
        },
    }


def flux_kustomization(ctx: EnvContext, default_path: str, requested: bool = False) -> dict[str, Any] | None:
    """The Kustomization when the environment configures `flux` (or `requested`: then with defaults)."""
    cfg = ctx.env.model.spec.flux
    if cfg is None and requested:
        cfg = Flux(sourceRef={"kind": "GitRepository", "name": "flux-system"})
    if cfg is None:
        return None
    interval = cfg.interval if isinstance(cfg.interval, str) else f"{int(cfg.interval)}s"
    return {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": f"kueueplan-{ctx.name}", "namespace": cfg.namespace, "labels": dict(MANAGED_BY)},
        "spec": {
            "interval": interval,
            "path": "./" + (cfg.path or default_path).lstrip("./"),
            "prune": True,
            "wait": True,
            "sourceRef": dict(cfg.sourceRef),
        },
    }

