"""`check` says when OpenAPI schema and CEL checks were skipped (all of them, or for some kinds), as `validate`
does: a green check must not hide that a layer of validation did not run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.report import check as report
from kueueplan.validate.engine import Result
from kueueplan.workflow.check import CheckReport, schema_skipped


def test_the_reason_follows_validates_result() -> None:
    assert "skipped: no CRDs were loaded" in schema_skipped(Result([], 0, []))
    partial = Result([], 0, [], crds=[{"kind": "ClusterQueue", "used": []}], without_crd=["RayJob.ray.io"])
    assert schema_skipped(partial) == "OpenAPI schema and CEL checks skipped for RayJob.ray.io: no CRD for them"
    full = Result([], 0, [], crds=[{"kind": "ClusterQueue", "used": []}])
    assert schema_skipped(full) is None


@pytest.mark.parametrize("skipped", [None, "OpenAPI schema and CEL checks skipped: no CRDs were loaded"])
def test_every_rendering_states_it(skipped: str | None) -> None:
    rep = CheckReport("environments", "gen", schema_skipped=skipped)
    rendered = [report.text(rep), report.markdown(rep), report.as_json(rep)]
    if skipped is None:
        assert not any("skipped" in r for r in rendered[:2])
        assert json.loads(rendered[2])["schemaChecks"] == {"applied": True, "skipped": None}
    else:
        assert all(skipped in r for r in rendered)
        assert json.loads(rendered[2])["schemaChecks"]["applied"] is False


def test_check_agrees_with_validate_on_the_same_inputs(repo_dir: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUEUEPLAN_CACHE_DIR", str(tmp_path / "empty-cache"))  # nothing pulled
    spec = tmp_path / "environments"
    shutil.copytree(repo_dir / "environments", spec)
    validated = CliRunner().invoke(main, ["validate", str(spec), "--no-policies"]).output
    checked = CliRunner().invoke(main, ["check", str(spec), "--no-drift", "--no-simulate", "--no-policies"]).output
    data = json.loads(CliRunner().invoke(main, ["check", str(spec), "--no-drift", "--no-simulate",
                                                "--no-policies", "-o", "json"]).output)
    said_skipped = "no CRDs given" in validated or "schema and CEL rules not checked" in validated
    assert ("checks skipped" in checked) == said_skipped, (validated, checked)
    assert data["schemaChecks"]["applied"] is not said_skipped
