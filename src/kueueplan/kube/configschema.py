"""What Kueue's strict decoder accepts in a Configuration file, and which integration manages which kind.

Kueue decodes `controller_manager_config.yaml` strictly (pkg/config/config.go `fromFile`:
`serializer.NewCodecFactory(scheme, serializer.EnableStrict)`): an unknown or misspelt field stops the manager at
start-up. The field names below are the JSON names of apis/config/{v1beta1,v1beta2}/configuration_types.go at
v0.19.2 (and of component-base's LeaderElectionConfiguration); a free-form map (featureGates, groupKindConcurrency,
outputs, resourceWeights, label selectors) is not descended into.

Public API: `unknown_fields(data, api_version) -> [(path, field)]`, `INTEGRATIONS` (every framework name Kueue
v0.19.2 registers, pkg/controller/jobs/*), `FRAMEWORK_OF_KIND` / `FRAMEWORK_BY_KIND`, `registered(framework,
release)` (INTEGRATION_SINCE: from which release an integration exists).
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

Path = tuple[str | int, ...]
V1BETA1 = "config.kueue.x-k8s.io/v1beta1"
V1BETA2 = "config.kueue.x-k8s.io/v1beta2"

_LEADER_ELECTION = {"leaderElect": None, "leaseDuration": None, "renewDeadline": None, "retryPeriod": None,
                    "resourceLock": None, "resourceName": None, "resourceNamespace": None}
_EXEC = None  # client-go ExecConfig: not descended into
_COMMON: dict[str, Any] = {
    "apiVersion": None, "kind": None, "namespace": None, "manageJobsWithoutQueueName": None,
    "managedJobsNamespaceSelector": None, "featureGates": None,
    "webhook": {"port": None, "host": None, "certDir": None},
    "leaderElection": _LEADER_ELECTION,
    "health": {"healthProbeBindAddress": None, "readinessEndpointName": None, "livenessEndpointName": None},
    "pprofBindAddress": None,
    "controller": {"groupKindConcurrency": None, "cacheSyncTimeout": None},
    "tls": {"minVersion": None, "cipherSuites": None, "curvePreferences": None},
    "internalCertManagement": {"enable": None, "webhookServiceName": None, "webhookSecretName": None},
    "clientConnection": {"qps": None, "burst": None},
    "objectRetentionPolicies": {"workloads": {"afterFinished": None, "afterDeactivatedByKueue": None}},
    "admissionFairSharing": {"usageHalfLifeTime": None, "usageSamplingInterval": None, "resourceWeights": None},
}
_REQUEUING = {"timestamp": None, "backoffLimitCount": None, "backoffBaseSeconds": None, "backoffMaxSeconds": None}
_TRANSFORMATION = [{"input": None, "strategy": None, "multiplyBy": None, "outputs": None}]

FIELDS: dict[str, dict[str, Any]] = {
    V1BETA1: {
        **_COMMON,
        "metrics": {"bindAddress": None, "enableClusterQueueResources": None,
                    "customLabels": [{"name": None, "sourceLabelKey": None, "sourceAnnotationKey": None}],
                    "localQueueMetrics": {"enable": None, "localQueueSelector": None}},
        "waitForPodsReady": {"enable": None, "timeout": None, "blockAdmission": None, "requeuingStrategy": _REQUEUING,
                             "recoveryTimeout": None},
        "integrations": {"frameworks": None, "externalFrameworks": None, "labelKeysToCopy": None,
                         "podOptions": {"namespaceSelector": None, "podSelector": None}},
        "queueVisibility": {"clusterQueues": {"maxCount": None}, "updateIntervalSeconds": None},
        "multiKueue": {"gcInterval": None, "origin": None, "workerLostTimeout": None, "dispatcherName": None,
                       "externalFrameworks": [{"name": None}]},
        "fairSharing": {"enable": None, "preemptionStrategies": None},
        "resources": {"excludeResourcePrefixes": None, "transformations": _TRANSFORMATION,
                      "deviceClassMappings": [{"name": None, "deviceClassNames": None}]},
    },
    V1BETA2: {
        **_COMMON,
        "metrics": {"bindAddress": None, "enableClusterQueueResources": None,
                    "customLabels": [{"name": None, "sourceLabelKey": None, "sourceAnnotationKey": None,
                                      "sourceKind": None, "trackedValues": None}],
                    "localQueueMetrics": {"enable": None, "localQueueSelector": None}},
        "waitForPodsReady": {"timeout": None, "blockAdmission": None, "requeuingStrategy": _REQUEUING,
                             "recoveryTimeout": None},
        "integrations": {"frameworks": None, "externalFrameworks": None, "labelKeysToCopy": None},
        "multiKueue": {"gcInterval": None, "origin": None, "workerLostTimeout": None, "dispatcherName": None,
                       "externalFrameworks": [{"name": None}],
                       "clusterProfile": {"accessProviders": [{"name": None, "execConfig": _EXEC}],
                                          "credentialsProviders": [{"name": None, "execConfig": _EXEC}]},
                       "incrementalDispatcherConfig": {"stepSize": None}},
        "fairSharing": {"preemptionStrategies": None},
        "resources": {"quotaCheckStrategy": None, "excludeResourcePrefixes": None, "transformations": _TRANSFORMATION,
                      "deviceClassMappings": [{"name": None, "deviceClassNames": None, "sources": None}]},
        "visibilityServer": {"bindAddress": None, "bindPort": None},
    },
}


def unknown_fields(data: Mapping[str, Any], api_version: str) -> list[tuple[Path, str]]:
    """Fields Kueue's strict decoder rejects, as (path of the field, its name), in document order."""
    schema = FIELDS.get(api_version)
    return [] if schema is None else list(_walk(data, schema, ()))


