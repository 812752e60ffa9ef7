"""Layer 5: Topology-Aware Scheduling references that Kueue accepts but that never work.

The chain is workload -> LocalQueue -> ClusterQueue -> ResourceFlavor (`topologyName`) -> Topology (`levels`).
A broken link that another rule reports (KP401, KP402, KP405) makes these rules stay silent. TAS is judged for
the object's Kueue release: the TopologyAwareScheduling gate is alpha (off) from v0.9 and beta (on) from v0.14
(pkg/features/kube_features.go), and the Configuration's `featureGates` may override it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kueueplan.kube.configuration import gate_on
from kueueplan.kube.names import qualified_name_errors
from kueueplan.kube.objects import MULTIKUEUE_CONTROLLER
from kueueplan.kube.podsets import queue_name_of
from kueueplan.validate import kueue
from kueueplan.validate.configuration import universe_configuration
from kueueplan.validate.model import Context, Obj
from kueueplan.validate.registry import Hit, rule
from kueueplan.validate.rules.references import WORKLOAD_KINDS, dig, missing_ref

TAS_GATE = "TopologyAwareScheduling"
REQUIRED = "kueue.x-k8s.io/podset-required-topology"
PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
SLICE_REQUIRED = "kueue.x-k8s.io/podset-slice-required-topology"
SLICE_SINCE = (0, 13)  # apis/kueue/v1alpha1/topology_types.go PodSetSliceRequiredTopologyAnnotation
TOPOLOGY_NOT_FOUND_SINCE = (0, 10)  # ClusterQueueActiveReasonTopologyNotFound
MULTIKUEUE_SKIPS_TAS_SINCE = (0, 15)  # isTASViolated: "topology runs on worker clusters"; before, MK + TAS = inactive


def gate_enabled(obj: Obj, ctx: Context, gate: str) -> tuple[bool, tuple[int, int], str]:
    """(is Kueue feature gate `gate` on for `obj`, its release, where that comes from): the Configuration's
    `featureGates`, else the release's default (kube.configuration.GATE_ON_FROM)."""
    effective = universe_configuration(ctx, obj)
    if effective is None:
        return False, (0, 0), ""  # an unreadable Configuration: KP450 says why; judge nothing here
    release, gates = effective.release, effective.config.feature_gates
    on = gate_on(gates, gate, release)
    if gate in gates:
        return on, release, f"featureGates.{gate}={str(gates[gate]).lower()} ({effective.describe()})"
    return on, release, f"Kueue v{release[0]}.{release[1]}'s default"


def tas_enabled(obj: Obj, ctx: Context) -> tuple[bool, tuple[int, int], str]:
    return gate_enabled(obj, ctx, TAS_GATE)


def topology_levels(topology: Obj) -> list[str]:
    return [str(lv["nodeLabel"]) for lv in kueue.as_list(topology.spec.get("levels"))
            if isinstance(lv, dict) and lv.get("nodeLabel")]


def multikueue_checks(cq: Obj, ctx: Context) -> list[str]:
    """Names of the MultiKueue AdmissionChecks a ClusterQueue uses (only those among the inputs)."""
    out = []
    for name, _path in kueue.admission_check_refs(cq):
        ac = ctx.get("AdmissionCheck", name)
        if ac is not None and ac.spec.get("controllerName") == MULTIKUEUE_CONTROLLER:
            out.append(name)
    return out


