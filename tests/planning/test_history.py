"""Replaying a recorded history (kubectl's export of Workloads) under the quotas it ran with.

The history in fixtures/history-besteffort.yaml was written by hand to follow Kueue v0.19's rules on one 4-GPU
ClusterQueue with BestEffortFIFO and no preemption:
- heads are ordered by priority, then creation time (pkg/cache/queue: queueOrderingFunc / workload.Ordering);
- with BestEffortFIFO a head that does not fit is set aside as inadmissible and the next one may be admitted
  (pkg/cache/queue/cluster_queue.go requeueIfNotPresent; StrictFIFO keeps it at the head instead);
- finished workloads release their quota and inadmissible heads are retried (pkg/controller/core).
So w4 (priority 100, 4 GPUs) waits while the smaller w3 and w5 pass it; the recorded order is w1 w2 w3 w5 w4.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import yaml
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.planning.history import fit, read_history

FIXTURES = Path(__file__).parent / "fixtures"
RECORDED = ["job-w1-4f2a1", "job-w2-9c0d2", "job-w3-77be1", "job-w5-5d3c8", "job-w4-1a9e3"]


def _replay(tmp_path: Path, strategy: str = "BestEffortFIFO") -> dict:
    for name in ("history-besteffort.yaml", "replay-besteffort.yaml"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    (tmp_path / ".git").mkdir()
    scenario = tmp_path / "replay-besteffort.yaml"
    scenario.write_text(scenario.read_text().replace("BestEffortFIFO", strategy))
    out = CliRunner().invoke(main, ["simulate", str(scenario), "-o", "json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def _admitted(result: dict) -> list[str]:
    return [e["workload"].split("/")[1] for e in result["events"] if e["type"] == "Admitted"]


def test_replay_reproduces_the_recorded_admission_order(tmp_path: Path) -> None:
    result = _replay(tmp_path)
    assert _admitted(result)[:5] == RECORDED
    by_name = {w["name"].split("/")[1]: w for w in result["workloads"]}
    # created relative to the first creation; run times from Admitted (or PodsReady) to Finished
    assert by_name["job-w4-1a9e3"]["createdAt"] == 720 and by_name["job-w4-1a9e3"]["admittedAt"] == 4200
    assert by_name["job-w3-77be1"]["finishedAt"] - by_name["job-w3-77be1"]["admittedAt"] == 28 * 60  # from PodsReady
    # w6 was still pending at export: admitted when w4 finishes, with the median recorded run time
    assert by_name["job-w6-0b7f4"]["admittedAt"] == 5400
    assert any("job-w6-0b7f4" in w and "never admitted" in w for w in result["warnings"])


def test_the_same_history_under_strict_fifo_is_a_different_order(tmp_path: Path) -> None:
    """The check above can fail: with StrictFIFO, w4 blocks w3 and w5 (Kueue's StrictFIFO keeps the head)."""
    assert _admitted(_replay(tmp_path, "StrictFIFO"))[:5] != RECORDED


def test_fit_turns_a_history_into_a_load_model() -> None:
    records = read_history([FIXTURES / "history-besteffort.yaml"])
    assert len(records) == 6
    model = fit(records)
    assert model and all("poisson" in e["arrivals"] for e in model)
    counts = sorted(float(e["arrivals"]["poisson"].split("/")[0]) for e in model)
    assert sum(counts) * (80 / 60) == __import__("pytest").approx(6, rel=0.01)  # 6 arrivals over 80 minutes
    yaml.safe_dump(model)  # plain data, ready to paste into a scenario


def _workload(name: str, created: str, rest: str = "spec: {}") -> str:
    return (f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: {name}\n  namespace: ns\n"
            f"  creationTimestamp: \"{created}\"\n{rest}\n")


HAND_MADE = {  # what kubectl never exports: each is a located error in the history file, never a traceback
    "metadata-list": ("apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: [a]\n", "metadata must be"),
    "labels-list": (_workload("a", "2024-01-01T00:00:00Z", "spec: {}").replace(
        "  namespace: ns\n", "  namespace: ns\n  labels: [x]\n"), "metadata.labels must be a mapping"),
    "status-list": (_workload("a", "2024-01-01T00:00:00Z", "status: [1]"), "status must be a mapping"),
    "conditions-mapping": (_workload("a", "2024-01-01T00:00:00Z", "status: {conditions: {a: 1}}"),
                           "status.conditions must be a list"),
    "spec-list": (_workload("a", "2024-01-01T00:00:00Z", "spec: [1]"), "spec must be a mapping"),
    "podsets-number": (_workload("a", "2024-01-01T00:00:00Z", "spec: {podSets: 5}"), "spec.podSets must be a list"),
    "finished-without-time": (_workload("a", "2024-01-01T00:00:00Z", 'status:\n  conditions:\n'
                                        '  - {type: Finished, status: "True"}'), "True condition has no time"),
    # year 9999 and year 1 in one history: the simulator would otherwise blame the spec folder it replays on
    "ten-thousand-years": (_workload("late", "9999-12-31T23:59:59Z") + "---\n" + _workload("early",
                                                                                         "0001-01-01T00:00:00Z"),
                           "ns/late created 9999 years after ns/early"),
    "runs-for-millennia": (_workload("a", "2024-01-01T00:00:00Z", 'status:\n  conditions:\n'
                                     '  - {type: Admitted, status: "True", lastTransitionTime: "2024-01-01T00:00:00Z"}\n'
                                     '  - {type: Finished, status: "True", lastTransitionTime: "9999-01-01T00:00:00Z"}'),
                           "ns/a runs for 7975 years"),
}


def test_hand_made_histories_are_located_errors(tmp_path: Path) -> None:
    base = Path(__file__).parents[1] / "workflow" / "platforms" / "replay" / "base"
    for name, (text, message) in HAND_MADE.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(text)
        out = CliRunner().invoke(main, ["diff", str(base), str(base), "--load", str(path)])
        assert out.exit_code == 2 and out.exception is None or isinstance(out.exception, SystemExit), name
        assert f"{name}.yaml:1: " in out.output and message in out.output, (name, out.output)


def test_times_before_1970_and_out_of_order_replay_as_written(tmp_path: Path) -> None:
    path = tmp_path / "old.yaml"
    path.write_text(_workload("second", "1969-12-31T23:59:30Z") + "---\n" + _workload("first", "1969-12-31T23:59:00Z")
                    + "---\n" + _workload("backwards", "1969-12-31T23:59:40Z", 'status:\n  conditions:\n'
                    '  - {type: Admitted, status: "True", lastTransitionTime: "1970-01-01T00:00:10Z"}\n'
                    '  - {type: Finished, status: "True", lastTransitionTime: "1970-01-01T00:00:05Z"}'))
    from kueueplan.planning.history import history_entries

    entries, warnings = history_entries(read_history([path]))
    assert [(e["manifest"]["metadata"]["name"], e["at"]) for e in entries] == [
        ("first", "0ms"), ("second", "30000ms"), ("backwards", "40000ms")]
    assert entries[2]["runFor"] == "0ms"
    assert any("ns/backwards" in w and "finished before its last admission" in w for w in warnings)


def test_a_missing_or_escaping_history_file_is_named_as_the_historyfiles_entry(tmp_path: Path) -> None:
    """The error names the field the user wrote (historyFiles), not manifestFiles, with the scenario's line."""
    shutil.copy(FIXTURES / "replay-besteffort.yaml", tmp_path / "replay.yaml")
    (tmp_path / ".git").mkdir()
    scenario = tmp_path / "replay.yaml"
    text = scenario.read_text()
    line = text.splitlines().index("  historyFiles: [history-besteffort.yaml]") + 1
    for entry, message in (("last-week.yaml", "historyFiles entry 'last-week.yaml' does not exist"),
                           ("../outside.yaml", "historyFiles entry '../outside.yaml' leaves")):
        scenario.write_text(text.replace("history-besteffort.yaml", entry))
        out = CliRunner().invoke(main, ["simulate", str(scenario)])
        assert out.exit_code == 2 and isinstance(out.exception, SystemExit), out.output
        assert f"replay.yaml:{line}: {message}" in out.output and "manifestFiles" not in out.output, out.output


def test_plan_fit_prints_a_load_model_that_a_scenario_runs(tmp_path: Path) -> None:
    """`kueueplan plan fit HISTORY` is the people-facing fit: Scenario `workloads` entries with readable
    durations, which pasted under the recorded queues give the observed rate (6 arrivals over 80 minutes)."""
    out = CliRunner().invoke(main, ["plan", "fit", str(FIXTURES / "history-besteffort.yaml")])
    assert out.exit_code == 0, out.output
    assert out.stdout.startswith("# Fitted by kueueplan plan fit from 6 recorded Workload(s)")
    model = yaml.safe_load(out.stdout)["workloads"]
    assert model == fit(read_history([FIXTURES / "history-besteffort.yaml"]))
    assert all(e["for"] == "1h20m0s" for e in model) and not re.search(r"\d+ms\b", out.stdout)
    shutil.copy(FIXTURES / "replay-besteffort.yaml", tmp_path / "scenario.yaml")
    (tmp_path / ".git").mkdir()
    scenario = yaml.safe_load((tmp_path / "scenario.yaml").read_text())
    del scenario["spec"]["historyFiles"]
    scenario["spec"]["workloads"] = model
    (tmp_path / "scenario.yaml").write_text(yaml.safe_dump(scenario))
    runs = CliRunner().invoke(main, ["simulate", str(tmp_path / "scenario.yaml"), "--runs", "40", "-o", "json",
                                     "--jobs", "1"])
    assert runs.exit_code == 0, runs.output
    per_run = sum(t["workloadsPerRun"] for t in json.loads(runs.stdout)["teams"])
    assert 4 < per_run < 8  # Poisson with mean 6 over 40 runs: the mean's standard error is about 0.4


def test_plan_fit_refuses_what_is_not_a_history(tmp_path: Path) -> None:
    missing = CliRunner().invoke(main, ["plan", "fit", str(tmp_path / "last-week.yaml")])
    assert missing.exit_code == 2 and "last-week.yaml: no such file" in missing.stderr, missing.output
    other = tmp_path / "queues.yaml"
    other.write_text("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: a}\n")
    empty = CliRunner().invoke(main, ["plan", "fit", str(other)])
    assert empty.exit_code == 2 and "no kueue.x-k8s.io Workload in" in empty.stderr, empty.output


def test_plan_fit_warns_when_a_shape_has_no_finished_run(tmp_path: Path) -> None:
    path = tmp_path / "running.yaml"
    path.write_text(_workload("still-running", "2024-01-01T00:00:00Z", 'spec: {queueName: lq}\nstatus:\n  conditions:\n'
                              '  - {type: Admitted, status: "True", lastTransitionTime: "2024-01-01T00:10:00Z"}'))
    out = CliRunner().invoke(main, ["plan", "fit", str(path)])
    assert out.exit_code == 0 and "runFor" not in yaml.safe_load(out.stdout)["workloads"][0]
    assert "ns/lq-still-running: no recorded run finished" in out.stderr


def test_a_history_of_one_arrival_fits_its_rate_over_what_was_recorded_after_it() -> None:
    """One Workload created, admitted and finished 30 minutes later: the window between creations is empty (the
    model said 3.6e6/h over 1ms), so it runs to the last record. One created and never admitted: no rate, exit 2."""
    from kueueplan.errors import KueueplanError
    from kueueplan.planning.history import Recorded

    manifest = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
                "metadata": {"name": "job-a", "namespace": "team-a"},
                "spec": {"queueName": "lq", "podSets": [{"name": "main", "count": 1}]}}
    minute = 60_000
    done = Recorded("team-a", "job-a", 10 * minute, 10 * minute, 40 * minute, manifest, "h.yaml", 1)
    (entry,) = fit([done])
    assert entry["arrivals"] == {"poisson": "2/h"} and entry["for"] == "30m0s", entry
    pending = Recorded("team-a", "job-a", 10 * minute, None, None, manifest, "h.yaml", 7)
    try:
        fit([pending])
    except KueueplanError as e:
        assert "no arrival rate to fit" in e.message and e.line == 7 and "team-a/job-a" in e.message
    else:
        raise AssertionError("a history of one pending Workload has no rate")


