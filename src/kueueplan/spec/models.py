"""The platform spec: pydantic models of `kueueplan.io/v1alpha1` documents.

Every document is `{apiVersion, kind, metadata, spec}`. Field names follow Kueue's where a field maps onto a Kueue
field one to one (nominalQuota, borrowingLimit, reclaimWithinCohort, ...), so the spec reads like the manifests
it becomes. Unknown fields are errors (extra="forbid"); scalars are strict (no "5" for 5).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema, field_validator, model_validator

from kueueplan.kube.configschema import json_schema as _configuration_schema
from kueueplan.kube.apiversion import KUEUEPLAN_API
from kueueplan.kube.configuration import Configuration as _KueueConfiguration
from kueueplan.kube.podsets import JOB_KINDS
from kueueplan.spec.types import (
    AnnotationMap,
    DnsLabel,
    LabelKey,
    LabelMap,
    DnsSubdomain,
    Duration,
    DurationOrNever,
    Quantity,
    ResourceName,
    StringMap,
)

INT32_MAX = 2**31 - 1


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=False)


def _name_to_mapping(key: str, model: Any) -> Any:
    """Lets a list item be written as a bare name: `- team-a` means `- {name: team-a}`."""

    def convert(value: Any) -> Any:
        return {key: value} if isinstance(value, str) else value

    return BeforeValidator(convert, json_schema_input_type=str | model)


# --------------------------------------------------------------------------- metadata


class Metadata(Strict):
    name: DnsLabel = Field(description="Name of the object; also the name of the Kueue object it becomes")
    environments: list[DnsLabel] | None = Field(
        default=None, description="Only render this document in these environments (default: all)")
    labels: LabelMap = Field(default_factory=dict, description="Extra labels for the generated objects")
    annotations: AnnotationMap = Field(default_factory=dict, description="Extra annotations for the generated objects")


# --------------------------------------------------------------------------- ResourceFlavor


class Taint(Strict):
    key: str
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


class Toleration(Strict):
    key: str | None = None
    operator: Literal["Equal", "Exists"] | None = None
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None
    tolerationSeconds: int | None = None


class ResourceFlavorSpec(Strict):
    nodeLabels: LabelMap = Field(default_factory=dict, description="Labels of the nodes of this flavor (≤ 8)")
    nodeTaints: list[Taint] = Field(default_factory=list, max_length=8)
    tolerations: list[Toleration] = Field(default_factory=list, max_length=8)
    topologyName: DnsSubdomain | None = Field(default=None, description="A Topology document (TAS)")


# --------------------------------------------------------------------------- Topology (topology-aware scheduling)


HOSTNAME_LABEL = "kubernetes.io/hostname"


class TopologyLevel(Strict):
    nodeLabel: LabelKey = Field(max_length=316, description="A node label naming one level, e.g. "
                                                            "cloud.google.com/gke-nodepool")


class TopologySpec(Strict):
    levels: list[Annotated[TopologyLevel, _name_to_mapping("nodeLabel", TopologyLevel)]] = Field(
        min_length=1, max_length=16,
        description="Node labels from the widest level (block, rack) to the narrowest (kubernetes.io/hostname)")

    @field_validator("levels")
    @classmethod
    def _levels(cls, levels: list[TopologyLevel]) -> list[TopologyLevel]:
        # The CRD's CEL rules (kueue apis/kueue/v1beta2/topology_types.go): unique levels, hostname last.
        labels = [level.nodeLabel for level in levels]
        if len(set(labels)) != len(labels):
            raise ValueError("topology levels must be unique")
        if HOSTNAME_LABEL in labels[:-1]:
            raise ValueError(f"{HOSTNAME_LABEL} can only be the lowest (last) level")
        return levels


# --------------------------------------------------------------------------- MultiKueue


class KubeConfig(Strict):
    locationType: Literal["Secret", "Path"] = Field(
        default="Secret", description="Secret: a Secret in Kueue's namespace; Path: a file on Kueue's manager")
    location: str = Field(min_length=1, max_length=256, description="The Secret's name, or the file's path")


class ClusterProfileRef(Strict):
    name: str = Field(min_length=1, max_length=256)


class MultiKueueClusterSpec(Strict):
    """A worker cluster of MultiKueue. Kueue's v1beta1 API needs kubeConfig (clusterProfileRef beside it from
    Kueue v0.15); v1beta2 takes exactly one of them."""

    kubeConfig: KubeConfig | None = None
    clusterProfileRef: ClusterProfileRef | None = Field(
        default=None, description="A ClusterProfile (Kueue v0.15+, feature gate MultiKueueClusterProfile)")

    @model_validator(mode="after")
    def _source(self) -> MultiKueueClusterSpec:
        if self.kubeConfig is None and self.clusterProfileRef is None:
            raise ValueError("set 'kubeConfig' or 'clusterProfileRef'")
        return self


# --------------------------------------------------------------------------- Priority


class PrioritySpec(Strict):
    value: int = Field(ge=-INT32_MAX - 1, le=INT32_MAX, description="Higher runs first and may preempt lower")
    description: str | None = Field(default=None, max_length=2048)


# --------------------------------------------------------------------------- quotas (teams and cohorts)


def _quota_shorthand(value: Any) -> Any:
    return value if isinstance(value, dict) else {"nominalQuota": value}


class ResourceQuota(Strict):
    nominalQuota: Quantity
    borrowingLimit: Quantity | None = None
    lendingLimit: Quantity | None = None


QuotaValue = Annotated[ResourceQuota, BeforeValidator(_quota_shorthand,
                                                      json_schema_input_type=int | float | str | ResourceQuota)]


class FlavorQuota(Strict):
    flavor: DnsLabel = Field(description="A ResourceFlavor; list order is Kueue's preference order")
    resources: dict[ResourceName, QuotaValue] = Field(
        description="resource name -> nominal quota, or {nominalQuota, borrowingLimit, lendingLimit}")


class FairSharing(Strict):
    weight: Quantity


# --------------------------------------------------------------------------- Cohort


class CohortSpec(Strict):
    parent: DnsLabel | None = Field(default=None, description="Parent cohort (hierarchical cohorts)")
    quotas: list[FlavorQuota] = Field(default_factory=list, description="Quota the cohort itself holds")
    fairSharing: FairSharing | None = None


# --------------------------------------------------------------------------- AdmissionCheck


class RetryStrategy(Strict):
    backoffLimitCount: int | None = Field(default=None, ge=0, le=INT32_MAX)
    backoffBaseSeconds: int | None = Field(default=None, ge=0, le=INT32_MAX)
    backoffMaxSeconds: int | None = Field(default=None, ge=0, le=INT32_MAX)


class ProvisioningRequest(Strict):
    configName: DnsLabel | None = Field(default=None,
                                        description="ProvisioningRequestConfig name (default <check>-config)")
    provisioningClassName: DnsSubdomain
    managedResources: list[ResourceName] = Field(default_factory=list, max_length=100)
    parameters: StringMap = Field(default_factory=dict)
    retryStrategy: RetryStrategy | None = None
    podSetMergePolicy: Literal["IdenticalPodTemplates", "IdenticalWorkloadSchedulingRequirements"] | None = None


class CheckParameters(Strict):
    apiGroup: DnsSubdomain
    kind: str = Field(pattern=r"^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$", max_length=63)
    name: DnsLabel


class CheckSimulation(Strict):
    delay: Duration | None = Field(default=None, description="Time from quota reservation until Ready")
    capacity: dict[ResourceName, Quantity] | None = Field(default=None,
                                                          description="At most this much provisioned at once")


class MultiKueue(Strict):
    configName: DnsSubdomain | None = Field(default=None, description="MultiKueueConfig name (default the check's)")
    clusters: list[DnsSubdomain] = Field(min_length=1, max_length=20, description="MultiKueueCluster documents")
    quotaManagement: Literal["Manual", "Automated"] | None = Field(default=None,
                                                                   description="Kueue v0.18+, v1beta2 API")

    @field_validator("clusters")
    @classmethod
    def _unique(cls, clusters: list[str]) -> list[str]:
        if len(set(clusters)) != len(clusters):
            raise ValueError("a cluster is listed twice")
        return clusters


class AdmissionCheckSpec(Strict):
    provisioningRequest: ProvisioningRequest | None = None
    multiKueue: MultiKueue | None = Field(default=None, description="Dispatch admitted workloads to worker clusters")
    controllerName: str | None = Field(default=None, min_length=1, max_length=253,
                                       description="Any other admission check controller")
    parameters: CheckParameters | None = None
    simulation: CheckSimulation | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> AdmissionCheckSpec:
        kinds = [self.provisioningRequest, self.multiKueue, self.controllerName]
        if sum(k is not None for k in kinds) != 1:
            raise ValueError("set exactly one of 'provisioningRequest', 'multiKueue' or 'controllerName'")
        if self.controllerName is None and self.parameters is not None:
            raise ValueError("'parameters' is for a generic controller; a provisioningRequest or multiKueue check "
                             "gets its generated config as parameters")
        return self


# --------------------------------------------------------------------------- Team


class BorrowWithinCohort(Strict):
    policy: Literal["Never", "LowerPriority"] = "Never"
    maxPriorityThreshold: int | None = Field(default=None, ge=-INT32_MAX - 1, le=INT32_MAX)


class Preemption(Strict):
    withinClusterQueue: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] | None = None
    reclaimWithinCohort: Literal["Never", "LowerPriority", "Any"] | None = None
    borrowWithinCohort: BorrowWithinCohort | None = None


class FlavorFungibility(Strict):
    whenCanBorrow: Literal["MayStopSearch", "TryNextFlavor", "Borrow"] | None = None
    whenCanPreempt: Literal["MayStopSearch", "TryNextFlavor", "Preempt"] | None = None
    preference: Literal["BorrowingOverPreemption", "PreemptionOverBorrowing"] | None = None


class TeamCheck(Strict):
    name: DnsSubdomain
    onFlavors: list[DnsLabel] = Field(default_factory=list,
                                      description="Flavors this check applies to (default: all)")


class LocalQueueSpec(Strict):
    name: DnsLabel
    namespaces: list[DnsLabel] | None = Field(default=None,
                                              description="Namespaces to create it in (default: all the team's)")
    clusterQueue: DnsLabel | None = Field(
        default=None, description="One of the team's ClusterQueues (default: its first that is not lendOnly)")
    stopPolicy: Literal["None", "Hold", "HoldAndDrain"] | None = None
    fairSharing: FairSharing | None = None


class NamespaceSpec(Strict):
    name: DnsLabel
    labels: LabelMap = Field(default_factory=dict)
    create: bool = Field(default=True, description="false: the namespace exists already (e.g. default)")


class LabelSelectorRequirement(Strict):
    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: list[str] | None = None


class LabelSelector(Strict):
    matchLabels: LabelMap | None = None
    matchExpressions: list[LabelSelectorRequirement] | None = None


class Expectation(Strict):
    admittedWithin: Duration | None = None
    neverPreempted: bool | None = None
    preempted: bool | None = Field(default=None, description="true: preempted at least once")
    evicted: Literal["PodsReadyTimeout", "AdmissionCheck", "Deactivated", "Any"] | None = Field(
        default=None, description="Evicted at least once with this reason (Any: any eviction)")
    finishedBy: Duration | None = None
    state: Literal["Pending", "Inadmissible", "QuotaReserved", "Admitted", "Finished", "Deactivated"] | None = None
    probability: float | None = Field(
        default=None, gt=0, le=1, description="With `simulate --runs N`: the share of runs in which this must hold "
                                              "(default 1: every run); one run ignores it")


class QueueFields(Strict):
    """The fields of one ClusterQueue. A Team's are the defaults of each of its `clusterQueues` entries; a field an
    entry sets replaces the team's (the whole field: an entry's quotas replace the team's quotas)."""

    cohort: DnsLabel | None = None
    namespaceSelector: LabelSelector | None = Field(
        default=None, description="Override the generated selector ({} = every namespace)")
    quotas: list[FlavorQuota] = Field(default_factory=list)
    preemption: Preemption | None = None
    queueingStrategy: Literal["StrictFIFO", "BestEffortFIFO"] | None = None
    flavorFungibility: FlavorFungibility | None = None
    stopPolicy: Literal["None", "Hold", "HoldAndDrain"] | None = None
    fairSharing: FairSharing | None = None
    admissionChecks: list[Annotated[TeamCheck, _name_to_mapping("name", TeamCheck)]] = Field(default_factory=list)
    lendOnly: bool = Field(default=False,
                           description="A queue only lending its quota to its cohort: no namespaceSelector (Kueue: "
                                       "it selects no namespace), no namespaces or LocalQueues")
    expect: Expectation | None = Field(default=None,
                                       description="Expectation for every workload the ClusterQueue admits "
                                                   "(kueueplan simulate)")


