"""Helpers for the compile tests: upstream CRD schemas as JSON Schema, semantic comparison with upstream YAML."""

from __future__ import annotations

import copy
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import jsonschema
import yaml

from kueueplan.kube.quantity import parse_quantity

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.name for p in (REPO / "examples").iterdir() if (p / "environments").is_dir())
WORKLOAD_KINDS = {"RayJob", "RayCluster", "Job", "Pod"}
CRD_FILES = {
    ("kueue.x-k8s.io", "ResourceFlavor"): "kueue/crds/kueue.x-k8s.io_resourceflavors.yaml",
    ("kueue.x-k8s.io", "ClusterQueue"): "kueue/crds/kueue.x-k8s.io_clusterqueues.yaml",
    ("kueue.x-k8s.io", "LocalQueue"): "kueue/crds/kueue.x-k8s.io_localqueues.yaml",
    ("kueue.x-k8s.io", "Cohort"): "kueue/crds/kueue.x-k8s.io_cohorts.yaml",
    ("kueue.x-k8s.io", "WorkloadPriorityClass"): "kueue/crds/kueue.x-k8s.io_workloadpriorityclasses.yaml",
    ("kueue.x-k8s.io", "AdmissionCheck"): "kueue/crds/kueue.x-k8s.io_admissionchecks.yaml",
    ("kueue.x-k8s.io", "ProvisioningRequestConfig"): "kueue/crds/kueue.x-k8s.io_provisioningrequestconfigs.yaml",
    ("kueue.x-k8s.io", "Topology"): "kueue/crds/kueue.x-k8s.io_topologies.yaml",
    ("kueue.x-k8s.io", "MultiKueueCluster"): "kueue/crds/kueue.x-k8s.io_multikueueclusters.yaml",
    ("kueue.x-k8s.io", "MultiKueueConfig"): "kueue/crds/kueue.x-k8s.io_multikueueconfigs.yaml",
    ("ray.io", "RayJob"): "kuberay/crds/ray.io_rayjobs.yaml",
    ("ray.io", "RayCluster"): "kuberay/crds/ray.io_rayclusters.yaml",
}

try:
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]


def load_yaml_docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.load_all(path.read_text(encoding="utf-8"), Loader=_Loader) if d]


def gen_objects(folder: Path) -> list[dict[str, Any]]:
    """Every object of a rendered environment folder (kustomization resources and *.create.yaml files)."""
    out = []
    for path in sorted(folder.glob("*.yaml")):
        if path.name == "kustomization.yaml" or path.name.startswith(("argocd-", "flux-")):
            continue
        out += load_yaml_docs(path)
    return out


def _strict(schema: Any) -> Any:
    """Structural schema -> JSON Schema that also rejects unknown fields (kubectl's strict field validation)."""
    if isinstance(schema, list):
        return [_strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _strict(v) for k, v in schema.items()}
    if isinstance(out.get("pattern"), str) and "(?i)" in out["pattern"][1:]:
        out["pattern"] = "(?i)" + out["pattern"].replace("(?i)", "")  # Go allows inline flags mid-pattern
    if ("properties" in out and "additionalProperties" not in out
            and not out.get("x-kubernetes-preserve-unknown-fields")):
        out["additionalProperties"] = False
    return out


@lru_cache(maxsize=None)
def crd_validator(shared: str, group: str, kind: str, version: str) -> jsonschema.Draft7Validator:
    crd = load_yaml_docs(Path(shared) / "upstream" / CRD_FILES[(group, kind)])[0]
    for ver in crd["spec"]["versions"]:
        if ver["name"] == version:
            schema = copy.deepcopy(ver["schema"]["openAPIV3Schema"])
            schema["properties"]["metadata"] = {"type": "object"}
            return jsonschema.Draft7Validator(_strict(schema))
    raise AssertionError(f"{kind} CRD has no version {version}")


def crd_errors(shared: Path, obj: dict[str, Any]) -> list[str]:
    group, _, version = obj["apiVersion"].rpartition("/")
    validator = crd_validator(str(shared), group, obj["kind"], version)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(obj)]


# --------------------------------------------------------------------------- semantic comparison

_QUANTITY_KEYS = {"nominalQuota", "borrowingLimit", "lendingLimit", "weight"}
NAMESPACED = {"LocalQueue", "RayJob", "RayCluster", "Job", "Pod"}


def normalize(value: Any, key: str | None = None, in_resources: bool = False) -> Any:
    """Quantities become exact numbers (2 == "2" == "2000m"); everything else compares as written."""
    if isinstance(value, dict):
        return {k: normalize(v, k, key in ("requests", "limits")) for k, v in value.items()}
    if isinstance(value, list):
        return [normalize(v, key) for v in value]
    if (key in _QUANTITY_KEYS or in_resources) and isinstance(value, (int, float, str)):
        return parse_quantity(value)
    return value


