"""The ignore rules against Kueue-admitted copies of every generated workload kind.

For each kind (Job, Pod, RayJob, RayCluster) and each flavor its ClusterQueue can assign, a copy is admitted the
way Kueue v0.19 does it (pkg/podset/podset.go `Merge`: the podset label, the `kueue.x-k8s.io/workload`
annotation, the flavor's nodeLabels into nodeSelector, its tolerations appended without duplicates;
`spec.suspend` flipped; a Pod's gate lifted) and then compared with
Git's object in both tools' semantics:

- Argo CD with `ServerSideDiff=true`: the predicted live object is the API server's dry-run of Git's apply over
  the live one (server-side apply: granular maps merge, atomic lists and maps are replaced, `map` lists merge
  by key); both sides are normalised by `del(<jqPathExpression>)` (util/argo/normalizers/diff_normalizer.go),
  run here by libjq;
- Flux (kustomize-controller 1.9): the same dry-run, with each `spec.ignore` JSON pointer removed from both.

The Kueue-set fields must vanish, while a change made in Git (image, memory) must still show.
"""

from __future__ import annotations

import copy
import functools
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from kueueplan.compile import compile_platform
from kueueplan.compile.argocd import ignore_differences
from kueueplan.compile.gitops import flux_ignore

jq = pytest.importorskip("jq", reason="jq (libjq bindings) is a test dependency")
REPO = Path(__file__).resolve().parents[2]

EXTRA_WORKLOADS = """\
apiVersion: kueueplan.io/v1alpha1
kind: Workload
metadata:
  name: labelled-cluster
spec:
  team: team-b
  kind: RayCluster
  priority: dev-priority
  image: rayproject/ray:2.46.0-py311
  rayVersion: 2.46.0
  head:
    resources:
      requests: {cpu: 1, memory: 4Gi}
      limits: {cpu: 1, memory: 4Gi}
    metadata:
      labels: {app: notebook}
  workers:
  - groupName: cpu
    replicas: 1
    resources:
      requests: {cpu: 2, memory: 8Gi}
      limits: {cpu: 2, memory: 8Gi}
    metadata:
      labels: {app: notebook}
      annotations: {prometheus.io/scrape: "true"}
    pod:
      nodeSelector:
        example.com/zone: zone-b
---
apiVersion: kueueplan.io/v1alpha1
kind: Workload
metadata:
  name: eval-batch
spec:
  team: team-a
  kind: Job
  priority: prod-priority
  parallelism: 2
  completions: 2
  template:
    containerName: eval
    image: ghcr.io/example/eval:1.4
    resources:
      requests: {cpu: 4, memory: 16Gi, nvidia.com/gpu: 1}
      limits: {cpu: 4, memory: 16Gi, nvidia.com/gpu: 1}
    pod:
      tolerations:
      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
      nodeSelector:
        example.com/zone: zone-a
---
apiVersion: kueueplan.io/v1alpha1
kind: Workload
metadata:
  name: debug-shell
spec:
  team: team-a
  kind: Pod
  priority: prod-priority
  template:
    containerName: shell
    image: busybox:1.36
    command: [sleep, infinity]
    resources:
      requests: {cpu: 1, memory: 1Gi}
      limits: {cpu: 1, memory: 1Gi}
"""


# --------------------------------------------------------------------------- server-side apply, as the API server


def _pod_template_schema(raycluster_crd: dict[str, Any]) -> dict[str, Any]:
    spec = raycluster_crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return spec["properties"]["headGroupSpec"]["properties"]["template"]


_OBJECT_META = {"type": "object", "properties": {
    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
    "finalizers": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}}}


@pytest.fixture(scope="module")
def schemas(shared_dir: Path) -> dict[str, dict[str, Any]]:
    """Structural schemas with list and map types: KubeRay's CRDs as they are; batch/v1 Job and core/v1 Pod
    from the same core PodTemplateSpec that KubeRay's CRD embeds (controller-gen copies its markers)."""
    crds = {}
    for kind, name in (("RayCluster", "rayclusters"), ("RayJob", "rayjobs")):
        crd = yaml.load((shared_dir / f"upstream/kuberay/crds/ray.io_{name}.yaml").read_text(), Loader=yaml.CSafeLoader)
        crds[kind] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    template = _pod_template_schema({"spec": {"versions": [{"schema": {"openAPIV3Schema": crds["RayCluster"]}}]}})
    crds["Job"] = {"type": "object", "properties": {"metadata": _OBJECT_META, "spec": {"type": "object", "properties": {
        "suspend": {"type": "boolean"}, "parallelism": {"type": "integer"}, "completions": {"type": "integer"},
        "template": template}}}}
    crds["Pod"] = {"type": "object", "properties": {"metadata": _OBJECT_META, "spec": template["properties"]["spec"]}}
    for kind in ("RayCluster", "RayJob"):
        crds[kind] = {**crds[kind], "properties": {**crds[kind]["properties"], "metadata": _OBJECT_META}}
    return crds