QUEUE_FIELDS = tuple(QueueFields.model_fields)


class ClusterQueueEntry(QueueFields):
    """One of a team's ClusterQueues; unset fields are the team's."""

    name: DnsLabel = Field(description="ClusterQueue name")


class TeamSpec(QueueFields):
    namespaces: list[Annotated[NamespaceSpec, _name_to_mapping("name", NamespaceSpec)]] | None = Field(
        default=None, description="The team's namespaces (default: one named like the team; none when lendOnly)")
    clusterQueue: DnsLabel | None = Field(default=None, description="ClusterQueue name (default: the team's name); "
                                                                    "for one queue, without clusterQueues")
    clusterQueues: list[ClusterQueueEntry] | None = Field(
        default=None, min_length=1, description="Several ClusterQueues (e.g. dev and prod, or high and low "
                                                "priority), the team's queue fields being their defaults")
    localQueues: list[Annotated[LocalQueueSpec, _name_to_mapping("name", LocalQueueSpec)]] | None = Field(
        default=None, description="LocalQueues (default: one named like the team; none when every queue is "
                                  "lendOnly)")
    priorities: list[DnsLabel] | None = Field(default=None, description="Priorities the team may use (default: all)")
    flavors: list[DnsLabel] | None = Field(default=None, description="Flavors the team may use (default: all)")

    @field_validator("clusterQueues")
    @classmethod
    def _distinct(cls, queues: list[ClusterQueueEntry] | None) -> list[ClusterQueueEntry] | None:
        names = [q.name for q in queues or []]
        if len(set(names)) != len(names):
            raise ValueError("clusterQueues names must be distinct")
        return queues

    @model_validator(mode="after")
    def _queues(self) -> TeamSpec:
        if self.clusterQueues is not None:
            if self.clusterQueue is not None:
                raise ValueError("set 'clusterQueue' (one queue) or 'clusterQueues', not both")
        elif self.lendOnly and self.namespaceSelector is not None:
            # (an entry's mix of its own and the team's fields is checked by build, at the field)
            raise ValueError("a lendOnly team has no namespaceSelector: a lend-only queue selects no namespace")
        return self

    def queue_specs(self, team: str) -> list[ClusterQueueEntry]:
        """The team's ClusterQueues with the team's fields filled in where an entry does not set them; without
        `clusterQueues`, one named `clusterQueue` or `team`."""
        if self.clusterQueues is None:
            values = {f: getattr(self, f) for f in QUEUE_FIELDS}
            return [ClusterQueueEntry.model_construct(name=self.clusterQueue or team, **values)]
        return [ClusterQueueEntry.model_construct(
            name=entry.name, **{f: getattr(entry if f in entry.model_fields_set else self, f) for f in QUEUE_FIELDS})
            for entry in self.clusterQueues]

    def all_lend_only(self) -> bool:
        return all(queue.lendOnly for queue in self.queue_specs(""))