def test_a_workload_of_a_kubectl_list_is_named_at_its_own_line(tmp_path: Path) -> None:
    """kubectl exports one `kind: List` document: a problem with its second Workload is at that item's line, not at
    the List's first line."""
    path = tmp_path / "export.yaml"
    path.write_text("apiVersion: v1\nkind: List\nitems:\n"
                    "- apiVersion: kueue.x-k8s.io/v1beta2\n  kind: Workload\n"
                    "  metadata: {name: a, namespace: ns, creationTimestamp: '2024-01-01T00:00:00Z'}\n"
                    "  spec: {queueName: lq}\n"
                    "- apiVersion: kueue.x-k8s.io/v1beta2\n  kind: Workload\n"
                    "  metadata: {name: b, namespace: ns, creationTimestamp: 'yesterday'}\n"
                    "  spec: {queueName: lq}\n")
    out = CliRunner().invoke(main, ["plan", "fit", str(path)])
    assert out.exit_code == 2 and f"{path}:8:" in out.stderr and "'yesterday' is not an RFC 3339 time" in out.stderr, \
        out.stderr


def test_plan_fit_does_not_follow_a_symlink_out_of_the_repository(tmp_path: Path, monkeypatch) -> None:
    """In CI the path comes from the workflow but the file from the pull request, which could link it anywhere."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    outside = tmp_path / "secret.yaml"
    outside.write_text((FIXTURES / "history-besteffort.yaml").read_text())
    link = tmp_path / "repo" / "history.yaml"
    link.symlink_to(outside)
    monkeypatch.chdir(tmp_path / "repo")
    out = CliRunner().invoke(main, ["plan", "fit", "history.yaml"])
    assert out.exit_code == 2 and "is a symlink to" in out.stderr and "outside" in out.stderr, out.stderr
    assert "workloads:" not in out.stdout
