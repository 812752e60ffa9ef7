"""Platform policies: `policies/*.yaml`, kind PlatformPolicy (apiVersion policy.kueueplan.io/v1alpha1).

A repository states who owns what (teams → namespaces, queues, flavors, priorities), what each environment
may use (priorities, physical capacity with an over-commit ratio) and its naming conventions; the KP6xx rules
check the manifests against it. `spec.rules` switches any rule (not only policies) off or changes its severity.
Several policy documents merge: maps merge key by key, later files win.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from kueueplan.errors import KueueplanError
from kueueplan.validate.regex import RegexError, compile_regex
from kueueplan.kube.yamlio import yaml_files, Document, load_file, refuse_linked_out

POLICY_API = "policy.kueueplan.io/v1alpha1"
POLICY_KIND = "PlatformPolicy"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RuleSwitch(_Strict):
    enabled: bool = True
    severity: str | None = Field(default=None, pattern="^(error|warning|info)$")


class TeamPolicy(_Strict):
    namespaces: list[str] = Field(default_factory=list, description="globs of the namespaces the team owns")
    clusterQueues: list[str] = Field(default_factory=list, description="globs of the ClusterQueues it owns")
    flavors: list[str] | None = Field(default=None, description="flavors it may hold quota in (None: any "
                                                                 "unrestricted flavor)")
    priorities: list[str] | None = Field(default=None, description="WorkloadPriorityClasses it may use")
    requireBorrowingLimit: bool = False
    maxBorrowingLimit: dict[str, str | int] = Field(default_factory=dict,
                                                    description="resource -> largest borrowingLimit allowed")
    # issue 15: team overrides of `queues` and `priorities` (None: the platform-wide setting)
    requireQueueName: bool | None = Field(default=None, description="override queues.requireQueueName")
    requiredLocalQueues: list[str] | None = Field(default=None, description="override queues.requiredLocalQueues")
    requireRequests: bool | None = Field(default=None, description="override queues.requireRequests")
    deniedPriorities: list[str] = Field(default_factory=list, description="globs of priorities the team may never "
                                                                          "use (besides priorities.denied)")
    namespacePriorities: dict[str, list[str]] = Field(
        default_factory=dict, description="namespace glob -> priority globs allowed there (e.g. '*-dev': "
                                          "[dev-priority]); adds to `priorities`")


class NodePool(_Strict):
    nodes: int = Field(ge=0, description="how many nodes the flavor's pool has")
    perNode: dict[str, str | int] = Field(description="allocatable resources of one node")


class EnvironmentPolicy(_Strict):
    paths: list[str] = Field(default_factory=list, description="globs of input paths in this environment")
    priorities: list[str] | None = None
    capacity: dict[str, dict[str, str | int]] = Field(default_factory=dict,
                                                      description="flavor -> resource -> physical amount")
    nodePools: dict[str, NodePool] = Field(default_factory=dict,
                                           description="flavor -> nodes x per-node allocatable (adds to capacity)")
    overcommit: float = Field(default=1.0, gt=0)


class QueuePolicy(_Strict):
    """Queue enforcement, tied to Kueue's Configuration (the kueue-manager-config ConfigMap among the inputs)."""

    requireQueueName: bool = Field(default=False, description="workloads in team namespaces must name a queue, or "
                                   "be covered by managedJobsNamespaceSelector + manageJobsWithoutQueueName")
    requiredLocalQueues: list[str] = Field(default_factory=list, description="LocalQueues every team namespace "
                                                                             "must have (e.g. default)")
    requireRequests: bool = Field(default=False, description="every pod template requests something its "
                                  "ClusterQueue covers (else Kueue admits it at zero quota)")
    unmanagedNamespace: str | None = Field(default=None, pattern="^(error|warning|info|off)$",
                                           description="severity of the Kueue-configuration finding 'team namespace "
                                                       "outside managedJobsNamespaceSelector' (off: drop it)")

    @field_validator("unmanagedNamespace", mode="before")
    @classmethod
    def _yaml_off(cls, value: Any) -> Any:
        return "off" if value is False else value  # YAML 1.1 reads a bare `off` as false


class PriorityPolicy(_Strict):
    """Priority rules that cover the Kueue label and pod templates' priorityClassName alike."""

    requirePriority: bool = Field(default=False, description="every workload names a priority (label or pod "
                                                             "template priorityClassName)")
    defaultPriority: str | None = Field(default=None, description="the priority a workload that names none is "
                                                                  "checked as (what the platform defaults it to)")
    denied: list[str] = Field(default_factory=list, description="globs no workload may use (e.g. system-*)")
    namespaces: dict[str, list[str]] = Field(default_factory=dict, description="namespace glob -> priority globs "
                                                                               "allowed there")


ApplyKind = Literal["namespaceDeletion", "workloadDeletion", "immutableChange", "overQuota", "holdAndDrain",
                   "templateChange", "queueDeletion"]


class ApplyPolicy(_Strict):
    """What an apply may do without failing `diff` (rules KP700-KP706, workflow/applyplan.py); default: none."""

    allow: list[ApplyKind] = Field(default_factory=list)
    environments: dict[str, list[ApplyKind]] = Field(default_factory=dict,
                                                     description="environment -> more kinds allowed there")

    def allowed(self, env: str) -> set[str]:
        return set(self.allow) | set(self.environments.get(env, []))