def _walk(value: Any, schema: Any, path: Path) -> Iterator[tuple[Path, str]]:
    if isinstance(schema, dict) and isinstance(value, Mapping):
        for key, sub in value.items():
            if key not in schema:
                yield path + (str(key),), str(key)
            elif schema[key] is not None:
                yield from _walk(sub, schema[key], path + (str(key),))
    elif isinstance(schema, list) and isinstance(value, list):
        for i, item in enumerate(value):
            yield from _walk(item, schema[0], path + (i,))


# metav1.Duration fields: a quoted Go duration ("10m"); a YAML number does not decode.
DURATION_PATHS: tuple[Path, ...] = (
    ("waitForPodsReady", "timeout"), ("waitForPodsReady", "recoveryTimeout"),
    ("admissionFairSharing", "usageHalfLifeTime"), ("admissionFairSharing", "usageSamplingInterval"),
    ("multiKueue", "gcInterval"), ("multiKueue", "workerLostTimeout"),
    ("objectRetentionPolicies", "workloads", "afterFinished"),
    ("objectRetentionPolicies", "workloads", "afterDeactivatedByKueue"),
)


# Every integration name Kueue v0.19.2 registers (pkg/controller/jobs/*: FrameworkName).
INTEGRATIONS = (
    "batch/job", "deployment", "jobset.x-k8s.io/jobset", "kubeflow.org/jaxjob", "kubeflow.org/mpijob",
    "kubeflow.org/paddlejob", "kubeflow.org/pytorchjob", "kubeflow.org/tfjob", "kubeflow.org/xgboostjob",
    "leaderworkerset.x-k8s.io/leaderworkerset", "pod", "ray.io/raycluster", "ray.io/rayjob", "ray.io/rayservice",
    "sparkoperator.k8s.io/sparkapplication", "statefulset", "trainer.kubeflow.org/trainjob",
    "workload.codeflare.dev/appwrapper",
)
# Older releases registered "kubeflow.org/mxjob" too (removed in v0.11); a v0.19.2 manager refuses it.
FRAMEWORK_OF_KIND = {
    ("batch", "Job"): "batch/job", ("", "Pod"): "pod", ("apps", "Deployment"): "deployment",
    ("apps", "StatefulSet"): "statefulset", ("ray.io", "RayJob"): "ray.io/rayjob",
    ("ray.io", "RayCluster"): "ray.io/raycluster", ("ray.io", "RayService"): "ray.io/rayservice",
    ("jobset.x-k8s.io", "JobSet"): "jobset.x-k8s.io/jobset", ("kubeflow.org", "MPIJob"): "kubeflow.org/mpijob",
    ("kubeflow.org", "PyTorchJob"): "kubeflow.org/pytorchjob", ("kubeflow.org", "TFJob"): "kubeflow.org/tfjob",
    ("kubeflow.org", "XGBoostJob"): "kubeflow.org/xgboostjob", ("kubeflow.org", "PaddleJob"): "kubeflow.org/paddlejob",
    ("kubeflow.org", "JAXJob"): "kubeflow.org/jaxjob",
    ("trainer.kubeflow.org", "TrainJob"): "trainer.kubeflow.org/trainjob",
    ("workload.codeflare.dev", "AppWrapper"): "workload.codeflare.dev/appwrapper",
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): "leaderworkerset.x-k8s.io/leaderworkerset",
    ("sparkoperator.k8s.io", "SparkApplication"): "sparkoperator.k8s.io/sparkapplication",
}
# The same by kind alone (no two integrations share a kind name), in FRAMEWORK_OF_KIND's order.
FRAMEWORK_BY_KIND = {kind: framework for (_, kind), framework in FRAMEWORK_OF_KIND.items()}
# Every kind some integration manages, in FRAMEWORK_OF_KIND's order.
FRAMEWORK_KINDS = tuple(FRAMEWORK_BY_KIND)
# The first release whose manager registers an integration (pkg/controller/jobs/*: FrameworkName, read at each
# minor's .0 tag); the others are registered by every release kueueplan models (v0.8 on). Before it, the kind has
# no Kueue webhook or reconciler, and a Configuration naming it stops the manager (validateIntegrations).
INTEGRATION_SINCE: dict[str, tuple[int, int]] = {
    "deployment": (0, 9), "statefulset": (0, 9),
    "leaderworkerset.x-k8s.io/leaderworkerset": (0, 11), "workload.codeflare.dev/appwrapper": (0, 11),
    "kubeflow.org/jaxjob": (0, 12), "trainer.kubeflow.org/trainjob": (0, 14),
    "ray.io/rayservice": (0, 17), "sparkoperator.k8s.io/sparkapplication": (0, 17),
}


