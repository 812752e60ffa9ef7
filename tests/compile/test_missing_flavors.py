"""A flavor that does not exist is an error at the line that names it, with a suggestion; "may not use" is only
for flavors that exist but are outside the team's `flavors:` list."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.compile import compile_platform
from kueueplan.errors import KueueplanError

ENV = "apiVersion: kueueplan.io/v1alpha1\nkind: Environment\nmetadata:\n  name: prod\n"
FLAVORS = """apiVersion: kueueplan.io/v1alpha1
kind: ResourceFlavor
metadata:
  name: cpu-standard
---
apiVersion: kueueplan.io/v1alpha1
kind: ResourceFlavor
metadata:
  name: gpu-a100
"""


def _spec(tmp_path: Path, team_spec: str) -> Path:
    tmp_path = tmp_path / "environments"
    tmp_path.mkdir()
    (tmp_path / "env.yaml").write_text(ENV)
    (tmp_path / "flavors.yaml").write_text(FLAVORS)
    (tmp_path / "team.yaml").write_text(
        "apiVersion: kueueplan.io/v1alpha1\nkind: Team\nmetadata:\n  name: team-a\nspec:\n" + team_spec)
    return tmp_path


def _error(spec: Path) -> KueueplanError:
    with pytest.raises(KueueplanError) as info:
        compile_platform(spec)
    return info.value


def test_a_flavor_named_only_in_the_flavors_list_must_exist(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "  flavors: [cpu-standard, gpu-a10]\n  quotas:\n  - flavor: cpu-standard\n"
                           "    resources: {cpu: 4}\n")
    err = _error(spec)
    assert err.file.endswith("team.yaml") and err.line == 6
    assert "flavor 'gpu-a10' does not exist" in err.message
    assert "did you mean 'gpu-a100'?" in err.message
    result = CliRunner().invoke(main, ["build", str(spec), "-o", str(tmp_path / "gen")])
    assert result.exit_code == 2 and "does not exist; did you mean 'gpu-a100'?" in result.output
    assert not (tmp_path / "gen").exists()


def test_a_flavor_typo_in_the_quotas_says_does_not_exist_not_may_not_use(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "  flavors: [cpu-standard, gpu-a100]\n  quotas:\n  - flavor: gpu-a10\n"
                           "    resources: {cpu: 4}\n")
    err = _error(spec)
    assert err.line == 8 and "may not use" not in err.message
    assert "flavor 'gpu-a10' does not exist; did you mean 'gpu-a100'?" in err.message


def test_an_existing_flavor_outside_the_list_is_still_may_not_use(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "  flavors: [cpu-standard]\n  quotas:\n  - flavor: gpu-a100\n    resources: {cpu: 4}\n")
    err = _error(spec)
    assert err.line == 8 and "may not use flavor 'gpu-a100'" in err.message


def test_a_flavor_of_another_environment_may_be_listed(tmp_path: Path) -> None:
    """`flavors:` is an allow-list shared by all environments: a flavor that only prod has is fine in dev."""
    spec = _spec(tmp_path, "  flavors: [cpu-standard, gpu-h100]\n  quotas:\n  - flavor: cpu-standard\n"
                           "    resources: {cpu: 4}\n")
    (spec / "env-dev.yaml").write_text(ENV.replace("name: prod", "name: dev"))
    (spec / "h100.yaml").write_text("apiVersion: kueueplan.io/v1alpha1\nkind: ResourceFlavor\nmetadata:\n"
                                    "  name: gpu-h100\n  environments: [prod]\n")
    assert compile_platform(spec)