class PolicySpec(_Strict):
    teamLabel: str = "kueueplan.io/team"
    sharedQueues: list[str] = Field(default_factory=list, description="platform-owned ClusterQueues")
    restrictedFlavors: list[str] = Field(default_factory=list,
                                         description="flavors only teams listing them in `flavors` may use")
    priorityOrder: list[str] = Field(default_factory=list, description="highest first; values must decrease")
    teams: dict[str, TeamPolicy] = Field(default_factory=dict)
    environments: dict[str, EnvironmentPolicy] = Field(default_factory=dict)
    naming: dict[str, str] = Field(default_factory=dict, description="kind -> regex ({team} = owning team)")
    rules: dict[str, RuleSwitch] = Field(default_factory=dict)
    queues: QueuePolicy = Field(default_factory=QueuePolicy)
    priorities: PriorityPolicy = Field(default_factory=PriorityPolicy)
    apply: ApplyPolicy = Field(default_factory=ApplyPolicy)

    @field_validator("naming")
    @classmethod
    def _regexes_compile(cls, value: dict[str, str]) -> dict[str, str]:
        for kind, pattern in value.items():
            try:
                compile_regex(pattern.replace("{team}", "team"))
            except RegexError as err:
                raise ValueError(f"naming.{kind}: {err}") from None
        return value


class PolicyDoc(_Strict):
    apiVersion: str
    kind: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    spec: PolicySpec = Field(default_factory=PolicySpec)


class Policy:
    """The merged policy, with the ownership lookups rules need."""

    def __init__(self, spec: PolicySpec, files: list[str]) -> None:
        self.spec = spec
        self.files = files

    def team_of_namespace(self, namespace: str | None) -> str | None:
        if not namespace:
            return None
        for team, tp in sorted(self.spec.teams.items()):
            if any(fnmatch.fnmatchcase(namespace, g) for g in tp.namespaces):
                return team
        return None

    def team_of_queue(self, name: str, labels: dict[str, Any]) -> str | None:
        for team, tp in sorted(self.spec.teams.items()):
            if any(fnmatch.fnmatchcase(name, g) for g in tp.clusterQueues):
                return team
        label = labels.get(self.spec.teamLabel)
        return str(label) if label else None

    def is_shared(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, g) for g in self.spec.sharedQueues)

    def env_of(self, obj: Any) -> str | None:
        for env, ep in sorted(self.spec.environments.items()):
            if any(fnmatch.fnmatch(obj.file, g) for g in ep.paths):
                return env
        return obj.env

    def switch(self, rule_id: str) -> RuleSwitch | None:
        return self.spec.rules.get(rule_id)

    def team_setting(self, namespace: str | None, knob: str) -> Any:
        """A `queues` knob for a namespace: the owning team's override, else the platform-wide value."""
        team = self.team_of_namespace(namespace)
        own = getattr(self.spec.teams[team], knob) if team else None
        return own if own is not None else getattr(self.spec.queues, knob)

    def applies_to(self, namespace: str | None) -> bool:
        """Queue knobs cover team namespaces; without teams, every namespace."""
        return not self.spec.teams or self.team_of_namespace(namespace) is not None

    def severity_overrides(self) -> dict[str, str]:
        """rule ID -> severity (or "off") from knobs that only set another rule's severity."""
        level = self.spec.queues.unmanagedNamespace
        return {rule_id: level for rule_id in unmanaged_namespace_rules()} if level else {}


# The Kueue-configuration rule (issue 13) that reports a team's namespace outside managedJobsNamespaceSelector:
# KP461, a LocalQueue whose namespace the selector leaves out.
UNMANAGED_NAMESPACE_RULES = ("KP461",)


def unmanaged_namespace_rules() -> list[str]:
    return list(UNMANAGED_NAMESPACE_RULES)


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def policy_documents(paths: list[str | Path]) -> list[Document]:
    docs: list[Document] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise KueueplanError(f"policy path does not exist: {path}")
        if not path.is_dir():
            refuse_linked_out(path)
        files = yaml_files(path) if path.is_dir() else [path]
        for f in files:
            docs.extend(load_file(f))
    return docs


def load_policies(paths: list[str | Path], inline: list[Document]) -> Policy | None:
    """Merge the PlatformPolicy documents of `paths` and of the inputs; None when there are none."""
    docs = policy_documents(paths) + list(inline)
    merged: dict[str, Any] = {}
    files: list[str] = []
    for doc in docs:
        data = doc.data
        if not isinstance(data, dict) or data.get("kind") != POLICY_KIND:
            raise KueueplanError(f"expected kind {POLICY_KIND} (apiVersion {POLICY_API})", file=doc.file,
                                 line=doc.line)
        try:
            parsed = PolicyDoc.model_validate(data)
        except ValidationError as err:
            first = err.errors()[0]
            loc = tuple(first["loc"])
            raise KueueplanError(f"policy: {'.'.join(str(p) for p in loc)}: {first['msg']}", file=doc.file,
                                 line=doc.line_of(loc), hint="see docs/validate.md for the policy format") from None
        if parsed.apiVersion != POLICY_API:
            raise KueueplanError(f"unsupported policy apiVersion {parsed.apiVersion!r}; use {POLICY_API}",
                                 file=doc.file, line=doc.line)
        merged = _merge(merged, parsed.spec.model_dump(exclude_unset=True))
        if doc.file not in files:
            files.append(doc.file)
    if not files:
        return None
    return Policy(PolicySpec.model_validate(merged), files)
