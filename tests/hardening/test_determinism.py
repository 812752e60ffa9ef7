"""Determinism (issue 7): the same input gives byte-identical output
- across runs and PYTHONHASHSEED values (0, 1 and random, in subprocesses), and
- across the order of the input files: the demo spec split into one file per document with the file order
  reversed, and a scenario's manifests moved between `manifests` and separate files listed in `manifestFiles`,
for `build`, `simulate -o json`, `validate -o json`, `graph` and `diff`.

Order that Kueue gives a meaning to is never shuffled: the flavors inside a ClusterQueue (a team's quota list,
inside one document) and the workloads of a scenario (their creation order). Which file a spec document lives in,
and the order of the files, carry no meaning.
"""

from __future__ import annotations

import json
import re
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kueueplan.cli import main

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("KUEUEPLAN_SHARED", REPO.parent / "shared"))
SPEC = REPO / "environments"
EXAMPLES = ["cohort-borrow", "rayjob-priority", "gang-provisioning"]
CONFORMANCE = ["pre-reclaim-from-borrower.yaml", "hpre-complex-hierarchy.yaml"]
SEEDS = ["0", "1", "random"]

pytestmark = pytest.mark.skipif(not SPEC.is_dir(), reason="the demo spec environments/ is not in this checkout")


def _crd_args() -> list[str]:
    """The upstream CRDs when ../shared is here; without it, validate runs on what the package ships."""
    up = SHARED / "upstream"
    if not up.is_dir():
        return []
    return [a for d in ("kueue", "kuberay", "autoscaler") for a in ("--crds", str(up / d / "crds"))]


def _docs(path: Path) -> list[Any]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]


def _dump(docs: list[Any]) -> str:
    return yaml.safe_dump_all(docs, sort_keys=False)


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _split_reversed(src: Path, dst: Path) -> None:
    """Every document of `src` in its own file, named so that sorted file order is the reverse of `src`'s
    document order; some go to a subfolder, and the names mix z_ / a_ prefixes."""
    docs = [(p.relative_to(src), d) for p in sorted(src.rglob("*.yaml")) for d in _docs(p)]
    n = len(docs)
    for i, (rel, doc) in enumerate(docs):
        prefix = "a" if i >= n // 2 else "z"
        folder = dst / ("more" if i % 3 == 0 else "") / rel.parent
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{prefix}_{n - i:03d}_{doc['kind'].lower()}.yaml").write_text(_dump([doc]), encoding="utf-8")


def _with_changed_quota(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst)
    teams = dst / "teams.yaml"
    docs = _docs(teams)
    for doc in docs:
        if doc["kind"] == "Team" and doc["metadata"]["name"] == "team-b":
            doc["spec"]["quotas"][0]["resources"]["cpu"]["nominalQuota"] = 4
    teams.write_text(_dump(docs), encoding="utf-8")


