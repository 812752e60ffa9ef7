"""A Scenario (docs/scenario-format.md) from a compiled environment and the load the teams declare.

The cluster part is the compiled Kueue objects and Namespaces; each `load` entry of a Workload becomes an arrival
whose manifest is the workload's object (named after the entry, with the entry's priority); expectations go into
`spec.expectations` as `{workload: "<ns>/<name>", admittedWithin, neverPreempted, finishedBy, state}`; a Team's
`expect` (or a `clusterQueues` entry's) becomes `{clusterQueue: <the queue>, ...}` (every workload that queue
admits). The environment's Kueue Configuration (the file its `kueue-manager-config` ConfigMap holds) becomes
`spec.configuration`.
"""

from __future__ import annotations

from typing import Any

from kueueplan.compile.configuration import effective_file
from kueueplan.compile.context import PRIORITY_LABEL, EnvContext
from kueueplan.compile.kueue import team_plans
from kueueplan.compile.workloads import WORKLOAD_KINDS, check_priority, workload_manifest, workload_plans
from kueueplan.kube.apiversion import KUEUEPLAN_API
from kueueplan.kube.podsets import MAX_WORKLOADS, workload_count, workload_names
from kueueplan.kube.quantity import canonical
from kueueplan.spec.models import RunTime



def build_scenario(ctx: EnvContext, manifests: list[dict[str, Any]],
                   origins: list[tuple[str, int | None]] | None = None) -> dict[str, Any]:
    """The Scenario dict; `origins`, when given, receives the spec file and line of each expectation (in order)."""
    where: list[tuple[str, int | None]] = []
    plans = workload_plans(ctx, team_plans(ctx))
    arrivals: list[dict[str, Any]] = []
    expectations: list[dict[str, Any]] = []
    for plan in plans:
        for i, load in enumerate(plan.spec.load):
            name = load.name or plan.entry.name
            if load.priority is not None:
                check_priority(ctx, plan.entry, plan.team, load.priority, ("load", i, "priority"))
            manifest = workload_manifest(plan, name=name, priority=load.priority, generate=False)
            if load.priority is None and plan.priority is None:
                manifest["metadata"]["labels"].pop(PRIORITY_LABEL, None)
            arrival: dict[str, Any] = {"at": load.at}
            if load.arrivals is not None:  # expanded per run by kueueplan.planning, like a Scenario's own entries
                arrival["arrivals"] = load.arrivals.model_dump(exclude_none=True)
            if load.for_ is not None:
                arrival["for"] = load.for_
            if load.runFor is not None:
                arrival["runFor"] = load.runFor.model_dump(exclude_none=True) if hasattr(load.runFor, "model_dump") \
                    else load.runFor
            if load.count != 1 or load.arrivals is not None and load.for_ is None:
                arrival["count"] = load.count
            if load.every is not None:
                arrival["every"] = load.every
            if load.podsReadyAfter is not None:
                arrival["podsReadyAfter"] = load.podsReadyAfter
            if load.resubmitAfterPreemption is not None:
                if plan.spec.kind != "Pod":
                    raise plan.entry.error("resubmitAfterPreemption is for Pods: Kueue deletes a preempted Pod, "
                                           "other kinds are requeued by Kueue itself",
                                           ("load", i, "resubmitAfterPreemption"))
                arrival["resubmitAfterPreemption"] = load.resubmitAfterPreemption
            arrival["manifest"] = manifest
            arrivals.append(arrival)
            expect = load.expect or plan.spec.expect
            if expect is None:
                continue
            fields = expect.model_dump(exclude_none=True)
            if not fields:
                continue
            if load.arrivals is not None or isinstance(load.runFor, RunTime):
                continue  # copies are drawn per run: a team's `expect` (by ClusterQueue) covers them
            # one expectation per Workload Kueue makes, built here first: a 10^8-replica Deployment ran out of memory
            if load.count * workload_count(manifest) > MAX_WORKLOADS:
                raise plan.entry.error(f"{load.count} x {workload_count(manifest):,} Workloads (count x replicas) "
                                       f"is more than the {MAX_WORKLOADS:,} a simulation holds", ("load", i),
                                       hint="declare a smaller sample of the load")
            copies = [name] if load.count == 1 else [f"{name}-{k}" for k in range(1, load.count + 1)]
            names = [wl for copy_name in copies for wl in workload_names(manifest, copy_name)]
            at = plan.entry.locate([("load", i, "expect")] if load.expect else [("expect",)])
            for copy_name in names:
                expectations.append({"workload": f"{plan.namespace}/{copy_name}", **fields})
                where.append(at)
    for team in team_plans(ctx):
        for queue in team.queues:  # a lend-only queue admits nothing: an expectation on it could never be judged
            fields = queue.spec.expect.model_dump(exclude_none=True) if queue.spec.expect and \
                not queue.spec.lendOnly else {}
            if fields:
                expectations.append({"clusterQueue": queue.name, **fields})
                where.append(team.entry.locate([queue.path("expect")]))
    spec: dict[str, Any] = {
        "manifests": [m for m in manifests if m["kind"] not in WORKLOAD_KINDS and m["kind"] != "ConfigMap"],
        "workloads": arrivals,
    }
    config = effective_file(ctx)
    if config is not None:  # the file of the environment's kueue-manager-config ConfigMap, left out of manifests
        spec["configuration"] = config
    checks = _check_models(ctx)
    if checks:
        spec["admissionChecks"] = checks
    sim = ctx.env.model.spec.simulation
    if sim is not None and sim.until is not None:
        spec["until"] = sim.until
    major, minor, _ = ctx.kueue_version
    spec["kueueVersion"] = f"v{major}.{minor}"
    if sim is not None and sim.runs > 1:  # read by kueueplan.planning (check/diff), never by the simulator
        spec["runs"], spec["seed"] = sim.runs, sim.seed
    if sim is not None and sim.fairSharing is not None:
        spec["fairSharing"] = sim.fairSharing
    if expectations:
        spec["expectations"] = expectations
    if origins is not None:
        origins[:] = where
    return {"apiVersion": KUEUEPLAN_API, "kind": "Scenario",
            "metadata": {"name": f"{ctx.platform.root.name}-{ctx.name}"}, "spec": spec}


def _check_models(ctx: EnvContext) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for entry in ctx.docs["AdmissionCheck"]:
        sim = entry.model.spec.simulation
        if sim is None:
            continue
        model: dict[str, Any] = {}
        if sim.delay is not None:
            model["delay"] = sim.delay
        if sim.capacity is not None:
            model["capacity"] = {k: canonical(v) for k, v in sim.capacity.items()}
        out[entry.name] = model
    return out
