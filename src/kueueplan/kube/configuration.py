"""Kueue's own Configuration (config.kueue.x-k8s.io v1beta1 / v1beta2): the one shared reading.

The object is what the `kueue-manager-config` ConfigMap holds under `controller_manager_config.yaml` (or the Helm
chart's `managerConfig.controllerManagerConfigYaml`). kueueplan reads it the way Kueue v0.19.2 loads it
(pkg/config/config.go `fromFile`: decode the file's external version with that version's defaulting, then convert
to the internal v1beta2 type, apis/config/v1beta1/configuration_conversion.go).

Public API (stable; other modules build on it):
- `Configuration` and its parts: typed pydantic v2 models in v1beta2 shape (camelCase aliases, unknown fields kept).
- `parse_configuration(data, release, file=None, line=None) -> Configuration`: the *effective* Configuration of a
  Kueue `release` given the object `data` (None = a default install): omitted fields first take the release's
  shipped controller_manager_config.yaml (config/components/manager/), then Kueue's defaulting
  (apis/config/<version>/defaults.go). v1beta1 `enable: false` blocks are dropped as Kueue's conversion drops them,
  so `waitForPodsReady` / `fairSharing` are None exactly when Kueue runs without them.
- `default_configuration(release)`: `parse_configuration(None, release)`.
- `shipped_manager_config(release)`: the admission-relevant part of the release's shipped file.
- `SHIPPED_FRAMEWORKS`: each supported release's shipped `integrations.frameworks`.
- `configuration_from_configmap(obj)`: the Configuration mapping inside a `kueue-manager-config` ConfigMap.
- `parse_go_duration` / `format_go_duration`: metav1.Duration text <-> seconds.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Mapping

from pydantic import (BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, ValidationError,
                      field_validator)

from kueueplan.errors import KueueplanError
from kueueplan.kube import yamlio

GROUP = "config.kueue.x-k8s.io"
V1BETA1 = f"{GROUP}/v1beta1"
V1BETA2 = f"{GROUP}/v1beta2"
CONFIGMAP_NAME = "kueue-manager-config"
CONFIGMAP_KEY = "controller_manager_config.yaml"
DEFAULT_NAMESPACE = "kueue-system"

# --------------------------------------------------------------------------------------------- durations

_GO_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_GO_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
MAX_SECONDS = 100 * 365 * 24 * 3600.0


def parse_go_duration(value: Any) -> float:
    """Go's time.ParseDuration as metav1.Duration uses it ('5m', '1h30m', '168h', '0s') -> seconds.

    A plain number is taken as seconds (YAML users write `timeout: 600` by mistake; Kueue would refuse it, and
    kueueplan's validate says so, but the simulator should not crash on it)."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a duration")
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip()
        sign = -1.0 if text.startswith("-") else 1.0
        body = text.lstrip("+-")
        if body == "0":
            return 0.0
        pos, total = 0, 0.0
        for m in _GO_PART.finditer(body):
            if m.start() != pos:
                break
            total += float(m.group(1)) * _GO_UNITS[m.group(2)]
            pos = m.end()
        if not body or pos != len(body):
            raise ValueError(f"{value!r} is not a duration (write e.g. 90s, 10m, 1h30m)")
        seconds = sign * total
    else:
        raise ValueError(f"{value!r} is not a duration")
    if not math.isfinite(seconds) or abs(seconds) > MAX_SECONDS:
        raise ValueError(f"{value!r} is longer than a century")
    return seconds


def format_go_duration(seconds: float) -> str:
    """Seconds -> Go's Duration.String() form ('1h30m0s', '5m0s', '0s'), as Kueue would print it back."""
    if seconds == 0:
        return "0s"
    ms = round(abs(seconds) * 1000)
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s = rest / 1000
    out = "-" if seconds < 0 else ""
    if h:
        out += f"{h}h"
    if h or m:
        out += f"{m}m"
    out += f"{s:g}s"
    return out


Duration = Annotated[float, BeforeValidator(parse_go_duration), PlainSerializer(format_go_duration, return_type=str)]


def _quantity(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError(f"{value!r} is not a quantity")
    return value


Quantity = Annotated[Any, BeforeValidator(_quantity)]

# --------------------------------------------------------------------------------------------- the model


class _Model(BaseModel):
    # Unknown fields are kept (a newer Kueue's field must not make kueueplan lose it); names are Kueue's JSON ones.
    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=False)


class RequeuingStrategy(_Model):
    timestamp: str | None = None  # Eviction | Creation
    backoff_limit_count: int | None = Field(None, alias="backoffLimitCount")  # None = requeue forever
    backoff_base_seconds: int | None = Field(None, alias="backoffBaseSeconds")
    backoff_max_seconds: int | None = Field(None, alias="backoffMaxSeconds")


class WaitForPodsReady(_Model):
    enable: bool | None = None  # v1beta1 only; v1beta2 has no switch (present = on)
    timeout: Duration | None = None
    block_admission: bool | None = Field(None, alias="blockAdmission")
    requeuing_strategy: RequeuingStrategy | None = Field(None, alias="requeuingStrategy")
    recovery_timeout: Duration | None = Field(None, alias="recoveryTimeout")


class FairSharing(_Model):
    enable: bool | None = None  # v1beta1 only
    preemption_strategies: list[str] | None = Field(None, alias="preemptionStrategies")


class AdmissionFairSharing(_Model):
    usage_half_life_time: Duration = Field(0.0, alias="usageHalfLifeTime")
    usage_sampling_interval: Duration = Field(0.0, alias="usageSamplingInterval")
    resource_weights: dict[str, float] | None = Field(None, alias="resourceWeights")


class ResourceTransformation(_Model):
    input: str
    strategy: str | None = None  # Retain (default) | Replace
    multiply_by: str | None = Field(None, alias="multiplyBy")
    outputs: dict[str, Quantity] = Field(default_factory=dict)


class Resources(_Model):
    quota_check_strategy: str | None = Field(None, alias="quotaCheckStrategy")
    exclude_resource_prefixes: list[str] = Field(default_factory=list, alias="excludeResourcePrefixes")
    transformations: list[ResourceTransformation] = Field(default_factory=list)
    device_class_mappings: list[dict[str, Any]] | None = Field(None, alias="deviceClassMappings")


class Integrations(_Model):
    frameworks: list[str] | None = None
    external_frameworks: list[str] | None = Field(None, alias="externalFrameworks")
    label_keys_to_copy: list[str] | None = Field(None, alias="labelKeysToCopy")
    pod_options: dict[str, Any] | None = Field(None, alias="podOptions")  # v1beta1, deprecated


class Configuration(_Model):
    api_version: str = Field(V1BETA2, alias="apiVersion")
    kind: str = "Configuration"
    namespace: str | None = None
    manage_jobs_without_queue_name: bool = Field(False, alias="manageJobsWithoutQueueName")
    managed_jobs_namespace_selector: dict[str, Any] | None = Field(None, alias="managedJobsNamespaceSelector")
    wait_for_pods_ready: WaitForPodsReady | None = Field(None, alias="waitForPodsReady")
    integrations: Integrations | None = None
    fair_sharing: FairSharing | None = Field(None, alias="fairSharing")
    admission_fair_sharing: AdmissionFairSharing | None = Field(None, alias="admissionFairSharing")
    resources: Resources | None = None
    feature_gates: dict[str, bool] = Field(default_factory=dict, alias="featureGates")
    multi_kueue: dict[str, Any] | None = Field(None, alias="multiKueue")
    object_retention_policies: dict[str, Any] | None = Field(None, alias="objectRetentionPolicies")

    @field_validator("api_version")
    @classmethod
    def _known_version(cls, v: str) -> str:
        if v not in (V1BETA1, V1BETA2):
            raise ValueError(f"apiVersion must be {V1BETA2} or {V1BETA1}")
        return v

    @field_validator("kind")
    @classmethod
    def _kind(cls, v: str) -> str:
        if v != "Configuration":
            raise ValueError("kind must be Configuration")
        return v

    # ---- convenience readings of the effective object (after parse_configuration)

    @property
    def frameworks(self) -> tuple[str, ...]:
        return tuple(self.integrations.frameworks or ()) if self.integrations else ()

    @property
    def wait_for_pods_ready_enabled(self) -> bool:
        return self.wait_for_pods_ready is not None

    def to_dict(self) -> dict[str, Any]:
        """Kueue's JSON form (camelCase, durations as Go strings), unset fields left out."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


# --------------------------------------------------------------------------------------------- releases

# Each supported release's shipped config/components/manager/controller_manager_config.yaml: its apiVersion and
# `integrations.frameworks` (read at the newest patch tag of each minor: v0.8.4 ... v0.19.2). Nothing else in
# those files changes admission (health, metrics, webhook, leader election, client QPS, groupKindConcurrency).
_KUBEFLOW_V1 = ("kubeflow.org/paddlejob", "kubeflow.org/pytorchjob", "kubeflow.org/tfjob", "kubeflow.org/xgboostjob")
_TO_V0_10 = ("batch/job", "kubeflow.org/mpijob", "ray.io/rayjob", "ray.io/raycluster", "jobset.x-k8s.io/jobset",
             "kubeflow.org/mxjob", *_KUBEFLOW_V1)
_V0_11 = ("batch/job", "kubeflow.org/mpijob", "ray.io/rayjob", "ray.io/raycluster", "jobset.x-k8s.io/jobset",
          *_KUBEFLOW_V1, "workload.codeflare.dev/appwrapper")
_V0_12 = (*_V0_11[:-1], "kubeflow.org/jaxjob", "workload.codeflare.dev/appwrapper")
_V0_14 = (*_V0_12, "trainer.kubeflow.org/trainjob")
_SERVING = ("pod", "deployment", "statefulset", "leaderworkerset.x-k8s.io/leaderworkerset")
_V0_16 = (*_V0_14, *_SERVING)
_V0_17 = ("batch/job", "kubeflow.org/mpijob", "ray.io/rayjob", "ray.io/raycluster", "ray.io/rayservice",
          *_V0_16[4:])
_V0_19 = ("batch/job", "kubeflow.org/mpijob", "ray.io/rayjob", "ray.io/raycluster", "ray.io/rayservice",
          "jobset.x-k8s.io/jobset", "workload.codeflare.dev/appwrapper", "trainer.kubeflow.org/trainjob", *_SERVING)

SHIPPED_FRAMEWORKS: dict[tuple[int, int], tuple[str, ...]] = {
    (0, 8): _TO_V0_10, (0, 9): _TO_V0_10, (0, 10): _TO_V0_10,
    (0, 11): _V0_11, (0, 12): _V0_12, (0, 13): _V0_12, (0, 14): _V0_14, (0, 15): _V0_14,
    (0, 16): _V0_16, (0, 17): _V0_17, (0, 18): _V0_17, (0, 19): _V0_19,
}
SUPPORTED_RELEASES = tuple(sorted(SHIPPED_FRAMEWORKS))
FIRST_V1BETA2 = (0, 15)  # apis/config/v1beta2 appears in v0.15.0; its shipped file is v1beta2 from then on
WAIT_FOR_PODS_READY_ALWAYS_ON = (0, 19)  # v0.19.0 apis/config/v1beta2/defaults.go: defaulted on, 30m timeout
NAMESPACE_SELECTOR_FOR_LABELLED = (0, 19)  # managedJobsNamespaceSelector also gates jobs with a queue name
# The release from which a feature gate kueueplan judges is on by default (pkg/features/kube_features.go).
GATE_ON_FROM = {
    "MultiKueue": (0, 9),  # alpha (off) in v0.6-v0.8, beta (on) from v0.9
    "TopologyAwareScheduling": (0, 14),  # beta, on by default
    "AssignQueueLabelsForPods": (0, 17),  # beta
    "ElasticJobsViaWorkloadSlices": (0, 18),  # beta
}


def gate_on(feature_gates: Mapping[str, Any], gate: str, release: tuple[int, ...]) -> bool:
    """A feature gate in a release: the Configuration's `featureGates`, else the release's default."""
    value = feature_gates.get(gate)
    return value if isinstance(value, bool) else tuple(release[:2]) >= GATE_ON_FROM[gate]


def _release(release: tuple[int, int]) -> tuple[int, int]:
    """The nearest supported release at or below `release` (a newer one behaves as the newest)."""
    known = [r for r in SUPPORTED_RELEASES if r <= tuple(release)]
    return known[-1] if known else SUPPORTED_RELEASES[0]


def shipped_manager_config(release: tuple[int, int]) -> dict[str, Any]:
    r = _release(release)
    return {"apiVersion": V1BETA2 if r >= FIRST_V1BETA2 else V1BETA1, "kind": "Configuration",
            "integrations": {"frameworks": list(SHIPPED_FRAMEWORKS[r])}}


# --------------------------------------------------------------------------------------------- effective config


def _merge(shipped: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """Fields of `given` win; mappings merge field by field; lists and scalars replace."""
    out = dict(shipped)
    for k, v in given.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def _default_wait_for_pods_ready(cfg: Configuration, v1beta1: bool, release: tuple[int, int]) -> None:
    w = cfg.wait_for_pods_ready
    if v1beta1:
        # v1beta1 defaults.go + Convert_v1beta1_Configuration_To_v1beta2: off unless enable; timeout 5m;
        # blockAdmission defaults to enable (true).
        if w is None or not w.enable:
            cfg.wait_for_pods_ready = None
            return
        w.timeout = w.timeout if w.timeout else 300.0
        w.block_admission = True if w.block_admission is None else w.block_admission
    else:
        if w is None and release >= WAIT_FOR_PODS_READY_ALWAYS_ON:
            w = cfg.wait_for_pods_ready = WaitForPodsReady()
        if w is None:
            return
        if not w.timeout and release >= WAIT_FOR_PODS_READY_ALWAYS_ON:
            w.timeout = 1800.0  # DefaultWaitForPodsReadyTimeout = 30 * time.Minute
        w.block_admission = False if w.block_admission is None else w.block_admission
    w.enable = None
    if w.recovery_timeout is None:
        w.recovery_timeout = w.timeout
    rs = w.requeuing_strategy = w.requeuing_strategy or RequeuingStrategy()
    rs.timestamp = rs.timestamp or "Eviction"
    rs.backoff_base_seconds = rs.backoff_base_seconds or 60  # DefaultRequeuingBackoffBaseSeconds
    rs.backoff_max_seconds = rs.backoff_max_seconds or 3600  # DefaultRequeuingBackoffMaxSeconds


def _apply_defaults(cfg: Configuration, release: tuple[int, int]) -> Configuration:
    v1beta1 = cfg.api_version == V1BETA1
    cfg.namespace = cfg.namespace or DEFAULT_NAMESPACE
    _default_wait_for_pods_ready(cfg, v1beta1, release)
    fs = cfg.fair_sharing
    if fs is not None and v1beta1 and not fs.enable:
        cfg.fair_sharing = None  # Convert_v1beta1_Configuration_To_v1beta2: disabled = nil
    elif fs is not None:
        fs.enable = None
        if not fs.preemption_strategies:  # preemption.go parseStrategies: empty = both
            fs.preemption_strategies = ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
    cfg.integrations = cfg.integrations or Integrations()
    if not cfg.integrations.frameworks:
        cfg.integrations.frameworks = ["batch/job"]  # defaultJobFrameworkName
    if cfg.managed_jobs_namespace_selector is None:
        cfg.managed_jobs_namespace_selector = {"matchExpressions": [{
            "key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", cfg.namespace]}]}
    afs = cfg.admission_fair_sharing
    if afs is not None and not afs.usage_sampling_interval:
        afs.usage_sampling_interval = 300.0  # 5 * time.Minute
    if cfg.resources is not None:
        for t in cfg.resources.transformations:
            t.strategy = t.strategy or "Retain"  # DefaultResourceTransformationStrategy
    cfg.api_version = V1BETA2  # the internal version, as Kueue holds it after conversion
    return cfg


def parse_configuration(data: Mapping[str, Any] | None, release: tuple[int, int] = (0, 19),
                        file: str | None = None, line: int | None = None) -> Configuration:
    """The effective Configuration of a `release` install whose ConfigMap holds `data` (None: the default)."""
    r = _release(release)
    given = dict(data) if data is not None else {}
    if not isinstance(given, Mapping):
        raise KueueplanError("the Kueue Configuration must be a mapping", file=file, line=line)
    api_version = given.get("apiVersion") or shipped_manager_config(r)["apiVersion"]
    if api_version == V1BETA2 and r < FIRST_V1BETA2:
        raise KueueplanError(f"Kueue v{r[0]}.{r[1]} reads only {V1BETA1} Configurations, not {V1BETA2}",
                             file=file, line=line, hint="write apiVersion: config.kueue.x-k8s.io/v1beta1")
    merged = _merge(shipped_manager_config(r), given)
    merged["apiVersion"] = api_version
    try:
        cfg = Configuration.model_validate(merged)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise KueueplanError(f"Kueue Configuration: {where}: {first['msg']}", file=file, line=line,
                             hint="see Kueue's config.kueue.x-k8s.io Configuration reference") from None
    return _apply_defaults(cfg, r)


def default_configuration(release: tuple[int, int] = (0, 19)) -> Configuration:
    return parse_configuration(None, release)


def configuration_from_configmap(obj: Mapping[str, Any], file: str | None = None,
                                 line: int | None = None) -> dict[str, Any] | None:
    """The Configuration inside a `kueue-manager-config` ConfigMap; None for any other object."""
    if obj.get("kind") != "ConfigMap" or str(obj.get("apiVersion", "v1")) != "v1":
        return None
    md = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    if md.get("name") != CONFIGMAP_NAME:
        return None
    text = (obj.get("data") or {}).get(CONFIGMAP_KEY) if isinstance(obj.get("data"), Mapping) else None
    if not isinstance(text, str):
        raise KueueplanError(f"ConfigMap {CONFIGMAP_NAME} has no data.{CONFIGMAP_KEY}", file=file, line=line,
                             hint="Kueue's manager reads its Configuration from that key")
    if len(text) > 1_000_000:
        raise KueueplanError(f"ConfigMap {CONFIGMAP_NAME}: {CONFIGMAP_KEY} is larger than 1 MB", file=file, line=line)
    where = f"{file or '<manifest>'} (ConfigMap {CONFIGMAP_NAME}, {CONFIGMAP_KEY})"
    try:  # the project's loader: duplicate keys, alias bombs and deep nesting are refused
        docs = [d for d in yamlio.load_text(text, where) if d.data is not None]
    except KueueplanError as e:
        raise KueueplanError(f"{where}: {e.message}", file=file, line=line, hint=e.hint) from None
    if len(docs) != 1:
        raise KueueplanError(f"ConfigMap {CONFIGMAP_NAME}: {CONFIGMAP_KEY} must hold one Configuration document",
                             file=file, line=line)
    data = docs[0].data
    if not isinstance(data, Mapping):
        raise KueueplanError(f"ConfigMap {CONFIGMAP_NAME}: {CONFIGMAP_KEY} must hold a Configuration mapping",
                             file=file, line=line)
    return dict(data)


__all__ = ["Configuration", "WaitForPodsReady", "RequeuingStrategy", "FairSharing", "AdmissionFairSharing",
           "Resources", "ResourceTransformation", "Integrations", "parse_configuration", "default_configuration",
           "shipped_manager_config", "configuration_from_configmap", "parse_go_duration", "format_go_duration",
           "SHIPPED_FRAMEWORKS", "SUPPORTED_RELEASES", "CONFIGMAP_NAME", "CONFIGMAP_KEY", "V1BETA1", "V1BETA2",
           "NAMESPACE_SELECTOR_FOR_LABELLED"]
