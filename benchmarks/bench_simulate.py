"""Benchmark `kueueplan simulate FILE -o json` end to end on Kueue's scheduler performance input shape.

The shape mirrors Kueue's scheduler performance tests (issue 5): every ClusterQueue has nominal 20 CPU,
borrowingLimit 100, reclaimWithinCohort Any, withinClusterQueue LowerPriority; per queue three classes:
small (1 CPU, 200 ms, priority 50, one every 100 ms), medium (5 CPU, 500 ms, priority 100, every 500 ms),
large (20 CPU, 1 s, priority 200, every 1.2 s). Inputs:

- baseline: 5 cohorts x 6 ClusterQueues, 15,000 workloads (target <= 5 s);
- large: 10 cohorts x 100 ClusterQueues, 50,000 workloads (issue 16: <= 12 s CPU, any input of that shape);
- kueue-large-scale: Kueue's own large-scale input (configs/large-scale/generator.yaml): the same shape with
  35/11/4 workloads per class and queue, run times 150/350/700 ms, one every 60/300/700 ms;
- large-slow-dense: the same, run times x3 and arrivals twice as dense (queues stay full far longer);
- large-jitter: the same, each `workloads` entry with its own seeded run time (x0.5 to x3), spacing (x0.4 to
  x1.5) and start (0 to 2 s), so no two ClusterQueues move in step.

Each input is written to a YAML file first; the figure is one `kueueplan simulate FILE -o json > out` process
(the best of three, as the build and validate benchmarks report): user+sys CPU seconds (getrusage of the
waited child), wall time, and its peak RSS. A process past CPU_LIMIT seconds of CPU is stopped and reported as
such. The table also shows what the JSON result holds (workloads, finished, Preempted events, the time of the
last event).

    python benchmarks/bench_simulate.py                  # every input
    python benchmarks/bench_simulate.py large-jitter     # some of them
    python benchmarks/bench_simulate.py --write DIR [--scale N] [NAME...]  # only write the YAML files
    python benchmarks/bench_simulate.py --profile NAME   # cProfile of the CLI path in this process
"""

from __future__ import annotations

import json
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

KUEUEPLAN = str(Path(sys.executable).parent / "kueueplan")
CLASSES = [  # name, cpu, runFor (ms), priority, every (ms)
    ("small", "1", 200, 50, 100),
    ("medium", "5", 500, 100, 500),
    ("large", "20", 1000, 200, 1200),
]
# Kueue's own large-scale input (test/performance/scheduler/configs/large-scale/generator.yaml): the same
# shape, with its run times and creation intervals
KUEUE_LARGE_SCALE_CLASSES = [
    ("small", "1", 150, 50, 60),
    ("medium", "5", 350, 100, 300),
    ("large", "20", 700, 200, 700),
]
# name: cohorts, queues per cohort, workloads per class and queue, variant
SIZES: dict[str, tuple[int, int, tuple[int, int, int], str]] = {
    "baseline": (5, 6, (350, 100, 50), "plain"),
    "large": (10, 100, (35, 10, 5), "plain"),
    "kueue-large-scale": (10, 100, (35, 11, 4), "kueue"),
    "large-slow-dense": (10, 100, (35, 10, 5), "slow-dense"),
    "large-jitter": (10, 100, (35, 10, 5), "jitter"),
}
TARGETS = {"baseline": 5.0, "large": 12.0, "kueue-large-scale": 12.0, "large-slow-dense": 12.0,
           "large-jitter": 12.0}
CPU_LIMIT = 180  # seconds of CPU per process: a run past it is stopped and reported as such


def _timing(variant: str, rng: random.Random, run_for: int, every: int) -> tuple[int, int, int]:
    """(at, runFor, every) in ms of one `workloads` entry."""
    if variant == "slow-dense":
        return 0, run_for * 3, every // 2
    if variant == "jitter":
        return rng.randrange(0, 2000, 10), int(run_for * rng.uniform(0.5, 3)), int(every * rng.uniform(0.4, 1.5))
    return 0, run_for, every


def scenario(cohorts: int, queues: int, counts: tuple[int, int, int], variant: str = "plain") -> dict[str, Any]:
    rng = random.Random(16)  # a fixed seed: the same file on every machine
    manifests: list[dict[str, Any]] = [
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "default"}},
    ]
    for name, _, _, prio, _ in CLASSES:
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
            classes = KUEUE_LARGE_SCALE_CLASSES if variant == "kueue" else CLASSES
            for (name, cpu, run_for, _, every), count in zip(classes, counts):
                at, run_for, every = _timing(variant, rng, run_for, every)
                workloads.append({
                    "at": f"{at}ms", "count": count, "every": f"{every}ms", "runFor": f"{run_for}ms",
                    "manifest": {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
                        "name": f"{cq}-{name}", "namespace": "default",
                        "labels": {"kueue.x-k8s.io/queue-name": cq, "kueue.x-k8s.io/priority-class": name}},
                        "spec": {"parallelism": 1, "template": {"spec": {"containers": [
                            {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}]}}}}})
    return {"apiVersion": "kueueplan.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "perf"},
            "spec": {"manifests": manifests, "workloads": workloads}}