def _scenario_variants(scenario: dict[str, Any], manifests: list[dict[str, Any]], folder: Path, stem: str) -> list[str]:
    """The same scenario three ways; workloads and events untouched, only where the cluster objects are written
    (and in which order) changes. Returns the file names, relative to `folder`."""
    spec = {k: v for k, v in scenario["spec"].items() if k not in ("manifests", "manifestFiles")}
    names = []

    def write(name: str, inline: list[dict[str, Any]], files: list[str]) -> None:
        body = dict(spec)
        if inline:
            body["manifests"] = inline
        if files:
            body["manifestFiles"] = files
        doc = {**scenario, "spec": body}
        (folder / name).write_text(_dump([doc]), encoding="utf-8")
        names.append(name)

    # 1. everything inline, in the original order
    write(f"{stem}-inline.yaml", manifests, [])
    # 2. reversed: the second half inline, the first half one file each, listed in reverse
    half = len(manifests) // 2
    parts = folder / f"{stem}-parts"
    parts.mkdir()
    for i, m in enumerate(manifests[:half]):
        (parts / f"{i:03d}.yaml").write_text(_dump([m]), encoding="utf-8")
    write(f"{stem}-split.yaml", list(reversed(manifests[half:])),
          [f"{stem}-parts/{i:03d}.yaml" for i in reversed(range(half))])
    # 3. all in one folder of files whose sorted order is the reverse, referenced as a folder
    whole = folder / f"{stem}-folder"
    whole.mkdir()
    for i, m in enumerate(manifests):
        (whole / f"{len(manifests) - i:03d}.yaml").write_text(_dump([m]), encoding="utf-8")
    write(f"{stem}-dir.yaml", [], [f"{stem}-folder"])
    return names


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("determinism")
    (root / ".git").mkdir()  # the repository that scenario file references may not leave
    shutil.copytree(SPEC, root / "environments")
    shutil.copytree(REPO / "policies", root / "policies")
    _split_reversed(SPEC, root / "shuffled" / "environments")
    _with_changed_quota(SPEC, root / "head" / "environments")
    _split_reversed(root / "head" / "environments", root / "head-shuffled" / "environments")
    for name in EXAMPLES:
        shutil.copytree(REPO / "examples" / name, root / "examples" / name)
    scen = root / "scenarios"
    scen.mkdir()
    for case in CONFORMANCE:
        path = SHARED / "conformance" / "simulate" / case
        if path.is_file():
            scenario = _docs(path)[0]["scenario"]
            (scen / case).write_text(_dump([scenario]), encoding="utf-8")
            _scenario_variants(scenario, scenario["spec"]["manifests"], scen, Path(case).stem)
    for name in EXAMPLES:
        example = root / "examples" / name
        scenario = _docs(example / "scenario.yaml")[0]
        manifests = [d for f in scenario["spec"]["manifestFiles"] for p in sorted((example / f).rglob("*.yaml"))
                     for d in _docs(p) if d.get("kind") != "Kustomization"]
        _scenario_variants(scenario, manifests, example, "scenario")
    return root


# --------------------------------------------------------------------------- across PYTHONHASHSEED values


def _seed_commands(root: Path) -> dict[str, list[str]]:
    crds = _crd_args()
    commands = {
        "build": ["build", "environments", "-o", "{out}", "--argocd", "--flux"],
        "build-example": ["build", "examples/cohort-borrow/environments", "-o", "{out}"],
        "simulate-spec-dev": ["simulate", "environments", "--env", "dev", "-o", "json"],
        "simulate-spec-prod": ["simulate", "environments", "--env", "prod", "-o", "json"],
        "simulate-text": ["simulate", "environments", "--env", "prod"],
        "validate-spec": ["validate", "environments", *crds, "--policies", "policies", "-o", "json"],
        "validate-manifests": ["validate", "examples/cohort-borrow/gen", *crds, "--no-policies", "-o", "json",
                               "--fail-on", "info"],
        "graph-spec": ["graph", "environments", "--env", "prod"],
        "graph-dot": ["graph", "environments", "--env", "dev", "-f", "dot"],
        "graph-manifests": ["graph", "examples/cohort-borrow/gen/demo"],
        "diff-json": ["diff", "environments", "head/environments", "-o", "json"],
        "diff-markdown": ["diff", "environments", "head/environments", "-o", "markdown"],
    }
    for name in EXAMPLES:
        commands[f"simulate-{name}"] = ["simulate", f"examples/{name}/scenario.yaml", "-o", "json"]
    for case in CONFORMANCE:
        if (root / "scenarios" / case).is_file():
            commands[f"simulate-{case}"] = ["simulate", f"scenarios/{case}", "-o", "json"]
    return commands