# --------------------------------------------------------------------------- Workload


class Resources(Strict):
    requests: dict[ResourceName, Quantity] = Field(default_factory=dict)
    limits: dict[ResourceName, Quantity] = Field(default_factory=dict)


class PodTemplate(Strict):
    """A pod of a Ray group, a Job or a plain Pod. `container`, `pod`, `metadata` and `group` are merged verbatim
    under the generated fields, for anything the typed fields do not cover (ports, volumes, env, ...)."""

    image: str | None = None
    containerName: DnsLabel | None = None
    command: list[str] | None = None
    args: list[str] | None = None
    resources: Resources | None = None
    rayStartParams: StringMap | None = None
    container: dict[str, Any] = Field(default_factory=dict, description="Extra fields of the main container")
    pod: dict[str, Any] = Field(default_factory=dict, description="Extra fields of the pod spec")
    metadata: dict[str, Any] | None = Field(default=None, description="Pod template metadata")
    group: dict[str, Any] = Field(default_factory=dict,
                                  description="Extra fields of the Ray group spec (enableIngress, ...), the JobSet "
                                              "replicatedJob or the PyTorchJob replica spec")


class WorkerGroup(PodTemplate):
    groupName: DnsLabel
    replicas: int = Field(default=1, ge=0, le=INT32_MAX)
    minReplicas: int | None = Field(default=None, ge=0, le=INT32_MAX)
    maxReplicas: int | None = Field(default=None, ge=0, le=INT32_MAX)
    numOfHosts: int | None = Field(default=None, ge=1, le=INT32_MAX)


