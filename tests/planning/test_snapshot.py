"""`simulate --at T`: the state at a moment, in kubectl's columns."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from click.testing import CliRunner

from kueueplan.cli import main

from ._support import JOB, scenario, write

REPO = Path(__file__).resolve().parents[2]


def _at(path: Path, when: str) -> dict:
    out = CliRunner().invoke(main, ["simulate", str(path), "--at", when, "-o", "json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def test_state_at_a_moment(tmp_path: Path) -> None:
    job = copy.deepcopy(JOB)
    job["spec"]["parallelism"] = 2
    path = write(tmp_path, scenario(workloads=[{"at": "0s", "runFor": "10m", "count": 3, "manifest": job}]))
    early = _at(path, "5m")
    assert early["at"] == 300
    [cq] = early["tables"]["kubectl get clusterqueues"]
    assert (cq["PENDING WORKLOADS"], cq["ADMITTED WORKLOADS"]) == ("1", "2")
    wls = {w["NAME"]: w for w in early["tables"]["kubectl get workloads -A"]}
    assert wls["train-3"]["RESERVED IN"] == "" and wls["train-1"]["ADMITTED"] == "True"
    [usage] = early["tables"]["flavorsUsage"]
    assert (usage["TOTAL"], usage["NOMINAL"]) == ("4", "4")
    later = _at(path, "15m")
    wls = {w["NAME"]: w for w in later["tables"]["kubectl get workloads -A"]}
    assert wls["train-1"]["FINISHED"] == "True" and wls["train-3"]["RESERVED IN"] == "cq"
    text = CliRunner().invoke(main, ["simulate", str(path), "--at", "15m"]).output
    assert "$ kubectl get clusterqueues" in text and "RESERVED IN" in text


def test_json_output_is_the_same_object_one_entry_per_line(tmp_path: Path) -> None:
    from kueueplan.simulate.result import dumps

    path = write(tmp_path, scenario(workloads=[{"at": "0s", "runFor": "10m", "count": 3, "manifest": JOB}]))
    out = CliRunner().invoke(main, ["simulate", str(path), "-o", "json"])
    result = json.loads(out.stdout)
    assert dumps(result) == out.stdout.rstrip("\n")
    lines = out.stdout.splitlines()
    assert sum(1 for line in lines if line.startswith('    {"name": "team-a/train-')) == 3  # one line per workload
    assert json.loads(dumps({"a": [], "b": [{"x": "}, {\n"}], "c": None})) == {"a": [], "b": [{"x": "}, {\n"}], "c": None}


def test_a_bad_at_names_the_at_option() -> None:
    """`--at 5x` said "--until: '5x' is not a duration": the option the user did not pass."""
    result = CliRunner().invoke(main, ["simulate", str(REPO / "examples" / "rayjob-priority" / "scenario.yaml"),
                                       "--at", "5x"])
    assert result.exit_code == 2
    assert "--at: '5x' is not a duration" in result.stderr and "--until" not in result.stderr