def registered(framework: str, release: tuple[int, ...]) -> bool:
    """Does this release's manager register the integration (INTEGRATION_SINCE)?"""
    return tuple(release[:2]) >= INTEGRATION_SINCE.get(framework, (0, 0))


_GO_DURATION = r"^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h))+)$"
_DURATION_FIELDS = {"timeout", "recoveryTimeout", "usageHalfLifeTime", "usageSamplingInterval", "gcInterval",
                    "workerLostTimeout", "afterFinished", "afterDeactivatedByKueue", "cacheSyncTimeout",
                    "leaseDuration", "renewDeadline", "retryPeriod"}


def json_schema() -> dict[str, Any]:
    """A JSON Schema of the Configuration for editors: the fields of both API versions (the build checks the
    file's own version), unknown fields refused as Kueue's strict decoder does, durations as Go durations."""
    merged = _union(FIELDS[V1BETA1], FIELDS[V1BETA2])
    schema = _schema_of(merged, "")
    schema["properties"]["apiVersion"] = {"enum": [V1BETA2, V1BETA1]}
    schema["properties"]["kind"] = {"const": "Configuration"}
    schema["description"] = ("Kueue's Configuration (controller_manager_config.yaml), config.kueue.x-k8s.io "
                             "v1beta2 or v1beta1")
    return schema


