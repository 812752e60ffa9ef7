"""The GitHub Action and the pre-commit hooks, run as a user's CI / git would run them.

The action's `run:` steps execute in bash against a temp git copy of the demo platform, with the GitHub parts
stubbed: GITHUB_OUTPUT files, RUNNER_TEMP, and a fake GitHub API on localhost for the PR comment. `uses:` steps
(setup-python, upload-sarif) and the pip install of the action's checkout are checked, not run (kueueplan is
already installed in this venv).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

BIN = Path(sys.executable).parent
pytestmark = pytest.mark.skipif(shutil.which("git") is None or shutil.which("bash") is None,
                                reason="needs git and bash")


# --------------------------------------------------------------------------- GitHub expressions


def _lookup(ctx: dict[str, Any], path: str) -> Any:
    value: Any = ctx
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return ""  # GitHub: a missing property is null, which compares equal to ''
        value = value[part]
    return value


_TOKEN = re.compile(r"\s*(?:(?P<str>'[^']*')|(?P<op>==|!=|&&|\|\||!|\(|\))|(?P<fn>always|success|failure)\(\)"
                    r"|(?P<path>[A-Za-z_][A-Za-z0-9_.-]*))")


def evaluate(expr: str, ctx: dict[str, Any], failed: bool) -> Any:
    """The subset of GitHub's expression language action.yml uses, translated to Python and evaluated."""
    out, pos, values = [], 0, {}
    expr = expr.strip()
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        assert m and m.end() > pos, f"unsupported expression: {expr!r}"
        pos = m.end()
        if m.group("str"):
            out.append(repr(m.group("str")[1:-1]))
        elif m.group("op"):
            out.append({"&&": " and ", "||": " or ", "!": " not "}.get(m.group("op"), m.group("op")))
        elif m.group("fn"):
            out.append(repr({"always": True, "success": not failed, "failure": failed}[m.group("fn")]))
        else:
            name = f"_v{len(values)}"
            values[name] = str(_lookup(ctx, m.group("path")))
            out.append(name)
    return eval("".join(out), {"__builtins__": {}}, values)  # noqa: S307 - test-only, tokens checked above


def substitute(text: str, ctx: dict[str, Any], failed: bool = False) -> str:
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: str(evaluate(m.group(1), ctx, failed)), text)


# --------------------------------------------------------------------------- a fake GitHub API


class FakeGitHub:
    def __init__(self) -> None:
        self.comments: list[dict[str, Any]] = [{"id": 1, "body": "LGTM", "user": {"login": "octocat"}}]
        self.calls: list[tuple[str, str]] = []
        self.tokens: set[str] = set()
        self.read_only = False  # a fork PR's token: writes are refused with 403

    def handler(self) -> type[BaseHTTPRequestHandler]:
        gh = self

        class Handler(BaseHTTPRequestHandler):
            def _reply(self, data: Any) -> None:
                body = json.dumps(data).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _payload(self) -> dict[str, Any]:
                return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

            def _refuse(self) -> None:
                body = b'{"message": "Resource not accessible by integration"}'
                self.send_response(403)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802
                gh.calls.append(("GET", self.path))
                gh.tokens.add(self.headers.get("Authorization", ""))
                if self.path == "/user":  # GITHUB_TOKEN is an installation token: no /user
                    return self._refuse()
                self._reply(gh.comments if "page=1" in self.path else [])

            def do_POST(self) -> None:  # noqa: N802
                gh.calls.append(("POST", self.path))
                if gh.read_only:
                    return self._refuse()
                comment = {"id": 100 + len(gh.comments), "body": self._payload()["body"],
                           "user": {"login": "github-actions[bot]"}}
                gh.comments.append(comment)
                self._reply(comment)

            def do_PATCH(self) -> None:  # noqa: N802
                gh.calls.append(("PATCH", self.path))
                cid = int(self.path.rsplit("/", 1)[1])
                comment = next(c for c in gh.comments if c["id"] == cid)
                comment["body"] = self._payload()["body"]
                self._reply(comment)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