class RunTime(Strict):
    """A run-time distribution: log-normal with this median and p95, or drawn from recorded samples."""

    median: Duration | None = None
    p95: Duration | None = None
    samples: list[Duration] | None = Field(default=None, min_length=1)
    max: Duration | None = Field(default=None, description="Cap on every draw")


class Arrivals(Strict):
    """Exactly one arrival process (docs/planning.md): rates are like 6/h, 0.5/m or 20/d."""

    poisson: str | float | None = Field(default=None, description="Poisson arrivals at this rate")
    every: Duration | None = Field(default=None, description="Evenly spaced arrivals")
    daily: dict[str, Any] | None = Field(default=None, description="{rate, hours: 24 relative weights}")
    bursts: dict[str, Any] | None = Field(default=None, description="{rate (of bursts), size, within}")


class Replica(PodTemplate):
    """A JobSet replicatedJob (name, replicas, its Job's parallelism / completions) or a PyTorchJob replica type
    (name `master` or `worker`, replicas)."""

    name: DnsLabel
    replicas: int | None = Field(default=None, ge=0, le=INT32_MAX, description="Default 1")
    parallelism: int | None = Field(default=None, ge=0, le=INT32_MAX, description="JobSet only")
    completions: int | None = Field(default=None, ge=0, le=INT32_MAX, description="JobSet only")

    @field_validator("name", mode="before")
    @classmethod
    def _replica_type_in_lower_case(cls, value: Any) -> Any:
        # A PyTorchJob's own YAML spells its replica types Master and Worker (pytorchReplicaSpecs keys), which is
        # what someone moving a PyTorchJob into the spec writes first; the DNS-label error alone does not say so.
        if value in ("Master", "Worker"):
            raise ValueError(f"{value!r}: write the PyTorchJob replica type in lower case, '{value.lower()}' "
                             f"(build writes it as pytorchReplicaSpecs.{value})")
        return value


