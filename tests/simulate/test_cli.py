"""`kueueplan simulate`: exit codes, error messages with file:line, outputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import kueueplan
from kueueplan.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

BASE = """\
apiVersion: kueueplan.io/v1alpha1
kind: Scenario
metadata: {name: t}
spec:
  manifests:
  - {apiVersion: kueue.x-k8s.io/v1beta2, kind: ResourceFlavor, metadata: {name: f}}
  - apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata: {name: cq}
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [cpu]
        flavors: [{name: f, resources: [{name: cpu, nominalQuota: 1}]}]
  - {apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {namespace: default, name: lq}, spec: {clusterQueue: cq}}
  workloads:
  - at: 0s
    runFor: 1m
    count: 2
    manifest:
      apiVersion: batch/v1
      kind: Job
      metadata: {name: j, namespace: default, labels: {kueue.x-k8s.io/queue-name: lq}}
      spec:
        template: {spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
"""


def invoke(args: list[str]) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, args)
    return res.exit_code, res.stdout, res.stderr


def write(tmp: Path, text: str, name: str = "s.yaml") -> Path:
    p = tmp / name
    p.write_text(text)
    return p


def test_json_contract_shape(tmp_path: Path) -> None:
    code, out, _ = invoke(["simulate", str(write(tmp_path, BASE)), "-o", "json"])
    assert code == 0
    data = json.loads(out)
    assert data["scenario"] == "t"
    first, second = data["workloads"]
    assert set(first) >= {"name", "kind", "localQueue", "clusterQueue", "priority", "priorityClass", "state",
                          "createdAt", "admittedAt", "finishedAt", "evictions", "assignment", "message"}
    assert (first["name"], first["state"], first["admittedAt"], first["finishedAt"]) == ("default/j-1", "Finished", 0, 60)
    assert (second["admittedAt"], second["finishedAt"]) == (60, 120)
    assert first["assignment"] == {"main": {"cpu": "f"}}
    assert [e["type"] for e in data["events"][:4]] == ["Created", "Created", "QuotaReserved", "Admitted"]


def test_expectation_failure_exits_1(tmp_path: Path) -> None:
    text = BASE + "  expectations:\n  - workload: default/j-2\n    admittedWithin: 30s\n"
    code, _, err = invoke(["simulate", str(write(tmp_path, text)), "-o", "json"])
    assert code == 1
    assert "default/j-2 was admitted after 1m, expected within 30s" in err


def test_expectation_success_exits_0(tmp_path: Path) -> None:
    text = BASE + "  expectations:\n  - namespace: default\n    finishedBy: 2m\n    neverPreempted: true\n"
    assert invoke(["simulate", str(write(tmp_path, text))])[0] == 0


@pytest.mark.parametrize("bad,needle,line", [
    (BASE.replace("runFor: 1m", "runFor: soon"), "is not a duration", 18),
    (BASE.replace("kind: Scenario", "kind: Scenery"), "kind must be Scenario", 2),
    (BASE.replace("nominalQuota: 1}", "nominalQuota: lots}"), "not a valid quantity", 7),
    (BASE.replace("kind: Job\n", "kind: SparkApplication\n"), "not supported", 22),
    (BASE + "  manifestFiles: [/etc/passwd]\n", "absolute", 26),
    (BASE + "  manifestFiles: [../../../../../etc]\n", "leaves", 26),
    (BASE + "  bogus: 1\n", "unknown field spec.bogus", 26),
    (BASE + "  fairSharing: {preemptionStrategies: [LessThanInitialShare, LessThanOrEqualToFinalShare]}\n",
     "is not allowed", 26),
    (BASE + "  admissionChecks: {prov: {capacity: {cpu: many}}}\n", "not a valid quantity", 26),
    (BASE + "  kueueVersion: latest\n", "not a version", 26),
    (BASE.replace("count: 2", "count: 1000000000000"), "above 1,000,000 workloads", 19),
    (BASE + "  events:\n  - at: 5s\n    finish: {kind: ClusterQueue, name: cq}\n", "finish applies to workloads", 27),
])
def test_unusable_input_exits_2_with_location(tmp_path: Path, bad: str, needle: str, line: int) -> None:
    path = write(tmp_path, bad)
    code, out, err = invoke(["simulate", str(path), "-o", "json"])
    assert code == 2, err
    assert needle in err
    assert f"{path}:{line}" in err
    assert "Traceback" not in err and out == ""


def test_missing_file_and_yaml_errors(tmp_path: Path) -> None:
    code, _, err = invoke(["simulate", str(tmp_path / "nope.yaml")])
    assert code == 2 and "does not exist" in err
    code, _, err = invoke(["simulate", str(write(tmp_path, "a: [1, 2\n"))])
    assert code == 2 and "s.yaml" in err and "Traceback" not in err


def test_manifest_files_relative(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    gen = tmp_path / "gen" / "prod"
    gen.mkdir(parents=True)
    (gen / "queues.yaml").write_text(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"
        "spec: {namespaceSelector: {}, resourceGroups: [{coveredResources: [cpu], flavors: "
        "[{name: f, resources: [{name: cpu, nominalQuota: 2}]}]}]}\n---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {namespace: default, name: lq}\n"
        "spec: {clusterQueue: cq}\n")
    (gen / ".backup").mkdir()  # hidden files and folders are skipped, as every folder walk does
    (gen / ".backup" / "queues.yaml").write_text("a: [1, 2\n")  # an editor's leftover, not even YAML
    sc = tmp_path / "sc"
    sc.mkdir()
    head, tail = BASE.split("  workloads:\n")
    text = head.split("  manifests:\n")[0] + "  manifestFiles: [../gen/prod]\n  workloads:\n" + tail
    code, out, err = invoke(["simulate", str(write(sc, text)), "-o", "json"])
    assert code == 0, err
    assert {w["admittedAt"] for w in json.loads(out)["workloads"]} == {0}  # 2 cpu: both fit


def test_text_markdown_and_plot(tmp_path: Path) -> None:
    path = EXAMPLES / "rayjob-priority" / "scenario.yaml"
    code, out, _ = invoke(["simulate", str(path)])
    assert code == 0 and "Per team" in out and "default" in out
    code, out, _ = invoke(["simulate", str(path), "-o", "markdown", "--plot", str(tmp_path / "t.png")])
    assert code == 0 and "```mermaid" in out and "gantt" in out
    assert (tmp_path / "t.png").read_bytes()[:4] == b"\x89PNG"


def test_until_option(tmp_path: Path) -> None:
    code, out, _ = invoke(["simulate", str(write(tmp_path, BASE)), "-o", "json", "--until", "30s"])
    assert code == 0
    states = [w["state"] for w in json.loads(out)["workloads"]]
    assert states == ["Admitted", "Pending"]


def test_spec_folder_with_env() -> None:
    spec = EXAMPLES / "rayjob-priority" / "environments"
    code, out, err = invoke(["simulate", str(spec), "--env", "tutorial", "-o", "json"])
    assert code == 0, err
    data = json.loads(out)
    assert any(e["type"] == "Preempted" and e["reason"] == "InClusterQueue" for e in data["events"])
    code, _, err = invoke(["simulate", str(spec)])
    assert code == 2 and "--env" in err


def test_text_report_states_the_expectation_verdict() -> None:
    from kueueplan.compile import scenario_for

    spec = Path(__file__).resolve().parents[2] / "environments"
    declared = len(scenario_for(spec, "prod")["spec"]["expectations"])
    result = CliRunner().invoke(main, ["simulate", str(spec), "--env", "prod"])  # click >= 8.2 keeps stderr apart
    assert result.exit_code == 0
    assert f"expectations: {declared} of {declared} passed" in result.stderr


def test_objects_kueue_would_reject_are_warned_about_not_refused(tmp_path: Path) -> None:
    """An object the API server or Kueue's webhooks refuse cannot exist: simulate says so on stderr, names the line,
    and still runs (the JSON contract and exit code are unchanged)."""
    clean = write(tmp_path, BASE)
    code, out_clean, err = invoke(["simulate", str(clean), "-o", "json"])
    assert code == 0 and "warning" not in err
    bad = BASE.replace("      namespaceSelector: {}\n",
                       "      namespaceSelector: {}\n      cohortName: c\n"
                       "      preemption: {reclaimWithinCohort: Never, borrowWithinCohort: {policy: LowerPriority}}\n")
    bad = bad.replace("name: j, namespace: default, labels: {kueue.x-k8s.io/queue-name: lq}",
                      "name: j, namespace: default, labels: {kueue.x-k8s.io/queue-name: lq_1}")
    path = write(tmp_path, bad, "bad.yaml")
    code, out, err = invoke(["simulate", str(path), "-o", "json"])
    assert code == 0
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 2, err
    assert f"{path}:7: KP308 ClusterQueue/cq" in warnings[0] and "would reject" in warnings[0]
    assert "KP414 Job/default/j" in warnings[1]  # one warning for the two copies of the workload
    assert json.loads(out)["scenario"] == "t"


def _process(args: list[str], **kw: object) -> subprocess.CompletedProcess:
    """`python -m kueueplan ARGS` in a child process: the console script's own exit (cli.run)."""
    env = {**os.environ, "PYTHONPATH": str(Path(kueueplan.__file__).resolve().parents[1])}
    env.pop("PYTHONUNBUFFERED", None)  # buffered, as a shell runs it: the output is flushed before the exit
    return subprocess.run([sys.executable, "-m", "kueueplan", *args], env=env, timeout=120,
                          **{"capture_output": True, "text": True, **kw})  # type: ignore[call-overload]


def test_console_script_exits_with_the_commands_code_and_all_its_output(tmp_path: Path) -> None:
    """cli.run ends the process without the interpreter's teardown: the exit code is the command's (0, 1 for a
    failed expectation, 2 for unusable input) and everything written to stdout and stderr arrives."""
    path = write(tmp_path, BASE.replace("count: 2", "count: 3000"))
    done = _process(["simulate", str(path), "-o", "json"])
    assert done.returncode == 0, done.stderr
    assert done.stdout == invoke(["simulate", str(path), "-o", "json"])[1]  # 2.3 MB, to the last byte
    failed = _process(["simulate", str(write(tmp_path, BASE + "  expectations:\n  - workload: default/j-2\n"
                                                       "    admittedWithin: 30s\n", "f.yaml"))])
    assert failed.returncode == 1 and "default/j-2 was admitted after 1m, expected within 30s" in failed.stderr
    missing = _process(["simulate", str(tmp_path / "nope.yaml")])
    assert missing.returncode == 2 and missing.stderr.startswith("error: ") and "Traceback" not in missing.stderr


@pytest.mark.parametrize("closed, args, code", [(1, ["--version"], 0), (2, ["simulate", "nope.yaml"], 2)])
def test_console_script_with_stdout_or_stderr_closed_keeps_the_commands_code(closed: int, args: list[str],
                                                                              code: int) -> None:
    """Started with a standard stream closed (`>&-`, `2>&-`), Python sets it to None and click writes nothing
    there; cli.run's flush before its exit skips it instead of ending in an AttributeError traceback (exit 1)."""
    done = _process(args, capture_output=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    preexec_fn=lambda: os.close(closed))
    assert done.returncode == code


def test_console_script_output_that_cannot_be_written(tmp_path: Path) -> None:
    """A full disk (/dev/full) is a clear error and exit 2, not a traceback; output to a stdout closed at start
    goes nowhere and the command still succeeds."""
    path = write(tmp_path, BASE)
    with open("/dev/full", "w") as full:
        done = _process(["simulate", str(path), "-o", "json"], capture_output=False, stdout=full,
                        stderr=subprocess.PIPE)
    assert done.returncode == 2
    assert done.stderr.startswith("error: cannot write the output: No space left on device"), done.stderr
    assert "Traceback" not in done.stderr
    closed = _process(["simulate", str(path), "-o", "json"], capture_output=False, stdout=subprocess.DEVNULL,
                      stderr=subprocess.PIPE, preexec_fn=lambda: os.close(1))
    assert (closed.returncode, closed.stderr) == (0, "")


def test_console_script_names_only_output_faults_as_such(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """An OSError that is not the output's (here a simulated fault reading something) is not reported as
    'cannot write the output': it propagates, with its traceback, as before cli.run."""
    import kueueplan.cli as cli

    def fault() -> None:
        raise PermissionError(13, "Permission denied", "somewhere")

    monkeypatch.setattr(cli, "main", fault)
    with pytest.raises(PermissionError):
        cli.run()
    assert "cannot write the output" not in capsys.readouterr().err
