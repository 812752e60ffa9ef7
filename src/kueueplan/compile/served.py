"""Fields and kinds that an environment's Kueue release does not serve yet.

An API server prunes the fields its CRD schema does not know (with strict field validation, as
`kubectl apply --validate=strict` and server-side apply use, it rejects the object instead): a quota policy
that silently disappears from the cluster. So build refuses them, at the spec field that set them.

The versions were read from `config/components/crd/bases/kueue.x-k8s.io_*.yaml` at every release tag of
kubernetes-sigs/kueue (the newest patch of each minor, v0.4 to v0.19), v1beta1 schemas: the first minor whose
CRD has the field. Only what kueueplan writes is listed; a test checks that each path exists in today's CRDs.
"""

from __future__ import annotations

from typing import Any

from kueueplan.compile.context import EnvContext
from kueueplan.spec.load import Entry

Path = tuple[str, ...]  # inside the manifest's spec; "*" steps into every list item
Loc = tuple[str, ...]  # where the spec document sets it

# kind -> (field, first Kueue minor version that serves it, spec location)
FIELDS: dict[str, tuple[tuple[Path, tuple[int, int], Loc], ...]] = {
    "ClusterQueue": (
        (("admissionChecks",), (0, 5), ("admissionChecks",)),
        (("flavorFungibility",), (0, 5), ("flavorFungibility",)),
        (("preemption", "borrowWithinCohort"), (0, 6), ("preemption", "borrowWithinCohort")),
        (("resourceGroups", "*", "flavors", "*", "resources", "*", "lendingLimit"), (0, 6), ("quotas",)),
        (("stopPolicy",), (0, 6), ("stopPolicy",)),
        (("admissionChecksStrategy",), (0, 7), ("admissionChecks",)),
        (("fairSharing",), (0, 7), ("fairSharing",)),
        (("flavorFungibility", "preference"), (0, 15), ("flavorFungibility", "preference")),
    ),
    "LocalQueue": (
        (("stopPolicy",), (0, 8), ("localQueues",)),
        (("fairSharing",), (0, 12), ("localQueues",)),
    ),
    "ResourceFlavor": (
        (("tolerations",), (0, 5), ("tolerations",)),
        (("topologyName",), (0, 9), ("topologyName",)),
    ),
    "ProvisioningRequestConfig": (
        (("retryStrategy",), (0, 9), ("provisioningRequest", "retryStrategy")),
        (("podSetMergePolicy",), (0, 12), ("provisioningRequest", "podSetMergePolicy")),
    ),
    "Cohort": (
        (("fairSharing",), (0, 11), ("fairSharing",)),
    ),
    "MultiKueueCluster": (
        (("clusterProfileRef",), (0, 15), ("clusterProfileRef",)),
    ),
}
# kinds newer than v0.4 (Cohort objects have their own rule with the API version: compile.kueue._cohort_api)
KINDS: dict[str, tuple[int, int]] = {"WorkloadPriorityClass": (0, 5), "AdmissionCheck": (0, 5),
                                     "ProvisioningRequestConfig": (0, 5), "Topology": (0, 9),
                                     "MultiKueueCluster": (0, 6), "MultiKueueConfig": (0, 6)}
# Kinds that started in v1alpha1: the first minor serving v1beta1 (before it only v1alpha1, from KINDS' version).
# Topology: v1alpha1 in v0.9-v0.13, v1beta1 from v0.14; MultiKueue: v1alpha1 in v0.6-v0.8, v1beta1 from v0.9.
V1BETA1_SINCE: dict[str, tuple[int, int]] = {"Topology": (0, 14), "MultiKueueCluster": (0, 9),
                                             "MultiKueueConfig": (0, 9)}


def api_version(ctx: EnvContext, entry: Entry, kind: str) -> str:
    """The apiVersion the environment's Kueue serves `kind` at: the environment's Kueue API (v1beta2 from
    v0.15 serves every kind), else v1beta1, or v1alpha1 for a kind that had not reached beta in that release."""
    since = V1BETA1_SINCE.get(kind)
    if ctx.api == "v1beta2" or since is None or ctx.kueue_version[:2] >= since:
        return ctx.kueue_api_version
    _check_kind(ctx, entry, kind)
    return f"{ctx.kueue_api_version.split('/')[0]}/v1alpha1"


def _check_kind(ctx: EnvContext, entry: Entry, kind: str) -> None:
    since = KINDS.get(kind)
    if since is not None and ctx.kueue_version[:2] < since:
        raise entry.error(f"{kind} needs Kueue v{since[0]}.{since[1]} or newer, and {_running(ctx)}", (),
                          "raise the environment's kueueVersion, or limit this document to newer environments "
                          "with metadata.environments")


def _running(ctx: EnvContext) -> str:
    return f"environment {ctx.name!r} runs Kueue {ctx.env.model.spec.kueueVersion}"


def served(ctx: EnvContext, entry: Entry, manifest: dict[str, Any]) -> dict[str, Any]:
    """`manifest` if the environment's Kueue serves all of it, else an error at the spec field that set it."""
    version = ctx.kueue_version[:2]
    kind = manifest["kind"]
    running = _running(ctx)
    _check_kind(ctx, entry, kind)
    for path, since, loc in FIELDS.get(kind, ()):
        if version < since and _present(manifest.get("spec"), path):
            field = ".".join(p for p in path if p != "*")
            raise entry.error(f"{kind} spec.{field} needs Kueue v{since[0]}.{since[1]} or newer, and {running}: "
                              "its API server would drop the field (or reject the object under strict validation)",
                              loc, "raise the environment's kueueVersion, or unset the field for this environment "
                              "in its overlays (null removes it)")
    return manifest


def _present(data: Any, path: Path) -> bool:
    if not path:
        return True
    head, rest = path[0], path[1:]
    if head == "*":
        return isinstance(data, list) and any(_present(item, rest) for item in data)
    return isinstance(data, dict) and head in data and _present(data[head], rest)
