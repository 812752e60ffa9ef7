"""What Argo CD or Flux will do when they apply a change, not only the end state it describes.

One small function per rule (KP700-KP719, the delivery block); each returns `ApplyStep`s. A step blocks the pull
request (`diff` / `check --base` exit 1) unless the PlatformPolicy's `apply.allow` lists its kind (default deny):

| Rule  | allow key           | The apply ...                                                                 |
|-------|---------------------|--------------------------------------------------------------------------------|
| KP700 | `namespaceDeletion` | deletes a Namespace, and with it every object in it (kubectl-created jobs too) |
| KP701 | `workloadDeletion`  | deletes a workload (a running job loses its pods)                             |
| KP702 | `immutableChange`   | fails on an immutable field (or, force-annotated, deletes and recreates it)   |
| KP703 | `overQuota`         | leaves admitted work over the new quota (nothing new admitted; reclaimable)   |
| KP704 | `holdAndDrain`      | sets stopPolicy HoldAndDrain: Kueue evicts the queue's admitted workloads     |
| KP705 | `templateChange`    | changes the pod template of a job Kueue may have admitted                     |
| KP706 | `queueDeletion`     | deletes a ClusterQueue or ResourceFlavor admitted work still uses (it hangs)   |

Argo CD's auto-prune and Flux's `prune: true` delete what leaves Git (generated Namespaces carry
`Prune=confirm,Delete=confirm` and `kustomize.toolkit.fluxcd.io/prune: disabled`, so they wait for a human;
the plan still says so). Immutable fields come from Kueue's CRDs (`self == oldSelf`) and the core API.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from kueueplan.compile.gitops import ARGO_SYNC_OPTIONS, FLUX_FORCE
from kueueplan.errors import KueueplanError
from kueueplan.kube.objects import Cluster, read_cluster
from kueueplan.kube.podsets import pod_sets_for
from kueueplan.kube.quantity import format_resource_value
from kueueplan.workflow.manifests import Key, changed_paths, index, key_text
from kueueplan.workflow.quotas import quota_table

ALLOW_KEYS = {"KP700": "namespaceDeletion", "KP701": "workloadDeletion", "KP702": "immutableChange",
              "KP703": "overQuota", "KP704": "holdAndDrain", "KP705": "templateChange", "KP706": "queueDeletion"}
WORKLOAD_KINDS = ("Job", "RayJob", "RayCluster", "Pod", "JobSet", "PyTorchJob", "TFJob", "MPIJob", "XGBoostJob",
                  "PaddleJob", "JAXJob", "TrainJob", "LeaderWorkerSet", "AppWrapper")
# Kueue's CRDs (config/components/crd/bases, v1beta2: `self == oldSelf`) and the core API's immutable fields.
# Paths are relative to `spec` (Kueue's kinds compare in kueueplan's semantic form, which has no `spec` level).
IMMUTABLE = {
    "LocalQueue": ("clusterQueue",),
    "AdmissionCheck": ("controllerName",),
    "Topology": ("levels",),
    "Job": ("selector", "completionMode", "podReplacementPolicy"),
}
# A ResourceFlavor with a topologyName keeps its nodeLabels, tolerations and topologyName (CEL on spec).
TAS_FLAVOR_IMMUTABLE = ("nodeLabels", "tolerations", "topologyName")
TEMPLATE_PATHS = {"Job": ("spec.template",), "RayJob": ("spec.rayClusterSpec", "spec.submitterPodTemplate"),
                  "RayCluster": ("spec.headGroupSpec", "spec.workerGroupSpecs"), "Pod": ("spec",)}
_SCALING = (".replicas", ".minReplicas", ".maxReplicas")
ADMITTED = ("QuotaReserved", "Admitted", "Finished")


@dataclass(frozen=True)
class ApplyStep:
    rule: str
    env: str
    key: Key
    message: str
    advice: str = ""
    allowed: bool = False

    @property
    def allow_key(self) -> str:
        return ALLOW_KEYS[self.rule]

    @property
    def blocking(self) -> bool:
        return not self.allowed

    @property
    def text(self) -> str:
        return f"{self.rule} {key_text(self.key)}: {self.message}"


@dataclass
class EnvState:
    """One environment on both sides, with what the simulation says about the base (None: not simulated)."""

    env: str
    base: dict[Key, dict[str, Any]]
    head: dict[Key, dict[str, Any]]
    base_raw: list[Mapping[str, Any]]
    base_cluster: Cluster
    head_cluster: Cluster
    base_sim: Mapping[str, Any] | None = None
    load: list[Mapping[str, Any]] = field(default_factory=list)  # `diff --load`: the replayed workloads' objects

    def admitted(self) -> list[Mapping[str, Any]]:
        """Base-side simulated workloads Kueue admitted (they may be running when the change is applied)."""
        return [w for w in (self.base_sim or {}).get("workloads", []) if isinstance(w, Mapping)
                and (w.get("state") in ADMITTED or w.get("admittedAt") is not None)]


Rule = Callable[[EnvState], list[ApplyStep]]


def _spec(semantic: Mapping[str, Any]) -> Mapping[str, Any]:
    """The spec of an object in kueueplan's semantic form (Kueue's kinds carry their fields at the top)."""
    spec = semantic.get("spec")
    return spec if isinstance(spec, Mapping) else semantic


def _step(rule: str, state: EnvState, key: Key, message: str, advice: str = "") -> ApplyStep:
    return ApplyStep(rule, state.env, key, message, advice)


def _family_admitted(state: EnvState, key: Key) -> list[str]:
    """Simulated copies of the workload `key` that the base admitted."""
    kind, ns, name = key
    stem = f"{ns}/{name.rstrip('*').rstrip('-')}"
    return sorted(str(w["name"]) for w in state.admitted() if w.get("kind") in (kind, None)
                  and (str(w.get("name")) == stem or str(w.get("name")).rsplit("-", 1)[0] == stem))


def namespace_deleted(state: EnvState) -> list[ApplyStep]:
    """KP700: a Namespace leaves Git. Prune deletes it, and Kubernetes deletes everything in it: RayClusters,
    jobs created with `kubectl create`, Secrets nobody keeps in Git."""
    out = []
    for key in sorted(set(state.base) - set(state.head)):
        if key[0] != "Namespace":
            continue
        inside = sorted(k for k in state.base if k[1] == key[2] and k[0] != "Namespace")
        running = [n for k in inside if k[0] in WORKLOAD_KINDS for n in _family_admitted(state, k)]
        out.append(_step("KP700", state, key,
                         f"pruning deletes the namespace and everything in it ({len(inside)} object(s) from Git"
                         + (f", admitted work: {', '.join(running)}" if running else "") + ", and anything created "
                         "there by hand)",
                         "the generated Namespace asks first (Argo CD Prune=confirm, Flux prune: disabled); "
                         "move or finish the work, then delete it by hand"))
    return out


def workload_deleted(state: EnvState) -> list[ApplyStep]:
    """KP701: a workload leaves Git: prune deletes it, and a running job loses its pods (Kueue releases its
    quota; nothing is requeued)."""
    out = []
    for key in sorted(set(state.base) - set(state.head)):
        if key[0] not in WORKLOAD_KINDS or ("Namespace", "", key[1]) in set(state.base) - set(state.head):
            continue  # inside a deleted namespace: KP700 says it
        running = _family_admitted(state, key)
        out.append(_step("KP701", state, key,
                         "pruning deletes it" + (f"; admitted in the simulation: {', '.join(running)}" if running
                                                 else "; if it is running, its pods are deleted"),
                         "let it finish first, or allow workloadDeletion in the PlatformPolicy's apply section"))
    return out


# What recreating an object does, per kind (Kueue's `kueue.x-k8s.io/resource-in-use` finalizer on AdmissionCheck,
# Topology and ResourceFlavor: pkg/controller/core/admissioncheck_controller.go, resourceflavor_controller.go,
# pkg/controller/tas/topology_controller.go).
RECREATE_EFFECT = {
    "LocalQueue": "its admitted workloads keep running on their ClusterQueue's quota, its pending ones are queued "
                  "again once it exists (pkg/cache/queue/manager.go addLocalQueueLocked)",
    "Job": "its pods are deleted: running work restarts and queues again",
}
_IN_USE_EFFECT = ("Kueue's in-use finalizer keeps it Terminating while it is used: the delete, and the sync with "
                  "it, waits")
REPLACE_ADVICE = {
    "LocalQueue": f"for this one sync annotate it `{ARGO_SYNC_OPTIONS}: Force=true,Replace=true` (Argo CD "
                  f"replaces it on every sync while that stays); with Flux, `build` writes `{FLUX_FORCE}: enabled` "
                  "on LocalQueues (Environment `flux:` or `build --flux`), which recreates it only when an "
                  "immutable field changes",
    "Job": "submit it under a new name (a forced recreate deletes the running job's pods)",
}
_NEW_NAME_ADVICE = ("create it under a new name, point its users to it and delete the old one in a later change "
                    "(a forced recreate waits on Kueue's in-use finalizer)")


def recreated_by(semantic: Mapping[str, Any]) -> tuple[str, str] | None:
    """Which tool deletes and recreates the object instead of failing, from its own annotations: Flux with
    `kustomize.toolkit.fluxcd.io/force: enabled` (only when the apply fails as immutable: fluxcd/pkg
    ssa/manager_apply.go), Argo CD with `Force=true` and `Replace=true` in its sync-options (on every sync)."""
    annotations = semantic.get("annotations") if isinstance(semantic.get("annotations"), Mapping) else {}
    if annotations.get(FLUX_FORCE) == "enabled":
        return "Flux", f"its {FLUX_FORCE} annotation"
    options = {o.strip() for o in str(annotations.get(ARGO_SYNC_OPTIONS) or "").split(",")}
    if {"Force=true", "Replace=true"} <= options:
        return "Argo CD", "its Force=true,Replace=true sync options"
    return None


def immutable_changed(state: EnvState) -> list[ApplyStep]:
    """KP702: an immutable field changes (LocalQueue spec.clusterQueue, AdmissionCheck spec.controllerName, a TAS
    ResourceFlavor's nodeLabels/tolerations/topologyName, a Topology's levels, a Job's selector): the API server
    rejects the apply, so the sync fails and retries, unless the object asks Flux or Argo CD to recreate it
    (then the step says what the recreate does). Either way a human decides."""
    out = []
    for key in sorted(set(state.base) & set(state.head)):
        fields = IMMUTABLE.get(key[0], ())
        if key[0] == "ResourceFlavor" and _spec(state.base[key]).get("topologyName"):
            fields = TAS_FLAVOR_IMMUTABLE
        if not fields:
            continue
        paths = ["spec." + p for p in changed_paths(_spec(state.base[key]), _spec(state.head[key]))
                 if any(p == f or p.startswith(f + ".") or p.startswith(f + "[") for f in fields)]
        if not paths:
            continue
        recreate = recreated_by(state.head[key])
        if recreate:
            tool, why = recreate
            out.append(_step("KP702", state, key,
                             f"{', '.join(paths)} is immutable: {tool} will recreate it ({why}); "
                             f"{RECREATE_EFFECT.get(key[0], _IN_USE_EFFECT)}",
                             "allow immutableChange when the recreate is intended"))
        else:
            out.append(_step("KP702", state, key,
                             f"{', '.join(paths)} is immutable: the apply is rejected (the sync fails and retries)",
                             REPLACE_ADVICE.get(key[0], _NEW_NAME_ADVICE)))
    return out


def _usage_peaks(state: EnvState, group: Callable[[str], str | None] = lambda cq: cq
                 ) -> dict[tuple[str, str, str], int]:
    """(group of the ClusterQueue, flavor, resource) -> the most the base's admitted workloads used at once
    (simulated). `group` maps a ClusterQueue to what is summed (itself, or its cohort; None: left out)."""
    manifests: dict[str, Mapping[str, Any]] = {}
    for raw in [*state.base_raw, *state.load]:  # with `diff --load`, the base simulated the replayed load
        meta = raw.get("metadata") or {}
        stem = str(meta.get("name") or str(meta.get("generateName") or "").rstrip("-"))
        manifests[f"{meta.get('namespace') or 'default'}/{stem}"] = raw
    horizon = math.inf  # admitted and not finished by the simulation's end: still running
    events: list[tuple[float, int, dict[tuple[str, str, str], int]]] = []
    for w in state.admitted():
        name = str(w.get("name"))
        raw = manifests.get(name) or manifests.get(name.rsplit("-", 1)[0])
        if raw is None or w.get("admittedAt") is None:
            continue
        try:
            pod_sets = {ps.name: ps for ps in pod_sets_for(raw)}
        except KueueplanError:
            continue
        usage: dict[tuple[str, str, str], int] = {}
        for ps_name, flavors in (w.get("assignment") or {}).items():
            ps = pod_sets.get(ps_name)
            count = int((w.get("podSetCounts") or {}).get(ps_name, ps.count if ps else 0))
            for resource, amount in (ps.requests if ps else ()):
                flavor = flavors.get(resource) if isinstance(flavors, Mapping) else None
                owner = group(str(w.get("clusterQueue")))
                if flavor and owner is not None:
                    k = (owner, str(flavor), resource)
                    usage[k] = usage.get(k, 0) + amount * count
        end = w.get("finishedAt") if w.get("finishedAt") is not None else horizon
        events.append((float(w["admittedAt"]), 1, usage))
        events.append((float(end), 0, usage))  # ends sort before starts at the same instant
    current: dict[tuple[str, str, str], int] = {}
    peak: dict[tuple[str, str, str], int] = {}
    for _, start, usage in sorted(events, key=lambda e: (e[0], e[1])):
        for k, v in usage.items():
            current[k] = current.get(k, 0) + (v if start else -v)
            peak[k] = max(peak.get(k, 0), current[k])
    return peak


def over_quota(state: EnvState) -> list[ApplyStep]:
    """KP703: a quota cut below what admitted work uses (the base simulation's peak). Kueue evicts nothing on
    apply; it admits nothing new on that queue while usage exceeds the quota, and what exceeds nominal quota
    counts as borrowed: a queue of the cohort that reclaims its own quota preempts it."""
    if state.base_sim is None:
        return []
    before, after = quota_table(state.base_cluster), quota_table(state.head_cluster)
    out = []
    for (cq, flavor, resource), used in sorted(_usage_peaks(state).items()):
        rows = [(k, v) for k, v in after.items() if (k.owner_kind, k.owner, k.flavor, k.resource)
                == ("ClusterQueue", cq, flavor, resource)]
        old = next((v for k, v in before.items() if (k.owner_kind, k.owner, k.flavor, k.resource)
                    == ("ClusterQueue", cq, flavor, resource)), None)
        new = rows[0][1].nominal if rows else 0
        if old is None or new >= old.nominal or used <= new or cq not in state.head_cluster.cluster_queues:
            continue  # a deleted queue is KP706's
        queue = state.head_cluster.cluster_queues.get(cq)
        cohort = queue.cohort_name if queue else None
        amount = lambda v: format_resource_value(resource, v)  # noqa: E731
        effect = (f"the excess {amount(used - new)} is borrowed from cohort {cohort}: new admissions in {cq} wait, "
                  "and queues that reclaim their quota preempt it") if cohort else \
            f"{cq} admits nothing new until usage falls below {amount(new)}"
        out.append(_step("KP703", state, ("ClusterQueue", "", cq),
                         f"{flavor}/{resource}: admitted work uses up to {amount(used)} (simulated) but nominalQuota "
                         f"drops {amount(old.nominal)} -> {amount(new)}; the apply evicts nothing, {effect}",
                         "cut the quota after the work finishes, or allow overQuota"))
    return out


def _cohort_capacity(cluster: Cluster, cohort: str, flavor: str, resource: str) -> int:
    """What a flat cohort holds: its members' nominal quotas and its own (Kueue's cohort subtree quota)."""
    table = quota_table(cluster)
    members = {name for name, cq in cluster.cluster_queues.items() if cq.cohort_name == cohort}
    return sum(v.nominal for k, v in table.items() if k.flavor == flavor and k.resource == resource
               and ((k.owner_kind == "ClusterQueue" and k.owner in members)
                    or (k.owner_kind == "Cohort" and k.owner == cohort)))


def cohort_over_quota(state: EnvState) -> list[ApplyStep]:
    """KP703 (cohort): a cut that leaves a cohort holding less than its queues' admitted work uses. The apply
    evicts nothing; nothing that needs to borrow is admitted, and the borrowers' excess is what queues that
    reclaim their own quota preempt first."""
    if state.base_sim is None:
        return []
    cohort_of = {name: cq.cohort_name for name, cq in state.head_cluster.cluster_queues.items()}
    per_cq = _usage_peaks(state)
    out = []
    for (cohort, flavor, resource), used in sorted(_usage_peaks(state, lambda cq: cohort_of.get(cq)).items()):
        new = _cohort_capacity(state.head_cluster, cohort, flavor, resource)
        old = _cohort_capacity(state.base_cluster, cohort, flavor, resource)
        if new >= old or used <= new:
            continue
        head_table = quota_table(state.head_cluster)
        borrowers = sorted(cq for (cq, f, r), peak in per_cq.items() if f == flavor and r == resource
                           and cohort_of.get(cq) == cohort and peak > next(
                               (v.nominal for k, v in head_table.items() if k.owner_kind == "ClusterQueue"
                                and (k.owner, k.flavor, k.resource) == (cq, flavor, resource)), 0))
        amount = lambda v: format_resource_value(resource, v)  # noqa: E731
        out.append(_step("KP703", state, ("Cohort", "", cohort),
                         f"{flavor}/{resource}: its queues' admitted work uses up to {amount(used)} (simulated) but "
                         f"the cohort holds {amount(old)} -> {amount(new)}; the apply evicts nothing, nothing that "
                         "borrows is admitted, and the borrowers"
                         + (f" ({', '.join(borrowers)})" if borrowers else "")
                         + " are what queues reclaiming their quota preempt",
                         "cut quota once the borrowed work finished, or allow overQuota"))
    return out


def hold_and_drain(state: EnvState) -> list[ApplyStep]:
    """KP704: a ClusterQueue or LocalQueue gets `stopPolicy: HoldAndDrain`: Kueue evicts its admitted workloads
    (they requeue and wait) and admits nothing new. `Hold` only stops admission."""
    out = []
    for key in sorted(set(state.head)):
        if key[0] not in ("ClusterQueue", "LocalQueue"):
            continue
        new = _spec(state.head[key]).get("stopPolicy")
        old = _spec(state.base.get(key, {})).get("stopPolicy")
        if new != "HoldAndDrain" or old == "HoldAndDrain":
            continue
        if key[0] == "ClusterQueue":
            hit = [str(w["name"]) for w in state.admitted() if w.get("clusterQueue") == key[2]]
        else:
            hit = [str(w["name"]) for w in state.admitted()
                   if w.get("localQueue") == key[2] and str(w.get("name", "")).startswith(key[1] + "/")]
        out.append(_step("KP704", state, key,
                         "HoldAndDrain evicts every admitted workload of the queue"
                         + (f" (simulation: {', '.join(sorted(hit))})" if hit else "") + " and admits nothing new",
                         "use stopPolicy Hold to let running work finish, or allow holdAndDrain"))
    return out


def template_changed(state: EnvState) -> list[ApplyStep]:
    """KP705: the pod template of a workload changes. A Job's `spec.template` is immutable once it runs (the
    apply fails; forcing it deletes and recreates the job, which restarts and queues again); KubeRay does not
    roll a running cluster's pods, so only pods created later see the change, without Kueue's placement."""
    out = []
    for key in sorted(set(state.base) & set(state.head)):
        prefixes = TEMPLATE_PATHS.get(key[0])
        if not prefixes:
            continue
        paths = [p for p in changed_paths(state.base[key], state.head[key])
                 if p.startswith(prefixes) and not p.endswith(_SCALING)]
        if not paths:
            continue
        admitted = _family_admitted(state, key)
        out.append(_step("KP705", state, key,
                         f"pod template changes ({', '.join(paths[:4])}{' …' if len(paths) > 4 else ''})"
                         + (f" of admitted work ({', '.join(admitted)})" if admitted else
                            " of a job Kueue may have admitted"),
                         "submit a new job (new name) instead, or allow templateChange"))
    return out


def queue_deleted(state: EnvState) -> list[ApplyStep]:
    """KP706: a ClusterQueue or ResourceFlavor leaves Git while admitted work uses it. Kueue's finalizer
    (`kueue.x-k8s.io/resource-in-use`) keeps it Terminating until that work is gone: the prune hangs, and the
    sync with it. Drain first (stopPolicy HoldAndDrain, or Hold and wait), delete in a second change."""
    out = []
    for key in sorted(set(state.base) - set(state.head)):
        if key[0] == "ClusterQueue":
            users = [str(w["name"]) for w in state.admitted() if w.get("clusterQueue") == key[2]]
        elif key[0] == "ResourceFlavor":
            users = [str(w["name"]) for w in state.admitted()
                     if any(isinstance(f, Mapping) and key[2] in f.values() for f in (w.get("assignment") or {}).values())]
        else:
            continue
        if users:
            out.append(_step("KP706", state, key,
                             f"deleted while admitted work uses it ({', '.join(sorted(users))}): it stays Terminating "
                             "until that work is gone, and the prune waits",
                             "drain it first (stopPolicy: HoldAndDrain, or Hold and let the work finish), delete "
                             "it in a later change"))
    return out


RULES: tuple[Rule, ...] = (namespace_deleted, workload_deleted, immutable_changed, over_quota, cohort_over_quota,
                           hold_and_drain, template_changed, queue_deleted)


def _raw(docs: Iterable[Any]) -> list[Mapping[str, Any]]:
    return [getattr(d, "data", d) for d in docs if isinstance(getattr(d, "data", d), Mapping)]


def plan_env(env: str, base_docs: list[Any], head_docs: list[Any], base_sim: Mapping[str, Any] | None = None,
             allow: Iterable[str] = (), load: Iterable[Mapping[str, Any]] = ()) -> list[ApplyStep]:
    """Every step the apply of `head` over `base` takes that needs a human, with the policy's verdict.
    `load`: the workload objects `base_sim` ran instead of the base's own (`diff --load`)."""
    state = EnvState(env, index(base_docs), index(head_docs), _raw(base_docs), read_cluster(base_docs),
                     read_cluster(head_docs), base_sim, list(load))
    allowed = set(allow)
    steps = [s for rule in RULES for s in rule(state)]
    return [ApplyStep(s.rule, s.env, s.key, s.message, s.advice, s.allow_key in allowed) for s in steps]


def apply_allowance(policies: list[Any], path: Any, base_ref: str | None, tmp: Any) -> Callable[[str], set[str]]:
    """env -> allowed apply kinds, from the PlatformPolicy documents. Default: `policies/` beside `path`. With
    a git base, the policies are read as they are at that commit: a pull request cannot allow its own apply."""
    from pathlib import Path

    from kueueplan.validate.policy import load_policies
    from kueueplan.workflow.gitbase import export_at

    paths = [Path(p) for p in policies]
    if not paths:
        beside = Path(path).resolve().parent / "policies"
        paths = [beside] if beside.is_dir() else []
    if base_ref is not None:
        paths = [export_at(base_ref, p, Path(tmp) / "policies-at-base") for p in paths]
    policy = load_policies(paths, []) if paths else None
    if policy is None:
        return lambda env: set()
    return policy.spec.apply.allowed
