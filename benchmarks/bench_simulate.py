"""Benchmark `kueueplan simulate` on the inputs of issue 5 (mirroring Kueue's scheduler performance tests).

Every ClusterQueue: nominal 20 CPU, borrowingLimit 100, reclaimWithinCohort Any, withinClusterQueue
LowerPriority. Per queue: small (1 CPU, 200 ms, priority 50, one every 100 ms), medium (5 CPU, 500 ms,
priority 100, every 500 ms), large (20 CPU, 1 s, priority 200, every 1.2 s).

    python benchmarks/bench_simulate.py            # baseline (5 x 6 queues, 15,000 workloads) and large
    python benchmarks/bench_simulate.py baseline   # one of them

Prints wall time (building the scenario from the generated dict, simulating and producing the JSON result),
peak memory (the process's maximum resident set size; each input runs in its own process) and the rate in
workloads per second.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from typing import Any

from kueueplan.simulate.engine import simulate
from kueueplan.simulate.result import result_json
from kueueplan.simulate.scenario import scenario_from_dict

CLASSES = [  # name, count per queue (baseline), cpu, runFor, priority, every
    ("small", 350, "1", "200ms", 50, "100ms"),
    ("medium", 100, "5", "500ms", 100, "500ms"),
    ("large", 50, "20", "1s", 200, "1200ms"),
]
SIZES = {
    "baseline": (5, 6, (350, 100, 50)),
    "large": (10, 100, (35, 10, 5)),
}


def scenario(cohorts: int, queues: int, counts: tuple[int, int, int]) -> dict[str, Any]:
    manifests: list[dict[str, Any]] = [
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "default"}},
    ]
    for name, _, _, _, prio, _ in CLASSES:
        manifests.append({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass",
                          "metadata": {"name": name}, "value": prio})
    workloads = []
    for c in range(cohorts):
        for q in range(queues):
            cq = f"cq-{c}-{q}"
            manifests.append({
                "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": cq},
                "spec": {"cohortName": f"cohort-{c}", "namespaceSelector": {},
                         "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
                         "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                             {"name": "default", "resources": [{"name": "cpu", "nominalQuota": "20",
                                                                "borrowingLimit": "100"}]}]}]}})
            manifests.append({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
                              "metadata": {"namespace": "default", "name": cq}, "spec": {"clusterQueue": cq}})
            for (name, _, cpu, run_for, _, every), count in zip(CLASSES, counts):
                workloads.append({
                    "at": 0, "count": count, "every": every, "runFor": run_for,
                    "manifest": {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
                        "name": f"{cq}-{name}", "namespace": "default",
                        "labels": {"kueue.x-k8s.io/queue-name": cq, "kueue.x-k8s.io/priority-class": name}},
                        "spec": {"parallelism": 1, "template": {"spec": {"containers": [
                            {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}]}}}}})
    return {"apiVersion": "kueueplan.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "perf"},
            "spec": {"manifests": manifests, "workloads": workloads}}


def run(name: str) -> dict[str, Any]:
    cohorts, queues, counts = SIZES[name]
    data = scenario(cohorts, queues, counts)
    start = time.perf_counter()
    sim = simulate(scenario_from_dict(data))
    out = result_json(sim)
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    n = len(out["workloads"])
    finished = sum(1 for w in out["workloads"] if w["state"] == "Finished")
    preempted = sum(1 for e in out["events"] if e["type"] == "Preempted")
    return {"input": name, "workloads": n, "finished": finished, "preemptions": preempted, "cycles": sim.cycle,
            "wall_s": wall, "peak_mib": peak, "rate": n / wall, "sim_end_s": sim.now / 1000}


def _in_subprocess(name: str) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, __file__, "--one", name], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def main(argv: list[str]) -> None:
    if len(argv) == 3 and argv[1] == "--one":
        print(json.dumps(run(argv[2])))
        return
    names = argv[1:] or list(SIZES)
    rows = [_in_subprocess(n) for n in names]
    header = ["input", "workloads", "finished", "preemptions", "cycles", "sim_end_s", "wall_s", "peak_mib", "rate"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        cells = [f"{r[h]:.2f}" if isinstance(r[h], float) else str(r[h]) for h in header]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv)
