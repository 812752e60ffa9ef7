"""Kueue's own Configuration (the `kueue-manager-config` ConfigMap, or a spec Environment's `configuration`):
the checks Kueue's manager runs when it starts (pkg/config/config.go strict decoding, pkg/config/validation.go
`Validate` at v0.19.2, after apis/config/<version>/defaults.go), and how the Configuration fits the objects it is
applied with (which kinds it manages, in which namespaces).

A Configuration that fails a start-up check leaves the cluster without a running Kueue manager: every such rule
is an error. Paths and lines point inside the embedded `controller_manager_config.yaml`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kueueplan.kube.configschema import (DURATION_PATHS, FRAMEWORK_KINDS, FRAMEWORK_OF_KIND, INTEGRATION_SINCE,
                                         INTEGRATIONS, V1BETA1, V1BETA2, registered, too_new_fields, unknown_fields)
from kueueplan.kube.configuration import parse_go_duration
from kueueplan.validate import kueue
from kueueplan.validate.configuration import read, release_of, universe_configuration
from kueueplan.validate.model import Context, Obj
from kueueplan.validate.registry import Hit, rule

Path = tuple[str | int, ...]
_SELECTOR_OPS = ("In", "NotIn", "Exists", "DoesNotExist")


def _config(obj: Obj) -> tuple[Obj, dict[str, Any]] | None:
    """(view, file) of a readable kueue-manager-config ConfigMap; None for any other object."""
    if obj.name != "kueue-manager-config" or obj.api_version != "v1":
        return None
    found = read(obj)
    return (found.view, found.data) if found.data is not None else None


def _map(data: Any, *keys: str) -> dict[str, Any]:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def _seconds(value: Any) -> float | None:
    """A metav1.Duration in seconds; None when it is not one (KP450 reports that)."""
    if not isinstance(value, str):
        return None
    try:
        return parse_go_duration(value)
    except ValueError:
        return None


# --------------------------------------------------------------------------- decoding


@rule("KP450", "error", "4 configuration", kinds=("ConfigMap",))
def configuration_decodes(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """Kueue's manager must be able to decode its Configuration (pkg/config/config.go, strict decoding).

    The `kueue-manager-config` ConfigMap holds the whole file under `controller_manager_config.yaml`. Kueue
    refuses to start on YAML it cannot read, an apiVersion its release does not serve (config v1beta2 arrived
    in v0.15), another kind, a misspelt or unknown field, a field newer than the release (e.g.
    `managedJobsNamespaceSelector` before v0.10), or a duration that is not a Go duration (`10m`, not `600` or
    `10 minutes`).

    Fails:

    ```yaml
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        waitForPodsReady:
          timeout: 10m
          blockAdmision: true
    ```

    Passes:

    ```yaml
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        waitForPodsReady:
          timeout: 10m
          blockAdmission: true
    ```
    """
    if obj.name != "kueue-manager-config" or obj.api_version != "v1":
        return
    found = read(obj)
    if found.data is None:
        path, message = found.problem or (("data",), "cannot be read")
        yield Hit(obj, path, message)
        return
    view, data = found.view, found.data
    api_version = data.get("apiVersion")
    release = release_of(obj, ctx)
    if api_version not in (V1BETA1, V1BETA2):
        yield Hit(view, ("apiVersion",), f"apiVersion must be {V1BETA2} or {V1BETA1}, not {api_version!r}")
        return
    if api_version == V1BETA2 and release < (0, 15):
        yield Hit(view, ("apiVersion",), f"Kueue v{release[0]}.{release[1]} reads only {V1BETA1} Configurations "
                                         f"({V1BETA2} arrived in v0.15): the manager would not start")
    if data.get("kind") != "Configuration":
        yield Hit(view, ("kind",), f"kind must be Configuration, not {data.get('kind')!r}")
    for path, name in unknown_fields(data, str(api_version)):
        yield Hit(view, path, f"{api_version.rsplit('/', 1)[-1]} Configuration has no field {name!r}: Kueue's "
                              "strict decoding stops the manager at start-up")
    for path, name, (_, since) in too_new_fields(data, release):
        yield Hit(view, path, f"Kueue v{release[0]}.{release[1]}'s Configuration has no field {name!r} (it arrived "
                              f"in v0.{since}): the manager would refuse to start")
    for path in DURATION_PATHS:
        value = _dig(data, path)
        if value is not None and _seconds(value) is None:
            yield Hit(view, path, f"{'.'.join(map(str, path))}: {value!r} is not a duration; write e.g. 90s, 10m, "
                                  "1h30m (a quoted Go duration)")


def _dig(data: Any, path: Path) -> Any:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


# --------------------------------------------------------------------------- pkg/config/validation.go


@rule("KP451", "error", "4 configuration", kinds=("ConfigMap",))
def wait_for_pods_ready_values(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """`waitForPodsReady` values Kueue refuses at start-up (validateWaitForPodsReady).

    Timeouts must not be negative; `requeuingStrategy.timestamp` is `Eviction` or `Creation`;
    `backoffLimitCount`, `backoffBaseSeconds` and `backoffMaxSeconds` must not be negative. (A zero or omitted
    timeout is defaulted to 30 minutes by v1beta2, 5 minutes by v1beta1.)

    Fails:

    ```yaml
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        waitForPodsReady:
          timeout: 10m
          requeuingStrategy:
            timestamp: Admission
            backoffLimitCount: -1
    ```

    Passes:

    ```yaml
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        waitForPodsReady:
          timeout: 10m
          requeuingStrategy:
            timestamp: Eviction
            backoffLimitCount: 3
    ```
    """
    found = _config(obj)
    if found is None:
        return
    view, data = found
    wfpr = _map(data, "waitForPodsReady")
    if not wfpr or (data.get("apiVersion") == V1BETA1 and wfpr.get("enable") is not True):
        return  # v1beta1: off unless enable (Convert_v1beta1_Configuration_To_v1beta2)
    for key in ("timeout", "recoveryTimeout"):
        seconds = _seconds(wfpr.get(key))
        if seconds is not None and seconds < 0:
            yield Hit(view, ("waitForPodsReady", key), f"waitForPodsReady.{key} must not be negative")
    strategy = _map(wfpr, "requeuingStrategy")
    timestamp = strategy.get("timestamp")
    if timestamp is not None and timestamp not in ("Eviction", "Creation"):
        yield Hit(view, ("waitForPodsReady", "requeuingStrategy", "timestamp"),
                  f"requeuingStrategy.timestamp {timestamp!r} is not supported: use Eviction or Creation")
    for key in ("backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds"):
        value = strategy.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            yield Hit(view, ("waitForPodsReady", "requeuingStrategy", key),
                      f"requeuingStrategy.{key} must not be negative (got {value})")


@rule("KP452", "error", "4 configuration", kinds=("ConfigMap",))
def integrations_known(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """Every name in `integrations.frameworks` must be an integration Kueue registers, once (validateIntegrations).

    Kueue v0.19.2 knows batch/job, pod, deployment, statefulset, ray.io/rayjob, ray.io/raycluster,
    ray.io/rayservice, jobset.x-k8s.io/jobset, kubeflow.org/{mpijob,pytorchjob,tfjob,xgboostjob,paddlejob,jaxjob},
    trainer.kubeflow.org/trainjob, workload.codeflare.dev/appwrapper, leaderworkerset.x-k8s.io/leaderworkerset and
    sparkoperator.k8s.io/sparkapplication; anything else (a kind name such as `RayJob`, a typo) stops the manager.
    `externalFrameworks` entries are `Kind.version.group`.

    Fails:

    ```yaml
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        integrations:
          frameworks: [batch/job, RayJob, batch/job]
    ```

    Passes:

    ```yaml
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        integrations:
          frameworks: [batch/job, ray.io/rayjob]
    ```
    """
    found = _config(obj)
    if found is None:
        return
    view, data = found
    integrations = _map(data, "integrations")
    frameworks = integrations.get("frameworks")
    seen: set[str] = set()
    # kubeflow.org/mxjob was registered until v0.10 (removed in v0.11); newer integrations from INTEGRATION_SINCE.
    release = release_of(obj, ctx)
    known = tuple(name for name in INTEGRATIONS if registered(name, release)) + \
        (("kubeflow.org/mxjob",) if release < (0, 11) else ())
    for i, name in enumerate(frameworks if isinstance(frameworks, list) else []):
        if name not in known:
            hint = _framework_hint(str(name), release)
            yield Hit(view, ("integrations", "frameworks", i),
                      f"integrations.frameworks: {name!r} is not an integration Kueue knows{hint}")
        elif name in seen:
            yield Hit(view, ("integrations", "frameworks", i), f"integrations.frameworks lists {name!r} twice")
        seen.add(str(name))
    external = integrations.get("externalFrameworks")
    for i, name in enumerate(external if isinstance(external, list) else []):
        if not isinstance(name, str) or name.count(".") < 2:
            yield Hit(view, ("integrations", "externalFrameworks", i),
                      f"integrations.externalFrameworks: {name!r} must be Kind.version.group (e.g. Foo.v1.example.com)")


def _framework_hint(name: str, release: tuple[int, int]) -> str:
    since = INTEGRATION_SINCE.get(name)
    if since is not None and release < since:
        return f" in v{release[0]}.{release[1]} (it was added in v{since[0]}.{since[1]})"
    for (group, kind), framework in FRAMEWORK_OF_KIND.items():
        if name.lower() in (kind.lower(), f"{kind}.{group}".lower()):
            return f" (for {kind} write {framework!r})"
    return ""


@rule("KP453", "error", "4 configuration", kinds=("ConfigMap",))
def managed_namespace_selector_valid(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """`managedJobsNamespaceSelector` (and v1beta1 `integrations.podOptions.namespaceSelector`) must be a valid
    label selector that does not match `kube-system` or Kueue's own namespace (validateManagedJobsNamespaceSelector).

    Kueue would otherwise manage the control plane's own pods. The selector sees a namespace by its labels,
    including `kubernetes.io/metadata.name`.

    Fails:

    ```yaml
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        managedJobsNamespaceSelector:
          matchExpressions:
          - key: kubernetes.io/metadata.name
            operator: NotIn
            values: [kueue-system]
    ```

    Passes:

    ```yaml
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        managedJobsNamespaceSelector:
          matchExpressions:
          - key: kubernetes.io/metadata.name
            operator: NotIn
            values: [kube-system, kueue-system]
    ```
    """
    found = _config(obj)
    if found is None:
        return
    view, data = found
    own = str(data.get("namespace") or "kueue-system")
    paths: list[Path] = [("managedJobsNamespaceSelector",)]
    if data.get("apiVersion") == V1BETA1:
        paths.append(("integrations", "podOptions", "namespaceSelector"))
    for path in paths:
        selector = _dig(data, path)
        if selector is None:
            continue
        problem = selector_problem(selector)
        if problem:
            yield Hit(view, path, f"{'.'.join(map(str, path))}: {problem}")
            continue
        for namespace in ("kube-system", own):
            if selector_matches(selector, {"kubernetes.io/metadata.name": namespace}):
                yield Hit(view, path, f"{'.'.join(map(str, path))} should not match the {namespace!r} namespace")


def selector_problem(selector: Any) -> str | None:
    """Why a metav1.LabelSelector is invalid (ValidateLabelSelector), or None."""
    if not isinstance(selector, dict):
        return "must be a label selector (matchLabels / matchExpressions)"
    for item in selector.get("matchExpressions") or []:
        if not isinstance(item, dict) or item.get("operator") not in _SELECTOR_OPS:
            return f"operator must be one of {', '.join(_SELECTOR_OPS)}"
        values = item.get("values") or []
        if item["operator"] in ("In", "NotIn") and not values:
            return f"{item['operator']} needs at least one value"
        if item["operator"] in ("Exists", "DoesNotExist") and values:
            return f"{item['operator']} takes no values"
    return None


def selector_matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """metav1.LabelSelectorAsSelector(selector).Matches(labels); an empty selector matches everything."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != str(value):
            return False
    for item in selector.get("matchExpressions") or []:
        key, op, values = item.get("key"), item.get("operator"), [str(v) for v in item.get("values") or []]
        present = key in labels
        if op == "In" and not (present and labels[key] in values):
            return False
        if op == "NotIn" and present and labels[key] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True