def ssa_merge(live: Any, applied: Any, schema: dict[str, Any] | None) -> Any:
    """Git's object applied over the live one (no field Git applied before is dropped here: Git's object only
    changes values). Maps merge unless atomic; lists are atomic unless `map` (merge by key) or `set`."""
    schema = schema or {}
    if isinstance(applied, dict) and isinstance(live, dict) and schema.get("x-kubernetes-map-type") != "atomic":
        out = copy.deepcopy(live)
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties") if isinstance(schema.get("additionalProperties"), dict) else None
        for key, value in applied.items():
            out[key] = ssa_merge(live.get(key), value, props.get(key, extra))
        return out
    if isinstance(applied, list) and isinstance(live, list):
        kind = schema.get("x-kubernetes-list-type")
        if kind == "map":
            keys = tuple(schema["x-kubernetes-list-map-keys"])
            ident = lambda item: tuple(item.get(k) for k in keys)  # noqa: E731
            by_key = {ident(item): item for item in live}
            merged = [ssa_merge(by_key.get(ident(item)), item, schema.get("items")) for item in applied]
            return merged + [item for item in live if ident(item) not in {ident(i) for i in applied}]
        if kind == "set":
            return list(applied) + [item for item in live if item not in applied]
    return copy.deepcopy(applied)


# --------------------------------------------------------------------------- Kueue's admission, as Kueue does it


