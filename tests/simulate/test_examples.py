"""Each tutorial in examples/ reproduces its documented outcome (../shared/seeds/*.txt)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kueueplan.compile import scenario_for
from kueueplan.simulate.engine import simulate
from kueueplan.simulate.result import check_expectations, result_json
from kueueplan.simulate.scenario import load_scenario, scenario_from_dict

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(rel: str) -> tuple[dict, dict, list]:
    sim = simulate(load_scenario(EXAMPLES / rel))
    out = result_json(sim)
    return out, {w["name"]: w for w in out["workloads"]}, check_expectations(sim)


def events(out: dict, type_: str, workload: str | None = None) -> list[dict]:
    return [e for e in out["events"] if e["type"] == type_ and (workload is None or e["workload"] == workload)]


def test_rayjob_priority_v06() -> None:
    out, wl, failed = run("rayjob-priority/scenario.yaml")
    assert failed == []
    single = "default/dev-pytorch-text-classifier-r6d4p"
    dev = [f"default/dev-pytorch-text-classifier-{i}" for i in (2, 3, 4)]  # generateName counts every arrival
    prod = "default/prod-pytorch-text-classifier-5"
    # the first step: a single RayJob runs to completion (then the tutorial deletes it)
    assert events(out, "Admitted", single)[0]["at"] == 0
    assert wl[single]["state"] == "Finished" and wl[single]["finishedAt"] == 180
    # three dev RayJobs on a 1-GPU queue: one runs, two wait
    before_prod = [e for e in out["events"] if 300 <= e["at"] < 600]
    assert [e["workload"] for e in before_prod if e["type"] == "Admitted"] == [dev[0]]
    # the prod RayJob preempts the running dev job
    (pre,) = events(out, "Preempted")
    assert (pre["at"], pre["workload"], pre["by"], pre["reason"]) == (600, dev[0], prod, "InClusterQueue")
    assert events(out, "Admitted", prod)[0]["at"] == 600
    # raising the quota admits every queued RayJob
    assert sorted(e["workload"] for e in events(out, "Admitted") if e["at"] == 900) == dev
    assert all(w["state"] == "Finished" for w in wl.values())


def test_rayjob_priority_on_current_kueue_never_fits() -> None:
    out, wl, failed = run("rayjob-priority/scenario-current.yaml")
    assert failed == []
    assert not [e for e in events(out, "Admitted") if e["at"] < 600]
    inadmissible = events(out, "Inadmissible")
    assert len(inadmissible) == 4
    assert "RayJob submitter 500m" in inadmissible[0]["message"]


def test_oke_lab_v08() -> None:
    out, wl, failed = run("oke-dev-prod/scenario.yaml")
    assert failed == []
    states = sorted(w["state"] for name, w in wl.items() if name.startswith("default/"))
    # one DEV job complete, two suspended, PROD running
    assert states == ["Admitted", "Finished", "Pending", "Pending"]
    assert wl["default/prod-pytorch-text-classifier-4"]["state"] == "Admitted"
    (pre,) = events(out, "Preempted")
    assert pre["workload"] == "default/dev-pytorch-text-classifier-2"
    # the lab's timing: the first job ~25 min (16 min of image pull before its pods are ready), later ones 9 min
    first, second = "default/dev-pytorch-text-classifier-1", "default/dev-pytorch-text-classifier-2"
    assert [e["at"] for e in events(out, "PodsReady", first)] == [960]
    assert wl[first]["finishedAt"] == 1500
    assert events(out, "Admitted", second)[0]["at"] == 1500 and events(out, "PodsReady", second)[0]["at"] == 1500
    assert (pre["at"], pre["by"]) == (1800, "default/prod-pytorch-text-classifier-4")


def test_oke_lab_current_kueue() -> None:
    out, wl, failed = run("oke-dev-prod/scenario-current.yaml")
    assert failed == []
    assert {w["state"] for name, w in wl.items() if name.startswith("default/")} == {"Inadmissible"}


def test_gang_scheduling_waits_for_provisioning() -> None:
    out, wl, failed = run("gang-provisioning/scenario.yaml")
    assert failed == []
    first, second = "default/pytorch-text-classifier-1", "default/pytorch-text-classifier-2"
    # suspended with quota reserved at once, admitted once provisioned (the tutorial's ~1 min); the node pool
    # holds up to 10 one-GPU nodes, so both are provisioned side by side
    for wl_name in (first, second):
        assert events(out, "QuotaReserved", wl_name)[0]["at"] == 0
        assert events(out, "Admitted", wl_name)[0]["at"] == 60
        # the check's progress: Pending at the quota reservation, Ready when provisioned
        states = [(e["at"], e["state"]) for e in events(out, "AdmissionCheckState", wl_name)]
        assert states == [(0, "Pending"), (60, "Ready")]
    # no managed resource requested: no ProvisioningRequest, admitted at once
    assert events(out, "Admitted", "default/cpu-only")[0]["at"] == 60


def test_skypilot_pods_with_priorities() -> None:
    out, wl, failed = run("skypilot/scenario.yaml")
    assert failed == []
    (pre,) = events(out, "Preempted")
    assert (pre["workload"], pre["by"], pre["at"]) == ("default/job1-head-1", "default/job2-head-2", 120)
    # a preempted plain Pod is deleted by Kueue and never runs again
    assert wl["default/job1-head-1"]["state"] == "Finished"
    assert wl["default/job1-head-1"]["finishedAt"] == 120
    assert len(events(out, "Admitted", "default/job1-head-1")) == 1
    # the pod integration is on because of the tutorial's Configuration (gen/preemption/kueue-manager-config.yaml)
    assert "ConfigMap kueue-manager-config" in out["configuration"]["source"]
    assert "frameworks batch/job, pod" in out["configuration"]["simulated"]
    # SkyPilot's job controller resubmits the preempted job: a new pod at the back of the queue, run after job2
    resubmitted = wl["default/job1-head-1-r1"]
    assert (resubmitted["createdAt"], resubmitted["admittedAt"], resubmitted["state"]) == (150, 720, "Finished")


def test_skypilot_without_priorities_waits() -> None:
    out, wl, failed = run("skypilot/scenario-fifo.yaml")
    assert failed == []
    assert events(out, "Admitted", "default/job2-head-2")[0]["at"] == 1800
    assert not events(out, "Preempted")


def test_cohort_borrow_prod_suspends_dev() -> None:
    out, wl, failed = run("cohort-borrow/scenario.yaml")
    assert failed == []
    (pre,) = events(out, "Preempted")
    assert (pre["workload"], pre["by"], pre["reason"]) == ("team-b/raycluster-dev", "team-a/raycluster-prod",
                                                          "InCohortReclaimWhileBorrowing")
    assert wl["team-a/raycluster-prod"]["assignment"]["small-group-test"]["nvidia.com/gpu"] == "gpu-flavor"
    # RayClusters never finish by themselves: dev runs again once prod is deleted
    assert events(out, "Admitted", "team-b/raycluster-dev")[-1]["at"] == 3600
    assert wl["team-b/raycluster-dev"]["state"] == "Admitted"


def run_env(example: str, env: str) -> tuple[dict, dict, list]:
    sim = simulate(scenario_from_dict(scenario_for(EXAMPLES / example / "environments", env)))
    out = result_json(sim)
    return out, {w["name"]: w for w in out["workloads"]}, check_expectations(sim)


@pytest.mark.parametrize("env", ["demo", "tutorial-text"])
def test_cohort_borrow_text_and_yaml_both_preempt(env: str) -> None:
    # The tutorial's YAML (demo: team B borrows 4 GPUs, 20 shared CPU) and its text (tutorial-text: no GPU for
    # team B, 10 shared CPU, a CPU-only dev cluster) disagree; in both, prod preempts dev at 3m.
    out, wl, failed = run_env("cohort-borrow", env)
    assert failed == []
    (pre,) = events(out, "Preempted")
    assert (pre["at"], pre["workload"], pre["by"]) == (180, "team-b/raycluster-dev", "team-a/raycluster-prod")
    dev = wl["team-b/raycluster-dev"]["assignment"]
    gpus = {group: res.get("nvidia.com/gpu") for group, res in dev.items()}
    assert gpus == ({"head": None, "small-group-test": "gpu-flavor"} if env == "demo"
                    else {"head": None, "small-group-test": None})


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*/scenario*.yaml")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_example_meets_its_expectations(path: Path) -> None:
    sim = simulate(load_scenario(path))
    assert check_expectations(sim) == []


def _timeline(out: dict) -> list[tuple[int, str, str, str]]:
    return [(e["at"], e["type"], e["workload"], e.get("reason") or "") for e in out["events"]
            if e["type"] in ("Admitted", "Preempted", "Finished")]


def test_one_cluster_dev_prod_declared_load() -> None:
    """The spec's own load: team A's prod train reclaims team-a-prod's nominal GPUs from the dev sweep that
    borrowed them (the only borrower), the etl job within team-b-dev's own quota is untouched, the eval run
    through the prod namespace's backfill LocalQueue lands in team-a-dev, and the sweep runs again at 70m."""
    sim = simulate(scenario_from_dict(scenario_for(EXAMPLES / "one-cluster-dev-prod/environments", "shared-cluster")))
    out = result_json(sim)
    assert check_expectations(sim) == []
    assert _timeline(out) == [
        (0, "Admitted", "team-b-dev/etl", ""), (0, "Admitted", "team-a-dev/sweep", ""),
        (600, "Preempted", "team-a-dev/sweep", "InCohortReclamation"), (600, "Admitted", "team-a-prod/train", ""),
        (1200, "Admitted", "team-b-prod/serve-batch", ""), (1800, "Admitted", "team-a-prod/eval", ""),
        (3000, "Finished", "team-b-prod/serve-batch", ""), (3000, "Finished", "team-a-prod/eval", ""),
        (4200, "Finished", "team-a-prod/train", ""), (4200, "Admitted", "team-a-dev/sweep", ""),
        (10800, "Finished", "team-b-dev/etl", ""), (11400, "Finished", "team-a-dev/sweep", "")]
    queues = {w["name"]: w["clusterQueue"] for w in out["workloads"]}
    assert queues["team-a-prod/eval"] == "team-a-dev" and queues["team-a-prod/train"] == "team-a-prod"
    expected = {e.selector.get("clusterQueue") for e in sim.scenario.expectations} - {None}
    assert expected == {"team-a-prod", "team-b-prod"}  # the prod entries' expect; dev and shared have none


def test_one_cluster_dev_prod_prod_burst() -> None:
    out, wl, failed = run("one-cluster-dev-prod/scenario.yaml")
    assert failed == []
    assert [t for t in _timeline(out) if t[0] == 600] == [
        (600, "Admitted", "team-b-prod/serve-batch", ""),
        (600, "Preempted", "team-a-dev/sweep", "InCohortReclamation"), (600, "Admitted", "team-a-prod/train", "")]
    assert events(out, "Preempted", "team-a-dev/sweep")[0]["by"] == "team-a-prod/train"
    assert [e["at"] for e in events(out, "Admitted", "team-a-dev/sweep")] == [0, 4200]