@rule("KP442", "error", "5 never works", kinds=("ResourceFlavor",))
def flavor_missing_topology(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A ResourceFlavor's `topologyName` names no Topology: every ClusterQueue using the flavor stays inactive.

    Kueue's cache keeps such a ClusterQueue pending with the Active condition reason `TopologyNotFound`
    ("there is no Topology ... for TAS flavor ...", pkg/cache/scheduler/clusterqueue.go `inactiveReason`, from
    v0.10), so it admits nothing, not even workloads that ask for no topology. From Kueue v0.15 a ClusterQueue
    with a MultiKueue AdmissionCheck is exempt (the topology lives on the worker clusters). Only when
    TopologyAwareScheduling is on (the default from Kueue v0.14). Create the Topology or fix the name.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: Topology
    metadata:
      name: default
    spec:
      levels:
      - nodeLabel: cloud.provider.com/topology-block
      - nodeLabel: kubernetes.io/hostname
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata:
      name: tas-flavor
    spec:
      nodeLabels:
        cloud.provider.com/node-group: tas-node-group
      topologyName: gpu-topology
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: Topology
    metadata:
      name: default
    spec:
      levels:
      - nodeLabel: cloud.provider.com/topology-block
      - nodeLabel: kubernetes.io/hostname
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata:
      name: tas-flavor
    spec:
      nodeLabels:
        cloud.provider.com/node-group: tas-node-group
      topologyName: default
    ```
    """
    name = obj.spec.get("topologyName")
    if not obj.is_kueue() or not isinstance(name, str) or not name or ctx.get("Topology", name) is not None:
        return
    enabled, release, _why = tas_enabled(obj, ctx)
    if not enabled or release < TOPOLOGY_NOT_FOUND_SINCE:
        return  # the gate is off: Kueue ignores topologyName
    users = [cq for cq in ctx.kueue("ClusterQueue") if any(f == obj.name for f, _ in kueue.flavor_names(cq))]
    blocked = sorted(cq.name for cq in users
                     if release < MULTIKUEUE_SKIPS_TAS_SINCE or not multikueue_checks(cq, ctx))
    if users and not blocked:
        return  # only MultiKueue manager queues use it: TAS runs on the workers
    what = (f"Topology {name!r} does not exist; ClusterQueue(s) {', '.join(blocked)} using this flavor stay "
            "inactive (reason TopologyNotFound) and admit nothing" if blocked else
            f"Topology {name!r} does not exist; any ClusterQueue using this flavor stays inactive "
            "(reason TopologyNotFound)")
    yield missing_ref(ctx, "Topology", what, ("spec", "topologyName"), obj, None if blocked else "warning")


def requested_levels(obj: Obj, release: tuple[int, int]) -> Iterator[tuple[tuple[Any, ...], str, str]]:
    """(path, annotation or field, node label) of every topology level the object's pod sets request."""
    keys = (REQUIRED, PREFERRED) + ((SLICE_REQUIRED,) if release >= SLICE_SINCE else ())
    if obj.kind == "Workload":
        fields = {"required": REQUIRED, "preferred": PREFERRED, "podSetSliceRequiredTopology": SLICE_REQUIRED}
        for i, ps in enumerate(kueue.as_list(obj.spec.get("podSets"))):
            request = dig(ps, "topologyRequest")
            for key, annotation in fields.items():
                value = dig(request, key)
                if annotation in keys and isinstance(value, str) and value:
                    yield ("spec", "podSets", i, "topologyRequest", key), key, value
        return
    for path, annotations in _pod_template_annotations(obj):
        for key in keys:
            value = annotations.get(key)
            if isinstance(value, str) and value:
                yield path + (key,), key, value


def _pod_template_annotations(obj: Obj) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """(path, annotations) of the object's pod templates: Kueue reads TAS requests from those (a Pod: its own).
    Found once per object (three rules ask)."""
    cached = obj.cache.get("pod-template-annotations")
    if cached is None:
        cached = obj.cache["pod-template-annotations"] = (
            [(("metadata", "annotations"), obj.annotations)] if obj.kind == "Pod"
            else _templates(obj.spec, ("spec",), 0, []))
    return cached


def _templates(node: Any, path: tuple[Any, ...], depth: int, out: list[tuple[tuple[Any, ...], dict[str, Any]]]
               ) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """The pod templates under `node` into `out`, depth first in document order. Appends rather than yields and
    steps only into mappings and lists: it walks every job object's spec (simulate's warn_rejected: thousands)."""
    if depth > 12:  # pod templates sit a few levels deep; a hostile document is not walked further
        return out
    if isinstance(node, dict):
        annotations = dig(node, "metadata", "annotations")
        if isinstance(dig(node, "spec", "containers"), list) and isinstance(annotations, dict):
            out.append((path + ("metadata", "annotations"), annotations))
        for key, value in node.items():
            if key != "metadata" and isinstance(value, (dict, list)):
                _templates(value, path + (key,), depth + 1, out)
    elif isinstance(node, list):
        for i, value in enumerate(node[:1000]):
            if isinstance(value, (dict, list)):
                _templates(value, path + (i,), depth + 1, out)
    return out


def cluster_queue_of(obj: Obj, ctx: Context) -> Obj | None:
    """The ClusterQueue a workload's queue-name leads to, when the inputs hold the whole chain."""
    queue = queue_name_of(obj.data)
    lq = ctx.get("LocalQueue", queue, obj.namespace) if queue else None
    return ctx.get("ClusterQueue", str(lq.spec.get("clusterQueue") or "")) if lq is not None else None


def tas_flavors(cq: Obj, ctx: Context) -> dict[str, str] | None:
    """flavor -> topologyName of a ClusterQueue's TAS flavors; None when one of its flavors is not among the inputs."""
    out = {}
    for name, _path in kueue.flavor_names(cq):
        rf = ctx.get("ResourceFlavor", name)
        if rf is None:
            return None
        topology = rf.spec.get("topologyName")
        if isinstance(topology, str) and topology:
            out[name] = topology
    return out


@rule("KP443", "error", "5 never works", kinds=WORKLOAD_KINDS + ("Workload",))
def topology_level_missing(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A pod template asks for a topology level (node label) that no Topology of its ClusterQueue's flavors has.

    `kueue.x-k8s.io/podset-required-topology`, `podset-preferred-topology` and (from Kueue v0.13)
    `podset-slice-required-topology` name a level of the Topology behind a TAS flavor. Kueue skips every flavor
    whose Topology lacks the level ("Flavor ... does not contain the requested level",
    pkg/scheduler/flavorassigner/tas_flavorassigner.go; `HasLevel` checks preferred levels too), so the
    workload is never admitted. Use one of the Topology's `levels[].nodeLabel`.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: Topology
    metadata:
      name: default
    spec:
      levels:
      - nodeLabel: cloud.provider.com/topology-block
      - nodeLabel: kubernetes.io/hostname
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata:
      name: tas-flavor
    spec:
      nodeLabels:
        cloud.provider.com/node-group: tas-node-group
      topologyName: default
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: tas-cq
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu]
        flavors:
        - name: tas-flavor
          resources:
          - name: cpu
            nominalQuota: 100
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: tas-user-queue
      namespace: default
    spec:
      clusterQueue: tas-cq
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: tas-sample
      namespace: default
      labels:
        kueue.x-k8s.io/queue-name: tas-user-queue
    spec:
      template:
        metadata:
          annotations:
            kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
            resources:
              requests:
                cpu: "1"
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: Topology
    metadata:
      name: default
    spec:
      levels:
      - nodeLabel: cloud.provider.com/topology-block
      - nodeLabel: kubernetes.io/hostname
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata:
      name: tas-flavor
    spec:
      nodeLabels:
        cloud.provider.com/node-group: tas-node-group
      topologyName: default
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: tas-cq
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu]
        flavors:
        - name: tas-flavor
          resources:
          - name: cpu
            nominalQuota: 100
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: tas-user-queue
      namespace: default
    spec:
      clusterQueue: tas-cq
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: tas-sample
      namespace: default
      labels:
        kueue.x-k8s.io/queue-name: tas-user-queue
    spec:
      template:
        metadata:
          annotations:
            kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-block
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
            resources:
              requests:
                cpu: "1"
    ```
    """
    enabled, release, _why = tas_enabled(obj, ctx)
    requests = list(requested_levels(obj, release)) if enabled else []
    cq = cluster_queue_of(obj, ctx) if requests else None
    if cq is None or multikueue_checks(cq, ctx):
        return  # no request, a chain another rule reports, or a MultiKueue manager (TAS runs on the workers)
    flavors = tas_flavors(cq, ctx) or {}
    topologies = {f: ctx.get("Topology", t) for f, t in flavors.items()}
    if not flavors or any(t is None for t in topologies.values()):
        return  # KP444 / KP442 report these
    levels = {f: topology_levels(t) for f, t in topologies.items() if t is not None}
    for path, key, level in requests:
        if not any(level in lv for lv in levels.values()):
            have = "; ".join(f"{f} ({flavors[f]}): {', '.join(lv) or 'no levels'}" for f, lv in sorted(levels.items()))
            yield Hit(obj, path, f"{key}: {level!r} is not a level of the Topology of any TAS flavor of "
                                 f"ClusterQueue {cq.name!r} [{have}]; Kueue never admits this workload")


@rule("KP444", "error", "5 never works", kinds=WORKLOAD_KINDS + ("Workload",))
def topology_request_without_tas(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A pod template asks for a topology, but its ClusterQueue has no TAS flavor, or TAS is off.

    A pod set with `podset-required-topology` or `podset-preferred-topology` needs a flavor with a
    `topologyName`; Kueue skips every other flavor covering its resources ("Flavor ... does not support
    TopologyAwareScheduling", pkg/scheduler/flavorassigner/tas_flavorassigner.go), so the workload is never
    admitted (error). When the TopologyAwareScheduling gate is off (the default before Kueue v0.14), Kueue
    ignores the annotation and places the pods anywhere (warning).

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata:
      name: default-flavor
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu]
        flavors:
        - name: default-flavor
          resources:
          - name: cpu
            nominalQuota: 100
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: user-queue
      namespace: default
    spec:
      clusterQueue: cq
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      namespace: default
      labels:
        kueue.x-k8s.io/queue-name: user-queue
    spec:
      template:
        metadata:
          annotations:
            kueue.x-k8s.io/podset-preferred-topology: kubernetes.io/hostname
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
            resources:
              requests:
                cpu: "1"
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: Topology
    metadata:
      name: default
    spec:
      levels:
      - nodeLabel: kubernetes.io/hostname
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata:
      name: default-flavor
    spec:
      nodeLabels:
        node-group: tas
      topologyName: default
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu]
        flavors:
        - name: default-flavor
          resources:
          - name: cpu
            nominalQuota: 100
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: user-queue
      namespace: default
    spec:
      clusterQueue: cq
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      namespace: default
      labels:
        kueue.x-k8s.io/queue-name: user-queue
    spec:
      template:
        metadata:
          annotations:
            kueue.x-k8s.io/podset-preferred-topology: kubernetes.io/hostname
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
            resources:
              requests:
                cpu: "1"
    ```
    """
    enabled, release, why = tas_enabled(obj, ctx)
    if not why:
        return
    requests = list(requested_levels(obj, release))
    if not requests:
        return
    path, key, _level = requests[0]
    if not enabled:
        yield Hit(obj, path, f"{key} has no effect: TopologyAwareScheduling is off ({why}), so Kueue ignores "
                             "topology requests; turn the gate on in Kueue's Configuration or drop the annotation",
                  severity="warning")
        return
    cq = cluster_queue_of(obj, ctx)
    if cq is None or multikueue_checks(cq, ctx):
        return
    flavors = tas_flavors(cq, ctx)
    if flavors is not None and not flavors and kueue.flavor_names(cq):
        yield Hit(obj, path, f"{key} asks for topology-aware scheduling, but no flavor of ClusterQueue {cq.name!r} "
                             "has a topologyName; Kueue never admits this workload (give a flavor a "
                             "Topology or drop the annotation)")


UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
SLICE_SIZE = "kueue.x-k8s.io/podset-slice-size"
UNCONSTRAINED_SINCE = (0, 11)  # "must not contain more than one topology annotation" (three) from v0.11
SLICE_SIZE_CHECKED_SINCE = (0, 14)  # slice-required and slice-size must come together from v0.14


def tas_annotation_errors(annotations: dict[str, Any], release: tuple[int, int]) -> Iterator[tuple[str | None, str]]:
    """(annotation key or None for the map, error) as jobframework ValidateTASPodSetRequest reports them."""
    exclusive = (REQUIRED, PREFERRED) + ((UNCONSTRAINED,) if release >= UNCONSTRAINED_SINCE else ())
    present = [k for k in exclusive if k in annotations]
    if len(present) > 1:
        yield None, (f"the pod template's annotations must not contain more than one of {', '.join(exclusive)} "
                     f"(has {', '.join(present)})")
    for key in (REQUIRED, PREFERRED) + ((SLICE_REQUIRED,) if release >= SLICE_SINCE else ()):
        value = annotations.get(key)
        if key in annotations:
            errors = qualified_name_errors(value) if isinstance(value, str) else ["must be a string"]
            for err in errors:
                yield key, f"{key}: {value!r} is not a valid node label name: {err}"
    if release >= SLICE_SIZE_CHECKED_SINCE:
        if SLICE_REQUIRED in annotations and SLICE_SIZE not in annotations:
            yield SLICE_REQUIRED, f"{SLICE_SIZE} must be set when {SLICE_REQUIRED} is specified"
        if SLICE_SIZE in annotations and SLICE_REQUIRED not in annotations:
            yield SLICE_SIZE, f"{SLICE_SIZE} may not be set when {SLICE_REQUIRED} is not specified"


@rule("KP448", "error", "4 webhook", kinds=WORKLOAD_KINDS)
def tas_annotations_rejected(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A pod template's topology annotations are ones Kueue's webhook rejects: the object is never created.

    With TopologyAwareScheduling on, the job webhooks run jobframework `ValidateTASPodSetRequest`
    (pkg/controller/jobframework/tas_validation.go) on every pod template: at most one of
    `podset-required-topology`, `podset-preferred-topology` and (from v0.11) `podset-unconstrained-topology`; the
    levels must be valid label names; from v0.14 `podset-slice-required-topology` and `podset-slice-size` come
    together. Checked on Jobs (Kueue validates every Job) and on other kinds Kueue manages (a queue name).

    Fails:

    ```yaml
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      labels:
        kueue.x-k8s.io/queue-name: user-queue
    spec:
      template:
        metadata:
          annotations:
            kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack
            kueue.x-k8s.io/podset-preferred-topology: cloud.provider.com/topology-block
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```

    Passes:

    ```yaml
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      labels:
        kueue.x-k8s.io/queue-name: user-queue
    spec:
      template:
        metadata:
          annotations:
            kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```
    """
    if obj.kind != "Job" and not queue_name_of(obj.data):
        return
    enabled, release, _why = tas_enabled(obj, ctx)
    if not enabled:
        return  # the webhooks check topology requests only with the gate on
    for path, annotations in _pod_template_annotations(obj):
        for key, error in tas_annotation_errors(annotations, release):
            yield Hit(obj, path + ((key,) if key else ()), f"{error}; Kueue's webhook rejects the {obj.kind}")
