"""An Environment's Kueue Configuration: rendered as Kueue ships its ConfigMap, accepted by Kueue's start-up checks,
passed to the simulator; mistakes stop the build at the spec line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from kueueplan.compile import scenario_for
from kueueplan.emit.build import build, render
from kueueplan.errors import KueueplanError
from kueueplan.kube.configuration import SHIPPED_FRAMEWORKS, parse_configuration
from kueueplan.validate import validate

from ._support import REPO

KEY = "controller_manager_config.yaml"


def _configmap(files: dict[str, str], env: str) -> dict:
    (doc,) = [d for d in yaml.safe_load_all(files[f"{env}/kueue-manager-config.yaml"]) if d]
    return doc


def test_prod_renders_the_manager_configmap_as_kueue_ships_it() -> None:
    files = render(REPO / "environments").files
    cm = _configmap(files, "prod")
    # config/components/manager (configMapGenerator manager-config) + config/default (kueue- prefix, kueue-system)
    assert (cm["apiVersion"], cm["kind"]) == ("v1", "ConfigMap")
    assert (cm["metadata"]["name"], cm["metadata"]["namespace"]) == ("kueue-manager-config", "kueue-system")
    assert list(cm["data"]) == [KEY]
    config = yaml.safe_load(cm["data"][KEY])
    assert config["apiVersion"] == "config.kueue.x-k8s.io/v1beta2"
    # the declared field, over v0.19's shipped file (whose other fields, e.g. every shipped framework, stay)
    assert config["waitForPodsReady"]["timeout"] == "10m"
    assert config["integrations"]["frameworks"] == list(SHIPPED_FRAMEWORKS[(0, 19)])
    assert config["leaderElection"] == {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"}
    assert "kueue-manager-config.yaml" in files["prod/kustomization.yaml"]
    # an environment without a configuration leaves Kueue's install alone
    assert "dev/kueue-manager-config.yaml" not in files
    # deterministic
    assert render(REPO / "environments").files == files


def test_the_rendered_configuration_is_one_kueue_v0_19_2_accepts(tmp_path: Path) -> None:
    build(REPO / "environments", tmp_path / "gen")
    result = validate([str(tmp_path / "gen" / "prod")], policies=[])
    assert [f for f in result.findings if f.rule.startswith(("KP45", "KP46"))] == []
    config = yaml.safe_load(_configmap(render(REPO / "environments").files, "prod")["data"][KEY])
    effective = parse_configuration(config, (0, 19))
    assert effective.wait_for_pods_ready.timeout == 600
    assert effective.wait_for_pods_ready.requeuing_strategy.backoff_limit_count == 3
    assert "ray.io/rayjob" in effective.frameworks


def test_helm_values_carry_the_same_file(tmp_path: Path) -> None:
    result = build(REPO / "environments", tmp_path / "gen", helm_values=True)
    values = yaml.safe_load((tmp_path / "gen/prod/kueue-helm-values.yaml").read_text())
    cm = _configmap(result.files, "prod")
    assert values == {"managerConfig": {"controllerManagerConfigYaml": cm["data"][KEY]}}
    assert "kueue-helm-values.yaml" not in (tmp_path / "gen/prod/kustomization.yaml").read_text()
    assert not (tmp_path / "gen/dev/kueue-helm-values.yaml").exists()


def test_simulate_on_a_spec_environment_uses_it() -> None:
    scenario = scenario_for(REPO / "environments", "prod")
    assert scenario["spec"]["configuration"]["waitForPodsReady"]["timeout"] == "10m"
    assert "ConfigMap" not in {m["kind"] for m in scenario["spec"]["manifests"]}
    assert "configuration" not in scenario_for(REPO / "environments", "dev")["spec"]


def test_skypilot_enables_the_pod_integration_as_its_tutorial_does() -> None:
    for env in ("preemption", "no-preemption"):
        cm = _configmap(render(REPO / "examples/skypilot/environments").files, env)
        config = yaml.safe_load(cm["data"][KEY])
        assert config["apiVersion"] == "config.kueue.x-k8s.io/v1beta1"
        assert config["integrations"] == {
            "frameworks": ["batch/job", "pod"],
            "podOptions": {"namespaceSelector": {"matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", "kueue-system"]}]}},
        }
        assert "pod" in parse_configuration(config, (0, 9)).frameworks


def _spec_with(tmp_path: Path, old: str, new: str) -> Path:
    spec = tmp_path / "spec"
    shutil.copytree(REPO / "environments", spec)
    path = spec / "env-prod.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return spec


def _line(spec: Path, needle: str) -> int:
    return next(i for i, line in enumerate((spec / "env-prod.yaml").read_text().splitlines(), 1) if needle in line)


@pytest.mark.parametrize("old,new,message", [
    ("      blockAdmission: false", "      blockAdmision: false", "has no field 'blockAdmision'"),
    ("      timeout: 10m", "      timeout: 10 minutes", "is not a duration"),
    ("      timeout: 10m", "      timeout: 600", "Kueue reads a duration only as text"),
])
def test_a_configuration_kueue_would_refuse_stops_the_build(tmp_path: Path, old: str, new: str, message: str) -> None:
    spec = _spec_with(tmp_path, old, new)
    with pytest.raises(KueueplanError) as err:
        render(spec)
    assert message in err.value.message
    needle = new.strip().split(":")[0] + ":"
    assert err.value.file.endswith("env-prod.yaml") and err.value.line == _line(spec, needle)


def test_a_v1beta2_configuration_before_kueue_v0_15_stops_the_build(tmp_path: Path) -> None:
    spec = tmp_path / "spec"
    shutil.copytree(REPO / "examples/skypilot/environments", spec)
    path = spec / "kueue.yaml"
    path.write_text(path.read_text().replace("config.kueue.x-k8s.io/v1beta1", "config.kueue.x-k8s.io/v1beta2", 1))
    with pytest.raises(KueueplanError) as err:
        render(spec)
    assert "reads only config.kueue.x-k8s.io/v1beta1" in err.value.message
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "v1beta2" in text)
    assert err.value.line == line


def test_validate_points_into_the_spec_for_a_start_up_check(tmp_path: Path) -> None:
    spec = _spec_with(tmp_path, "timestamp: Eviction", "timestamp: Admission")
    findings = [f for f in validate([str(spec)], policies=[]).findings if f.rule == "KP451"]
    assert [(Path(f.file).name, f.line, f.object) for f in findings] == [
        ("env-prod.yaml", _line(spec, "timestamp: Admission"), "ConfigMap/kueue-system/kueue-manager-config@prod")]


def test_validate_points_into_the_embedded_file_of_a_plain_configmap(tmp_path: Path) -> None:
    build(REPO / "environments", tmp_path / "gen")
    path = tmp_path / "gen/prod/kueue-manager-config.yaml"
    path.write_text(path.read_text().replace("- ray.io/rayjob\n", "- RayJob\n"))
    findings = [f for f in validate([str(tmp_path / "gen/prod")], policies=[]).findings
                if f.rule in ("KP452", "KP460")]
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if text.strip() == "- RayJob")
    assert [(f.rule, f.line) for f in findings if f.rule == "KP452"] == [("KP452", line)]
    # and the RayJobs applied with it would never be queued
    assert sorted(f.object for f in findings if f.rule == "KP460") == [
        "RayJob/team-a/h100-eval", "RayJob/team-a/llm-finetune", "RayJob/team-b/adhoc-features-",
        "RayJob/team-b/feature-etl"]


def test_resubmission_is_for_pods_only(tmp_path: Path) -> None:
    spec = tmp_path / "spec"
    shutil.copytree(REPO / "environments", spec)
    path = spec / "workloads" / "team-a.yaml"
    text = path.read_text()
    old = "  - at: 0s\n    runFor: 1h\n"
    assert old in text
    path.write_text(text.replace(old, old + "    resubmitAfterPreemption: 30s\n"))
    with pytest.raises(KueueplanError) as err:
        scenario_for(spec, "prod")
    assert "resubmitAfterPreemption is for Pods" in err.value.message
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "resubmitAfterPreemption" in t)
    assert err.value.line == line


def test_a_field_newer_than_the_release_stops_the_build(tmp_path: Path) -> None:
    # managedJobsNamespaceSelector arrived in Kueue v0.10 (apis/config/v1beta1): Kueue v0.9's strict decoder
    # refuses it
    spec = tmp_path / "spec"
    shutil.copytree(REPO / "examples/skypilot/environments", spec)
    path = spec / "kueue.yaml"
    path.write_text(path.read_text().replace("    integrations:\n", "    managedJobsNamespaceSelector: {}\n"
                                             "    integrations:\n", 1))
    with pytest.raises(KueueplanError) as err:
        render(spec)
    assert "has no field 'managedJobsNamespaceSelector' (it arrived in v0.10)" in err.value.message
    assert err.value.line == next(i for i, t in enumerate(path.read_text().splitlines(), 1)
                                  if "managedJobsNamespaceSelector" in t)