def write(name: str, folder: Path, scale: int = 1) -> Path:
    """The input as a YAML file; `scale` > 1 divides the number of ClusterQueues per cohort (for quick diffs)."""
    cohorts, queues, counts, variant = SIZES[name]
    data = scenario(cohorts, max(1, queues // scale), counts, variant)
    folder.mkdir(parents=True, exist_ok=True)  # --write DIR may name a folder that is not there yet
    path = folder / f"{name}.yaml"
    path.write_text(yaml.dump(data, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False))
    return path


def measure(path: Path) -> dict[str, Any]:
    """One `kueueplan simulate FILE -o json > out` process: its CPU, wall time, peak RSS and what it wrote."""
    out = path.with_suffix(".json")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with out.open("wb") as sink:
        proc = subprocess.Popen([KUEUEPLAN, "simulate", str(path), "-o", "json"], stdout=sink,
                                stderr=subprocess.PIPE, preexec_fn=_limit_cpu)
        err = proc.stderr.read().decode() if proc.stderr else ""
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL):
        return {"stopped": True, "yaml_mb": path.stat().st_size / 1e6, "cpu_s": cpu, "wall_s": wall,
                "peak_mib": usage.ru_maxrss / 1024}
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{path.name}: kueueplan failed\n{err}")
    result = json.loads(out.read_bytes())
    wls = result["workloads"]
    return {"workloads": len(wls), "finished": sum(1 for w in wls if w["state"] == "Finished"),
            "preemptions": sum(1 for e in result["events"] if e["type"] == "Preempted"),
            "sim_end_s": max((e["at"] for e in result["events"]), default=0.0),
            "yaml_mb": path.stat().st_size / 1e6, "cpu_s": cpu, "wall_s": wall,
            "peak_mib": usage.ru_maxrss / 1024}  # KiB on Linux


def best_of(path: Path, target: float, repeat: int = 3) -> dict[str, Any]:
    """measure() up to `repeat` times, keeping the run with the least CPU (the machine is shared: other jobs
    only ever add time, so the minimum is the figure least disturbed by them). A run stopped at the limit or
    far over its target is not repeated."""
    best = measure(path)
    for _ in range(repeat - 1):
        if best.get("stopped") or best["cpu_s"] > 3 * target:
            break
        r = measure(path)
        if r["cpu_s"] < best["cpu_s"]:
            best = r
    return best


def _limit_cpu() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT, CPU_LIMIT + 5))


def profile(name: str) -> None:
    import cProfile
    import pstats

    from kueueplan.cli import main as cli

    with tempfile.TemporaryDirectory() as tmp:
        path = write(name, Path(tmp))
        prof = cProfile.Profile()
        sys.argv = ["kueueplan", "simulate", str(path), "-o", "json"]
        stdout = sys.stdout
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - restored below
        try:
            prof.runcall(cli, standalone_mode=False)
        finally:
            sys.stdout.close()
            sys.stdout = stdout
    pstats.Stats(prof).sort_stats("tottime").print_stats(40)


def main(argv: list[str]) -> None:
    if argv[1:2] == ["--profile"]:
        profile(argv[2])
        return
    if argv[1:2] == ["--write"]:
        args = argv[3:]
        scale = 1
        if args[:1] == ["--scale"]:
            scale, args = int(args[1]), args[2:]
        for n in args or list(SIZES):
            print(write(n, Path(argv[2]), scale))
        return
    names = argv[1:] or list(SIZES)
    header = ["input", "YAML", "workloads", "finished", "preemptions", "last event", "CPU (user+sys)", "wall",
              "peak RSS", "target (CPU)"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    with tempfile.TemporaryDirectory() as tmp:
        for n in names:
            r = best_of(write(n, Path(tmp)), TARGETS[n])
            if r.get("stopped"):
                print(f"| {n} | {r['yaml_mb']:.1f} MB | | | | | > {CPU_LIMIT} s (stopped) | {r['wall_s']:.0f} s "
                      f"| {r['peak_mib']:.0f} MiB | <= {TARGETS[n]:g} s |", flush=True)
                continue
            print(f"| {n} | {r['yaml_mb']:.1f} MB | {r['workloads']:,} | {r['finished']:,} | {r['preemptions']:,} "
                  f"| {r['sim_end_s']:.1f} s | {r['cpu_s']:.2f} s | {r['wall_s']:.2f} s | {r['peak_mib']:.0f} MiB "
                  f"| <= {TARGETS[n]:g} s |", flush=True)


if __name__ == "__main__":
    main(sys.argv)
