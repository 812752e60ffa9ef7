"""Spec loading: good files load; every mistake is reported with file, line, column, field path and a fix."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.compile import compile_platform
from kueueplan.errors import KueueplanError
from kueueplan.spec.load import load_spec, merge_patch

REPO = Path(__file__).resolve().parents[2]

ENV = """apiVersion: kueueplan.io/v1alpha1
kind: Environment
metadata:
  name: prod
"""
FLAVOR = """apiVersion: kueueplan.io/v1alpha1
kind: ResourceFlavor
metadata:
  name: cpu
"""


def _spec(tmp_path: Path, team_spec: str, extra: str = "") -> Path:
    (tmp_path / "env.yaml").write_text(ENV + extra)
    (tmp_path / "flavors.yaml").write_text(FLAVOR)
    (tmp_path / "team.yaml").write_text(
        "apiVersion: kueueplan.io/v1alpha1\nkind: Team\nmetadata:\n  name: team-a\nspec:\n" + team_spec)
    return tmp_path


def _error(path: Path, compile_too: bool = False) -> KueueplanError:
    with pytest.raises(KueueplanError) as info:
        if compile_too:
            compile_platform(path)
        else:
            load_spec(path)
    return info.value


def test_demo_and_examples_load() -> None:
    for folder in [REPO / "environments"] + sorted((REPO / "examples").glob("*/environments")):
        platform = load_spec(folder)
        assert platform.environments()


def test_unknown_field_names_file_line_column_and_suggests(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "  quotas:\n  - flavor: cpu\n    resources:\n      cpu: {nominal_quota: 4}\n")
    err = _error(spec)
    assert err.file == str(tmp_path / "team.yaml")
    assert (err.line, err.column) == (9, 13)
    assert "spec.quotas[0].resources.cpu.nominal_quota" in err.message
    assert "unknown field 'nominal_quota'; did you mean 'nominalQuota'?" in err.message


def test_unknown_field_without_close_match_lists_allowed_fields(tmp_path: Path) -> None:
    err = _error(_spec(tmp_path, "  sparkles: blue\n"))
    assert err.line == 6 and "unknown field 'sparkles'" in err.message
    assert err.hint and "quotas" in err.hint and "preemption" in err.hint


def test_wrong_type_and_enum_name_the_field(tmp_path: Path) -> None:
    err = _error(_spec(tmp_path, "  queueingStrategy: Fastest\n"))
    assert err.line == 6 and "spec.queueingStrategy" in err.message
    assert "StrictFIFO" in err.hint and "BestEffortFIFO" in err.hint
    err = _error(_spec(tmp_path, "  quotas:\n  - flavor: cpu\n    resources:\n      cpu: lots\n"))
    assert err.line == 9 and "spec.quotas[0].resources.cpu" in err.message and "quantity" in err.message


def test_unquoted_number_for_a_string_says_to_quote_it(tmp_path: Path) -> None:
    (tmp_path / "env.yaml").write_text(ENV)
    (tmp_path / "flavors.yaml").write_text(FLAVOR + "spec:\n  nodeLabels:\n    gpu: true\n")
    err = _error(tmp_path)
    assert err.file.endswith("flavors.yaml") and err.line == 7 and "spec.nodeLabels.gpu" in err.message
    assert err.hint == 'quote it: "true"'


def test_unknown_kind_suggests_the_closest(tmp_path: Path) -> None:
    (tmp_path / "env.yaml").write_text(ENV.replace("Environment", "Enviroment"))
    err = _error(tmp_path)
    assert err.line == 2 and "unknown kind 'Enviroment'" in err.message and "Environment" in err.hint


def test_missing_required_field(tmp_path: Path) -> None:
    (tmp_path / "env.yaml").write_text(ENV)
    (tmp_path / "p.yaml").write_text("apiVersion: kueueplan.io/v1alpha1\nkind: Priority\nmetadata:\n  name: dev\n"
                                     "spec:\n  description: no value\n")
    err = _error(tmp_path)
    assert err.line == 5 and "spec.value" in err.message and "required" in err.message


def test_duplicate_documents_are_refused(tmp_path: Path) -> None:
    (tmp_path / "env.yaml").write_text(ENV)
    (tmp_path / "flavors.yaml").write_text(FLAVOR + "---\n" + FLAVOR)
    err = _error(tmp_path)
    assert err.line == 9 and "defined twice" in err.message


def test_cross_reference_errors_point_at_the_field(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "  quotas:\n  - flavor: gpu\n    resources: {cpu: 1}\n")
    err = _error(spec, compile_too=True)
    assert err.file.endswith("team.yaml") and err.line == 7
    assert "flavor 'gpu' does not exist" in err.message and "cpu" in err.hint


@pytest.mark.parametrize("team_spec,line,needle", [
    ("  quotas:\n  - flavor: cpu\n    resources:\n      cpu: {nominalQuota: 4, borrowingLimit: 2}\n", 9,
     "borrowingLimit needs a cohort"),
    ("  cohort: c\n  quotas:\n  - flavor: cpu\n    resources:\n      cpu: {nominalQuota: 4, lendingLimit: 5}\n", 10,
     "lendingLimit must be less than or equal to nominalQuota"),
    ("  preemption:\n    borrowWithinCohort: {policy: LowerPriority}\n", 7, "reclaimWithinCohort"),
    ("  flavorFungibility: {whenCanBorrow: MayStopSearch, preference: BorrowingOverPreemption}\n", 6,
     "preference can only be set"),
    ("  admissionChecks: [nope]\n", 6, "unknown AdmissionCheck 'nope'"),
])
def test_kueue_rules_are_checked_at_compile_time(tmp_path: Path, team_spec: str, line: int, needle: str) -> None:
    err = _error(_spec(tmp_path, team_spec), compile_too=True)
    assert err.line == line and needle in err.message


def test_overlapping_resource_groups_are_refused(tmp_path: Path) -> None:
    (tmp_path / "gpu.yaml").write_text(FLAVOR.replace("name: cpu", "name: gpu"))
    spec = _spec(tmp_path, "  quotas:\n  - flavor: cpu\n    resources: {cpu: 1, memory: 1Gi}\n"
                           "  - flavor: gpu\n    resources: {cpu: 1, nvidia.com/gpu: 1}\n")
    err = _error(spec, compile_too=True)
    assert err.line == 10 and "resource group" in err.message


def test_errors_in_an_overlay_point_into_the_environment_file(tmp_path: Path) -> None:
    overlay = "spec:\n  overlays:\n    Team:\n      team-a:\n        queueingStrategy: Sometimes\n"
    err = _error(_spec(tmp_path, "  quotas: []\n", overlay), compile_too=True)
    assert err.file.endswith("env.yaml") and err.line == 9 and "queueingStrategy" in err.message
    overlay = "spec:\n  overlays:\n    Team:\n      team-z: {}\n"
    err = _error(_spec(tmp_path, "  quotas: []\n", overlay), compile_too=True)
    assert err.file.endswith("env.yaml") and "unknown Team 'team-z'" in err.message


def test_merge_patch_semantics() -> None:
    base = {"quotas": [{"flavor": "a", "resources": {"cpu": 1, "memory": 2}}, {"flavor": "b", "resources": {"cpu": 3}}],
            "preemption": {"withinClusterQueue": "Never"}, "cohort": "x"}
    patch = {"quotas": [{"flavor": "a", "resources": {"cpu": 5}}, {"flavor": "b", "resources": None},
                        {"flavor": "c", "resources": {"cpu": 1}}], "cohort": None}
    assert merge_patch(base, patch) == {
        "quotas": [{"flavor": "a", "resources": {"cpu": 5, "memory": 2}}, {"flavor": "c", "resources": {"cpu": 1}}],
        "preemption": {"withinClusterQueue": "Never"}}


def test_cli_reports_spec_errors_with_exit_2(tmp_path: Path) -> None:
    (tmp_path / "spec").mkdir()
    spec = _spec(tmp_path / "spec", "  quotas:\n  - flavor: cpu\n    resources:\n      cpu: {nominal_quota: 4}\n")
    result = CliRunner().invoke(main, ["build", str(spec), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert f"error: {spec / 'team.yaml'}:9:13: " in result.output
    assert "did you mean 'nominalQuota'?" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_cli_refuses_an_output_folder_inside_the_spec(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "  quotas: []\n")
    result = CliRunner().invoke(main, ["build", str(spec), "-o", str(tmp_path / "gen")])
    assert result.exit_code == 2 and "overlaps the spec folder" in result.output


def test_invalid_label_keys_and_values_are_refused(tmp_path: Path) -> None:
    (tmp_path / "env.yaml").write_text(ENV)
    (tmp_path / "flavors.yaml").write_text(FLAVOR + "spec:\n  nodeLabels:\n    pool: \"gpu nodes\"\n")
    err = _error(tmp_path)
    assert err.line == 7 and "spec.nodeLabels.pool" in err.message and "not a valid label value" in err.message
    (tmp_path / "flavors.yaml").write_text(FLAVOR.replace("name: cpu", "name: cpu\n  labels: {\"a b\": x}"))
    err = _error(tmp_path)
    assert err.line == 5 and "not a valid label key" in err.message
