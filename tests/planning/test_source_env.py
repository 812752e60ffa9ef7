"""`kueueplan simulate SPEC_DIR`: which environment runs when --env is not given."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kueueplan.cli import main

REPO = Path(__file__).resolve().parents[2]


def test_a_spec_folder_with_one_environment_needs_no_env() -> None:
    """One environment is the one to run, as graph, check and diff take it; the result is --env's."""
    spec = REPO / "examples" / "one-cluster-dev-prod" / "environments"
    alone = CliRunner().invoke(main, ["simulate", str(spec), "-o", "json"])
    chosen = CliRunner().invoke(main, ["simulate", str(spec), "--env", "shared-cluster", "-o", "json"])
    assert alone.exit_code == chosen.exit_code == 0, alone.output
    assert json.loads(alone.stdout) == json.loads(chosen.stdout)
    assert json.loads(alone.stdout)["workloads"]


def test_several_environments_still_need_a_choice() -> None:
    result = CliRunner().invoke(main, ["simulate", str(REPO / "environments")])
    assert result.exit_code == 2
    assert "several environments needs --env; its environments are dev, prod" in result.stderr
