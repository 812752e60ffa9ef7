"""Pure compilation: spec (+ environment) -> Kubernetes manifest dicts, in apply order.

Public API:
- `compile_environment(platform, env) -> list[dict]`: every object of one environment, in apply order
  (Kueue's `kueue-manager-config` ConfigMap when the environment declares a configuration, Namespaces, Topologies,
  ResourceFlavors, WorkloadPriorityClasses, MultiKueueClusters, AdmissionChecks, ProvisioningRequestConfigs,
  MultiKueueConfigs, Cohorts, ClusterQueues, LocalQueues, then the workloads). Objects keep spec order (flavor order is Kueue's preference).
- `compile_platform(spec_dir, envs=None) -> dict[env, list[dict]]`.
- `scenario_for(spec_dir, env) -> dict`: a Scenario document (docs/scenario-format.md) for `kueueplan simulate`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kueueplan.compile.configuration import manager_config_map
from kueueplan.compile.context import EnvContext
from kueueplan.compile.gitops import argocd_application, flux_force, flux_kustomization, protect_namespace
from kueueplan.compile.kueue import (
    admission_checks,
    check_priorities,
    cluster_queues,
    cohorts,
    local_queues,
    multikueue_clusters,
    namespaces,
    priority_classes,
    resource_flavors,
    team_plans,
    topologies,
)
from kueueplan.compile.scenario import build_scenario
from kueueplan.compile.workloads import WORKLOAD_KINDS, workload_manifest, workload_plans
from kueueplan.spec.load import Platform, load_spec

Manifest = dict[str, Any]
WORKLOAD_ORDER = list(WORKLOAD_KINDS)

__all__ = ["compile_environment", "compile_platform", "scenario_for", "EnvContext", "argocd_application",
           "flux_kustomization", "environment_names"]


def compile_context(ctx: EnvContext, flux: bool = False) -> list[Manifest]:
    """`flux`: Flux applies it (`build --flux`; an Environment with `flux:` settings always is)."""
    check_priorities(ctx)
    plans = team_plans(ctx)
    manifests: list[Manifest] = []
    manifests += manager_config_map(ctx)
    manifests += [protect_namespace(ns) for ns in namespaces(ctx, plans)]
    manifests += topologies(ctx)
    manifests += resource_flavors(ctx)
    manifests += priority_classes(ctx)
    manifests += multikueue_clusters(ctx)
    manifests += admission_checks(ctx)
    manifests += cohorts(ctx)
    manifests += cluster_queues(ctx, plans)
    queues = local_queues(ctx, plans)
    manifests += [flux_force(q) for q in queues] if flux or ctx.env.model.spec.flux is not None else queues
    workloads = [workload_manifest(plan) for plan in workload_plans(ctx, plans)]
    manifests += sorted(workloads, key=lambda m: WORKLOAD_ORDER.index(m["kind"]))  # stable: spec order per kind
    return manifests


def compile_environment(platform: Platform, env: str) -> list[Manifest]:
    return compile_context(EnvContext.of(platform, env))


def environment_names(platform: Platform, only: list[str] | None = None) -> list[str]:
    names = [e.name for e in platform.environments()]
    if only:
        for name in only:
            platform.environment(name)  # raises with the known names
        names = [n for n in names if n in only]
    return names


def compile_platform(spec_dir: str | Path, envs: list[str] | None = None) -> dict[str, list[Manifest]]:
    platform = load_spec(spec_dir)
    return {name: compile_environment(platform, name) for name in environment_names(platform, envs)}


def scenario_for(spec_dir: str | Path, env: str,
                 origins: list[tuple[str, int | None]] | None = None) -> dict[str, Any]:
    """`origins`, when given, receives the spec file:line of each expectation, for messages."""
    platform = spec_dir if isinstance(spec_dir, Platform) else load_spec(spec_dir)
    ctx = EnvContext.of(platform, env)
    return build_scenario(ctx, compile_context(ctx), origins)