def _union(a: Any, b: Any) -> Any:
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: _union(a.get(k), b.get(k)) if k in a and k in b else (a[k] if k in a else b[k])
                for k in [*a, *[k for k in b if k not in a]]}
    if isinstance(a, list) and isinstance(b, list):
        return [_union(a[0], b[0])]
    return a if a is not None else b


def _schema_of(node: Any, name: str) -> dict[str, Any]:
    if isinstance(node, dict):
        return {"type": "object", "additionalProperties": False,
                "properties": {k: _schema_of(v, k) for k, v in node.items()}}
    if isinstance(node, list):
        return {"type": "array", "items": _schema_of(node[0], name)}
    if name in _DURATION_FIELDS:
        return {"type": "string", "pattern": _GO_DURATION, "description": "A Go duration: 90s, 10m, 1h30m"}
    return {}


# The first Kueue release whose Configuration knows a field (apis/config/v1beta1, then v1beta2, read at every
# minor release's .0 tag from v0.6); fields not listed are known by every release kueueplan models. A release
# that does not know a field refuses the file at start-up, like a misspelt one. `[]` stands for a list item.
SINCE: dict[str, tuple[int, int]] = {
    "fairSharing": (0, 7), "resources": (0, 7), "resources.excludeResourcePrefixes": (0, 7),
    "integrations.externalFrameworks": (0, 7), "integrations.labelKeysToCopy": (0, 7),
    "multiKueue.workerLostTimeout": (0, 7), "waitForPodsReady.requeuingStrategy.backoffBaseSeconds": (0, 7),
    "waitForPodsReady.requeuingStrategy.backoffMaxSeconds": (0, 7),
    "resources.transformations": (0, 9),
    "featureGates": (0, 10), "managedJobsNamespaceSelector": (0, 10),
    "waitForPodsReady.recoveryTimeout": (0, 11),
    "admissionFairSharing": (0, 12), "objectRetentionPolicies": (0, 12),
    "multiKueue.dispatcherName": (0, 13),
    "multiKueue.externalFrameworks": (0, 14), "resources.deviceClassMappings": (0, 14),
    "tls": (0, 16), "resources.transformations[].multiplyBy": (0, 16),
    "metrics.customLabels": (0, 17), "metrics.localQueueMetrics": (0, 17), "visibilityServer": (0, 17),
    "resources.quotaCheckStrategy": (0, 18), "resources.deviceClassMappings[].sources": (0, 18),
    "tls.curvePreferences": (0, 19), "metrics.customLabels[].sourceKind": (0, 19),
    "metrics.customLabels[].trackedValues": (0, 19), "multiKueue.clusterProfile": (0, 19),
    "multiKueue.incrementalDispatcherConfig": (0, 19),
}


def too_new_fields(data: Mapping[str, Any], release: tuple[int, int]) -> list[tuple[Path, str, tuple[int, int]]]:
    """Fields the release's Kueue does not know yet, as (path, dotted name, first release that knows it)."""
    return [(path, name, since) for path, name in _all_paths(data, (), "")
            if (since := SINCE.get(name)) is not None and tuple(release) < since]


def _all_paths(value: Any, path: Path, name: str) -> Iterator[tuple[Path, str]]:
    if isinstance(value, Mapping):
        for key, sub in value.items():
            child = f"{name}.{key}" if name else str(key)
            yield path + (str(key),), child
            if child in _DESCEND:
                yield from _all_paths(sub, path + (str(key),), child)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _all_paths(item, path + (i,), f"{name}[]")


# Parents of the fields in SINCE (free-form maps such as featureGates are not descended into).
_DESCEND = {name.rsplit(".", 1)[0] for name in SINCE if "." in name} | \
    {name.rsplit(".", 1)[0].removesuffix("[]") for name in SINCE if "[]." in name}