_STRATEGY_SETS = (["LessThanOrEqualToFinalShare"], ["LessThanInitialShare"],
                  ["LessThanOrEqualToFinalShare", "LessThanInitialShare"])


@rule("KP454", "error", "4 configuration", kinds=("ConfigMap",))
def fair_sharing_strategies(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """`fairSharing.preemptionStrategies` must be one of Kueue's supported sets, in order (validateFairSharing).

    Supported: `[LessThanOrEqualToFinalShare]`, `[LessThanInitialShare]`, or both in that order. v1beta2 also
    requires the list when `fairSharing` is present.

    Fails:

    ```yaml
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        fairSharing:
          preemptionStrategies: [LessThanInitialShare, LessThanOrEqualToFinalShare]
    ```

    Passes:

    ```yaml
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        fairSharing:
          preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]
    ```
    """
    found = _config(obj)
    if found is None:
        return
    view, data = found
    if "fairSharing" not in data:
        return
    fair = _map(data, "fairSharing")
    if data.get("apiVersion") == V1BETA1 and fair.get("enable") is not True:
        return  # v1beta1: off unless enable; the strategies are then never read
    strategies = fair.get("preemptionStrategies")
    if not strategies:
        if data.get("apiVersion") == V1BETA2:
            yield Hit(view, ("fairSharing",), "fairSharing.preemptionStrategies must be specified")
        return
    if strategies not in _STRATEGY_SETS:
        yield Hit(view, ("fairSharing", "preemptionStrategies"),
                  f"fairSharing.preemptionStrategies {strategies!r} is not supported: use [LessThanOrEqualToFinalShare]"
                  ", [LessThanInitialShare], or [LessThanOrEqualToFinalShare, LessThanInitialShare]")


@rule("KP455", "error", "4 configuration", kinds=("ConfigMap",))
def admission_fair_sharing_values(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """`admissionFairSharing`: the half-life must not be negative, the sampling interval must be greater than 0,
    and resource weights must not be negative (validateAdmissionFairSharing).

    Fails:

    ```yaml
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        admissionFairSharing:
          usageHalfLifeTime: 168h
          usageSamplingInterval: 0s
          resourceWeights: {nvidia.com/gpu: -1}
    ```

    Passes:

    ```yaml
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        admissionFairSharing:
          usageHalfLifeTime: 168h
          usageSamplingInterval: 5m
          resourceWeights: {nvidia.com/gpu: 100, cpu: 0}
    ```
    """
    found = _config(obj)
    if found is None:
        return
    view, data = found
    if "admissionFairSharing" not in data:
        return
    afs = _map(data, "admissionFairSharing")
    half_life = _seconds(afs.get("usageHalfLifeTime"))
    if half_life is not None and half_life < 0:
        yield Hit(view, ("admissionFairSharing", "usageHalfLifeTime"), "usageHalfLifeTime must not be negative")
    # Validate runs before a missing interval could be defaulted: absent or 0 is refused.
    interval = _seconds(afs.get("usageSamplingInterval")) if "usageSamplingInterval" in afs else 0.0
    if interval is not None and interval <= 0:
        yield Hit(view, ("admissionFairSharing", "usageSamplingInterval"),
                  "admissionFairSharing.usageSamplingInterval must be greater than 0")
    for name, weight in _map(afs, "resourceWeights").items():
        if isinstance(weight, (int, float)) and not isinstance(weight, bool) and weight < 0:
            yield Hit(view, ("admissionFairSharing", "resourceWeights", name),
                      f"resourceWeights[{name}] must not be negative")


@rule("KP456", "error", "4 configuration", kinds=("ConfigMap",))
def resource_transformations_valid(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """`resources.transformations`: each strategy is `Retain` or `Replace`, each input resource appears once
    (validateResourceTransformations); `quotaCheckStrategy` is `BlockUndeclared` or `IgnoreUndeclared`.

    Fails:

    ```yaml
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        resources:
          transformations:
          - input: nvidia.com/mig-1g.5gb
            strategy: Drop
            outputs: {example.com/gpu-memory: 5Gi}
          - input: nvidia.com/mig-1g.5gb
            strategy: Replace
            outputs: {example.com/gpu-memory: 5Gi}
    ```

    Passes:

    ```yaml
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        resources:
          transformations:
          - input: nvidia.com/mig-1g.5gb
            strategy: Replace
            outputs: {example.com/gpu-memory: 5Gi}
    ```
    """
    found = _config(obj)
    if found is None:
        return
    view, data = found
    resources = _map(data, "resources")
    items = resources.get("transformations")
    seen: set[str] = set()
    for i, item in enumerate(items if isinstance(items, list) else []):
        if not isinstance(item, dict):
            continue
        # Validate runs after defaulting: an omitted strategy is Retain.
        strategy = item.get("strategy", "Retain")
        if strategy not in ("Retain", "Replace"):
            yield Hit(view, ("resources", "transformations", i, "strategy"),
                      f"transformation strategy {strategy!r} is not supported: use Retain or Replace")
        name = str(item.get("input"))
        if name in seen:
            yield Hit(view, ("resources", "transformations", i, "input"),
                      f"a transformation for {name!r} is listed twice")
        seen.add(name)
    strategy = resources.get("quotaCheckStrategy")
    if strategy is not None and strategy not in ("BlockUndeclared", "IgnoreUndeclared"):
        yield Hit(view, ("resources", "quotaCheckStrategy"),
                  f"quotaCheckStrategy {strategy!r} is not supported: use BlockUndeclared or IgnoreUndeclared")


# --------------------------------------------------------------------------- against the rest of the inputs


def _queued(obj: Obj, ctx: Context) -> bool:
    """A job meant for Kueue: it names a LocalQueue, or its namespace has a LocalQueue named `default`."""
    if kueue.QUEUE_LABEL in obj.labels:
        return True
    return ctx.get("LocalQueue", "default", obj.namespace) is not None


def _owned(obj: Obj) -> bool:
    owners = obj.metadata.get("ownerReferences")
    return isinstance(owners, list) and bool(owners)


def namespace_labels(ctx: Context, name: str) -> dict[str, str]:
    """A namespace's labels as Kueue's selectors see them: the Namespace object's, plus the name label."""
    ns = ctx.get("Namespace", name)
    labels = {str(k): str(v) for k, v in (ns.labels if ns is not None else {}).items()}
    labels["kubernetes.io/metadata.name"] = name
    return labels


@rule("KP460", "warning", "5 never works", kinds=FRAMEWORK_KINDS)
def framework_enabled(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A job meant for Kueue whose integration the Configuration leaves disabled is never queued.

    Kueue only watches the kinds listed in `integrations.frameworks` (each release ships its own list; an
    omitted list in a custom file means `batch/job` only). A RayJob with a queue name while `ray.io/rayjob` is
    not listed starts at once, outside every quota, and kueueplan's simulation would not match the cluster.
    Without a `kueue-manager-config` among the inputs, the release's default install is assumed and the
    finding is informational.

    Fails:

    ```yaml
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        integrations:
          frameworks: [batch/job]
    ---
    apiVersion: ray.io/v1
    kind: RayJob
    metadata:
      name: train
      namespace: team-a
      labels:
        kueue.x-k8s.io/queue-name: team-a
    spec:
      entrypoint: python train.py
      shutdownAfterJobFinishes: true
      rayClusterSpec:
        headGroupSpec:
          rayStartParams: {}
          template:
            spec:
              containers:
              - name: ray-head
                image: rayproject/ray:2.9.0
                resources:
                  requests: {cpu: "1"}
    ```

    Passes:

    ```yaml
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        integrations:
          frameworks: [batch/job, ray.io/rayjob]
    ---
    apiVersion: ray.io/v1
    kind: RayJob
    metadata:
      name: train
      namespace: team-a
      labels:
        kueue.x-k8s.io/queue-name: team-a
    spec:
      entrypoint: python train.py
      shutdownAfterJobFinishes: true
      rayClusterSpec:
        headGroupSpec:
          rayStartParams: {}
          template:
            spec:
              containers:
              - name: ray-head
                image: rayproject/ray:2.9.0
                resources:
                  requests: {cpu: "1"}
    ```
    """
    framework = FRAMEWORK_OF_KIND.get((obj.group, obj.kind))
    if framework is None or _owned(obj) or not _queued(obj, ctx):
        return
    effective = universe_configuration(ctx, obj)
    if effective is None or framework in effective.config.frameworks:
        return
    yield Hit(obj, ("metadata",), f"{obj.kind} {obj.namespace}/{obj.name} is meant for Kueue (queue "
                           f"{obj.labels.get(kueue.QUEUE_LABEL, 'default')!r}) but {effective.describe()} does not "
                           f"enable {framework!r} in integrations.frameworks: Kueue ignores it, it runs at once "
                           "outside every quota", "info" if effective.assumed else None)


@rule("KP461", "warning", "5 never works", kinds=("LocalQueue",))
def queue_namespace_managed(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A LocalQueue's namespace must match `managedJobsNamespaceSelector`, or Kueue manages no job there.

    Since v0.19 the selector applies to jobs with a queue name too (before, only to pod-based integrations and
    to `manageJobsWithoutQueueName`): a team namespace outside it gets a LocalQueue nobody can use. The
    namespace's labels come from its Namespace object among the inputs, plus `kubernetes.io/metadata.name`.

    Fails:

    ```yaml
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        managedJobsNamespaceSelector:
          matchLabels: {kueue-managed: "true"}
    ---
    apiVersion: v1
    kind: Namespace
    metadata:
      name: team-a
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: team-a
      namespace: team-a
    spec:
      clusterQueue: team-a
    ```

    Passes:

    ```yaml
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        managedJobsNamespaceSelector:
          matchLabels: {kueue-managed: "true"}
    ---
    apiVersion: v1
    kind: Namespace
    metadata:
      name: team-a
      labels: {kueue-managed: "true"}
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: team-a
      namespace: team-a
    spec:
      clusterQueue: team-a
    ```
    """
    if not obj.is_kueue("LocalQueue") or obj.namespace is None:
        return
    effective = universe_configuration(ctx, obj)
    if effective is None or effective.release < (0, 19) or effective.assumed:
        return
    selector = effective.config.managed_jobs_namespace_selector or {}
    if selector_problem(selector) is None and not selector_matches(selector, namespace_labels(ctx, obj.namespace)):
        yield Hit(obj, ("metadata", "namespace"), f"namespace {obj.namespace!r} of LocalQueue {obj.name!r} is outside "
                               "managedJobsNamespaceSelector: Kueue manages no job there, queued or not")


@rule("KP462", "warning", "5 never works", kinds=("Pod",))
def pod_namespace_managed(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A queued plain Pod must sit in a namespace the `pod` integration manages.

    The pod integration only takes Pods in namespaces that match `managedJobsNamespaceSelector` (v1beta1 before
    v0.10: `integrations.podOptions.namespaceSelector`, and `podSelector` for the Pod's labels). Outside it, a
    Pod with a queue name is not gated: it starts at once, outside every quota.

    Fails:

    ```yaml
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        integrations:
          frameworks: [batch/job, pod]
        managedJobsNamespaceSelector:
          matchExpressions:
          - key: kubernetes.io/metadata.name
            operator: NotIn
            values: [kube-system, kueue-system, default]
    ---
    apiVersion: v1
    kind: Pod
    metadata:
      name: sleep
      namespace: default
      labels:
        kueue.x-k8s.io/queue-name: user-queue
    spec:
      containers:
      - name: sleep
        image: busybox
        resources:
          requests: {cpu: "3"}
    ```

    Passes:

    ```yaml
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        integrations:
          frameworks: [batch/job, pod]
        managedJobsNamespaceSelector:
          matchExpressions:
          - key: kubernetes.io/metadata.name
            operator: NotIn
            values: [kube-system, kueue-system]
    ---
    apiVersion: v1
    kind: Pod
    metadata:
      name: sleep
      namespace: default
      labels:
        kueue.x-k8s.io/queue-name: user-queue
    spec:
      containers:
      - name: sleep
        image: busybox
        resources:
          requests: {cpu: "3"}
    ```
    """
    if obj.api_version != "v1" or _owned(obj) or kueue.QUEUE_LABEL not in obj.labels or obj.namespace is None:
        return
    effective = universe_configuration(ctx, obj)
    if effective is None or "pod" not in effective.config.frameworks:
        return  # KP460 reports a disabled pod integration
    labels = namespace_labels(ctx, obj.namespace)
    selectors: list[tuple[Path, dict[str, Any]]] = []
    options = effective.config.integrations.pod_options if effective.config.integrations else None
    if options and isinstance(options.get("namespaceSelector"), dict):
        selectors.append((("integrations", "podOptions", "namespaceSelector"), options["namespaceSelector"]))
    elif effective.config.managed_jobs_namespace_selector is not None:
        selectors.append((("managedJobsNamespaceSelector",), effective.config.managed_jobs_namespace_selector))
    for path, selector in selectors:
        if selector_problem(selector) is None and not selector_matches(selector, labels):
            yield Hit(obj, ("metadata", "namespace"),
                      f"Pod {obj.namespace}/{obj.name} has a queue name but its namespace is outside "
                      f"{'.'.join(map(str, path))}: the pod integration does not gate it, it starts at once outside "
                      "every quota")
    pod_selector = options.get("podSelector") if options else None
    if isinstance(pod_selector, dict) and selector_problem(pod_selector) is None and \
            not selector_matches(pod_selector, {str(k): str(v) for k, v in obj.labels.items()}):
        yield Hit(obj, ("metadata", "labels"), f"Pod {obj.namespace}/{obj.name} does not match integrations."
                                               "podOptions.podSelector: the pod integration does not gate it")



@rule("KP463", "warning", "5 never works", kinds=FRAMEWORK_KINDS)
def job_without_queue_name_managed(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """With `manageJobsWithoutQueueName: true`, a job without a queue name is suspended for good.

    Kueue then manages every job of an enabled integration in the namespaces `managedJobsNamespaceSelector`
    picks, queue name or not (pkg/controller/jobframework/reconciler.go). A job without one is given the
    LocalQueue named `default` of its namespace when there is one; otherwise its Workload names no queue and is
    never admitted, so the job never starts.

    Fails:

    ```yaml
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        manageJobsWithoutQueueName: true
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: backup
      namespace: ops
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```

    Passes:

    ```yaml
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kueue-manager-config
      namespace: kueue-system
    data:
      controller_manager_config.yaml: |
        apiVersion: config.kueue.x-k8s.io/v1beta2
        kind: Configuration
        manageJobsWithoutQueueName: true
        managedJobsNamespaceSelector:
          matchLabels: {kueue-managed: "true"}
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: backup
      namespace: ops
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```
    """
    framework = FRAMEWORK_OF_KIND.get((obj.group, obj.kind))
    if framework is None or _owned(obj) or _queued(obj, ctx) or obj.namespace is None:
        return
    effective = universe_configuration(ctx, obj)
    if effective is None or effective.assumed or not effective.config.manage_jobs_without_queue_name:
        return
    if framework not in effective.config.frameworks:
        return
    selector = effective.config.managed_jobs_namespace_selector or {}
    if selector_problem(selector) is not None or not selector_matches(selector, namespace_labels(ctx, obj.namespace)):
        return
    yield Hit(obj, ("metadata",), f"{obj.kind} {obj.namespace}/{obj.name} has no queue name and its namespace has no "
                                  "LocalQueue named 'default', but manageJobsWithoutQueueName is true: Kueue suspends "
                                  "it and never admits it (add the kueue.x-k8s.io/queue-name label)")