# Runs every command in one interpreter (one subprocess per seed keeps this quick) and prints the outputs.
DRIVER = r"""
import json, sys, tempfile, traceback
from pathlib import Path
from click.testing import CliRunner
from kueueplan.cli import main

out = {}
for name, args in json.loads(sys.argv[1]).items():
    with tempfile.TemporaryDirectory() as tmp:
        target = str(Path(tmp) / "out")
        args = [target if a == "{out}" else a for a in args]
        result = CliRunner().invoke(main, args, catch_exceptions=True)
        crash = None
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            crash = "".join(traceback.format_exception(result.exception))
        files = {}
        if Path(target).is_dir():
            files = {p.relative_to(target).as_posix(): p.read_text(encoding="utf-8")
                     for p in sorted(Path(target).rglob("*")) if p.is_file()}
        out[name] = {"exit": result.exit_code, "output": result.output.replace(target, "OUT"), "files": files,
                     "crash": crash}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def seeded_runs(workspace: Path) -> dict[str, dict[str, Any]]:
    commands = _seed_commands(workspace)
    runs = {}
    for seed in SEEDS:
        env = {**os.environ, "PYTHONHASHSEED": seed, "NO_COLOR": "1"}
        proc = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(commands)], cwd=workspace, env=env,
                              capture_output=True, text=True, timeout=600, check=False)
        assert proc.returncode == 0, proc.stderr
        runs[seed] = json.loads(proc.stdout)
    return runs


def _command_names() -> list[str]:
    names = list(_seed_commands(Path("/nonexistent")))
    return names + [f"simulate-{case}" for case in CONFORMANCE]


@pytest.mark.parametrize("command", _command_names())
def test_same_output_for_every_hash_seed(seeded_runs: dict[str, dict[str, Any]], command: str) -> None:
    first = seeded_runs[SEEDS[0]]
    if command not in first:
        pytest.skip(f"{command}: its input (../shared) is not available")
    result = first[command]
    assert result["crash"] is None, result["crash"]
    assert result["exit"] in (0, 1), f"{command} exit {result['exit']}:\n{result['output']}"
    assert result["output"].strip() or result["files"], f"{command} produced nothing"
    for seed in SEEDS[1:]:
        other = seeded_runs[seed][command]
        assert other["exit"] == result["exit"], f"{command}: exit {other['exit']} with PYTHONHASHSEED={seed}"
        assert other["files"] == result["files"], f"{command}: written files differ with PYTHONHASHSEED={seed}"
        assert other["output"] == result["output"], f"{command}: output differs with PYTHONHASHSEED={seed}"


# --------------------------------------------------------------------------- across input file order


def run(args: list[str], cwd: Path) -> tuple[int, str]:
    old = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, args, catch_exceptions=False)
    finally:
        os.chdir(old)
    assert result.exit_code in (0, 1), f"kueueplan {' '.join(args)}: exit {result.exit_code}\n{result.output}"
    return result.exit_code, result.output


def test_shuffled_spec_really_is_shuffled(workspace: Path) -> None:
    ordered = [(d["kind"], d["metadata"]["name"]) for p in sorted((workspace / "environments").rglob("*.yaml"))
               for d in _docs(p)]
    shuffled = [(d["kind"], d["metadata"]["name"])
                for p in sorted((workspace / "shuffled" / "environments").rglob("*.yaml")) for d in _docs(p)]
    assert sorted(ordered) == sorted(shuffled) and ordered != shuffled
    assert len(list((workspace / "shuffled" / "environments").rglob("*.yaml"))) == len(ordered)


def test_build_does_not_depend_on_file_order(workspace: Path) -> None:
    run(["build", "environments", "-o", "out-ordered", "--argocd", "--flux"], workspace)
    run(["build", "shuffled/environments", "-o", "out-shuffled", "--argocd", "--flux"], workspace)
    ordered, shuffled = _tree(workspace / "out-ordered"), _tree(workspace / "out-shuffled")
    assert sorted(ordered) == sorted(shuffled)
    for name in ordered:
        # Argo CD / Flux objects name the folder they sync: the only place the output path may show.
        if name.endswith(("argocd-application.yaml", "flux-kustomization.yaml")):
            continue
        assert ordered[name] == shuffled[name], f"{name} depends on the order of the spec files"


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_simulate_spec_does_not_depend_on_file_order(workspace: Path, env: str) -> None:
    _, ordered = run(["simulate", "environments", "--env", env, "-o", "json"], workspace)
    _, shuffled = run(["simulate", "shuffled/environments", "--env", env, "-o", "json"], workspace)
    assert json.loads(ordered)["workloads"], "the demo declares load"
    assert ordered == shuffled


@pytest.mark.parametrize("args", [["--env", "prod"], ["--env", "dev", "-f", "dot"]])
def test_graph_does_not_depend_on_file_order(workspace: Path, args: list[str]) -> None:
    _, ordered = run(["graph", "environments", *args], workspace)
    _, shuffled = run(["graph", "shuffled/environments", *args], workspace)
    assert ordered == shuffled


def test_validate_does_not_depend_on_file_order(workspace: Path) -> None:
    """Findings name the file they are in, so the files' names show; everything else is the same, and the
    findings of one layout come in the same order every run."""
    # A stricter copy of the platform policy: findings in the spec's own files, with or without ../shared's CRDs
    # (which add deprecation notes; the shipped schema pack of each environment's release has none).
    strict = workspace / "strict-policies"
    strict.mkdir(exist_ok=True)
    policy = (workspace / "policies" / "platform.yaml").read_text(encoding="utf-8")
    tight = policy.replace('maxBorrowingLimit: {cpu: "16", memory: 64Gi}', 'maxBorrowingLimit: {cpu: "1", memory: 1Gi}')
    assert tight != policy
    (strict / "platform.yaml").write_text(tight, encoding="utf-8")
    args = [*_crd_args(), "--policies", str(strict), "-o", "json", "--fail-on", "info"]
    code_a, ordered = run(["validate", "environments", *args], workspace)
    code_b, shuffled = run(["validate", "shuffled/environments", *args], workspace)
    assert code_a == code_b

    def strip(text: str) -> list[tuple[Any, ...]]:
        found = json.loads(text)["findings"]
        assert all(f.get("file") for f in found), "every finding names its file"
        return sorted((f["rule"], f["severity"], f.get("object"), f["message"]) for f in found)

    assert strip(ordered) and strip(ordered) == strip(shuffled)
    assert run(["validate", "shuffled/environments", *args], workspace)[1] == shuffled


def test_diff_does_not_depend_on_file_order(workspace: Path) -> None:
    # moving documents between files is no change at all ...
    _, same = run(["diff", "environments", "shuffled/environments", "-o", "json"], workspace)
    for env in json.loads(same)["environments"]:
        assert env["quotas"] == env["objects"] == env["workloads"] == env["brokenExpectations"] == [], env
    # ... and a real change reads the same whatever the layout of either side
    _, ordered = run(["diff", "environments", "head/environments", "-o", "json"], workspace)
    _, shuffled = run(["diff", "shuffled/environments", "head-shuffled/environments", "-o", "json"], workspace)
    a, b = json.loads(ordered), json.loads(shuffled)
    # a broken expectation ends with the file:line that declares it (the only thing the layout may change)
    for env in a["environments"] + b["environments"]:
        assert all(re.search(r" \(\S+\.yaml:\d+\)$", t) for t in env["brokenExpectations"]), env
        env["brokenExpectations"] = [re.sub(r" \(\S+\.yaml:\d+\)$", "", t) for t in env["brokenExpectations"]]
    strip = lambda texts: [re.sub(r" \(\S+\.yaml:\d+\)$", "", t) for t in texts]  # noqa: E731
    assert a["environments"] == b["environments"] and strip(a["blocking"]) == strip(b["blocking"])
    assert any(env["quotas"] for env in a["environments"]), "the head side changes team-b's cpu quota"


def _scenario_cases() -> list[str]:
    return [f"examples/{name}/scenario" for name in EXAMPLES] + \
        [f"scenarios/{Path(case).stem}" for case in CONFORMANCE]


@pytest.mark.parametrize("case", _scenario_cases())
def test_simulate_does_not_depend_on_where_manifests_are_written(workspace: Path, case: str) -> None:
    if not (workspace / f"{case}-inline.yaml").is_file():
        pytest.skip(f"{case}: its input (../shared) is not available")
    outputs = {}
    for variant in ("inline", "split", "dir"):
        _, outputs[variant] = run(["simulate", f"{case}-{variant}.yaml", "-o", "json"], workspace)
    assert json.loads(outputs["inline"])["workloads"]
    assert outputs["split"] == outputs["inline"], "manifests in reverse order, half in manifestFiles"
    assert outputs["dir"] == outputs["inline"], "manifests in a folder of files in reverse order"
    original = workspace / f"{case}.yaml"
    if original.is_file():
        # The original scenario (manifestFiles pointing at the build, or inline) gives the same JSON.
        assert run(["simulate", str(original.relative_to(workspace)), "-o", "json"], workspace)[1] == outputs["inline"]


def test_repeated_runs_in_one_process_are_identical(workspace: Path) -> None:
    """Nothing cached between runs (module-level state, memoised objects) changes a second run's answer."""
    for args in (["simulate", "environments", "--env", "prod", "-o", "json"], ["graph", "environments", "--env", "dev"],
                 ["simulate", "examples/cohort-borrow/scenario.yaml", "-o", "json"]):
        first = run(args, workspace)
        assert run(args, workspace) == first, args
