"""Kueue's Configuration as the simulator uses it (the effective object comes from kube.configuration).

Which job kinds Kueue manages (pkg/controller/jobframework/reconciler.go, setup.go), what counts against quota
(pkg/workload/workload.go dropExcludedResources + applyResourceTransformations, per pod, before x count), the
waitForPodsReady time model (pkg/controller/core/workload_controller.go), admission fair sharing, and the fields
and feature gates that change admission but are not modelled (named in `warnings`, never dropped silently).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kueueplan.kube.configuration import NAMESPACE_SELECTOR_FOR_LABELLED, Configuration, shipped_manager_config
from kueueplan.kube.objects import LabelSelector, Source, read_label_selector, selector_matches
from kueueplan.kube.configschema import FRAMEWORK_BY_KIND, registered
from kueueplan.kube.podsets import RUNTIME_KINDS, SUPPORTED_KINDS, PodSet, WorkloadSpec
from kueueplan.kube.quantity import is_cpu, parse_quantity, resource_value

# The integration (framework name) that manages each workload kind the simulator reads (a Workload is Kueue's own).
FRAMEWORK_OF_KIND = {kind: framework for kind, framework in FRAMEWORK_BY_KIND.items() if kind in SUPPORTED_KINDS}

# Feature gates whose switch the simulator follows; every other gate named in the Configuration is a warning
# (the release's default is simulated). pkg/features/kube_features.go (v0.19.2) defaults: all on.
MODELLED_GATES = {"AdmissionFairSharing": True, "PartialAdmission": True,
                  "ManagedJobsNamespaceSelectorAlwaysRespected": True, "PrioritySortingWithinCohort": True}


@dataclass(frozen=True)
class PodsReadyPolicy:
    timeout: int  # ms
    block_admission: bool
    backoff_limit: int | None  # None: requeue forever
    backoff_base: int  # s
    backoff_max: int  # s
    eviction_timestamp: bool  # requeuingStrategy.timestamp == Eviction

    def backoff_ms(self, n: int) -> int:
        """UpdateRequeueState (pkg/workload/workload.go): base * 2^(n-1), capped at max; no jitter."""
        return min(self.backoff_base * 2 ** (n - 1), self.backoff_max) * 1000


@dataclass
class SimConfiguration:
    release: tuple[int, int]
    source: str
    frameworks: frozenset[str]
    manage_without_queue_name: bool
    namespace_selector: LabelSelector | None
    selector_for_labelled: bool
    pods_ready: PodsReadyPolicy | None
    fair_sharing: dict[str, Any] | None
    afs_half_life: int | None = None  # ms; None = admission fair sharing off
    afs_interval: int = 300_000
    afs_weights: dict[str, float] = field(default_factory=dict)
    partial_admission: bool = True
    priority_sorting: bool = True  # PrioritySortingWithinCohort
    exclude_prefixes: tuple[str, ...] = ()
    transformations: dict[str, Any] = field(default_factory=dict)  # input -> ResourceTransformation
    warnings: list[str] = field(default_factory=list)  # Configuration fields that change admission, unmodelled
    notes: list[str] = field(default_factory=list)  # what the run simulates, for reports

    # ------------------------------------------------------------------ managed or not

    def unmanaged_reason(self, spec: WorkloadSpec, ns_labels: dict[str, str], has_default_lq: bool) -> str | None:
        """Why Kueue would leave this object alone (no Workload, no quota, no events), or None."""
        if spec.kind == "Workload":
            return None  # a Workload object is Kueue's own
        fw = FRAMEWORK_OF_KIND.get(spec.kind)
        if fw is not None and fw not in self.frameworks:
            return f"integration {fw} is not enabled in integrations.frameworks"
        labelled = bool(spec.queue_name)
        if (self.selector_for_labelled or not labelled) and not selector_matches(self.namespace_selector, ns_labels):
            return f"namespace {spec.namespace} is outside managedJobsNamespaceSelector"
        if not labelled and not self.manage_without_queue_name and not has_default_lq:
            return "no kueue.x-k8s.io/queue-name label (manageJobsWithoutQueueName is false and the namespace " \
                   "has no LocalQueue named default)"
        return None

    # ------------------------------------------------------------------ what counts against quota

    def effective_spec(self, spec: WorkloadSpec) -> WorkloadSpec:
        if not self.exclude_prefixes and not self.transformations:
            return spec
        pod_sets = tuple(dataclasses.replace(ps, requests=self._requests(ps)) for ps in spec.pod_sets)
        return dataclasses.replace(spec, pod_sets=pod_sets)

    def _requests(self, ps: PodSet) -> tuple[tuple[str, int], ...]:
        per_pod = {r: v for r, v in ps.requests if not any(r.startswith(p) for p in self.exclude_prefixes)}
        if not any(r in self.transformations for r in per_pod):
            return tuple(sorted(per_pod.items()))
        real = {r: Fraction(v, 1000) if is_cpu(r) else Fraction(v) for r, v in per_pod.items()}
        retained: dict[str, int] = {}
        generated: dict[str, Fraction] = {}
        for r, v in per_pod.items():
            t = self.transformations.get(r)
            if t is None:
                retained[r] = v
                continue
            base = real[r]
            if t.multiply_by and t.multiply_by in real:
                base = base * real[t.multiply_by]
            for out, factor in t.outputs.items():
                generated[out] = generated.get(out, Fraction(0)) + base * parse_quantity(factor)
            if (t.strategy or "Retain") == "Retain":
                retained[r] = v
        for out, q in generated.items():  # negative totals are clamped to zero (an allowance, never a credit)
            retained[out] = retained.get(out, 0) + resource_value(out, max(q, Fraction(0)))
        return tuple(sorted(retained.items()))


def _warn_unmodelled(cfg: Configuration, release: tuple[int, int], out: list[str]) -> None:
    res = cfg.resources
    if res is not None and res.quota_check_strategy not in (None, "BlockUndeclared"):
        out.append(f"configuration resources.quotaCheckStrategy {res.quota_check_strategy} is not modelled: "
                   "simulated as BlockUndeclared (a resource no flavor covers makes a workload inadmissible)")
    if res is not None and res.device_class_mappings:
        out.append("configuration resources.deviceClassMappings (DRA) is not modelled: DRA claims count nothing")
    missing = sorted(f for f in cfg.frameworks if not registered(f, release))
    if missing:  # validateIntegrations: such a manager does not start (validate's KP452)
        out.append(f"configuration integrations.frameworks names {', '.join(missing)}, which Kueue "
                   f"v{release[0]}.{release[1]} does not have (its manager would not start): simulated as not enabled")
    integ = cfg.integrations
    if integ is not None and integ.external_frameworks:
        out.append("configuration integrations.externalFrameworks is not modelled: "
                   f"{', '.join(integ.external_frameworks)} objects are not simulated")
    if integ is not None and integ.pod_options and release < (0, 19):
        # v0.19's conversion drops the deprecated podOptions (configuration_conversion.go); older releases apply
        # its namespaceSelector to Pods on top of managedJobsNamespaceSelector.
        out.append("configuration integrations.podOptions is not modelled: Pods are managed per "
                   "managedJobsNamespaceSelector only")
    if cfg.multi_kueue:
        out.append("configuration multiKueue is not modelled: MultiKueue admission checks are Ready at once")
    for gate, value in sorted(cfg.feature_gates.items()):
        if gate not in MODELLED_GATES:
            out.append(f"configuration featureGates.{gate}={str(value).lower()} is not modelled: simulated with "
                       "the release's default")
    extra = sorted(k for k in (cfg.model_extra or {}) if k not in ("health", "metrics", "webhook", "leaderElection",
                   "controller", "clientConnection", "internalCertManagement", "pprofBindAddress", "tls",
                   "visibilityServer"))
    for k in extra:
        out.append(f"configuration field {k} is not known to kueueplan: not simulated")


def sim_configuration(cfg: Configuration, release: tuple[int, int], source: str,
                      fair_sharing: dict[str, Any] | None) -> SimConfiguration:
    gates = {g: cfg.feature_gates.get(g, d) for g, d in MODELLED_GATES.items()}
    selector = read_label_selector(cfg.managed_jobs_namespace_selector, Source("configuration"))
    pods_ready = None
    w = cfg.wait_for_pods_ready
    if w is not None and w.timeout:
        rs = w.requeuing_strategy
        pods_ready = PodsReadyPolicy(round(w.timeout * 1000), bool(w.block_admission),
                                     rs.backoff_limit_count if rs else None,
                                     (rs.backoff_base_seconds if rs else None) or 60,
                                     (rs.backoff_max_seconds if rs else None) or 3600,
                                     (rs.timestamp if rs else "Eviction") != "Creation")
    sim = SimConfiguration(
        release=release, source=source, frameworks=frozenset(f for f in cfg.frameworks if registered(f, release)),
        manage_without_queue_name=cfg.manage_jobs_without_queue_name, namespace_selector=selector,
        selector_for_labelled=release >= NAMESPACE_SELECTOR_FOR_LABELLED and
        gates["ManagedJobsNamespaceSelectorAlwaysRespected"],
        pods_ready=pods_ready, fair_sharing=fair_sharing, partial_admission=gates["PartialAdmission"],
        priority_sorting=gates["PrioritySortingWithinCohort"])
    afs = cfg.admission_fair_sharing
    if afs is not None and gates["AdmissionFairSharing"]:
        sim.afs_half_life = round(afs.usage_half_life_time * 1000)
        sim.afs_interval = max(1, round(afs.usage_sampling_interval * 1000))
        sim.afs_weights = dict(afs.resource_weights or {})
    if cfg.resources is not None:
        sim.exclude_prefixes = tuple(cfg.resources.exclude_resource_prefixes)
        sim.transformations = {t.input: t for t in cfg.resources.transformations}
    _warn_unmodelled(cfg, release, sim.warnings)
    sim.notes.append(_describe(sim))
    return sim


def _describe(c: SimConfiguration) -> str:
    shipped = frozenset(shipped_manager_config(c.release)["integrations"]["frameworks"])
    if c.frameworks == shipped:
        parts = ["frameworks as shipped"]
    else:
        parts = [f"frameworks {', '.join(sorted(c.frameworks))}"]
    if c.pods_ready is not None:
        p = c.pods_ready
        limit = "unlimited" if p.backoff_limit is None else str(p.backoff_limit)
        parts.append(f"waitForPodsReady timeout {p.timeout // 1000}s, blockAdmission {str(p.block_admission).lower()}"
                     f", backoff {p.backoff_base}s..{p.backoff_max}s, limit {limit}")
    else:
        parts.append("waitForPodsReady off")
    parts.append("fairSharing on" if c.fair_sharing is not None else "fairSharing off")
    if c.afs_half_life is not None:
        parts.append(f"admissionFairSharing half-life {c.afs_half_life // 1000}s")
    if c.manage_without_queue_name:
        parts.append("manageJobsWithoutQueueName")
    if c.transformations or c.exclude_prefixes:
        parts.append("resource transformations/exclusions")
    return "; ".join(parts)


def not_simulated_warning(objects: list[Any], limit: int = 20) -> str | None:
    """Objects among the manifests that the simulator does not read (the Configuration's ConfigMap aside)."""
    names = []
    for data in objects:
        md = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
        if data.get("kind") == "ConfigMap" and md.get("name") == "kueue-manager-config":
            continue
        if str(data.get("apiVersion", "")).startswith("kustomize.config.k8s.io/"):
            continue  # kustomize's own file (a build artefact), never applied to a cluster
        if data.get("kind") in RUNTIME_KINDS and str(data.get("apiVersion", "")).startswith("trainer.kubeflow.org/"):
            continue  # read by the TrainJobs that refer to them (kube.podsets)
        ns = f"{md['namespace']}/" if md.get("namespace") else ""
        names.append(f"{data.get('kind')} {ns}{md.get('name')}")
    if not names:
        return None
    names.sort()
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return f"not simulated (kueueplan does not model these objects): {', '.join(names[:limit])}{more}"


__all__ = ["not_simulated_warning", "SimConfiguration", "PodsReadyPolicy", "sim_configuration", "FRAMEWORK_OF_KIND",
           "MODELLED_GATES"]
