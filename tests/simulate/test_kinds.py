"""The simulator on the integration kinds: inputs it cannot derive pod sets from are clear errors, and a kind
that makes many Workloads (Deployment pods, LeaderWorkerSet groups) stays within the scenario's bound."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from kueueplan.cli import main

SCENARIOS = Path(__file__).parent / "scenarios"


def _scenario(name: str) -> dict:
    return yaml.safe_load((SCENARIOS / name).read_text())["scenario"]


def _run(tmp_path: Path, scenario: dict) -> tuple[int, str]:
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(scenario))
    result = CliRunner().invoke(main, ["simulate", str(path), "-o", "json"])
    return result.exit_code, result.output


def test_trainjob_without_its_runtime_is_an_input_error(tmp_path: Path) -> None:
    sc = _scenario("kinds-trainjob-appwrapper.yaml")
    sc["spec"]["manifests"] = [m for m in sc["spec"]["manifests"] if m["kind"] != "ClusterTrainingRuntime"]
    code, out = _run(tmp_path, sc)
    assert code == 2
    assert "runtime ClusterTrainingRuntime torch-distributed is not among the inputs" in out
    assert "Traceback" not in out


def test_trainjob_runtime_is_not_reported_as_not_simulated(tmp_path: Path) -> None:
    code, out = _run(tmp_path, _scenario("kinds-trainjob-appwrapper.yaml"))
    assert code == 0, out
    assert "not simulated" not in out


def test_deployment_replicas_are_bounded(tmp_path: Path) -> None:
    sc = _scenario("kinds-serving-lws-statefulset-deployment.yaml")
    dep = next(w for w in sc["spec"]["workloads"] if w["manifest"]["kind"] == "Deployment")
    dep["manifest"]["spec"]["replicas"] = 10**9
    code, out = _run(tmp_path, sc)
    assert code == 2 and "workloads" in out and "Traceback" not in out


def test_unknown_kind_still_refused(tmp_path: Path) -> None:
    sc = _scenario("kinds-jobset-pod-set-arithmetic.yaml")
    sc["spec"]["workloads"][0]["manifest"]["kind"] = "SparkApplication"
    code, out = _run(tmp_path, sc)
    assert code == 2 and "workload kind 'SparkApplication' is not supported" in out


def test_serving_kinds_before_their_shipped_release_are_unmanaged(tmp_path: Path) -> None:
    """Kueue's shipped controller_manager_config.yaml lists pod, deployment, statefulset and leaderworkerset from
    v0.16: on a v0.15 default install these objects get no Workload."""
    import json

    sc = _scenario("kinds-serving-lws-statefulset-deployment.yaml")
    sc["spec"]["kueueVersion"] = "v0.15.0"
    code, out = _run(tmp_path, sc)
    assert code == 0, out
    report = json.loads(out)
    assert {w["name"]: w["state"] for w in report["workloads"]} == {
        "serving/vllm-0": "Inadmissible", "serving/vllm-1": "Inadmissible", "serving/triton": "Inadmissible",
        "serving/embedder-0": "Inadmissible", "serving/embedder-1": "Inadmissible",
        "serving/embedder-2": "Inadmissible"}
    assert "leaderworkerset.x-k8s.io/leaderworkerset is not enabled" in out
