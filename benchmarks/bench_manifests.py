"""Benchmark the manifests-only path: `kustomize build | kueueplan simulate -` on a generated platform.

N teams, each a ClusterQueue (64 CPU) with a LocalQueue, and J Jobs per team as plain manifests (one YAML
stream, as kustomize prints it) with kueueplan.io/arrive-at and run-for annotations. Prints the time to read the
stream (YAML with line numbers), to turn its workload objects into load (simulate/load.py), the simulation
itself, and the whole CLI run (`simulate - -o json`, a fresh process).

    python benchmarks/bench_manifests.py            # 50 teams x 100 jobs and 100 teams x 200 jobs
    python benchmarks/bench_manifests.py 50x100     # one size (benchmarks/run.py's, for the README)
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time

import yaml

SIZES = [(50, 100), (100, 200)]
# libyaml's emitter when PyYAML has it: writing the input is not what is measured.
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def stream(teams: int, jobs: int) -> str:
    docs = [{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "default"}}]
    for t in range(teams):
        ns = f"team-{t}"
        docs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        docs.append({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": ns},
                     "spec": {"namespaceSelector": {"matchLabels": {
                         "kubernetes.io/metadata.name": ns}},
                         "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
                         "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "default", "resources": [
                             {"name": "cpu", "nominalQuota": "64"}]}]}]}})
        docs.append({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
                     "metadata": {"name": "q", "namespace": ns}, "spec": {"clusterQueue": ns}})
        for j in range(jobs):
            docs.append({"apiVersion": "batch/v1", "kind": "Job", "metadata": {
                "name": f"job-{j}", "namespace": ns, "labels": {"kueue.x-k8s.io/queue-name": "q"},
                "annotations": {"kueueplan.io/arrive-at": f"{j}s", "kueueplan.io/run-for": f"{1 + j % 7}m"}},
                "spec": {"parallelism": 1 + j % 4, "template": {"spec": {"containers": [{
                    "name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}}})
    return yaml.dump_all(docs, Dumper=DUMPER, sort_keys=False)


def sizes(args: list[str]) -> list[tuple[int, int]]:
    """`TEAMSxJOBS` arguments, or SIZES without any."""
    try:
        return [(int(t), int(j)) for t, _, j in (a.partition("x") for a in args)] or SIZES
    except ValueError:
        sys.exit(f"usage: bench_manifests.py [TEAMSxJOBS ...], e.g. 50x100; got {' '.join(args)}")


def main(argv: list[str]) -> None:
    from kueueplan.simulate.engine import simulate
    from kueueplan.workflow.manifests import documents_from_text
    from kueueplan.workflow.simulation import manifests_scenario

    todo = sizes(argv)
    print("| teams x jobs | workloads | stream | read YAML (s) | to load (s) | simulate (s) | CLI end to end (s) "
          "| peak RSS (MiB) |")
    print("|---|---|---|---|---|---|---|---|")
    for teams, jobs in todo:
        text = stream(teams, jobs)
        start = time.perf_counter()
        docs = documents_from_text(text)
        read = time.perf_counter()
        scenario = manifests_scenario(docs, "<stdin>")
        loaded = time.perf_counter()
        simulate(scenario)
        simulated = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "kueueplan", "simulate", "-", "-o", "json"], input=text,
                              capture_output=True, text=True, check=False)
        wall = time.perf_counter() - simulated
        if proc.returncode != 0:
            sys.exit(proc.stderr)
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"| {teams} x {jobs} | {teams * jobs:,} | {len(text) / 2**20:.1f} MiB | {read - start:.2f} | "
              f"{loaded - read:.2f} | {simulated - loaded:.2f} | {wall:.1f} | {rss:.0f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
