"""Monte-Carlo runs: byte-identical whichever executor runs them, and gating on probabilities."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.planning.executors import run_local, run_serial
from kueueplan.planning.montecarlo import aggregate
from kueueplan.planning.source import ScenarioSource

from ._support import JOB, scenario, write


def _json(source: ScenarioSource, runs: list) -> str:
    return json.dumps(aggregate(source, source.sample(0, 0), 0, runs), indent=2)


def test_the_local_pool_gives_the_serial_result_byte_for_byte(tmp_path: Path) -> None:
    source = ScenarioSource.load(write(tmp_path, scenario()))
    serial = _json(source, run_serial(source, 0, 12))
    assert _json(source, run_local(source, 0, 12, workers=2)) == serial
    assert _json(source, run_local(source, 0, 12, workers=3)) == serial  # other batching, same bytes


def test_runs_report_waits_usage_and_probabilities(tmp_path: Path) -> None:
    path = write(tmp_path, scenario(expectations=[{"namespace": "team-a", "admittedWithin": "15m", "probability": 0.9}]))
    out = CliRunner().invoke(main, ["simulate", str(path), "--runs", "40", "-o", "json"])
    assert out.exit_code == 1, out.output  # 4 GPUs for ~2.4 GPUs of mean demand: bursts wait > 15m in most runs
    result = json.loads(out.stdout)
    assert result["kind"] == "MonteCarloResult" and result["runs"] == 40 and result["seed"] == 0
    [team] = result["teams"]
    p50, p95 = team["waitSeconds"]["p50"]["mean"], team["waitSeconds"]["p95"]["mean"]
    assert 0 <= p50 <= p95 and team["waitSeconds"]["p95"]["ci95"][0] <= p95 <= team["waitSeconds"]["p95"]["ci95"][1]
    [gpu] = result["flavors"]
    assert gpu["quota"] == 4 and gpu["peak"]["max"] == 4 and 0 < gpu["timeAveraged"]["mean"] < 4
    [exp] = result["expectations"]
    assert exp["required"] == 0.9 and not exp["met"] and exp["held"] < 36
    lo, hi = exp["ci95"]
    assert lo <= exp["probability"] <= hi


def test_more_quota_makes_the_expectation_hold(tmp_path: Path) -> None:
    path = write(tmp_path, scenario(gpus=12, expectations=[{"namespace": "team-a", "admittedWithin": "15m",
                                                            "probability": "90%"}]))
    out = CliRunner().invoke(main, ["simulate", str(path), "--runs", "40"])
    assert out.exit_code == 0, out.output
    assert "Expectations" in out.output


def test_seed_zero_is_the_default_and_run_zero_is_the_single_run(tmp_path: Path) -> None:
    path = write(tmp_path, scenario())
    single = CliRunner().invoke(main, ["simulate", str(path), "-o", "json"])
    seeded = CliRunner().invoke(main, ["simulate", str(path), "-o", "json", "--seed", "0"])
    other = CliRunner().invoke(main, ["simulate", str(path), "-o", "json", "--seed", "1"])
    assert single.stdout == seeded.stdout != other.stdout
    assert "workloads" in json.loads(single.stdout)  # one run keeps the contract's object


def test_spec_environment_gates_check_on_probability(tmp_path: Path, repo_dir: Path) -> None:
    """A spec environment with `simulation.runs` judges its expectations on every run, with probabilities."""
    import shutil

    from kueueplan.workflow.simulation import simulate_env

    spec = tmp_path / "environments"
    shutil.copytree(repo_dir / "environments", spec)
    (tmp_path / ".git").mkdir()
    team = spec / "workloads" / "team-b.yaml"
    text = team.read_text()
    old = "  load:\n  - at: 0s\n    runFor: 20m\n    count: 2\n    every: 1m\n"
    assert old in text
    team.write_text(text.replace(old, "  load:\n  - arrivals: {poisson: 12/h}\n    for: 2h\n"
                                      "    runFor: {median: 20m, p95: 40m}\n", 1))
    env = spec / "env-prod.yaml"
    text = re.sub(r"\n    runs: \d+[^\n]*", "", env.read_text())
    env.write_text(text.replace("  simulation:\n    until: 3h\n", "  simulation:\n    until: 3h\n    runs: 8\n    seed: 3\n", 1))
    teams = spec / "teams.yaml"
    teams.write_text(teams.read_text().replace("  expect:\n    neverPreempted: true",
                                               "  expect:\n    admittedWithin: 1s\n    probability: 0.5", 1))
    run = simulate_env(spec, "prod")
    assert run is not None
    assert any("held in" in f and "of 8 runs" in f and "needs 50%" in f for f in run.failed_expectations), \
        run.failed_expectations
    names = [w["name"] for w in run.result["workloads"]]
    assert any(n.startswith("team-b/feature-etl-") for n in names) and len(names) > 6


def test_markdown_summary_escapes_names_from_the_pull_request() -> None:
    from kueueplan.report.planning import markdown

    hostile = "@org/admins <img src=x> | [x](http://evil) `::error::`"
    result = {"scenario": hostile, "runs": 2, "seed": 0, "flavors": [], "expectations": [],
              "teams": [{"team": hostile, "workloadsPerRun": 1, "admittedShare": 1,
                         "waitSeconds": {p: {"mean": 1, "ci95": [0, 2]} for p in ("p50", "p95", "p99")},
                         "preemptionsPerRun": {"mean": 0, "max": 0}}]}
    text = markdown(result)
    assert "<img" not in text and "[x](http" not in text and "@org" not in text  # no HTML, link or mention
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| team")]
    assert rows and all(line.count(" | ") == 6 for line in rows)  # 7 cells: the name broke no cell


def test_until_reaches_every_run_of_plain_manifests(repo_dir: Path) -> None:
    """--until with --runs bounds each run, for a fixed (plain manifests) source as for a sampled one."""
    import dataclasses

    from kueueplan.planning.executors import run_serial
    from kueueplan.workflow.simulation import source_for_input

    source = dataclasses.replace(source_for_input(str(repo_dir / "tests/corpus/ml-platform"), None), until=60_000)
    assert source.sample(0, 0).until == 60_000
    assert {m.end_ms for m in run_serial(source, 0, 2)} == {60_000}


def test_text_reports_keep_hostile_names_on_one_line(tmp_path: Path) -> None:
    """A name with a newline must not start a log line (`::error::` would be a GitHub workflow command)."""
    data = scenario(gpus=4)
    data["metadata"]["name"] = "evil\n::error::pwned"
    path = write(tmp_path, data)
    for args in (["simulate", str(path), "--runs", "3"],
                 ["plan", "quota", str(path), "--vary", "cq/gpu/nvidia.com/gpu=2..4", "--runs", "2"]):
        out = CliRunner().invoke(main, args).stdout
        assert "pwned" in out and not any(line.startswith("::") for line in out.splitlines()), out


def test_an_object_kueue_would_reject_is_warned_about_once_per_entry_in_every_mode(tmp_path: Path) -> None:
    """A stochastic entry whose Job Kueue's webhook refuses (a queue-name label that is not a valid name):
    a single run printed one warning per arrival (dozens of identical lines), `--runs` and `--at` none."""
    job = copy.deepcopy(JOB)
    job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "lq_1"
    path = write(tmp_path, scenario(workloads=[{"arrivals": {"every": "10m"}, "for": "2h", "runFor": "5m",
                                                "manifest": job}]))
    for args in ([], ["--runs", "2", "--jobs", "1"], ["--at", "30m"]):
        out = CliRunner().invoke(main, ["simulate", str(path), "-o", "json", *args])
        warnings = [line for line in out.stderr.splitlines() if line.startswith("warning:")]
        assert len(warnings) == 1, (args, out.stderr)
        assert "KP414 Job/team-a/train-1" in warnings[0] and "11 more object(s) of this entry alike" in warnings[0]
    search = CliRunner().invoke(main, ["plan", "quota", str(path), "--vary", "cq/gpu/nvidia.com/gpu=4..4",
                                       "--runs", "1", "--jobs", "1"])
    assert sum(line.startswith("warning:") for line in search.stderr.splitlines()) == 1, search.stderr


def test_mean_waits_under_a_minute_read_to_three_digits() -> None:
    """A mean over runs printed its millisecond noise ("38.162s (6.401s–1.2m)") beside minutes to one decimal."""
    from kueueplan.report.planning import _wait

    assert _wait({"mean": 38.162, "ci95": [6.401, 72.5]}) == "38.2s (6.4s–1.2m)"
    assert _wait({"mean": 0.044, "ci95": [0, 0.131]}) == "0.044s (0s–0.131s)"
    assert _wait({"mean": 59.99, "ci95": None}) == "1.0m" and _wait({"mean": 7200, "ci95": None}) == "2.0h"