def _templates(obj: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(pod set name, template) in Kueue's pod-set order (Job/Pod: main; Ray: head, groups, submitter)."""
    kind, spec = obj["kind"], obj["spec"]
    if kind == "Job":
        return [("main", spec["template"])]
    if kind == "Pod":
        return [("main", obj)]
    cluster = spec if kind == "RayCluster" else spec["rayClusterSpec"]
    out = [("head", cluster["headGroupSpec"]["template"])]
    out += [(g["groupName"], g["template"]) for g in cluster.get("workerGroupSpecs", [])]
    if kind == "RayJob" and spec.get("submissionMode", "K8sJobMode") == "K8sJobMode":
        spec.setdefault("submitterPodTemplate", {"spec": {"restartPolicy": "Never", "containers": [
            {"name": "ray-job-submitter", "image": cluster["headGroupSpec"]["template"]["spec"]["containers"][0]["image"]}]}})
        out.append(("submitter", spec["submitterPodTemplate"]))
    return out


def admit(git: dict[str, Any], flavor: dict[str, Any]) -> dict[str, Any]:
    """What the object looks like once Kueue admitted it on `flavor` (webhook on create, then the start)."""
    live = copy.deepcopy(git)
    live["metadata"]["uid"] = "5f0c9a2e"
    live["metadata"]["resourceVersion"] = "81234"
    if live["kind"] == "Pod":
        live["metadata"].setdefault("labels", {})["kueue.x-k8s.io/managed"] = "true"
        live["metadata"].setdefault("finalizers", []).append("kueue.x-k8s.io/managed")
    else:
        live["spec"]["suspend"] = False
    for name, template in _templates(live):
        meta = template.setdefault("metadata", {})
        meta.setdefault("labels", {})["kueue.x-k8s.io/podset"] = name
        # AssignQueueLabelsForPods is on by default since v0.17.
        meta["labels"]["kueue.x-k8s.io/local-queue-name"] = git["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]
        meta["labels"]["kueue.x-k8s.io/cluster-queue-name"] = "the-cluster-queue"
        # TopologyAwareScheduling is on by default since v0.14: every pod set gets its Workload's name.
        meta.setdefault("annotations", {})["kueue.x-k8s.io/workload"] = f"{git['kind'].lower()}-{git['metadata']['name']}-5f0c9"
        spec = template["spec"]
        for key, value in (flavor.get("nodeLabels") or {}).items():
            spec.setdefault("nodeSelector", {}).setdefault(key, value)
        for toleration in flavor.get("tolerations") or []:
            if toleration not in spec.setdefault("tolerations", []):
                spec["tolerations"].append(copy.deepcopy(toleration))
    return live


# --------------------------------------------------------------------------- the two tools' comparisons


@functools.lru_cache(maxsize=None)
def _jq_delete(expr: str) -> Any:
    return jq.compile(f"del({expr})")  # what Argo CD builds from each jqPathExpression


def argo_normalise(obj: dict[str, Any], entry: dict[str, Any] | None) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    for expr in (entry or {}).get("jqPathExpressions", []):
        out = _jq_delete(expr).input_value(out).first()
    return out


def _remove_pointer(obj: Any, pointer: str) -> None:
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
    for part in parts[:-1]:
        obj = obj[int(part)] if isinstance(obj, list) else obj.get(part) if isinstance(obj, dict) else None
        if obj is None:
            return
    last = parts[-1]
    if isinstance(obj, dict):
        obj.pop(last, None)
    elif isinstance(obj, list) and last.isdigit() and int(last) < len(obj):
        del obj[int(last)]


def flux_normalise(obj: dict[str, Any], rule: dict[str, Any] | None) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    for pointer in sorted((rule or {}).get("paths", []), reverse=True):  # higher list indexes first
        _remove_pointer(out, pointer)
    return out


def _server_fields(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    for key in ("uid", "resourceVersion"):
        out["metadata"].pop(key, None)
    return out


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    spec = tmp_path_factory.mktemp("spec") / "environments"
    shutil.copytree(REPO / "environments", spec)
    (spec / "workloads" / "team-a-batch.yaml").write_text(EXTRA_WORKLOADS, encoding="utf-8")
    return compile_platform(spec, ["prod"])["prod"]


def _cases(manifests: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(workload, flavor) for every applied workload and every flavor its ClusterQueue can assign."""
    flavors = {m["metadata"]["name"]: m["spec"] for m in manifests if m["kind"] == "ResourceFlavor"}
    lqs = {(m["metadata"]["namespace"], m["metadata"]["name"]): m["spec"]["clusterQueue"]
           for m in manifests if m["kind"] == "LocalQueue"}
    cqs = {m["metadata"]["name"]: m["spec"] for m in manifests if m["kind"] == "ClusterQueue"}
    out = []
    for m in manifests:
        if m["kind"] in ("Job", "Pod", "RayJob", "RayCluster") and "name" in m["metadata"]:
            cq = cqs[lqs[(m["metadata"]["namespace"], m["metadata"]["labels"]["kueue.x-k8s.io/queue-name"])]]
            for name in dict.fromkeys(f["name"] for g in cq["resourceGroups"] for f in g["flavors"]):
                out.append((m, flavors[name]))
    return out


_RULES: dict[int, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}


def _entries(manifests: list[dict[str, Any]], obj: dict[str, Any]) -> tuple[dict | None, dict | None]:
    key = (obj["kind"], obj["metadata"]["namespace"], obj["metadata"]["name"])
    if id(manifests) not in _RULES:
        _RULES[id(manifests)] = (ignore_differences(manifests), flux_ignore(manifests))
    argo_rules, flux_rules = _RULES[id(manifests)]
    argo = next((e for e in argo_rules if (e["kind"], e["namespace"], e["name"]) == key), None)
    flux = next((r for r in flux_rules if (r["target"]["kind"], r["target"]["namespace"], r["target"]["name"]) == key),
                None)
    return argo, flux


def _diff(git: dict[str, Any], live: dict[str, Any], schema: dict[str, Any], argo: dict | None,
          flux: dict | None) -> tuple[bool, bool]:
    """(Argo CD shows a diff, Flux detects drift)."""
    predicted = _server_fields(ssa_merge(live, git, schema))
    current = _server_fields(live)
    return (argo_normalise(predicted, argo) != argo_normalise(current, argo),
            flux_normalise(predicted, flux) != flux_normalise(current, flux))


def test_every_kind_and_flavor_is_covered(platform: list[dict[str, Any]]) -> None:
    kinds = {m["kind"] for m, _ in _cases(platform)}
    assert kinds == {"Job", "Pod", "RayJob", "RayCluster"}
    assert len({id(f) for _, f in _cases(platform)}) >= 3


def test_kueue_admission_shows_no_diff_in_argo_cd_or_flux(platform: list[dict[str, Any]],
                                                          schemas: dict[str, dict[str, Any]]) -> None:
    needed = set()
    for git, flavor in _cases(platform):
        live = admit(git, flavor)
        argo, flux = _entries(platform, git)
        where = f"{git['kind']} {git['metadata']['name']} on {flavor.get('nodeLabels')}"
        assert _diff(git, live, schemas[git["kind"]], argo, flux) == (False, False), where
        if _diff(git, live, schemas[git["kind"]], None, None) != (False, False):
            needed.add(git["kind"])
    # Without the rules, Kueue's writes into atomic lists (Ray worker groups, a pod's tolerations) do show:
    assert {"RayJob", "RayCluster"} <= needed


@pytest.mark.parametrize("change", ["image", "memory"])
def test_a_change_made_in_git_still_shows(platform: list[dict[str, Any]], schemas: dict[str, dict[str, Any]],
                                          change: str) -> None:
    for git, flavor in _cases(platform):
        live = admit(git, flavor)
        argo, flux = _entries(platform, git)
        for _, template in _templates(changed := copy.deepcopy(git))[:2]:
            container = template["spec"]["containers"][0]
            if change == "image":
                container["image"] += "-patched"
            else:
                container.setdefault("resources", {}).setdefault("limits", {})["memory"] = "999Gi"
        where = f"{change} of {git['kind']} {git['metadata']['name']}"
        assert _diff(changed, live, schemas[git["kind"]], argo, flux) == (True, True), where


def test_rules_name_only_fields_git_does_not_write(platform: list[dict[str, Any]]) -> None:
    """Removing any ignored path from Git's own object changes nothing: nothing Git owns is ignored. The
    Job's own nodeSelector key and toleration stay visible."""
    by_key = {(m["kind"], m["metadata"].get("namespace"), m["metadata"].get("name")): m for m in platform}
    for rule in flux_ignore(platform):
        t = rule["target"]
        git = by_key[(t["kind"], t["namespace"], t["name"])]
        for pointer in rule["paths"]:
            assert flux_normalise(git, {"paths": [pointer]}) == git, f"{pointer} is Git's in {t['kind']} {t['name']}"
    for entry in ignore_differences(platform):
        git = by_key[(entry["kind"], entry["namespace"], entry["name"])]
        assert argo_normalise(git, entry) == git, entry
    job = next(e for e in ignore_differences(platform) if e["kind"] == "Job")
    assert not any("example.com/zone" in p or p.endswith(".nodeSelector") for p in job["jqPathExpressions"])


def test_rules_follow_the_kueue_release(platform: list[dict[str, Any]]) -> None:
    """The podset label arrived in Kueue v0.9 (pkg/controller/jobframework/reconciler.go), the workload annotation
    with TopologyAwareScheduling on by default in v0.14 and the queue labels with AssignQueueLabelsForPods in
    v0.17 (pkg/features/kube_features.go): not ignored before."""
    rules = {v: {e["name"]: set(e["jqPathExpressions"]) for e in ignore_differences(platform, v)}
             for v in ((0, 8, 0), (0, 13, 0), (0, 19, 2))}
    podset = '.metadata.labels["kueue.x-k8s.io/podset"]'
    workload = '.metadata.annotations["kueue.x-k8s.io/workload"]'
    assert rules[(0, 13, 0)]["debug-shell"] - rules[(0, 8, 0)]["debug-shell"] == {podset}
    queue_labels = {'.metadata.labels["kueue.x-k8s.io/local-queue-name"]',
                    '.metadata.labels["kueue.x-k8s.io/cluster-queue-name"]'}  # AssignQueueLabelsForPods, v0.17
    assert rules[(0, 19, 2)]["debug-shell"] - rules[(0, 13, 0)]["debug-shell"] == {workload} | queue_labels


@pytest.mark.parametrize("junk", [None, 1, "x", [], {}, [1, "a"], {"a": 1}, True])
def test_fields_of_an_unexpected_shape_never_crash_the_rules(platform: list[dict[str, Any]], junk: Any) -> None:
    """Verbatim extras in the spec can put anything anywhere; validate reports it, the rules just skip it."""
    for path in (("spec",), ("spec", "workerGroupSpecs"), ("spec", "headGroupSpec", "template"),
                 ("spec", "headGroupSpec", "template", "metadata"), ("spec", "headGroupSpec", "template", "spec"),
                 ("metadata", "labels")):
        manifests = copy.deepcopy(platform)
        obj = next(m for m in manifests if m["kind"] == "RayCluster")
        node = obj
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = junk
        for rule in ignore_differences(manifests) + flux_ignore(manifests):
            assert rule


def test_rules_follow_the_kueue_configurations_feature_gates(tmp_path: Path) -> None:
    """An Environment whose Kueue Configuration turns AssignQueueLabelsForPods off: Kueue writes no queue labels
    into pod templates, so none are ignored (and with it on, they are)."""
    spec = tmp_path / "environments"
    shutil.copytree(REPO / "environments", spec)
    (spec / "workloads" / "team-a-batch.yaml").write_text(EXTRA_WORKLOADS, encoding="utf-8")
    on = ignore_differences(compile_platform(spec, ["prod"])["prod"])
    env = spec / "env-prod.yaml"
    env.write_text(env.read_text().replace("  configuration:\n", "  configuration:\n    featureGates:\n"
                                           "      AssignQueueLabelsForPods: false\n", 1), encoding="utf-8")
    off = ignore_differences(compile_platform(spec, ["prod"])["prod"])
    label = '.metadata.labels["kueue.x-k8s.io/local-queue-name"]'
    assert label in next(e for e in on if e["name"] == "debug-shell")["jqPathExpressions"]
    assert label not in next(e for e in off if e["name"] == "debug-shell")["jqPathExpressions"]
