"""Kueue's own Configuration for an environment: the `kueue-manager-config` ConfigMap and the Helm values.

Kueue reads one file, `controller_manager_config.yaml`, from the ConfigMap `kueue-manager-config` in
`kueue-system` (config/components/manager/kustomization.yaml: configMapGenerator `manager-config` with the
`kueue-` name prefix and the `kueue-system` namespace of config/default). The file replaces the shipped one as a
whole, and what it leaves out gets Kueue's *defaulting* (apis/config/<version>/defaults.go), not the shipped
file's values: a file with only `waitForPodsReady` would turn every integration but `batch/job` off. So the
rendered file is the release's shipped file with the environment's `configuration` merged over it (a JSON merge
patch: mappings merge, lists and scalars replace, null removes), which is also what `simulate` assumes when a
field is omitted (docs/scenario-format.md, second edition).

The Helm chart takes the same text as `managerConfig.controllerManagerConfigYaml` (charts/kueue/values.yaml).
"""

from __future__ import annotations

import copy
from typing import Any

import yaml

from kueueplan.compile.context import MANAGED_BY, SYNC_WAVE, EnvContext
from kueueplan.kube.configschema import DURATION_PATHS, V1BETA1, V1BETA2, too_new_fields, unknown_fields
from kueueplan.kube.configuration import CONFIGMAP_KEY, CONFIGMAP_NAME, DEFAULT_NAMESPACE, shipped_manager_config

Manifest = dict[str, Any]
# The labels Kueue's kustomize build gives the ConfigMap (config/default/kustomization.yaml `labels`).
KUEUE_LABELS = {"app.kubernetes.io/name": "kueue", "control-plane": "controller-manager"}


def _concurrency(workload: int, queues: int, cohort: bool) -> dict[str, int]:
    out = {"Job.batch": 5, "Pod": 5, "Workload.kueue.x-k8s.io": workload, "LocalQueue.kueue.x-k8s.io": queues}
    if cohort:
        out["Cohort.kueue.x-k8s.io"] = 1
    return {**out, "ClusterQueue.kueue.x-k8s.io": queues, "ResourceFlavor.kueue.x-k8s.io": 1}


# The rest of each release's shipped config/components/manager/controller_manager_config.yaml (read at the newest
# patch tag of each minor): fields that change nothing about admission but that the rendered file must keep, as
# it replaces the shipped one. (first minor it applies from, metrics port, groupKindConcurrency, client QPS/burst)
_MANAGER_PARTS: tuple[tuple[tuple[int, int], str, dict[str, int], tuple[int, int]], ...] = (
    ((0, 0), ":8080", _concurrency(5, 1, cohort=False), (50, 100)),
    ((0, 9), ":8080", _concurrency(5, 1, cohort=True), (50, 100)),
    ((0, 11), ":8443", _concurrency(5, 1, cohort=True), (50, 100)),
    ((0, 19), ":8443", _concurrency(10, 5, cohort=True), (300, 500)),
)


def shipped_file(version: tuple[int, int, int]) -> dict[str, Any]:
    """The release's shipped controller_manager_config.yaml (its uncommented fields), in the file's key order."""
    release = version[:2]
    _, metrics, concurrency, (qps, burst) = [p for p in _MANAGER_PARTS if p[0] <= release][-1]
    admission = shipped_manager_config(release)  # apiVersion and integrations.frameworks
    return {
        "apiVersion": admission["apiVersion"], "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"}, "metrics": {"bindAddress": metrics},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "controller": {"groupKindConcurrency": dict(concurrency)},
        "clientConnection": {"qps": qps, "burst": burst},
        "integrations": copy.deepcopy(admission["integrations"]),
    }


def declared(ctx: EnvContext) -> dict[str, Any] | None:
    """The environment's `configuration` exactly as written (already checked by the spec model), or None."""
    if ctx.env.model.spec.configuration is None:
        return None
    raw = ctx.env.doc.data.get("spec", {}).get("configuration")
    return copy.deepcopy(raw) if isinstance(raw, dict) else {}


