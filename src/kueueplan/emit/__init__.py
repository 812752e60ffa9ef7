"""Rendering compiled manifests into files: one folder per environment, one file per kind, a kustomization.

Layout of OUT_DIR/<env>/ (only files with objects are written):
  kueue-manager-config.yaml (Kueue's Configuration, when the environment declares one), namespaces.yaml,
  topologies.yaml, resourceflavors.yaml, workloadpriorityclasses.yaml, admissionchecks.yaml,
  provisioningrequestconfigs.yaml, multikueueclusters.yaml, multikueueconfigs.yaml, cohorts.yaml,
  clusterqueues.yaml, localqueues.yaml,
  rayjobs.yaml, rayclusters.yaml, jobs.yaml, pods.yaml, jobsets.yaml, ... (one per kube.podsets.JOB_KINDS)
                           -- listed in kustomization.yaml in this (apply) order
  <kind>s.create.yaml      -- workloads with generateName (for `kubectl create -f`; not in the kustomization)
  argocd-application.yaml / flux-kustomization.yaml / kueue-helm-values.yaml  -- on request; not in the
  kustomization
"""

from __future__ import annotations

from typing import Any, Iterable

from kueueplan.emit.writer import write_tree
from kueueplan.emit.yaml import MARKER, dump, dump_manifests, has_marker
from kueueplan.kube.podsets import JOB_KINDS

__all__ = ["render_environment", "write_tree", "MARKER", "dump_manifests", "has_marker", "FILE_ORDER"]

FILE_ORDER = [
    ("ConfigMap", "kueue-manager-config.yaml"),
    ("Namespace", "namespaces.yaml"),
    ("Topology", "topologies.yaml"),
    ("ResourceFlavor", "resourceflavors.yaml"),
    ("WorkloadPriorityClass", "workloadpriorityclasses.yaml"),
    ("AdmissionCheck", "admissionchecks.yaml"),
    ("ProvisioningRequestConfig", "provisioningrequestconfigs.yaml"),
    ("MultiKueueCluster", "multikueueclusters.yaml"),
    ("MultiKueueConfig", "multikueueconfigs.yaml"),
    ("Cohort", "cohorts.yaml"),
    ("ClusterQueue", "clusterqueues.yaml"),
    ("LocalQueue", "localqueues.yaml"),
    *((kind, f"{kind.lower()}s.yaml") for kind in JOB_KINDS),
]
_FILE_OF = dict(FILE_ORDER)


def render_environment(env: str, manifests: Iterable[dict[str, Any]],
                       extras: dict[str, dict[str, Any]] | None = None) -> dict[str, str]:
    """Relative path -> file text for one environment. `extras`: file name -> one object outside the kustomization."""
    applied: dict[str, list[dict[str, Any]]] = {}
    created: dict[str, list[dict[str, Any]]] = {}
    for obj in manifests:
        kind = obj["kind"]
        if kind not in _FILE_OF:
            raise ValueError(f"no file for kind {kind}")
        target = created if "generateName" in obj["metadata"] else applied
        target.setdefault(kind, []).append(obj)
    files: dict[str, str] = {}
    resources = []
    for kind, file_name in FILE_ORDER:
        if kind in applied:
            files[f"{env}/{file_name}"] = dump_manifests(applied[kind])
            resources.append(file_name)
        if kind in created:
            files[f"{env}/{file_name[:-5]}.create.yaml"] = dump_manifests(created[kind])
    kustomization = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
                     "resources": resources}
    files[f"{env}/kustomization.yaml"] = MARKER + "\n" + dump(kustomization)
    for file_name, obj in sorted((extras or {}).items()):
        files[f"{env}/{file_name}"] = dump_manifests([obj])
    return files
