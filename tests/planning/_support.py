"""Scenarios for the planning tests: one GPU ClusterQueue, a team namespace, and stochastic load."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

JOB = {"apiVersion": "batch/v1", "kind": "Job",
       "metadata": {"name": "train", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
       "spec": {"parallelism": 1, "template": {"spec": {"containers": [
           {"name": "c", "image": "x", "resources": {"requests": {"nvidia.com/gpu": 1}}}]}}}}


def scenario(gpus: int = 4, workloads: list[dict[str, Any]] | None = None,
             expectations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "manifests": [
            {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor", "metadata": {"name": "gpu"}},
            {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue", "metadata": {"name": "cq"},
             "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [
                 {"name": "gpu", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": gpus}]}]}]}},
            {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
             "metadata": {"name": "lq", "namespace": "team-a"}, "spec": {"clusterQueue": "cq"}},
        ],
        "workloads": workloads if workloads is not None else [
            {"arrivals": {"poisson": "6/h"}, "for": "8h", "runFor": {"median": "20m", "p95": "1h"},
             "manifest": copy.deepcopy(JOB)}],
    }
    if expectations:
        spec["expectations"] = expectations
    return {"apiVersion": "kueueplan.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "planning"}, "spec": spec}


def write(folder: Path, data: dict[str, Any], name: str = "scenario.yaml") -> Path:
    (folder / ".git").mkdir(exist_ok=True)  # a repository root: files must stay inside it
    path = folder / name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path
