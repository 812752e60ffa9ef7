"""Layer 5: MultiKueue references that Kueue accepts but that never work.

A MultiKueue AdmissionCheck (controllerName `kueue.x-k8s.io/multikueue`) names a MultiKueueConfig in
`spec.parameters`; the config lists MultiKueueCluster names. Kueue's MultiKueue controller marks the check
inactive when that chain is broken (pkg/controller/admissionchecks/multikueue/admissioncheck.go), and every
ClusterQueue using an inactive check stays inactive (reason AdmissionCheckInactive,
pkg/cache/scheduler/clusterqueue.go).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kueueplan.kube.objects import MULTIKUEUE_CONTROLLER, PROVISIONING_CONTROLLER
from kueueplan.validate import kueue
from kueueplan.validate.configuration import release_of
from kueueplan.validate.model import KUEUE_GROUP, Context, Obj
from kueueplan.validate.registry import Hit, rule
from kueueplan.validate.rules.references import dig, missing_ref
from kueueplan.validate.rules.tas import MULTIKUEUE_SKIPS_TAS_SINCE, gate_enabled, tas_enabled, tas_flavors

MULTIKUEUE_GATE = "MultiKueue"
ON_FLAVORS_FILLED = (0, 15)  # pkg/util/admissioncheck NewAdmissionChecks: empty onFlavors = every flavor
MK_WITH_PROVREQ_SINCE = (0, 16)  # ClusterQueueActiveReasonMultiKueueWithProvisioningRequest
TAS_WITH_COHORTS_SINCE = (0, 11)  # before: "TAS is not supported for cohorts" (and withinClusterQueue preemption)
TAS_WITH_PROVREQ_SINCE = (0, 12)  # before: "TAS is not supported with ProvisioningRequest admission check"


def _users(ctx: Context, check: str) -> list[str]:
    return sorted(cq.name for cq in ctx.kueue("ClusterQueue")
                  if any(n == check for n, _ in kueue.admission_check_refs(cq)))


def _inactive(check: str, ctx: Context) -> str:
    users = _users(ctx, check)
    queues = (f"ClusterQueue(s) {', '.join(users)} stay inactive and admit nothing" if users
              else "every ClusterQueue using it stays inactive and admits nothing")
    return f"Kueue marks AdmissionCheck {check!r} inactive, so {queues}"


@rule("KP445", "error", "5 never works", kinds=("AdmissionCheck",))
def multikueue_check_bad_parameters(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A MultiKueue AdmissionCheck's `parameters` do not name an existing MultiKueueConfig.

    Kueue sets the check's Active condition to False (reason BadConfig, "Cannot load the AdmissionChecks
    parameters: ...") when `parameters` is missing, its `apiGroup` is not `kueue.x-k8s.io`, its `kind` not
    `MultiKueueConfig`, or the config does not exist (pkg/util/admissioncheck/admissioncheck.go `refValidForGK`);
    every ClusterQueue using the check then stays inactive. So it does when the MultiKueue feature gate is off (the
    default before Kueue v0.9): no controller ever marks the check active (cmd/kueue/main.go).

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: MultiKueueConfig
    metadata:
      name: multikueue-config
    spec:
      clusters:
      - multikueue-worker
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: AdmissionCheck
    metadata:
      name: sample-multikueue
    spec:
      controllerName: kueue.x-k8s.io/multikueue
      parameters:
        apiGroup: kueue.x-k8s.io
        kind: MultiKueueConfig
        name: multikueue-cfg
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: MultiKueueConfig
    metadata:
      name: multikueue-config
    spec:
      clusters:
      - multikueue-worker
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: AdmissionCheck
    metadata:
      name: sample-multikueue
    spec:
      controllerName: kueue.x-k8s.io/multikueue
      parameters:
        apiGroup: kueue.x-k8s.io
        kind: MultiKueueConfig
        name: multikueue-config
    ```
    """
    if not obj.is_kueue() or obj.spec.get("controllerName") != MULTIKUEUE_CONTROLLER:
        return
    enabled, _release, why = gate_enabled(obj, ctx, MULTIKUEUE_GATE)
    if why and not enabled:
        yield Hit(obj, ("spec", "controllerName"), f"the MultiKueue feature gate is off ({why}), so no controller "
                                                   f"marks this check active: {_inactive(obj.name, ctx)}; turn the "
                                                   "gate on in Kueue's Configuration")
        return
    params = obj.spec.get("parameters")
    if not isinstance(params, dict):
        yield Hit(obj, ("spec",), f"has no spec.parameters (missing parameters reference): {_inactive(obj.name, ctx)}; "
                                  "point it at a MultiKueueConfig")
        return
    for key, want in (("apiGroup", KUEUE_GROUP), ("kind", "MultiKueueConfig")):
        if params.get(key) != want:
            yield Hit(obj, ("spec", "parameters", key), f"parameters.{key} is {params.get(key)!r}, expecting "
                                                        f"{want!r}: {_inactive(obj.name, ctx)}")
            return
    name = params.get("name")
    if not isinstance(name, str) or not name:
        yield Hit(obj, ("spec", "parameters"), f"parameters.name is empty: {_inactive(obj.name, ctx)}")
    elif ctx.get("MultiKueueConfig", name) is None:
        yield missing_ref(ctx, "MultiKueueConfig", f"MultiKueueConfig {name!r} does not exist: "
                                                   f"{_inactive(obj.name, ctx)}", ("spec", "parameters", "name"), obj)