@pytest.fixture
def github() -> Iterator[tuple[FakeGitHub, str]]:
    fake = FakeGitHub()
    server = HTTPServer(("127.0.0.1", 0), fake.handler())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield fake, f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


# --------------------------------------------------------------------------- the demo repository


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e",
           "HOME": str(repo), "PATH": os.environ["PATH"]}
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True, env=env).stdout


@pytest.fixture
def demo_repo(repo_dir: Path, tmp_path: Path) -> Path:
    """A git repository holding a copy of the demo platform (environments/ and its committed gen/)."""
    assert (repo_dir / "environments").is_dir() and (repo_dir / "gen").is_dir(), "the demo platform is missing"
    repo = tmp_path / "platform-repo"
    repo.mkdir()
    shutil.copytree(repo_dir / "environments", repo / "environments")
    shutil.copytree(repo_dir / "gen", repo / "gen")
    subprocess.run([str(BIN / "kueueplan"), "build", "environments", "-o", "gen", "-q"], cwd=repo, check=True)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "platform")
    return repo


def _cut_gpu_quotas(repo: Path) -> None:
    """A pull request that takes every team's GPUs away: GPU workloads can no longer be admitted anywhere."""
    path = repo / "environments" / "teams.yaml"
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    for doc in docs:
        for quota in (doc.get("spec") or {}).get("quotas") or []:
            resources = quota["resources"]
            if "nvidia.com/gpu" in resources:
                value = resources["nvidia.com/gpu"]
                resources["nvidia.com/gpu"] = {**value, "nominalQuota": 0} if isinstance(value, dict) else 0
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))


# --------------------------------------------------------------------------- running the action


def _pip_shim(tmp: Path) -> Path:
    """A `python` for the install step: runs the step's own command line, with `pip install ...` swapped for
    `pip --version` (kueueplan is installed in this venv already; there is no network). So the `pip` module is
    found exactly as the step would find it, from the step's working directory and flags, and every call is
    logged to pip-calls.log (with KUEUEPLAN_COMPILE, which setup.py reads, in front)."""
    shim = tmp / "pip-shim"
    shim.mkdir(exist_ok=True)
    python = shim / "python"
    python.write_text(f"""#!/bin/bash
echo "KUEUEPLAN_COMPILE=${{KUEUEPLAN_COMPILE-}} $PWD $*" >> {tmp}/pip-calls.log
args=()
for a in "$@"; do if [ "$a" = install ]; then break; fi; args+=("$a"); done
if [ "${{#args[@]}}" -lt "$#" ]; then exec {sys.executable} "${{args[@]}}" --version; fi
exec {sys.executable} "$@"
""")
    python.chmod(0o755)
    return shim


