"""Can a workload EVER be admitted by its ClusterQueue and cohort, however idle the cluster is?

Used by the simulator (the `Inadmissible` state) and by the validator. The check runs Kueue's flavor
assignment with every (flavor, resource) judged only against `PotentialAvailable` (semantics §2.3: the
capacity with all usage ignored, limited by borrowing and lending limits), so the answers are:
- the LocalQueue or ClusterQueue does not exist, or the namespace is not selected;
- a requested resource is not covered by any resource group;
- no flavor of a group matches the pod set's node selector / affinity / tolerations;
- the request is larger than the most the queue could ever use, with the arithmetic.

`can_ever_admit(cluster, manifest, kueue_version)` returns an `Admissibility` verdict for a job manifest;
`never_admissible_reason(cluster, tree, spec, cq_name)` is the low-level form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from kueueplan.kube.objects import Cluster, selector_matches
from kueueplan.kube.podsets import WorkloadSpec, derive_workload, explain_requests, total_requests
from kueueplan.kube.quantity import format_resource_value
from kueueplan.simulate.flavorassigner import FIT, NO_FIT, FlavorAssigner, MODE_NO_FIT
from kueueplan.simulate.resource_node import FR, QuotaTree, build_tree


@dataclass(frozen=True)
class Admissibility:
    admissible: bool
    reason: str = ""
    cluster_queue: str | None = None


class _PotentialAssigner(FlavorAssigner):
    """Quota judged against the most the queue could ever hold (no usage, no preemption)."""

    def __init__(self, *args: Any, spec: WorkloadSpec, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.spec = spec

    def _fits_resource_quota(self, fr: FR, assumed: int, request: int) -> tuple[int, int]:
        val = assumed + request
        cap = self.node.potential_available(fr)
        if val <= cap:
            return FIT, 0
        flavor, res = fr
        self._reason(f"needs {_needs(self.spec, res, val)} but ClusterQueue {self.cq.name} "
                     f"can use at most {format_resource_value(res, cap)} of flavor {flavor}"
                     f"{_cap_detail(self.node, fr)}", "ExceedsMaxQuota")
        return NO_FIT, 0


def _needs(spec: WorkloadSpec, res: str, val: int) -> str:
    """What the workload needs of `res` where a flavor refused it: `val` is what its pod sets placed in that flavor
    so far ask (Kueue's 'previously considered podsets requests + current podset request'), which is the whole
    request unless the refusal came at an earlier pod set than the last."""
    explain = explain_requests(spec.pod_sets, res)
    if val == total_requests(spec.pod_sets).get(res, 0):
        return f"{format_resource_value(res, val)} {res} ({explain})"
    return f"{format_resource_value(res, val)} {res} with its pod sets placed so far (in all: {explain})"


def _cap_detail(node: Any, fr: FR) -> str:
    q = node.quotas.get(fr)
    nominal = q.nominal if q else 0
    parts = [f"nominal {format_resource_value(fr[1], nominal)}"]
    if node.parent is not None:
        root = node.root()
        parts.append(f"cohort {root.name} total {format_resource_value(fr[1], root.subtree.get(fr, 0))}")
        if q is not None and q.borrowing_limit is not None:
            parts.append(f"borrowingLimit {format_resource_value(fr[1], q.borrowing_limit)}")
    return " (" + ", ".join(parts) + ")"


def never_admissible_reason(cluster: Cluster, tree: QuotaTree, spec: WorkloadSpec, cq_name: str) -> str | None:
    """None if the workload could fit in an idle cluster, else why not (in words, with numbers)."""
    cq = cluster.cluster_queues.get(cq_name)
    node = tree.cqs.get(cq_name)
    if cq is None or node is None:
        return f"ClusterQueue {cq_name} doesn't exist"
    assigner = _PotentialAssigner(cq, node, cluster.resource_flavors, lambda fr, q: (NO_FIT, 0), spec=spec)
    result = assigner.run(spec.pod_sets)
    if result.mode() != MODE_NO_FIT:
        return None
    return result.message() or "no flavor can hold it"


def can_ever_admit(cluster: Cluster, manifest: Mapping[str, Any], kueue_version: str | None = None,
                   tree: QuotaTree | None = None) -> Admissibility:
    """The validator's question for a job manifest (RayJob, RayCluster, Job, Pod, Workload)."""
    spec = derive_workload(manifest, cluster, kueue_version)
    if spec.problem:
        return Admissibility(False, spec.problem)
    if not spec.queue_name:
        return Admissibility(False, "no kueue.x-k8s.io/queue-name label")
    lq = cluster.local_queues.get((spec.namespace, spec.queue_name))
    if lq is None:
        return Admissibility(False, f"LocalQueue {spec.namespace}/{spec.queue_name} doesn't exist")
    cq = cluster.cluster_queues.get(lq.cluster_queue)
    if cq is None:
        return Admissibility(False, f"ClusterQueue {lq.cluster_queue} doesn't exist", lq.cluster_queue)
    labels = cluster.namespace_labels(spec.namespace) or {"kubernetes.io/metadata.name": spec.namespace}
    if not selector_matches(cq.namespace_selector, labels):
        why = "has no namespaceSelector (selects nothing)" if cq.namespace_selector is None else \
            "has a namespaceSelector that does not match"
        return Admissibility(False, f"ClusterQueue {cq.name} {why} namespace {spec.namespace}", cq.name)
    reason = never_admissible_reason(cluster, tree or build_tree(cluster), spec, cq.name)
    return Admissibility(reason is None, reason or "", cq.name)