class Load(Strict):
    name: DnsLabel | None = Field(default=None, description="Name of the created object(s); default the workload's")
    at: Duration = 0
    runFor: Duration | RunTime | None = Field(default=None, description="A duration, or a distribution to draw from")
    count: int = Field(default=1, ge=1, le=100_000)
    every: Duration | None = None
    podsReadyAfter: DurationOrNever | None = Field(
        default=None, description="Time from admission until all its pods are ready (node provisioning, image "
                                  "pulls); `never`: they never are. Under waitForPodsReady a late workload is "
                                  "evicted and requeued")
    resubmitAfterPreemption: Duration | None = Field(
        default=None, description="Pods only: an outside controller (SkyPilot, a workflow engine) creates the "
                                  "preempted Pod again this long after each preemption")
    arrivals: Arrivals | None = Field(default=None, description="Stochastic arrivals; with `for` and/or `count`")
    for_: Duration | None = Field(default=None, alias="for", description="How long stochastic arrivals last")
    priority: DnsLabel | None = Field(default=None, description="Override the workload's priority")
    expect: Expectation | None = None


# Kinds whose object `spec` is carried whole in WorkloadSpec.spec (no typed fields): import keeps them lossless and
# build emits them as written; their pod sets come from kube/podsets.py like any manifest's.
VERBATIM_KINDS = ("MPIJob", "TrainJob", "AppWrapper", "LeaderWorkerSet", "Deployment", "StatefulSet")


