"""The contract's second edition: where the Configuration comes from, warnings, reports, input errors."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.simulate.engine import simulate
from kueueplan.simulate.result import result_json
from kueueplan.simulate.scenario import scenario_from_dict
from tests.simulate.test_cli import BASE


def _scenario(**spec_extra) -> dict:
    data = yaml.safe_load(BASE)
    data["spec"].update(spec_extra)
    return data


def _run(data: dict) -> dict:
    return result_json(simulate(scenario_from_dict(data)))


def _configmap(text: str, name: str = "kueue-manager-config") -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "kueue-system"},
            "data": {"controller_manager_config.yaml": text}}


def test_two_manager_configmaps_exit_2_naming_the_file(tmp_path: Path) -> None:
    data = _scenario()
    data["spec"]["manifests"] += [_configmap("kind: Configuration\n"), _configmap("kind: Configuration\n")]
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    res = CliRunner().invoke(main, ["simulate", str(path), "-o", "json"])
    assert res.exit_code == 2, res.output
    assert "two kueue-manager-config ConfigMaps" in res.output and "s.yaml" in res.output
    assert "Traceback" not in res.output


def test_spec_configuration_wins_over_the_configmap_and_spec_fair_sharing_overrides() -> None:
    data = _scenario(configuration={"kind": "Configuration", "waitForPodsReady": {"timeout": "7m"},
                                    "fairSharing": {"preemptionStrategies": ["LessThanInitialShare"]}},
                     fairSharing={"preemptionStrategies": ["LessThanOrEqualToFinalShare"]})
    data["spec"]["manifests"].append(_configmap("kind: Configuration\nwaitForPodsReady: {timeout: 1m}\n"))
    sim = simulate(scenario_from_dict(data))
    assert sim.config.pods_ready.timeout == 420_000
    assert sim.fair_sharing == {"preemptionStrategies": ["LessThanOrEqualToFinalShare"]}
    out = result_json(sim)
    assert out["configuration"]["source"].startswith("spec.configuration")
    assert "spec.fairSharing overrides" in out["configuration"]["source"]


def test_configmap_is_the_source_without_spec_configuration() -> None:
    data = _scenario()
    data["spec"]["manifests"].append(_configmap("kind: Configuration\nwaitForPodsReady: {timeout: 1m}\n"))
    out = _run(data)
    assert out["configuration"]["source"].startswith("ConfigMap kueue-manager-config")
    assert "waitForPodsReady timeout 60s" in out["configuration"]["simulated"]


def test_default_install_has_no_warnings_and_names_itself() -> None:
    out = _run(_scenario())
    assert "warnings" not in out
    assert out["configuration"] == {"kueueVersion": "v0.19", "source": out["configuration"]["source"],
                                    "simulated": out["configuration"]["simulated"]}
    assert "default install of Kueue v0.19" in out["configuration"]["source"]


def test_unmodelled_fields_and_gates_and_unknown_objects_are_warnings() -> None:
    data = _scenario(configuration={"kind": "Configuration", "featureGates": {"TopologyAwareScheduling": False},
                                    "resources": {"quotaCheckStrategy": "IgnoreUndeclared"},
                                    "recoveryTimeout": None})
    data["spec"]["manifests"].append({"apiVersion": "apps/v1", "kind": "Deployment",
                                      "metadata": {"name": "web", "namespace": "default"}})
    warnings = _run(data)["warnings"]
    assert any("featureGates.TopologyAwareScheduling" in w for w in warnings)
    assert any("quotaCheckStrategy IgnoreUndeclared" in w for w in warnings)
    assert any("Deployment default/web" in w for w in warnings)


def test_modelled_gate_partial_admission_off() -> None:
    """PartialAdmission=false: a Job with job-min-parallelism is admitted whole or not at all."""
    data = _scenario()
    job = data["spec"]["workloads"][0]
    job["count"] = 1
    job["manifest"]["metadata"]["annotations"] = {"kueue.x-k8s.io/job-min-parallelism": "1"}
    job["manifest"]["spec"]["parallelism"] = 2
    job.pop("runFor")
    assert _run(data)["workloads"][0]["podSetCounts"] == {"main": 1}  # partially, 1 of 2 pods
    data["spec"]["configuration"] = {"kind": "Configuration", "featureGates": {"PartialAdmission": False}}
    out = _run(data)
    assert out["workloads"][0]["state"] == "Inadmissible" and out["workloads"][0]["podSetCounts"] == {}
    assert "warnings" not in out


def test_input_errors_exit_2(tmp_path: Path) -> None:
    bad = [
        _scenario(configuration={"kind": "Configuration", "waitForPodsReady": {"timeout": "soon"}}),
        _scenario(admissionChecks={"c": {"outcomes": ["Maybe"]}}),
        _scenario(configuration={"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"},
                  kueueVersion="v0.10"),
    ]
    pod = _scenario()
    pod["spec"]["workloads"][0]["resubmitAfterPreemption"] = "30s"  # a Job, not a Pod
    bad.append(pod)
    for i, data in enumerate(bad):
        path = tmp_path / f"bad{i}.yaml"
        path.write_text(yaml.safe_dump(data))
        res = CliRunner().invoke(main, ["simulate", str(path), "-o", "json"])
        assert res.exit_code == 2, (i, res.output)
        assert f"bad{i}.yaml" in res.output and "Traceback" not in res.output


def test_reports_state_the_configuration(tmp_path: Path) -> None:
    data = _scenario(configuration={"kind": "Configuration", "featureGates": {"Foo": True}})
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    for fmt, needle in (("text", "configuration: spec.configuration"), ("markdown", "configuration: spec.configuration")):
        res = CliRunner().invoke(main, ["simulate", str(path), "-o", fmt])
        assert res.exit_code == 0, res.output
        assert needle in res.output and "featureGates.Foo" in res.output.replace("\\", "")
    res = CliRunner().invoke(main, ["simulate", str(path), "-o", "json"])
    out = json.loads(res.output)
    assert out["warnings"] and out["configuration"]["kueueVersion"] == "v0.19"


def test_deactivated_is_an_expectation_state(tmp_path: Path) -> None:
    data = _scenario(expectations=[{"workload": "j-1", "state": "Deactivated"}])
    data["spec"]["workloads"][0]["manifest"]["metadata"]["labels"]["kueue.x-k8s.io/max-exec-time-seconds"] = "10"
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    res = CliRunner().invoke(main, ["simulate", str(path), "-o", "json"])
    assert res.exit_code == 0, res.output


def test_endless_requeue_stops_with_a_warning() -> None:
    case = yaml.safe_load((Path(__file__).parent / "scenarios" /
                           "cfg-wait-for-pods-ready-endless-requeue-stops.yaml").read_text())
    out = _run(case["scenario"])
    assert any(w.startswith("t=310s: stopped here") for w in out["warnings"])
    case["scenario"]["spec"]["until"] = "20m"  # with a horizon it follows the loop: 60, 130, 210, 310, then every 120s up to 1150
    out = _run(case["scenario"])
    assert sum(e["type"] == "Evicted" for e in out["events"]) == 11 and "warnings" not in out
