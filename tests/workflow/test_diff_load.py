"""`kueueplan diff BASE HEAD --load FILE`: "what would this change have done to last week?"

platforms/replay/history.yaml is a hand-written `kubectl get workloads -o yaml` of one morning on
platforms/replay/base (team-a 8 GPUs, team-b 4, BestEffortFIFO, no cohort); its header derives each recorded
admission from Kueue's queueing rules. The head cuts team-a to 4 GPUs. By the same rules, on HEAD:
- a-pretrain (4) is admitted at 09:00 and runs its recorded hour; a-finetune (4, 09:10) waits for it until 10:00
  (+50m); a-sweep (2, 09:20) waits until a-finetune's recorded 30 minutes end at 10:30 (20m -> 1h10m, +50m);
- a-distill needs 8 GPUs, more than team-a's 4 with no cohort to borrow from: it never runs (it Finished on
  BASE), which fails the change;
- team-b's b-eval is untouched.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.planning.replay import read_load
from kueueplan.workflow.simulation import load_simulator
from kueueplan.workflow.sources import load_side

REPO = Path(__file__).resolve().parents[2]
REPLAY = Path(__file__).parent / "platforms" / "replay"
HISTORY = REPLAY / "history.yaml"
MIN = 60.0


def _sides(tmp: Path, gpus: int = 4) -> tuple[Path, Path]:
    base, head = tmp / "base", tmp / "head"
    shutil.copytree(REPLAY / "base", base)
    shutil.copytree(REPLAY / "base", head)
    queues = head / "queues.yaml"
    text = queues.read_text(encoding="utf-8")
    assert "nominalQuota: 8" in text
    queues.write_text(text.replace("nominalQuota: 8", f"nominalQuota: {gpus}", 1), encoding="utf-8")
    return base, head


def _diff(*args: str) -> tuple[int, dict]:
    out = CliRunner().invoke(main, ["diff", *args, "-o", "json"])
    assert out.exit_code in (0, 1), out.output
    return out.exit_code, json.loads(out.stdout)


def test_replaying_the_history_on_its_own_platform_gives_the_recorded_waits() -> None:
    """The replay is faithful before it is compared: on BASE, each workload waits what history.yaml recorded."""
    run = load_simulator(read_load([HISTORY]))(load_side(REPLAY / "base"), "base")
    waits = {w["name"]: w["admittedAt"] - w["createdAt"] for w in run.result["workloads"]}
    assert waits == {"team-a/job-a-pretrain-7c1e2": 0, "team-b/job-b-eval-2f9d4": 0,
                     "team-a/job-a-finetune-5b3a0": 0, "team-a/job-a-sweep-91d7c": 20 * MIN,
                     "team-a/job-a-distill-48e6b": 40 * MIN}
    assert {w["name"]: w["state"] for w in run.result["workloads"]}["team-a/job-a-distill-48e6b"] == "Finished"


def test_a_quota_cut_replayed_on_last_weeks_history(tmp_path: Path) -> None:
    base, head = _sides(tmp_path)
    code, report = _diff(str(base), str(head), "--load", str(HISTORY))
    assert code == 1
    assert report["load"] == f"5 workload(s) from {HISTORY}"
    [env] = report["environments"]
    assert report["blocking"] == [
        "head: team-a/job-a-distill-48e6b inadmissible in ClusterQueue team-a",
        "head: KP703 ClusterQueue team-a: a100/nvidia.com/gpu: admitted work uses up to 8 (simulated) but "
        "nominalQuota drops 8 -> 4; the apply evicts nothing, team-a admits nothing new until usage falls below 4"]
    deltas = {w["workload"]: w for w in env["workloads"]}
    assert set(deltas) == {"team-a/job-a-distill-48e6b", "team-a/job-a-finetune-5b3a0", "team-a/job-a-sweep-91d7c"}
    assert deltas["team-a/job-a-distill-48e6b"]["before"] == "Finished (waited 40m)"
    assert "needs 8 nvidia.com/gpu" in deltas["team-a/job-a-distill-48e6b"]["message"]
    assert (deltas["team-a/job-a-finetune-5b3a0"]["before"], deltas["team-a/job-a-finetune-5b3a0"]["after"]) == (
        "waited 0s", "waits 50m (+50m)")
    assert deltas["team-a/job-a-sweep-91d7c"]["after"] == "waits 1h10m (+50m)"
    teams = {t["team"]: t for t in env["teams"]}
    a, b = teams["team-a"], teams["team-b"]
    assert a["workloads"] == 4 and a["admitted"] == {"before": 4, "after": 3} and a["neverAdmitted"] == 1
    assert a["p95WaitSeconds"] == {"before": 40 * MIN, "after": 70 * MIN}  # a-distill's 40m; a-sweep's 1h10m
    assert a["meanWaitSeconds"] == {"before": 15 * MIN, "after": 40 * MIN}  # (0+0+20+40)/4; (0+50+70)/3
    assert a["mostDelayed"]["seconds"] == 50 * MIN
    assert b["admitted"] == {"before": 1, "after": 1} and b["p95WaitSeconds"] == {"before": 0, "after": 0}


def test_the_apply_plan_reads_what_the_replayed_workloads_request(tmp_path: Path) -> None:
    """KP703 compares a quota cut with what the base simulation admitted at once. With --load that simulation ran
    the history, whose Workloads are not among the sides' manifests: their pod sets come from the load. The
    history peaks at 8 GPUs on team-a (a-pretrain 4 + a-finetune 4 from 09:10), so a cut to 6 is over quota.
    (Before the fix the plan matched only the sides' own objects and found nothing.)"""
    base, head = _sides(tmp_path, gpus=6)
    code, report = _diff(str(base), str(head), "--load", str(HISTORY))
    [env] = report["environments"]
    assert [(s["rule"], s["kind"], s["name"]) for s in env["apply"]] == [("KP703", "ClusterQueue", "team-a")]
    assert "admitted work uses up to 8 (simulated) but nominalQuota drops 8 -> 6" in env["apply"][0]["message"]
    assert code == 1 and env["apply"][0]["blocking"]


def test_a_raise_only_shortens_waits_and_passes(tmp_path: Path) -> None:
    """team-a at 12 GPUs: a-sweep fits beside the 8 in use at 09:20 (20m -> 0s), and a-distill needs 8 free only
    until a-sweep ends at 09:50 (40m -> 20m). Nothing blocks (exit 0)."""
    base, head = _sides(tmp_path, gpus=12)
    code, report = _diff(str(base), str(head), "--load", str(HISTORY))
    assert code == 0 and report["blocking"] == []
    [env] = report["environments"]
    assert {w["workload"]: (w["change"], w["after"]) for w in env["workloads"]} == {
        "team-a/job-a-sweep-91d7c": ("waits less", "waits 0s (-20m)"),
        "team-a/job-a-distill-48e6b": ("waits less", "waits 20m (-20m)")}
    a = {t["team"]: t for t in env["teams"]}["team-a"]
    assert a["neverAdmitted"] == 0 and a["mostDelayed"] is None


def test_text_and_markdown_name_the_team_and_the_delay(tmp_path: Path) -> None:
    base, head = _sides(tmp_path)
    text = CliRunner().invoke(main, ["diff", str(base), str(head), "--load", str(HISTORY)])
    assert text.exit_code == 1
    assert ("team team-a (team-a): workloads 4; admitted 4 → 3; p95 wait 40m → 1h10m; mean wait 15m → 40m"
            in text.output)
    assert "never admitted on HEAD 1" in text.output
    md = CliRunner().invoke(main, ["diff", str(base), str(head), "--load", str(HISTORY), "-o", "markdown"])
    assert "1 replayed workload(s) can no longer run" in md.output
    assert "| team-a | `team-a` | 4 | 4 → 3 | 40m → 1h10m | 15m → 40m | 0 | 1 |" in md.output


def test_a_scenario_file_lends_its_load(tmp_path: Path) -> None:
    """A Scenario given to --load is used for its load only (here its historyFiles, relative to it)."""
    base, head = _sides(tmp_path)
    _, direct = _diff(str(base), str(head), "--load", str(HISTORY))
    code, via = _diff(str(base), str(head), "--load", str(REPLAY / "last-week.yaml"))
    assert code == 1 and via["environments"] == direct["environments"]


def test_spec_folders_replay_a_history_and_judge_their_expectations(tmp_path: Path) -> None:
    """The demo spec (environments/): team-b's 24-CPU nightly ETL borrowed 8 CPUs from cohort ml-platform.
    A head that stops team-b borrowing never runs it, and team-b's `admittedWithin: 15m` breaks on it."""
    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(REPO / "environments", base)
    shutil.copytree(REPO / "environments", head)
    teams = head / "teams.yaml"
    text = teams.read_text(encoding="utf-8")
    old = "        nominalQuota: 16\n        borrowingLimit: 16"
    assert old in text
    teams.write_text(text.replace(old, "        nominalQuota: 16\n        borrowingLimit: 0", 1), encoding="utf-8")
    code, report = _diff(str(base), str(head), "--env", "prod", "--load", str(REPLAY / "history-pipelines.yaml"))
    assert code == 1
    [env] = report["environments"]
    [etl] = [w for w in env["workloads"] if w["blocking"]]
    assert etl["workload"] == "team-b/job-nightly-etl-3e7a1" and etl["change"] == "inadmissible"
    assert "borrowingLimit 0" in etl["message"]
    assert any("job-nightly-etl-3e7a1 was never admitted" in e and "teams.yaml:68" in e
               for e in env["brokenExpectations"])
    [team_b] = env["teams"]  # the spec's Team, by its name; only team-b's queue saw load
    assert team_b["team"] == "team-b" and team_b["admitted"] == {"before": 2, "after": 1}


def test_bad_load_files_are_located_errors(tmp_path: Path) -> None:
    base, head = _sides(tmp_path)
    missing = CliRunner().invoke(main, ["diff", str(base), str(head), "--load", str(tmp_path / "nope.yaml")])
    assert missing.exit_code == 2 and "no such file" in missing.output
    other = tmp_path / "queues.yaml"
    shutil.copy(base / "queues.yaml", other)
    wrong = CliRunner().invoke(main, ["diff", str(base), str(head), "--load", str(other)])
    assert wrong.exit_code == 2 and "queues.yaml" in wrong.output and "neither Workload objects" in wrong.output
    both = CliRunner().invoke(main, ["diff", str(base), str(head), "--load", str(HISTORY), "--no-simulate"])
    assert both.exit_code == 2 and "--no-simulate" in both.output
    # A name the API server would never have exported reaches no report (a newline could start a CI command).
    hostile = tmp_path / "hostile.yaml"
    hostile.write_text(HISTORY.read_text(encoding="utf-8").replace("name: job-a-distill-48e6b",
                                                                   'name: "x\\n::error::pwned"'), encoding="utf-8")
    evil = CliRunner().invoke(main, ["diff", str(base), str(head), "--load", str(hostile)])
    assert evil.exit_code == 2 and "hostile.yaml" in evil.output and "not a valid Kubernetes name" in evil.output
    assert "\n::error::" not in evil.output
    for out in (missing, wrong, both, evil):
        assert "Traceback" not in out.output


def test_a_stochastic_load_is_drawn_once_for_both_sides(tmp_path: Path) -> None:
    """A Scenario with Poisson arrivals as --load: one draw (seed 0) replayed on both sides, so an unchanged
    platform shows no change at all, and a GPU cut shows the drawn jobs waiting longer on team-a only."""
    load = tmp_path / "adhoc.yaml"
    load.write_text("""apiVersion: kueueplan.io/v1alpha1
kind: Scenario
metadata: {name: adhoc}
spec:
  workloads:
  - arrivals: {poisson: 6/h}
    for: 4h
    runFor: {median: 30m, p95: 2h}
    manifest:
      apiVersion: batch/v1
      kind: Job
      metadata: {name: adhoc, namespace: team-a, labels: {kueue.x-k8s.io/queue-name: training}}
      spec:
        template:
          spec:
            restartPolicy: Never
            containers: [{name: c, image: ghcr.io/example/trainer:1.4, resources: {requests: {nvidia.com/gpu: "2"}}}]
""", encoding="utf-8")
    base, head = _sides(tmp_path)
    code, same = _diff(str(base), str(base), "--load", str(load))
    [env] = same["environments"]
    drawn = env["teams"][0]["workloads"]
    assert code == 0 and env["workloads"] == [] and drawn > 10  # ~24 over 4h
    assert same["load"] == f"{drawn} workload(s) from {load}"
    code, cut = _diff(str(base), str(head), "--load", str(load))
    [team_a] = cut["environments"][0]["teams"]
    assert team_a["team"] == "team-a" and team_a["workloads"] == drawn
    assert team_a["meanWaitSeconds"]["after"] > team_a["meanWaitSeconds"]["before"]
    assert _diff(str(base), str(head), "--load", str(load)) == (code, cut)  # the same draw every time


def test_what_the_load_could_not_replay_as_recorded_is_said_in_every_format(tmp_path: Path) -> None:
    """A Workload still pending at export runs for the median recorded run time: the report says so (it was
    only in the simulation's warnings, which diff never shows)."""
    base, head = _sides(tmp_path)
    pending = tmp_path / "pending.yaml"
    pending.write_text(HISTORY.read_text(encoding="utf-8") + "\n---\n"
                       "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: job-a-late-0a1b2\n"
                       "  namespace: team-a\n  creationTimestamp: \"2026-11-16T11:00:00Z\"\n"
                       "spec:\n  queueName: training\n  podSets: []\n", encoding="utf-8")
    _, report = _diff(str(base), str(head), "--load", str(pending))
    [warning] = report["loadWarnings"]
    assert "team-a/job-a-late-0a1b2 (" in warning and "was never admitted" in warning
    for fmt in ("text", "markdown"):
        out = CliRunner().invoke(main, ["diff", str(base), str(head), "--load", str(pending), "-o", fmt])
        assert "job-a-late-0a1b2" in out.stdout and "never admitted" in out.stdout, out.stdout


def test_a_load_whose_queues_are_not_on_the_platform_is_warned_about(tmp_path: Path) -> None:
    """A history recorded elsewhere (here team-a's queue is `train`, which the platform lacks) ran nowhere on
    either side: the report said only "team - (-): workloads 5; admitted 0" and passed. Now it says why."""
    base, head = _sides(tmp_path)
    history = tmp_path / "elsewhere.yaml"
    history.write_text(HISTORY.read_text(encoding="utf-8").replace("queueName: training", "queueName: train"),
                       encoding="utf-8")
    _code, data = _diff(str(base), str(head), "--load", str(history))
    [warning] = [w for w in data["loadWarnings"] if "reach no ClusterQueue" in w]
    assert warning.startswith("head: 5 replayed workload(s) reach no ClusterQueue on BASE or HEAD"), warning
    assert "LocalQueue team-a/train doesn't exist" in warning or "LocalQueue team-b/train doesn't exist" in warning
    _code, mine = _diff(str(base), str(head), "--load", str(HISTORY))
    assert not any("reach no ClusterQueue" in w for w in mine["loadWarnings"])  # its own history: no warning
    text = CliRunner().invoke(main, ["diff", str(base), str(head), "--load", str(history)]).output
    assert "warning: head: 5 replayed workload(s) reach no ClusterQueue" in text