class WorkloadSpec(Strict):
    team: DnsLabel
    kind: Literal[JOB_KINDS] = Field(
        description="MPIJob, TrainJob, AppWrapper, LeaderWorkerSet, Deployment and StatefulSet carry the object's "
                    "whole spec in `spec`")
    namespace: DnsLabel | None = Field(default=None, description="Default: the team's first namespace")
    localQueue: DnsLabel | None = Field(default=None, description="Default: the team's first LocalQueue")
    priority: DnsLabel | None = None
    generateName: str | None = Field(default=None, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?-?$", max_length=58,
                                     description="Emit metadata.generateName (objects for `kubectl create`, "
                                                 "kept out of the kustomization)")
    # Ray
    rayVersion: str | None = None
    image: str | None = Field(default=None, description="Default image for every container")
    entrypoint: str | None = None
    runtimeEnvYAML: str | None = None
    shutdownAfterJobFinishes: bool | None = None
    ttlSecondsAfterFinished: int | None = Field(default=None, ge=0)
    activeDeadlineSeconds: int | None = Field(default=None, ge=1)
    submissionMode: Literal["K8sJobMode", "HTTPMode", "InteractiveMode", "SidecarMode"] | None = None
    head: PodTemplate | None = None
    workers: list[WorkerGroup] = Field(default_factory=list)
    # Job / Pod
    template: PodTemplate | None = Field(default=None, description="The pod of a Job or Pod workload")
    parallelism: int | None = Field(default=None, ge=0)
    completions: int | None = Field(default=None, ge=0)
    # JobSet / PyTorchJob
    replicas: list[Replica] = Field(default_factory=list,
                                    description="JobSet: its replicatedJobs; PyTorchJob: `master` and/or `worker`")
    spec: dict[str, Any] = Field(default_factory=dict, description="Extra top-level spec fields, verbatim (the "
                                                                    "whole spec of MPIJob, TrainJob, AppWrapper, "
                                                                    "LeaderWorkerSet, Deployment, StatefulSet)")
    # simulation
    load: list[Load] = Field(default_factory=list, description="Arrivals for `kueueplan simulate`")
    expect: Expectation | None = Field(default=None, description="Default expectation of every arrival")

    @model_validator(mode="after")
    def _shape(self) -> WorkloadSpec:
        ray = self.kind in ("RayJob", "RayCluster")
        if self.kind in VERBATIM_KINDS:
            return self._verbatim_shape()
        if self.kind in ("JobSet", "PyTorchJob"):
            return self._replicated_shape()
        if self.replicas:
            raise ValueError(f"'replicas' is for JobSet and PyTorchJob, not {self.kind}")
        if ray and self.head is None:
            raise ValueError(f"a {self.kind} needs 'head'")
        if ray and self.template is not None:
            raise ValueError(f"'template' is for Job and Pod; a {self.kind} has 'head' and 'workers'")
        if not ray and (self.head is not None or self.workers):
            raise ValueError(f"a {self.kind} has 'template', not 'head'/'workers'")
        if not ray and self.template is None:
            raise ValueError(f"a {self.kind} needs 'template'")
        if self.kind != "RayJob" and self.entrypoint is not None:
            raise ValueError("'entrypoint' is for RayJob")
        if len(self.load) > 1 and len({entry.name for entry in self.load}) != len(self.load):
            raise ValueError("several 'load' entries need distinct 'name's")
        return self

    def _verbatim_shape(self) -> WorkloadSpec:
        typed = [key for key in ("image", "rayVersion", "entrypoint", "runtimeEnvYAML", "shutdownAfterJobFinishes",
                                 "ttlSecondsAfterFinished", "activeDeadlineSeconds", "submissionMode", "head",
                                 "template", "parallelism", "completions") if getattr(self, key) is not None]
        typed += [key for key in ("workers", "replicas") if getattr(self, key)]
        if typed:
            raise ValueError(f"a {self.kind} is written as its object's spec under 'spec'; "
                             f"{', '.join(repr(k) for k in typed)} is for the other kinds")
        if not self.spec:
            raise ValueError(f"a {self.kind} needs 'spec' (the {self.kind}'s own spec, as in its manifest)")
        if len(self.load) > 1 and len({entry.name for entry in self.load}) != len(self.load):
            raise ValueError("several 'load' entries need distinct 'name's")
        return self

    def _replicated_shape(self) -> WorkloadSpec:
        if not self.replicas:
            raise ValueError(f"a {self.kind} needs 'replicas'")
        if self.head is not None or self.workers or self.template is not None or self.entrypoint is not None:
            raise ValueError(f"a {self.kind} has 'replicas', not 'head'/'workers'/'template'/'entrypoint'")
        if self.parallelism is not None or self.completions is not None:
            raise ValueError(f"a {self.kind} sets parallelism/completions per replica")
        names = [r.name for r in self.replicas]
        if len(set(names)) != len(names):
            raise ValueError("replica names must be distinct")
        if self.kind == "PyTorchJob":
            if set(names) - {"master", "worker"}:
                raise ValueError("a PyTorchJob's replicas are named master and/or worker")
            if any(r.parallelism is not None or r.completions is not None for r in self.replicas):
                raise ValueError("parallelism and completions are for JobSet replicas")
        if len(self.load) > 1 and len({entry.name for entry in self.load}) != len(self.load):
            raise ValueError("several 'load' entries need distinct 'name's")
        return self


