"""`kueueplan check`: drift of the committed build, simulated expectations, one summary, exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.workflow.check import Drift, drift
from kueueplan.workflow.prcomment import MARKER, ApiError, find_marked, prepare_body, upsert


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
    bot = {"login": "github-actions[bot]"}
    pages = {1: [{"id": i, "body": "other", "user": bot} for i in range(100)],
             2: [{"id": 555, "body": f"old {MARKER}", "user": bot}]}

    def request(method: str, path: str, payload: dict | None):
        calls.append((method, path))
        if path == "/user":
            raise ApiError(403, "Resource not accessible by integration")
        if method == "GET":
            return pages.get(int(path.rsplit("page=", 1)[1]), [])
        return {"id": 777}

    assert upsert(request, "o/r", "7", "body") == ("updated", 555)
    assert calls[-1] == ("PATCH", "/repos/o/r/issues/comments/555")
    pages[2] = []
    assert upsert(request, "o/r", "7", "body") == ("created", 777)
    assert calls[-1] == ("POST", "/repos/o/r/issues/7/comments")
    assert find_marked([{"id": 1, "body": None}], {"github-actions[bot]"}) is None


def test_upsert_never_edits_a_marked_comment_somebody_else_wrote() -> None:
    """Anybody can paste the marker into their own comment; only the token's own comment is ours to edit."""
    calls = []
    comments = [{"id": 1, "body": f"{MARKER} pwned", "user": {"login": "mallory"}},
                {"id": 2, "body": f"{MARKER} ours", "user": {"login": "ci-user"}}]

    def request(method: str, path: str, payload: dict | None):
        calls.append((method, path))
        if path == "/user":
            return {"login": "ci-user"}  # a personal token: GET /user names its user
        return comments if method == "GET" and "page=1" in path else [] if method == "GET" else {"id": 9}

    assert upsert(request, "o/r", "7", "body") == ("updated", 2)
    comments.pop()
    assert upsert(request, "o/r", "7", "body") == ("created", 9)
    assert ("PATCH", "/repos/o/r/issues/comments/1") not in calls


def test_comment_on_a_fork_pr_with_a_read_only_token_is_a_warning_not_a_traceback(tmp_path: Path, monkeypatch,
                                                                                   capsys) -> None:
    import kueueplan.workflow.prcomment as prcomment

    def refused(api: str, token: str):
        def request(method: str, path: str, payload: dict | None):
            if method == "GET":
                return []
            raise ApiError(403, f"{method} {path}: HTTP 403 Resource not accessible by integration")
        return request

    body = tmp_path / "body.md"
    body.write_text("report")
    monkeypatch.setattr(prcomment, "github_request", refused)
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    monkeypatch.setenv("GITHUB_REPOSITORY", "o/r")
    monkeypatch.setenv("KUEUEPLAN_PR", "7")
    assert prcomment.main([str(body)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("::warning::") and "forks" in out and "403" in out


def test_a_monte_carlo_environment_says_its_expectations_were_judged_on_every_sampled_run(platform: Path) -> None:
    """prod declares `simulation.runs: 50`: its line said "15 workload(s), 0 of 8 expectation(s) failed", as if
    one run had been judged; dev (no runs) is one run and says nothing more."""
    _code, data = _check(platform, "--no-drift")
    assert {s["environment"]: s["runs"] for s in data["simulations"]} == {"dev": 1, "prod": 50}
    lines = CliRunner().invoke(main, ["check", str(platform / "environments"), "--no-drift"]).output.splitlines()
    prod = next(line for line in lines if line.startswith("  simulate  prod:"))
    dev = next(line for line in lines if line.startswith("  simulate  dev:"))
    assert "workload(s) in run 0," in prod and prod.endswith("expectation(s) failed over 50 sampled runs"), prod
    assert "run" not in dev, dev
    md = CliRunner().invoke(main, ["check", str(platform / "environments"), "--no-drift", "-o", "markdown"]).output
    assert "failed over 50 sampled runs |" in md