@rule("KP446", "error", "5 never works", kinds=("MultiKueueConfig",))
def multikueue_config_missing_cluster(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A MultiKueueConfig names a MultiKueueCluster that does not exist.

    When none of its clusters exists, Kueue marks the AdmissionChecks using the config inactive (reason
    NoUsableClusters) and their ClusterQueues admit nothing (error). When only some are missing, the checks stay
    active (reason SomeActiveClusters) but workloads are never dispatched there (warning).

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: MultiKueueCluster
    metadata:
      name: multikueue-worker
    spec:
      clusterSource:
        kubeConfig:
          locationType: Secret
          location: worker1-secret
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: MultiKueueConfig
    metadata:
      name: multikueue-config
    spec:
      clusters:
      - multikueue-worker-1
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: MultiKueueCluster
    metadata:
      name: multikueue-worker
    spec:
      clusterSource:
        kubeConfig:
          locationType: Secret
          location: worker1-secret
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: MultiKueueConfig
    metadata:
      name: multikueue-config
    spec:
      clusters:
      - multikueue-worker
    ```
    """
    if not obj.is_kueue():
        return
    clusters = [(i, str(c)) for i, c in enumerate(kueue.as_list(obj.spec.get("clusters"))) if isinstance(c, str)]
    missing = [(i, c) for i, c in clusters if ctx.get("MultiKueueCluster", c) is None]
    if not missing:
        return
    checks = sorted(ac.name for ac in ctx.kueue("AdmissionCheck")
                    if ac.spec.get("controllerName") == MULTIKUEUE_CONTROLLER
                    and isinstance(ac.spec.get("parameters"), dict) and ac.spec["parameters"].get("name") == obj.name)
    every = len(missing) == len(clusters)
    checked = f"AdmissionCheck(s) {', '.join(checks)}" if checks else "the AdmissionChecks using it"
    for i, name in missing:
        if every:
            outcome = (f"none of its clusters exists, so Kueue marks {checked} inactive (NoUsableClusters) "
                       "and their ClusterQueues admit nothing")
        else:
            outcome = "workloads are never dispatched to it (the check stays active: SomeActiveClusters)"
        yield missing_ref(ctx, "MultiKueueCluster", f"MultiKueueCluster {name!r} does not exist; {outcome}",
                          ("spec", "clusters", i), obj, None if every else "warning")


@rule("KP447", "error", "5 never works", kinds=("ClusterQueue",))
def multikueue_check_misused(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A ClusterQueue combines MultiKueue (or TAS) with what its Kueue release refuses: the queue stays inactive.

    Kueue keeps the ClusterQueue inactive (pkg/cache/scheduler/clusterqueue.go `updateQueueStatus`) when it
    uses two MultiKueue checks (MultipleMultiKueueAdmissionChecks), restricts one to some flavors with
    `onFlavors` (MultiKueueAdmissionCheckAppliedPerFlavor; before Kueue v0.15 any `onFlavors`, from v0.15
    `onFlavors` that leave out a flavor of the queue), or, from Kueue v0.16, combines it with a
    ProvisioningRequest check (MultiKueueWithProvisioningRequest: provisioning happens on the workers).
    With TopologyAwareScheduling on, releases before v0.15 also refuse TAS flavors
    (NotSupportedWithTopologyAwareScheduling) together with a MultiKueue check, before v0.12 with a
    ProvisioningRequest check, and before v0.11 in a cohort or with `preemption.withinClusterQueue`.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: AdmissionCheck
    metadata:
      name: sample-multikueue
    spec:
      controllerName: kueue.x-k8s.io/multikueue
      parameters:
        apiGroup: kueue.x-k8s.io
        kind: MultiKueueConfig
        name: multikueue-config
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cluster-queue
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu]
        flavors:
        - name: on-demand
          resources:
          - name: cpu
            nominalQuota: 9
        - name: spot
          resources:
          - name: cpu
            nominalQuota: 9
      admissionChecksStrategy:
        admissionChecks:
        - name: sample-multikueue
          onFlavors: [spot]
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: AdmissionCheck
    metadata:
      name: sample-multikueue
    spec:
      controllerName: kueue.x-k8s.io/multikueue
      parameters:
        apiGroup: kueue.x-k8s.io
        kind: MultiKueueConfig
        name: multikueue-config
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cluster-queue
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu]
        flavors:
        - name: on-demand
          resources:
          - name: cpu
            nominalQuota: 9
        - name: spot
          resources:
          - name: cpu
            nominalQuota: 9
      admissionChecksStrategy:
        admissionChecks:
        - name: sample-multikueue
    ```
    """
    if not obj.is_kueue():
        return
    release = release_of(obj, ctx)
    controllers = {}
    for name, path in kueue.admission_check_refs(obj):
        ac = ctx.get("AdmissionCheck", name)
        if ac is not None and ac.is_kueue():
            controllers[name] = (str(ac.spec.get("controllerName") or ""), path)
    mk = [n for n, (c, _) in controllers.items() if c == MULTIKUEUE_CONTROLLER]
    if len(mk) > 1:
        yield Hit(obj, controllers[mk[1]][1], f"uses {len(mk)} MultiKueue AdmissionChecks ({', '.join(mk)}); Kueue "
                                              "allows one per ClusterQueue and keeps this one inactive "
                                              "(MultipleMultiKueueAdmissionChecks)")
    all_flavors = {f for f, _ in kueue.flavor_names(obj)}
    strategy = obj.spec.get("admissionChecksStrategy")
    for i, rule_ in enumerate(kueue.as_list(strategy.get("admissionChecks") if isinstance(strategy, dict) else None)):
        if not isinstance(rule_, dict) or rule_.get("name") not in mk:
            continue
        on = {str(f) for f in kueue.as_list(rule_.get("onFlavors"))}
        per_flavor = bool(on) if release < ON_FLAVORS_FILLED else bool(on) and on != all_flavors
        if per_flavor:
            yield Hit(obj, ("spec", "admissionChecksStrategy", "admissionChecks", i, "onFlavors"),
                      f"MultiKueue AdmissionCheck {rule_['name']!r} is limited to flavors {', '.join(sorted(on))}; "
                      "Kueue cannot apply MultiKueue per flavor and keeps this ClusterQueue inactive "
                      "(MultiKueueAdmissionCheckAppliedPerFlavor); drop onFlavors")
    prov = [n for n, (c, _) in controllers.items() if c == PROVISIONING_CONTROLLER]
    if mk and prov and release >= MK_WITH_PROVREQ_SINCE:
        yield Hit(obj, controllers[prov[0]][1], f"combines MultiKueue ({', '.join(mk)}) with ProvisioningRequest "
                                                f"({', '.join(prov)}); Kueue keeps this ClusterQueue inactive "
                                                "(MultiKueueWithProvisioningRequest): set up provisioning on the "
                                                "worker clusters' queues instead")
    yield from _tas_not_supported(obj, ctx, {n: controllers[n][1] for n in mk}, {n: controllers[n][1] for n in prov})


def _tas_not_supported(obj: Obj, ctx: Context, mk: dict[str, Any], prov: dict[str, Any]) -> Iterator[Hit]:
    """What a TAS ClusterQueue may not use before v0.15 (isTASViolated of v0.9-v0.14, pkg/cache/clusterqueue.go)."""
    enabled, release, _why = tas_enabled(obj, ctx)
    if not enabled or release >= MULTIKUEUE_SKIPS_TAS_SINCE:
        return
    flavors = tas_flavors(obj, ctx)
    if not flavors:
        return
    found: list[tuple[str, tuple[Any, ...]]] = []
    cohort, cohort_path = kueue.cohort_of(obj)
    within = dig(obj.spec, "preemption", "withinClusterQueue")
    if release < TAS_WITH_COHORTS_SINCE and cohort:
        found.append(("for cohorts", cohort_path))
    if release < TAS_WITH_COHORTS_SINCE and within not in (None, "Never"):
        found.append(("for preemption within cluster queue", ("spec", "preemption", "withinClusterQueue")))
    if mk:
        found.append(("with MultiKueue admission check", next(iter(mk.values()))))
    if prov and release < TAS_WITH_PROVREQ_SINCE:
        found.append(("with ProvisioningRequest admission check", next(iter(prov.values()))))
    for what, path in found:
        yield Hit(obj, path, f"TAS is not supported {what} in Kueue v{release[0]}.{release[1]}: with TAS flavor(s) "
                             f"{', '.join(sorted(flavors))} this ClusterQueue stays inactive "
                             "(NotSupportedWithTopologyAwareScheduling); a later Kueue release supports it")
