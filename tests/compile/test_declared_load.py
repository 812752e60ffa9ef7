"""The load and expectations the specs declare (demo and examples) hold in the simulator: `kueueplan simulate
SPEC_DIR --env ENV` builds its scenario with `scenario_for` and exits 1 when an expectation fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.emit.build import render

from ._support import EXAMPLES, REPO

SPECS = [REPO / "environments"] + [REPO / "examples" / ex / "environments" for ex in EXAMPLES]
CASES = [(spec, env) for spec in SPECS for env in render(spec).environments]


@pytest.mark.parametrize("spec,env", CASES, ids=[f"{s.parent.name}-{e}" for s, e in CASES])
def test_declared_expectations_hold(spec: Path, env: str) -> None:
    result = CliRunner().invoke(main, ["simulate", str(spec), "--env", env, "-o", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["workloads"], "the spec declares load"


def test_cohort_borrow_reproduces_the_tutorial() -> None:
    """Tutorial 004: team B's dev RayCluster borrows team A's GPUs, then team A's prod cluster reclaims them."""
    spec = REPO / "examples/cohort-borrow/environments"
    report = json.loads(CliRunner().invoke(main, ["simulate", str(spec), "--env", "demo", "-o", "json"]).stdout)
    states = {w["name"]: (w["state"], w["evictions"]) for w in report["workloads"]}
    assert states == {"team-b/raycluster-dev": ("Pending", 1), "team-a/raycluster-prod": ("Admitted", 0)}
    preempted = [e for e in report["events"] if e["type"] == "Preempted"]
    assert [(e["workload"], e["by"]) for e in preempted] == [("team-b/raycluster-dev", "team-a/raycluster-prod")]


def test_demo_prod_waits_for_pods_ready_evicts_and_requeues() -> None:
    """prod's Configuration sets waitForPodsReady (timeout 10m, backoff from 60s): the H100 job whose pods never
    start is evicted 10 minutes after its admission and requeued after the backoff, and the notebook waiting for
    an H100 gets it (Kueue v0.19.2 pkg/controller/core/workload_controller.go, pkg/workload/requeue)."""
    spec = REPO / "environments"
    report = json.loads(CliRunner().invoke(main, ["simulate", str(spec), "--env", "prod", "-o", "json"]).stdout)
    assert "waitForPodsReady timeout 600s" in report["configuration"]["simulated"]
    eval_events = [(e["at"], e["type"], e.get("reason")) for e in report["events"]
                   if e["workload"] == "team-a/h100-eval" and e["type"] in ("Admitted", "Evicted", "Requeued")]
    assert eval_events == [(120, "Admitted", None), (720, "Evicted", "PodsReadyTimeout"), (780, "Requeued", None)]
    notebook = next(w for w in report["workloads"] if w["name"] == "team-a/notebook")
    assert (notebook["admittedAt"], notebook["assignment"]["gpu"]["nvidia.com/gpu"]) == (840, "gpu-h100")