def identity(obj: dict[str, Any]) -> tuple[str, str, str, str]:
    meta = obj.get("metadata") or {}
    name = meta.get("name") or meta.get("generateName")
    namespace = meta.get("namespace", "default") if obj["kind"] in NAMESPACED else ""
    return obj["kind"], obj["apiVersion"], namespace, name


def semantic_diff(upstream: dict[str, Any], generated: dict[str, Any]) -> list[str]:
    """Differences that matter: all fields but metadata must be equal; upstream labels/annotations must be kept."""
    problems = []
    for key in sorted(set(upstream) | set(generated)):
        if key == "metadata":
            continue
        if normalize(upstream.get(key), key) != normalize(generated.get(key), key):
            problems.append(f"{key}: upstream {upstream.get(key)!r} != generated {generated.get(key)!r}")
    for part in ("labels", "annotations"):
        want = (upstream.get("metadata") or {}).get(part) or {}
        have = (generated.get("metadata") or {}).get(part) or {}
        for k, v in want.items():
            if have.get(k) != v:
                problems.append(f"metadata.{part}[{k}]: upstream {v!r} != generated {have.get(k)!r}")
    return problems


def match_upstream(upstream: Iterable[dict[str, Any]], generated: list[dict[str, Any]],
                   allow_extra: bool = False) -> list[str]:
    """Each upstream object must have a generated twin; generated Kueue objects must all come from upstream."""
    by_id = {identity(o): o for o in generated}
    problems = []
    seen = set()
    for obj in upstream:
        key = identity(obj)
        twin = by_id.get(key)
        if twin is None:
            problems.append(f"missing {key}")
            continue
        seen.add(key)
        problems += [f"{key}: {p}" for p in semantic_diff(obj, twin)]
    for key in by_id:
        if key not in seen and not allow_extra and key[0] not in WORKLOAD_KINDS | {"Namespace"}:
            problems.append(f"extra {key} (not in the tutorial)")
    return problems


def quantities_canonical(obj: Any, found: list[str], path: str = "") -> list[str]:
    """Every quota and request/limit quantity, as written in the manifest."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in _QUANTITY_KEYS or (path.endswith(("requests", "limits")) and not isinstance(v, dict)):
                found.append(v)
            else:
                quantities_canonical(v, found, f"{path}.{k}")
    elif isinstance(obj, list):
        for item in obj:
            quantities_canonical(item, found, path)
    return found


def fraction(value: Any) -> Fraction:
    return parse_quantity(value)


def write_big_spec(folder: Path, teams: int) -> Path:
    """A platform of `teams` teams (two namespaces, a LocalQueue and a RayJob each) in 20 cohorts, two envs."""
    folder.mkdir(parents=True, exist_ok=True)
    head = "apiVersion: kueueplan.io/v1alpha1\n"
    (folder / "base.yaml").write_text(
        head + "kind: ResourceFlavor\nmetadata: {name: cpu}\n---\n" + head + "kind: ResourceFlavor\n"
        "metadata: {name: gpu}\n---\n" + head + "kind: Priority\nmetadata: {name: prod}\nspec: {value: 1000}\n")
    docs = []
    for i in range(teams):
        docs.append(head + f"""kind: Team
metadata: {{name: team-{i:04d}}}
spec:
  namespaces: [team-{i:04d}, team-{i:04d}-ci]
  cohort: org-{i % 20}
  quotas:
  - flavor: gpu
    resources: {{cpu: 48, memory: 384Gi, nvidia.com/gpu: 8}}
  - flavor: cpu
    resources:
      cpu: {{nominalQuota: 8, borrowingLimit: 8, lendingLimit: 4}}
      memory: 32Gi
      nvidia.com/gpu: 0
  localQueues: [main]
---
""" + head + f"""kind: Workload
metadata: {{name: train-{i:04d}}}
spec:
  team: team-{i:04d}
  kind: RayJob
  priority: prod
  image: rayproject/ray:2.46.0
  entrypoint: python train.py
  head: {{resources: {{requests: {{cpu: 2, memory: 8Gi}}}}}}
  workers:
  - {{groupName: w, replicas: 2, resources: {{requests: {{cpu: 4, memory: 16Gi, nvidia.com/gpu: 1}}}}}}
""")
    (folder / "teams.yaml").write_text("---\n".join(docs))
    for env in ("dev", "prod"):
        (folder / f"env-{env}.yaml").write_text(head + f"kind: Environment\nmetadata: {{name: {env}}}\n")
    return folder
