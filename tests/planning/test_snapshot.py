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


def test_a_bad_at_names_the_at_option() -> None:
    """`--at 5x` said "--until: '5x' is not a duration": the option the user did not pass."""
    result = CliRunner().invoke(main, ["simulate", str(REPO / "examples" / "rayjob-priority" / "scenario.yaml"),
                                       "--at", "5x"])
    assert result.exit_code == 2
    assert "--at: '5x' is not a duration" in result.stderr and "--until" not in result.stderr


def test_age_is_printed_as_kubectl_prints_it(tmp_path: Path) -> None:
    """AGE follows apimachinery's HumanDuration ("40m", not "40.0m"): the columns are kubectl's."""
    from kueueplan.report.snapshot import human_duration

    cases = {0: "0s", 59_999: "59s", 119_000: "119s", 120_000: "2m", 330_000: "5m30s", 599_000: "9m59s",
             600_000: "10m", 2_400_000: "40m", 10_799_000: "179m", 10_800_000: "3h", 12_000_000: "3h20m",
             28_800_000: "8h", 93_600_000: "26h", 172_800_000: "2d", 273_600_000: "3d4h", 691_200_000: "8d",
             400 * 86_400_000: "400d", 740 * 86_400_000: "2y10d", 9 * 365 * 86_400_000: "9y"}
    assert {ms: human_duration(ms) for ms in cases} == cases
    path = write(tmp_path, scenario(workloads=[{"at": "0s", "runFor": "1h", "count": 3, "manifest": JOB}]))
    ages = {w["NAME"]: w["AGE"] for w in _at(path, "40m")["tables"]["kubectl get workloads -A"]}
    assert ages == {"train-1": "40m", "train-2": "40m", "train-3": "40m"}


def test_markdown_is_tables_for_a_pr_comment_with_every_name_escaped(tmp_path: Path) -> None:
    """`-o markdown` printed the plain-text columns, which a PR comment renders as headings and run-on lines."""
    job = copy.deepcopy(JOB)
    job["metadata"]["name"] = "x|y<img src=a>@team"
    path = write(tmp_path, scenario(workloads=[{"at": "0s", "runFor": "1h", "count": 2, "manifest": job}]))
    out = CliRunner().invoke(main, ["simulate", str(path), "--at", "40m", "-o", "markdown"])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert "**`kubectl get workloads -A`**" in lines and "$ kubectl" not in out.stdout
    header = lines.index("| NAMESPACE | NAME | QUEUE | RESERVED IN | ADMITTED | FINISHED | AGE |")
    rows = lines[header + 2:header + 4]
    assert [r.count(" | ") for r in rows] == [6, 6]  # no cell split by the name's `|`
    assert all("<img" not in r and "&lt;img" in r and "@\u200dteam" in r and r.endswith("| 40m |") for r in rows)


def test_an_at_past_the_until_names_the_until_as_a_duration(tmp_path: Path) -> None:
    data = scenario(workloads=[{"at": "0s", "runFor": "1h", "manifest": JOB}])
    data["spec"]["until"] = "3h"
    out = CliRunner().invoke(main, ["simulate", str(write(tmp_path, data)), "--at", "5h"])
    assert out.exit_code == 0, out.output
    assert "note: the scenario stops at 3h0m0s (its until); --at 5h runs it that far" in out.stderr, out.stderr
