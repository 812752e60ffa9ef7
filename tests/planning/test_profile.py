"""kueue-bench WorkloadProfiles (kueue-bench.io/v1alpha1) as load, per the mapping in docs/planning.md."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import yaml

from kueueplan.planning.source import ScenarioSource

from ._support import scenario, write

PROFILE = """
apiVersion: kueue-bench.io/v1alpha1
kind: WorkloadProfile
metadata: {name: mix}
spec:
  seed: 100
  duration: 2h
  arrivalPattern: {type: poisson, ratePerMinute: 0.5}
  workloads:
  - type: Job
    weight: 60
    localQueue: lq
    namespace: team-a
    template:
      parallelism: {distribution: choice, values: ["1", "2"]}
      resources: {requests: {nvidia.com/gpu: {distribution: uniform, min: "1", max: "2"}, cpu: "4", memory: 16Gi}}
      duration: {distribution: lognormal, mean: 10m, stddev: 5m}
  - type: JobSet
    weight: 30
    localQueue: lq
    namespace: team-a
    template:
      replicatedJobs:
      - name: workers
        replicas: {distribution: choice, values: ["2", "4"]}
        resources: {requests: {nvidia.com/gpu: "1"}}
      duration: {distribution: uniform, min: 30m, max: 1h}
  - type: RayJob
    weight: 10
    localQueue: lq
    namespace: team-a
    template:
      headResources: {requests: {cpu: "2"}}
      workerReplicas: {distribution: uniform, min: "1", max: "2"}
      workerResources: {requests: {nvidia.com/gpu: "1"}}
      duration: {distribution: uniform, min: 10m, max: 20m}
"""


def test_a_profile_becomes_jobs_jobsets_and_rayjobs(tmp_path: Path) -> None:
    (tmp_path / "mix.yaml").write_text(PROFILE)
    data = scenario(gpus=64, workloads=[])
    data["spec"]["workloadProfiles"] = ["mix.yaml"]
    source = ScenarioSource.load(write(tmp_path, data))
    wls = source.sample(0, 0).workloads
    kinds = Counter(w.manifest["kind"] for w in wls)
    assert 35 <= len(wls) <= 90  # 0.5/min for 2h: 60 on average
    assert kinds["Job"] > kinds["Workload"] > kinds["RayJob"] > 0  # weights 60/30/10
    assert all(w.at < 2 * 3_600_000 for w in wls)
    job = next(w.manifest for w in wls if w.manifest["kind"] == "Job")
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "lq"
    assert job["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] in ("1", "2")
    jobset = next(w.manifest for w in wls if w.manifest["kind"] == "Workload")
    assert jobset["spec"]["podSets"][0]["count"] in (2, 4)
    durations = [w.run_for for w in wls if w.manifest["kind"] == "RayJob"]
    assert all(600_000 <= d <= 1_200_000 for d in durations)
    assert [w.at for w in source.sample(0, 0).workloads] == [w.at for w in wls]  # seeded
    assert [w.at for w in source.sample(0, 1).workloads] != [w.at for w in wls]


def test_the_profile_runs_end_to_end(tmp_path: Path) -> None:
    from click.testing import CliRunner
    from kueueplan.cli import main

    (tmp_path / "mix.yaml").write_text(PROFILE)
    data = scenario(gpus=8, workloads=[])
    data["spec"]["workloadProfiles"] = ["mix.yaml"]
    out = CliRunner().invoke(main, ["simulate", str(write(tmp_path, data)), "-o", "json"])
    assert out.exit_code == 0, out.output
    states = Counter(w["state"] for w in yaml.safe_load(out.stdout)["workloads"])
    assert states["Finished"] > 0