# --------------------------------------------------------------------------- Environment

# Kueue's own model (kube.configuration), with a schema for editors that mirrors Kueue's strict decoding.
KueueConfiguration = Annotated[_KueueConfiguration | None, WithJsonSchema(_configuration_schema())]



class ArgoCD(Strict):
    repoURL: str
    targetRevision: str = "HEAD"
    path: str | None = Field(default=None, description="Path of the rendered env in the repo (default gen/<env>)")
    project: str = "default"
    server: str | None = Field(default=None, description="Destination API server (default: the in-cluster one)")
    name: str | None = Field(default=None, description="Destination cluster name, instead of server")
    namespace: DnsLabel = "argocd"
    sourceHydrator: bool = Field(default=False, description="Use Argo CD's Source Hydrator (hydrated branch per env)")
    hydratedBranch: str | None = Field(default=None, description="Hydrator target branch (default environments/<env>)")

    @model_validator(mode="after")
    def _one_destination(self) -> "ArgoCD":
        if self.server and self.name:
            raise ValueError("give the destination as 'server' or 'name', not both")
        return self


class Flux(Strict):
    sourceRef: dict[str, str] = Field(description="{kind: GitRepository, name: ...}")
    path: str | None = None
    interval: Duration = "10m"
    namespace: DnsLabel = "flux-system"


