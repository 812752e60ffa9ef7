"""`kueueplan check`: drift of the committed build, simulated expectations, one summary, exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.workflow.check import Drift, drift
from kueueplan.workflow.prcomment import MARKER, find_marked, prepare_body, upsert


@pytest.fixture
def platform(repo_dir: Path, tmp_path: Path) -> Path:
    """A copy of the demo platform with a fresh build beside it."""
    root = tmp_path / "repo"
    shutil.copytree(repo_dir / "environments", root / "environments")
    res = CliRunner().invoke(main, ["build", str(root / "environments"), "-o", str(root / "gen"), "-q"])
    assert res.exit_code == 0, res.output
    return root


def _check(root: Path, *args: str) -> tuple[int, dict]:
    res = CliRunner().invoke(main, ["check", str(root / "environments"), "-o", "json", *args])
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, json.loads(res.output)


def test_fresh_build_has_no_drift_and_expectations_are_simulated(platform: Path) -> None:
    _code, data = _check(platform)
    assert data["drift"] == [] and data["gen"] == str(platform / "gen")
    assert {s["environment"] for s in data["simulations"]} == {"dev", "prod"}
    assert all(s["workloads"] > 0 and s["failures"] == [] for s in data["simulations"])


def test_drift_lists_changed_missing_and_stale_files(platform: Path) -> None:
    gen = platform / "gen"
    (gen / "prod" / "clusterqueues.yaml").write_text((gen / "prod" / "clusterqueues.yaml").read_text() + "# edit\n")
    (gen / "dev" / "localqueues.yaml").unlink()
    stale = (gen / "dev" / "old.yaml")
    stale.write_text((gen / "dev" / "namespaces.yaml").read_text())  # a generated file build would prune
    (gen / "dev" / "notes.yaml").write_text("hand: written\n")  # not generated: never drift
    code, data = _check(platform, "--no-simulate")
    assert code == 1
    assert data["drift"] == [{"path": "dev/localqueues.yaml", "problem": "missing"},
                             {"path": "prod/clusterqueues.yaml", "problem": "differs"},
                             {"path": "dev/old.yaml", "problem": "stale"}]
    text = CliRunner().invoke(main, ["check", str(platform / "environments"), "--no-simulate"]).output
    assert "differs  " in text and "prod/clusterqueues.yaml" in text and "result: FAILED" in text


def test_broken_expectation_fails_the_check(platform: Path) -> None:
    teams = platform / "environments" / "teams.yaml"
    teams.write_text(teams.read_text().replace("nvidia.com/gpu: 8", "nvidia.com/gpu: 1"))
    code, data = _check(platform, "--no-drift")
    assert code == 1 and data["gen"] is None
    failures = [f for s in data["simulations"] for f in s["failures"]]
    assert failures and any("never admitted" in f or "admitted after" in f for f in failures)


def test_unusable_spec_exits_2(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["check", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "does not exist" in res.output


def test_drift_of_a_missing_gen_folder_lists_every_file(tmp_path: Path) -> None:
    assert drift({"prod/a.yaml": "x"}, tmp_path / "gen") == [Drift("prod/a.yaml", "missing")]


# --------------------------------------------------------------------------- the PR comment upsert


def test_prepare_body_adds_marker_once_and_truncates() -> None:
    assert prepare_body("hello").startswith(MARKER + "\n")
    assert prepare_body(f"{MARKER}\nhello").count(MARKER) == 1
    assert len(prepare_body("x" * 100_000)) < 66_000


def test_upsert_pages_through_comments_then_updates_or_creates() -> None:
    calls = []
    pages = {1: [{"id": i, "body": "other"} for i in range(100)], 2: [{"id": 555, "body": f"old {MARKER}"}]}

    def request(method: str, path: str, payload: dict | None):
        calls.append((method, path))
        if method == "GET":
            return pages.get(int(path.rsplit("page=", 1)[1]), [])
        return {"id": 777}

    assert upsert(request, "o/r", "7", "body") == ("updated", 555)
    assert calls[-1] == ("PATCH", "/repos/o/r/issues/comments/555")
    pages[2] = []
    assert upsert(request, "o/r", "7", "body") == ("created", 777)
    assert calls[-1] == ("POST", "/repos/o/r/issues/7/comments")
    assert find_marked([{"id": 1, "body": None}]) is None
