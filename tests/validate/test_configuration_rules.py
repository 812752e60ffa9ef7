"""Kueue's Configuration against the objects applied with it (KP460-KP462), beyond the rules' own examples."""

from __future__ import annotations

import shutil
from pathlib import Path

from kueueplan.validate import validate

REPO = Path(__file__).resolve().parents[2]

PYTORCHJOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: train
  namespace: team-a
  labels:
    kueue.x-k8s.io/queue-name: team-a
spec:
  pytorchReplicaSpecs: {}
"""


def _findings(folder: Path, rules: tuple[str, ...]) -> list[tuple[str, str, str]]:
    return [(f.rule, f.severity, f.object) for f in validate([str(folder)], policies=[]).findings if f.rule in rules]


def test_without_a_configmap_the_releases_default_install_is_assumed(tmp_path: Path) -> None:
    # Kueue v0.19.2 ships kubeflow.org/pytorchjob commented out: a queued PyTorchJob is never managed
    (tmp_path / "job.yaml").write_text(PYTORCHJOB)
    assert _findings(tmp_path, ("KP460",)) == [("KP460", "info", "PyTorchJob/team-a/train")]
    # once a Configuration among the inputs enables it, nothing to say
    (tmp_path / "config.yaml").write_text("""\
apiVersion: v1
kind: ConfigMap
metadata: {name: kueue-manager-config, namespace: kueue-system}
data:
  controller_manager_config.yaml: |
    apiVersion: config.kueue.x-k8s.io/v1beta2
    kind: Configuration
    integrations:
      frameworks: [batch/job, kubeflow.org/pytorchjob]
""")
    assert _findings(tmp_path, ("KP460",)) == []


def test_skypilot_pods_are_in_the_pod_integrations_namespaces(tmp_path: Path) -> None:
    gen = tmp_path / "gen"
    shutil.copytree(REPO / "examples/skypilot/gen/preemption", gen)
    assert _findings(gen, ("KP460", "KP461", "KP462")) == []
    # the v1beta1 podOptions.namespaceSelector of the tutorial, narrowed so that `default` is left out
    config = gen / "kueue-manager-config.yaml"
    text = config.read_text()
    assert "            - kueue-system\n" in text
    config.write_text(text.replace("            - kueue-system\n", "            - kueue-system\n            - default\n"))
    found = _findings(gen, ("KP462",))
    assert found and {rule for rule, _, _ in found} == {"KP462"}
    assert all(obj.startswith("Pod/default/") for _, _, obj in found)


def test_a_team_namespace_outside_the_managed_selector_in_a_spec(tmp_path: Path) -> None:
    spec = tmp_path / "spec"
    shutil.copytree(REPO / "environments", spec)
    env = spec / "env-prod.yaml"
    env.write_text(env.read_text().replace("  configuration:\n", "  configuration:\n"
                                           "    managedJobsNamespaceSelector:\n"
                                           "      matchLabels: {kueue.example.com/managed: \"true\"}\n"))
    found = [(f.rule, Path(f.file).name, f.object) for f in validate([str(spec)], policies=[]).findings
             if f.rule == "KP461"]
    # Since v0.19 the selector gates queued jobs too: both teams' LocalQueues are unusable in prod (not in dev,
    # which declares no Configuration: its default selector only leaves out kube-system and kueue-system)
    assert sorted(found) == [("KP461", "teams.yaml", "LocalQueue/team-a/training@prod"),
                             ("KP461", "teams.yaml", "LocalQueue/team-b/pipelines@prod")]


def test_a_field_newer_than_the_checked_release(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("""\
apiVersion: v1
kind: ConfigMap
metadata: {name: kueue-manager-config, namespace: kueue-system}
data:
  controller_manager_config.yaml: |
    apiVersion: config.kueue.x-k8s.io/v1beta1
    kind: Configuration
    waitForPodsReady:
      enable: true
      recoveryTimeout: 3m
""")
    def kp450(version: str) -> list[tuple[int | None, str]]:
        result = validate([str(tmp_path)], policies=[], kueue_version=version)
        return [(f.line, f.message) for f in result.findings if f.rule == "KP450"]

    # recoveryTimeout arrived in v0.11: line 10 of the file is its line inside the embedded block
    assert [line for line, _ in kp450("v0.10")] == [10]
    assert "arrived in v0.11" in kp450("v0.10")[0][1]
    assert kp450("v0.11") == []


def test_an_alias_bomb_inside_the_embedded_file_is_refused(tmp_path: Path) -> None:
    import pytest

    from kueueplan.errors import InputRefusedError

    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, "
              f"*a{i - 1}, *a{i - 1}]" for i in range(1, 9)]
    embedded = "\n".join("    " + line for line in lines)
    (tmp_path / "config.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kueue-manager-config, namespace: kueue-system}\n"
        f"data:\n  controller_manager_config.yaml: |\n{embedded}\n")
    with pytest.raises(InputRefusedError):
        validate([str(tmp_path)], policies=[])