class Simulation(Strict):
    until: Duration | None = None
    fairSharing: dict[str, Any] | None = None
    runs: int = Field(default=1, ge=1, le=10_000, description="Monte-Carlo runs that `check` and `diff` judge "
                                                               "expectations on (stochastic load; probabilities)")
    seed: int = Field(default=0, ge=0, description="Seed of the runs' random draws")


class EnvironmentSpec(Strict):
    kueueVersion: str = Field(default="v0.19.2", pattern=r"^v?\d+\.\d+(\.\d+)?$",
                              description="The Kueue release the cluster runs")
    kueueAPIVersion: Literal["v1beta1", "v1beta2"] | None = Field(
        default=None, description="Kueue API to write (default v1beta2 from Kueue v0.15, else v1beta1)")
    namespaceTemplate: str = Field(default="{namespace}",
                                   description="Namespace naming: {namespace}, {team} and {env} are replaced")
    overlays: dict[Literal["ResourceFlavor", "Priority", "Cohort", "AdmissionCheck", "Team", "Workload",
                           "Topology", "MultiKueueCluster"],
                   dict[str, dict[str, Any]]] = Field(
        default_factory=dict,
        description="kind -> name -> partial spec, merged over the base (JSON merge patch; quotas merge by flavor, "
                    "a team's clusterQueues by name)")
    configuration: KueueConfiguration = Field(
        default=None,
        description="Kueue's own Configuration (config.kueue.x-k8s.io, as in controller_manager_config.yaml) for "
                    "this environment's release: `build` renders it over the release's shipped file as the "
                    "kueue-manager-config ConfigMap, `simulate` runs with it. apiVersion defaults to the release's "
                    "(v1beta2 from Kueue v0.15)")
    simulation: Simulation | None = None
    argocd: ArgoCD | None = None
    flux: Flux | None = None


# --------------------------------------------------------------------------- documents


class _Document(Strict):
    apiVersion: Literal[KUEUEPLAN_API]
    metadata: Metadata


class ResourceFlavorDoc(_Document):
    kind: Literal["ResourceFlavor"]
    spec: ResourceFlavorSpec = Field(default_factory=ResourceFlavorSpec)


class PriorityDoc(_Document):
    kind: Literal["Priority"]
    spec: PrioritySpec


class CohortDoc(_Document):
    kind: Literal["Cohort"]
    spec: CohortSpec = Field(default_factory=CohortSpec)


class AdmissionCheckDoc(_Document):
    kind: Literal["AdmissionCheck"]
    spec: AdmissionCheckSpec


class TeamDoc(_Document):
    kind: Literal["Team"]
    spec: TeamSpec = Field(default_factory=TeamSpec)


class TopologyDoc(_Document):
    kind: Literal["Topology"]
    spec: TopologySpec


class MultiKueueClusterDoc(_Document):
    kind: Literal["MultiKueueCluster"]
    spec: MultiKueueClusterSpec


class WorkloadDoc(_Document):
    kind: Literal["Workload"]
    spec: WorkloadSpec


class EnvironmentDoc(_Document):
    kind: Literal["Environment"]
    spec: EnvironmentSpec = Field(default_factory=EnvironmentSpec)


DOCUMENT_MODELS: dict[str, type[_Document]] = {
    "ResourceFlavor": ResourceFlavorDoc,
    "Priority": PriorityDoc,
    "Cohort": CohortDoc,
    "AdmissionCheck": AdmissionCheckDoc,
    "Team": TeamDoc,
    "Topology": TopologyDoc,
    "MultiKueueCluster": MultiKueueClusterDoc,
    "Workload": WorkloadDoc,
    "Environment": EnvironmentDoc,
}
SPEC_MODELS: dict[str, type[BaseModel]] = {
    "ResourceFlavor": ResourceFlavorSpec,
    "Priority": PrioritySpec,
    "Cohort": CohortSpec,
    "AdmissionCheck": AdmissionCheckSpec,
    "Team": TeamSpec,
    "Topology": TopologySpec,
    "MultiKueueCluster": MultiKueueClusterSpec,
    "Workload": WorkloadSpec,
    "Environment": EnvironmentSpec,
}
