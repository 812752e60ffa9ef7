"""What compiling one environment needs: the resolved documents, the Kueue API to write, naming rules."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from kueueplan.errors import KueueplanError
from kueueplan.spec.load import Entry, Platform
from kueueplan.kube.names import is_dns_label
from kueueplan.kube.apiversion import TEAM_LABEL
from kueueplan.kube.podsets import JOB_KINDS, PRIORITY_LABEL, QUEUE_LABEL

KUEUE_GROUP = "kueue.x-k8s.io"
MANAGED_BY = {"app.kubernetes.io/managed-by": "kueueplan"}
SYNC_WAVE = "argocd.argoproj.io/sync-wave"
# Apply order for GitOps: cluster-scoped building blocks, then ClusterQueues, LocalQueues, workloads.
# Topologies come first: a ResourceFlavor naming a missing one keeps its ClusterQueues inactive (TopologyNotFound).
WAVES = {
    "Topology": "-1", "MultiKueueCluster": "0", "MultiKueueConfig": "0",
    "Namespace": "0", "ResourceFlavor": "0", "WorkloadPriorityClass": "0", "AdmissionCheck": "0",
    "ProvisioningRequestConfig": "0", "Cohort": "0", "ClusterQueue": "1", "LocalQueue": "2",
    **dict.fromkeys(JOB_KINDS, "3"),
}
_VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?$")


def parse_version(text: str) -> tuple[int, int, int]:
    match = _VERSION_RE.match(text)
    if not match:
        raise KueueplanError(f"{text!r} is not a Kueue version", hint="write e.g. v0.19.2")
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


@dataclass
class EnvContext:
    """One environment of a platform, with overlays applied."""

    platform: Platform
    env: Entry
    docs: dict[str, list[Entry]] = field(default_factory=dict)

    @classmethod
    def of(cls, platform: Platform, env_name: str) -> EnvContext:
        env = platform.environment(env_name)
        return cls(platform=platform, env=env, docs=platform.resolve(env_name))

    @property
    def name(self) -> str:
        return self.env.name

    @cached_property
    def kueue_version(self) -> tuple[int, int, int]:
        try:
            return parse_version(self.env.model.spec.kueueVersion)
        except KueueplanError as err:
            raise self.env.error(err.message, ("kueueVersion",), err.hint) from None

    @cached_property
    def api(self) -> str:
        """The Kueue API version to write: v1beta2 exists from Kueue v0.15."""
        wanted = self.env.model.spec.kueueAPIVersion
        has_v1beta2 = self.kueue_version >= (0, 15, 0)
        if wanted == "v1beta2" and not has_v1beta2:
            raise self.env.error(f"Kueue {self.env.model.spec.kueueVersion} has no v1beta2 API",
                                 ("kueueAPIVersion",), "write kueueAPIVersion: v1beta1 for Kueue before v0.15")
        return wanted or ("v1beta2" if has_v1beta2 else "v1beta1")

    @property
    def kueue_api_version(self) -> str:
        return f"{KUEUE_GROUP}/{self.api}"

    def by_name(self, kind: str) -> dict[str, Entry]:
        return {e.name: e for e in self.docs.get(kind, [])}

    def namespace(self, base: str, team: str, where: Entry, path: tuple[str | int, ...]) -> str:
        """The environment's name for a namespace written `base` in the spec."""
        template = self.env.model.spec.namespaceTemplate
        name = template.replace("{namespace}", base).replace("{team}", team).replace("{env}", self.name)
        if not is_dns_label(name):
            raise where.error(f"namespace {name!r} (from namespaceTemplate {template!r} in environment "
                              f"{self.name!r}) is not a valid namespace name", path)
        return name


def metadata(name: str, kind: str, entry: Entry | None = None, namespace: str | None = None,
             labels: dict[str, str] | None = None, generate_name: str | None = None) -> dict[str, object]:
    """Object metadata in a fixed key order, with the managed-by label and the Argo CD sync wave."""
    meta: dict[str, object] = {"generateName": generate_name} if generate_name else {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    all_labels = dict(MANAGED_BY)
    if entry is not None:
        all_labels.update(entry.model.metadata.labels)
    all_labels.update(labels or {})
    meta["labels"] = dict(sorted(all_labels.items()))
    annotations = dict(entry.model.metadata.annotations) if entry is not None else {}
    annotations[SYNC_WAVE] = WAVES[kind]
    meta["annotations"] = dict(sorted(annotations.items()))
    return meta