def run_action(repo_dir: Path, repo: Path, inputs: dict[str, str], api: str, tmp: Path) -> dict[str, Any]:
    tmp.mkdir(parents=True, exist_ok=True)
    action = yaml.safe_load((repo_dir / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    defaults = {k: v.get("default", "") for k, v in action["inputs"].items()}
    head = _git(repo, "rev-parse", "HEAD").strip()
    ctx: dict[str, Any] = {
        "github": {"action_path": str(repo_dir), "token": "ghs_test", "event_name": "pull_request",
                   "event": {"pull_request": {"number": 7, "base": {"sha": head}}}},
        "steps": {}, "runner": {"temp": str(tmp)},
    }
    ctx["inputs"] = {k: substitute(str(v), ctx) for k, v in {**defaults, **inputs}.items()}
    failed, ran, uses = False, [], []
    for step in action["runs"]["steps"]:
        condition = step.get("if", "success()")
        condition = condition[3:-2] if condition.startswith("${{") else condition
        if not evaluate(condition, ctx, failed):
            continue
        if "uses" in step:
            uses.append((step["uses"], {k: substitute(str(v), ctx, failed) for k, v in step.get("with", {}).items()}))
            continue
        env = {k: substitute(str(v), ctx, failed) for k, v in step.get("env", {}).items()}
        cwd = substitute(step.get("working-directory", str(repo)), ctx, failed)
        output = tmp / f"output-{len(ran)}"
        output.touch()
        script = tmp / f"step-{len(ran)}.sh"
        script.write_text(step["run"])
        path = f"{_pip_shim(tmp)}:{BIN}:{os.environ['PATH']}" if step.get("id") == "install" else \
            f"{BIN}:{os.environ['PATH']}"
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=cwd, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True,  # one stream in time order, as the runner's log
            env={"PATH": path, "HOME": str(tmp), "RUNNER_TEMP": str(tmp),
                 "GITHUB_OUTPUT": str(output), "GITHUB_REPOSITORY": "acme/platform",
                 "GITHUB_API_URL": api, "GITHUB_WORKSPACE": str(repo), **env})
        outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
        if step.get("id"):
            ctx["steps"][step["id"]] = {"outputs": outputs}
        ran.append((step["name"], done.returncode, done.stdout))
        failed = failed or done.returncode != 0
    return {"ran": ran, "uses": uses, "steps": ctx["steps"], "failed": failed}


def test_action_on_a_pr_that_cuts_gpu_quota(repo_dir: Path, demo_repo: Path, github, tmp_path: Path) -> None:
    fake, api = github
    _cut_gpu_quotas(demo_repo)  # the spec changes, gen/ is not rebuilt: drift too
    result = run_action(repo_dir, demo_repo, {}, api, tmp_path / "run1")
    steps = result["steps"]
    assert steps["check"]["outputs"]["exit-code"] == "1"  # drift
    assert steps["diff"]["outputs"]["exit-code"] == "1"  # a declared workload becomes inadmissible
    name, code, log = result["ran"][-1]
    assert name == "Result" and code == 1 and result["failed"]
    # SARIF went to the upload step, and is SARIF.
    [(uses, args)] = [u for u in result["uses"] if "upload-sarif" in u[0]]
    assert json.loads(Path(args["sarif_file"]).read_text())["version"] == "2.1.0"
    assert any("setup-python" in u for u, _ in result["uses"])
    # One comment, with the marker, the diff and the check summary.
    [comment] = [c for c in fake.comments if "<!-- kueueplan-diff -->" in c["body"]]
    assert "inadmissible" in comment["body"] and "## kueueplan check" in comment["body"]
    assert "nvidia.com/gpu" in comment["body"] and fake.tokens == {"Bearer ghs_test"}
    # The same PR again: the comment is updated, not duplicated.
    (demo_repo / "gen").joinpath("README.txt").write_text("touch")  # any change; the run repeats
    run_action(repo_dir, demo_repo, {}, api, tmp_path / "run2")
    assert [c["id"] for c in fake.comments if "<!-- kueueplan-diff -->" in c["body"]] == [comment["id"]]
    assert [m for m, _ in fake.calls].count("POST") == 1 and ("PATCH", f"/repos/acme/platform/issues/comments/"
                                                                      f"{comment['id']}") in fake.calls


def test_action_on_an_unchanged_platform_has_no_drift_and_no_blocking_diff(repo_dir: Path, demo_repo: Path,
                                                                            github, tmp_path: Path) -> None:
    _fake, api = github
    result = run_action(repo_dir, demo_repo, {"comment": "false", "sarif": "false"}, api, tmp_path / "run")
    assert result["steps"]["diff"]["outputs"]["exit-code"] == "0"
    check_md = Path(result["steps"]["check"]["outputs"]["report"]).read_text()
    assert "| build | ✅ up to date |" in check_md
    assert "comment" not in result["steps"] and not result["uses"][1:]  # only setup-python ran


def test_action_passes_the_crds_input_to_check_and_validate(repo_dir: Path, demo_repo: Path, github,
                                                             shared_dir: Path, tmp_path: Path) -> None:
    _fake, api = github
    shutil.copytree(shared_dir / "upstream" / "kueue" / "crds", demo_repo / "crds" / "kueue")
    shutil.copytree(shared_dir / "upstream" / "kuberay" / "crds", demo_repo / "crds" / "kuberay")
    inputs = {"comment": "false", "crds": "crds/kueue crds/kuberay"}
    result = run_action(repo_dir, demo_repo, inputs, api, tmp_path / "ok")
    assert result["steps"]["check"]["outputs"]["exit-code"] == "0" and not result["failed"]
    sarif = json.loads(Path(result["steps"]["sarif"]["outputs"]["file"]).read_text())
    # Only the CRDs know that dev's v1beta1 objects are deprecated: proof that validate read them.
    assert {r["ruleId"] for r in sarif["runs"][0]["results"]} == {"KP207"}
    result = run_action(repo_dir, demo_repo, {**inputs, "crds": "crds/missing"}, api, tmp_path / "missing")
    assert result["steps"]["check"]["outputs"]["exit-code"] == "2" and result["failed"]
    assert any("--crds path does not exist" in log for _, _, log in result["ran"])


# --------------------------------------------------------------------------- pre-commit hooks


def _hooks(repo_dir: Path) -> dict[str, dict[str, Any]]:
    return {h["id"]: h for h in yaml.safe_load((repo_dir / ".pre-commit-hooks.yaml").read_text())}


def _run_hook(hook: dict[str, Any], repo: Path) -> subprocess.CompletedProcess[str]:
    """As pre-commit runs a `language: python` hook with pass_filenames false: entry + args, from the repo root."""
    argv = hook["entry"].split() + list(hook.get("args", []))
    return subprocess.run(argv, cwd=repo, capture_output=True, text=True,
                          env={**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"})


def test_build_hook_changes_nothing_when_in_sync_and_rewrites_gen_after_a_spec_edit(repo_dir: Path,
                                                                                    demo_repo: Path) -> None:
    hook = _hooks(repo_dir)["kueueplan-build"]
    assert hook["pass_filenames"] is False and hook["language"] == "python"
    assert re.search(hook["files"], "environments/teams.yaml") and re.search(hook["files"], "gen/prod/rayjobs.yaml")
    done = _run_hook(hook, demo_repo)
    assert done.returncode == 0, done.stderr
    assert _git(demo_repo, "status", "--porcelain") == ""  # pre-commit passes: no file modified
    _cut_gpu_quotas(demo_repo)
    done = _run_hook(hook, demo_repo)
    assert done.returncode == 0, done.stderr
    changed = _git(demo_repo, "status", "--porcelain").split("\n")
    assert any("gen/" in line and "clusterqueues.yaml" in line for line in changed)  # pre-commit fails: stage gen/


def test_validate_hook_flags_a_broken_spec(repo_dir: Path, demo_repo: Path) -> None:
    hook = _hooks(repo_dir)["kueueplan-validate"]
    pytest.importorskip("kueueplan.validate.specinput", reason="kueueplan validate cannot read spec folders yet")
    assert re.search(hook["files"], "environments/teams.yaml")
    teams = demo_repo / "environments" / "teams.yaml"
    teams.write_text(teams.read_text().replace("flavor: gpu-a100", "flavor: gpu-a10O", 1))
    done = _run_hook(hook, demo_repo)
    assert done.returncode in (1, 2)
    assert "gpu-a10O" in done.stdout + done.stderr and "Traceback" not in done.stderr


def test_check_hook_runs_the_ci_check(repo_dir: Path, demo_repo: Path) -> None:
    hook = _hooks(repo_dir)["kueueplan-check"]
    assert "pre-push" in hook["stages"]
    done = _run_hook(hook, demo_repo)
    assert "build     ok: gen matches a fresh build" in done.stdout, done.stdout + done.stderr


def test_ci_workflow_runs_the_tests_then_checks_the_demo(repo_dir: Path) -> None:
    ci = yaml.safe_load((repo_dir / ".github" / "workflows" / "ci.yml").read_text())
    runs = [s.get("run", "") for s in ci["jobs"]["test"]["steps"]]
    tests = runs.index("./.ci/run")
    check = next(i for i, r in enumerate(runs) if "kueueplan check environments" in r)
    assert tests < check
    assert (repo_dir / ".ci" / "run").is_file()
    job = ci["jobs"]["test"]
    assert "vars." not in yaml.safe_dump(job)  # no private repository variable is needed
    assert set(job["strategy"]["matrix"]["python"]) == {"3.11", "3.12", "3.13"}
    assert set(job["strategy"]["matrix"]["os"]) == {"ubuntu-latest", "macos-latest"}
    [uses] = [s["uses"] for s in ci["jobs"]["pull-request"]["steps"] if s.get("uses") == "./"]
    assert uses == "./"  # the PR job dogfoods this repository's action


# --------------------------------------------------------------------------- a hostile pull request


def _plant_hostile_modules(repo: Path, marker: Path) -> None:
    """What a PR can add to its checkout: modules that shadow kueueplan's and pip's when run from there."""
    code = f"import pathlib; pathlib.Path({str(marker)!r}).write_text(__name__); raise SystemExit(0)\n"
    for rel in ("kueueplan/__init__.py", "kueueplan/workflow/__init__.py", "kueueplan/workflow/prcomment.py",
                "kueueplan/__main__.py", "pip/__init__.py", "pip/__main__.py", "sitecustomize.py"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(code)
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "innocent refactoring")


def test_action_runs_no_code_from_the_pull_requests_checkout(repo_dir: Path, demo_repo: Path, github,
                                                             tmp_path: Path) -> None:
    fake, api = github
    marker = tmp_path / "PWNED"
    _plant_hostile_modules(demo_repo, marker)
    result = run_action(repo_dir, demo_repo, {}, api, tmp_path / "run")
    assert not marker.exists(), f"the PR's {marker.read_text()} ran with the token"
    # The install step ran pip from the action's own folder, isolated, with the hash-pinned lock.
    calls = (tmp_path / "run" / "pip-calls.log").read_text().splitlines()
    # Without `compile: true` setup.py builds no Cython twin (15 s per run, for large simulations only).
    assert calls and all(c.startswith(f"KUEUEPLAN_COMPILE=0 {repo_dir} -I -m pip install ") for c in calls), calls
    assert "--require-hashes -r requirements/demo.txt" in calls[0]
    # The real comment helper ran (the fake GitHub got the comment), not the PR's.
    assert any("<!-- kueueplan-diff -->" in c["body"] for c in fake.comments)
    assert result["steps"]["check"]["outputs"]["exit-code"] == "0"


def test_action_yml_isolates_every_python_and_tool_step(repo_dir: Path) -> None:
    steps = yaml.safe_load((repo_dir / "action.yml").read_text())["runs"]["steps"]
    for step in steps:
        run = step.get("run", "")
        for line in run.splitlines():
            for m in re.finditer(r"(?:^|[;&|(]\s*|\$\()\s*(python3?)\b(.*)", line):
                assert m.group(2).startswith(" -I "), f"{step['name']}: python without -I: {line.strip()}"
        if re.search(r"python3? -I -m ", run):  # a tool step: pip or kueueplan's helper module
            assert step.get("working-directory") == "${{ github.action_path }}", step["name"]
        if re.search(r"^\s*kueueplan (check|diff|validate) ", run, re.M):
            # The installed console script, its log output fenced off from workflow commands.
            assert 'echo "::stop-commands::$stop"' in run and 'echo "::$stop::"' in run, step["name"]
            assert "secrets.token_hex" in run
    [result] = [s for s in steps if s["name"] == "Result"]
    assert result["if"] == "always()"
    [install] = [s for s in steps if s.get("id") == "install"]
    assert "--require-hashes -r requirements/demo.txt" in install["run"]


def test_comment_step_on_a_fork_pr_warns_without_a_traceback(repo_dir: Path, demo_repo: Path, github,
                                                             tmp_path: Path) -> None:
    fake, api = github
    fake.read_only = True
    result = run_action(repo_dir, demo_repo, {"sarif": "false"}, api, tmp_path / "run")
    [(_, code, log)] = [r for r in result["ran"] if r[0] == "Post or update the PR comment"]
    assert code == 0 and "Traceback" not in log and log.startswith("::warning::") and "403" in log
    assert result["ran"][-1][0] == "Result"


def test_a_marked_comment_by_somebody_else_is_left_alone(repo_dir: Path, demo_repo: Path, github,
                                                        tmp_path: Path) -> None:
    fake, api = github
    fake.comments.append({"id": 50, "body": "<!-- kueueplan-diff --> ha", "user": {"login": "mallory"}})
    run_action(repo_dir, demo_repo, {"sarif": "false"}, api, tmp_path / "run")
    assert fake.comments[1]["body"] == "<!-- kueueplan-diff --> ha"
    [ours] = [c for c in fake.comments if c["id"] != 50 and "kueueplan-diff" in c["body"]]
    assert ours["user"]["login"] == "github-actions[bot]"


@pytest.mark.parametrize("hook_id", ["kueueplan-build", "kueueplan-validate", "kueueplan-check"])
def test_hooks_watch_every_folder_a_platform_keeps_yaml_in(repo_dir: Path, hook_id: str) -> None:
    """Not only environments/ and gen/: a spec in platform/ (set through args), the policies, the CRDs."""
    hook = _hooks(repo_dir)[hook_id]
    for path in ("environments/teams.yaml", "gen/prod/clusterqueues.yaml", "policies/platform.yaml",
                 "platform/teams.yml", "crds/kueue/clusterqueues.yaml"):
        assert re.search(hook["files"], path), (hook_id, path)
    assert not re.search(hook["files"], "README.md") and not re.search(hook["files"], "src/app.py")


def test_validate_hook_applies_the_policies_folder(repo_dir: Path, demo_repo: Path) -> None:
    hook = _hooks(repo_dir)["kueueplan-validate"]
    shutil.copytree(repo_dir / "policies", demo_repo / "policies")
    assert _run_hook(hook, demo_repo).returncode == 0
    policy = demo_repo / "policies" / "platform.yaml"
    assert re.search(hook["files"], "policies/platform.yaml")  # an edit here runs the hook
    policy.write_text(policy.read_text().replace("sharedQueues: [shared]", "sharedQueues: [shared, shared]"))
    policy.write_text(policy.read_text() + "  teamLabel: again\n")  # a broken policy edit
    done = _run_hook(hook, demo_repo)
    assert done.returncode == 2 and "policies/platform.yaml" in done.stderr, done.stdout + done.stderr


def test_workflow_commands_printed_by_a_hostile_pr_stay_inside_the_fence(repo_dir: Path, demo_repo: Path, github,
                                                                         tmp_path: Path) -> None:
    _fake, api = github
    # A file name with a newline: kueueplan's error names it, so the step's log holds a `::error::` line.
    (demo_repo / "environments" / "x\n::add-mask::ghs_test\n::error::pwned.yaml").write_text("kind: [\n")
    _git(demo_repo, "add", ".")
    _git(demo_repo, "commit", "-q", "-m", "hostile name")
    result = run_action(repo_dir, demo_repo, {"comment": "false", "sarif": "false"}, api, tmp_path / "run")
    [(_, _, log)] = [r for r in result["ran"] if r[0] == "kueueplan check"]
    assert "::error::pwned" in log
    fenced, token = False, None
    for line in log.splitlines():
        if line.startswith("::stop-commands::"):
            fenced, token = True, line.split("::")[2]
        elif token and line == f"::{token}::":
            fenced = False
        elif line.lstrip().startswith("::"):
            assert fenced, f"a workflow command outside the fence: {line!r}"
    assert token and len(token) == 32