def check_declared(ctx: EnvContext, own: dict[str, Any], base: dict[str, Any]) -> str:
    """What would stop the release's manager from decoding the file (strict decoding, pkg/config/config.go):
    an API version it does not serve, another kind, an unknown field. Returns the file's apiVersion."""
    api_version = own.get("apiVersion") or base["apiVersion"]
    if api_version == V1BETA2 and base["apiVersion"] == V1BETA1:
        major, minor, _ = ctx.kueue_version
        raise ctx.env.error(f"Kueue v{major}.{minor} reads only {V1BETA1} Configurations ({V1BETA2} arrived in "
                            "v0.15)", ("configuration", "apiVersion"), f"write apiVersion: {V1BETA1}")
    for path, name in unknown_fields(own, api_version):
        raise ctx.env.error(f"Kueue's {api_version.rsplit('/', 1)[-1]} Configuration has no field {name!r}: the "
                            "manager would refuse to start (strict decoding)", ("configuration",) + path,
                            "check the spelling against Kueue's Configuration reference")
    for path in DURATION_PATHS:
        value = _dig(own, path)
        if value is not None and not isinstance(value, str):
            raise ctx.env.error(f"{'.'.join(path)}: Kueue reads a duration only as text ({value!r} would stop the "
                                "manager)", ("configuration",) + path, f'write e.g. "{value}s" or 10m')
    major, minor, _ = ctx.kueue_version
    for path, name, (_, since) in too_new_fields(own, (major, minor)):
        raise ctx.env.error(f"Kueue v{major}.{minor}'s Configuration has no field {name!r} (it arrived in "
                            f"v0.{since}): the manager would refuse to start", ("configuration",) + path,
                            f"remove it, or set kueueVersion to v0.{since} or later")
    return str(api_version)


def _dig(data: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def effective_file(ctx: EnvContext) -> dict[str, Any] | None:
    """The whole `controller_manager_config.yaml` the environment's Kueue should read, or None if the environment
    declares no configuration (kueueplan then leaves Kueue's install alone)."""
    own = declared(ctx)
    if own is None:
        return None
    base = shipped_file(ctx.kueue_version)
    api_version = check_declared(ctx, own, base)
    merged = merge_patch(base, own)
    merged["apiVersion"] = api_version
    merged["kind"] = "Configuration"
    return {"apiVersion": merged.pop("apiVersion"), "kind": merged.pop("kind"), **merged}


def merge_patch(base: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch; keys keep the base's order, new keys follow in the patch's order."""
    if not isinstance(patch, dict) or not isinstance(base, dict):
        return copy.deepcopy(patch)
    out = dict(base)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(base.get(key), value)
    return out


def config_text(config: dict[str, Any]) -> str:
    """The file's text: block style, keys in the file's order (deterministic for the same spec)."""
    return yaml.safe_dump(config, sort_keys=False, default_flow_style=False, allow_unicode=True, width=1 << 16)


def manager_config_map(ctx: EnvContext) -> list[Manifest]:
    config = effective_file(ctx)
    if config is None:
        return []
    labels = dict(sorted({**MANAGED_BY, **KUEUE_LABELS}.items()))
    namespace = str(config.get("namespace") or DEFAULT_NAMESPACE)  # the Configuration names Kueue's namespace
    return [{
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": CONFIGMAP_NAME, "namespace": namespace, "labels": labels,
                     "annotations": {SYNC_WAVE: "0"}},
        "data": {CONFIGMAP_KEY: config_text(config)},
    }]


def helm_values(ctx: EnvContext) -> dict[str, Any] | None:
    """Values for Kueue's Helm chart carrying the same file (the chart adds internalCertManagement if unset)."""
    config = effective_file(ctx)
    if config is None:
        return None
    return {"managerConfig": {"controllerManagerConfigYaml": config_text(config)}}
