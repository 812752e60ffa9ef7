"""`build` on a hostile or unlucky file system: symlinks out of the repository, concurrent and killed builds,
a read-only disk. The generated folder is always whole (old or new), and nothing outside it is touched."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.emit.writer import LOCK_NAME, write_tree
from kueueplan.emit.yaml import MARKER

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "environments"


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(DEMO, repo / "environments")
    return repo


def _build(repo: Path, out: str = "gen") -> tuple[int, str]:
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        result = CliRunner().invoke(main, ["build", "environments", "-o", out, "-q"])
    finally:
        os.chdir(cwd)
    return result.exit_code, result.output


# --------------------------------------------------------------------------- symlinks


def test_a_symlinked_gen_folder_is_refused(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.yaml").write_text(MARKER + "\nnot yours\n")
    (repo / "gen").symlink_to(outside)
    code, output = _build(repo)
    assert code == 2 and "gen" in output and "symlink" in output, output
    assert [p.name for p in outside.iterdir()] == ["keep.yaml"]
    code, output = _build(repo, "gen/sub")  # below a symlink is no better
    assert code == 2 and "symlink" in output and [p.name for p in outside.iterdir()] == ["keep.yaml"]


@pytest.mark.parametrize("prepared", ["fresh", "built"])
def test_a_symlinked_environment_folder_is_refused(tmp_path: Path, prepared: str) -> None:
    repo = _repo(tmp_path)
    if prepared == "built":
        assert _build(repo)[0] == 0
        shutil.rmtree(repo / "gen" / "dev")
    else:
        (repo / "gen").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    stale = outside / "old-kind.yaml"  # a generated-looking file a prune would delete
    stale.write_text(MARKER + "\nvictim\n")
    (outside / "empty").mkdir()  # an empty folder a prune would rmdir
    (repo / "gen" / "dev").symlink_to(outside)
    code, output = _build(repo)
    assert code == 2 and "gen/dev" in output and "symlink" in output, output
    assert sorted(p.name for p in outside.iterdir()) == ["empty", "old-kind.yaml"]
    assert stale.read_text() == MARKER + "\nvictim\n"


def test_planted_symlinks_under_kueueplans_own_names_are_removed_not_followed(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    out.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.yaml").write_text("precious\n")
    # A committed `.kueueplan-old-prod` would be renamed into place as prod; a stage would be written through.
    (out / ".kueueplan-old-prod").symlink_to(outside)
    (out / ".kueueplan-stage-dev").symlink_to(outside)
    (out / "prod").mkdir()
    (out / "prod" / ".kueueplan-tmp-a.yaml").symlink_to(outside / "new.yaml")
    write_tree(out, {"prod/a.yaml": MARKER + "\nnew\n", "dev/a.yaml": MARKER + "\nnew\n"})
    assert sorted(p.name for p in outside.iterdir()) == ["a.yaml"] and (outside / "a.yaml").read_text() == "precious\n"
    assert not (out / "prod").is_symlink() and (out / "prod" / "a.yaml").read_text().endswith("new\n")


def test_a_symlinked_lock_file_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    out.mkdir()
    (out / LOCK_NAME).symlink_to(tmp_path / "created-outside")
    from kueueplan.errors import KueueplanError

    with pytest.raises(KueueplanError, match="symlink"):
        write_tree(out, {"prod/a.yaml": MARKER + "\n"})
    assert not (tmp_path / "created-outside").exists()


# --------------------------------------------------------------------------- disks that refuse


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_output_folder_is_exit_2_naming_the_path(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "gen").mkdir()
    (repo / "gen").chmod(0o555)
    try:
        code, output = _build(repo)
    finally:
        (repo / "gen").chmod(0o755)
    assert code == 2 and "gen" in output and "Traceback" not in output, output


def test_a_full_disk_is_exit_2_naming_the_path(tmp_path: Path, monkeypatch) -> None:
    from kueueplan.emit import writer

    def full(path: Path, text: str) -> None:
        raise OSError(28, "No space left on device", str(path))

    repo = _repo(tmp_path)
    monkeypatch.setattr(writer, "_write_file", full)
    code, output = _build(repo)
    assert code == 2 and "No space left on device" in output and "gen/" in output, output
    assert not (repo / "gen" / "dev").exists()


# --------------------------------------------------------------------------- concurrent and killed builds

WORKER = """
import json, sys, time
from kueueplan.emit import writer
files = json.load(open(sys.argv[2]))
if len(sys.argv) > 3:  # slow writes, so that a kill lands mid-write
    real = writer._write_file
    writer._write_file = lambda path, text: (time.sleep(0.005), real(path, text))
print("start", flush=True)
writer.write_tree(sys.argv[1], files, prune_dirs=sorted({p.split("/")[0] for p in files}))
"""


def _versions(tmp_path: Path) -> list[tuple[Path, dict[str, dict[str, str]]]]:
    """Two builds of two environments, with different file sets (so a mix of the two shows)."""
    out = []
    for version, count in (("one", 60), ("two", 45)):
        files = {f"{env}/{kind}-{i}.yaml": f"{MARKER}\n# {version}\n" + "x: 1\n" * 200
                 for env in ("dev", "prod") for i in range(count) for kind in ("cq",)}
        path = tmp_path / f"{version}.json"
        path.write_text(json.dumps(files))
        by_env: dict[str, dict[str, str]] = {}
        for rel, text in files.items():
            env, name = rel.split("/")
            by_env.setdefault(env, {})[name] = text
        out.append((path, by_env))
    return out


def _assert_whole(out: Path, versions: list[tuple[Path, dict[str, dict[str, str]]]]) -> None:
    for env in ("dev", "prod"):
        folder = out / env
        assert folder.is_dir(), f"{env} is missing"  # written in the first round: never gone since
        found = {p.name: p.read_text() for p in folder.iterdir()}
        assert any(found == v[1][env] for v in versions), (
            f"{env} is neither version: {len(found)} files, e.g. {sorted(found)[:3]}")


def _spawn(out: Path, files: Path, slow: bool = False) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", WORKER, str(out), str(files), *(["slow"] if slow else [])],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_concurrent_and_killed_builds_leave_each_environment_whole(tmp_path: Path) -> None:
    versions = _versions(tmp_path)
    out = tmp_path / "gen"
    rng = random.Random(11)
    failures = []
    for _round in range(6):  # six concurrent builds, alternating versions
        procs = [_spawn(out, versions[i % 2][0]) for i in range(6)]
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            failures += [err.decode()] if proc.returncode else []
        _assert_whole(out, versions)
        assert not (out / LOCK_NAME).exists()
    assert not failures, failures[0]  # each waited for the lock, none was refused
    interrupted = 0
    for _round in range(8):  # builds killed at random moments while writing
        procs = [_spawn(out, versions[rng.randrange(2)][0], slow=True) for _ in range(3)]
        procs[0].stdout.readline()  # the first one is about to write (~0.6 s of writing)
        time.sleep(rng.uniform(0.05, 0.5))
        for proc in procs:
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
        interrupted += any(p.name.startswith(".kueueplan-stage-") for p in out.iterdir())
        _assert_whole(out, versions)
    assert interrupted, "no kill landed mid-write: the test proves nothing"
    # The next build clears what the killed ones left and completes.
    assert _spawn(out, versions[0][0]).wait(timeout=120) == 0
    _assert_whole(out, versions[:1])
    assert sorted(p.name for p in out.iterdir()) == ["dev", "prod"]


# --------------------------------------------------------------------------- import


HOSTILE_MANIFESTS = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: {cq}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources:
      - name: cpu
        nominalQuota: 4
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: q
  namespace: team-a
spec:
  clusterQueue: {cq}
---
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: {job}
  namespace: team-a
  labels: {{kueue.x-k8s.io/queue-name: q}}
spec:
  entrypoint: python x.py
"""


@pytest.mark.parametrize(("cq", "job"), [("../../../x", "ok"), ("team", "../../../../x")])
def test_import_never_writes_outside_its_output_folder(tmp_path: Path, cq: str, job: str) -> None:
    manifests = tmp_path / "in" / "m.yaml"
    manifests.parent.mkdir()
    manifests.write_text(HOSTILE_MANIFESTS.format(cq=cq, job=job))
    out = tmp_path / "a" / "b" / "spec"
    result = CliRunner().invoke(main, ["import", str(manifests.parent), "-o", str(out)])
    assert result.exit_code == 2 and "refusing" in result.output and "Traceback" not in result.output, result.output
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.yaml")) == ["in/m.yaml"]


def test_import_force_overwrites_only_what_import_wrote(tmp_path: Path) -> None:
    manifests = tmp_path / "in" / "m.yaml"
    manifests.parent.mkdir()
    manifests.write_text(HOSTILE_MANIFESTS.format(cq="team", job="train"))
    out = tmp_path / "spec"
    runner = CliRunner()
    # exit 1, not 0: the input's ClusterQueue uses a ResourceFlavor `default` it does not contain (reported)
    assert runner.invoke(main, ["import", str(manifests.parent), "-o", str(out)]).exit_code == 1
    assert runner.invoke(main, ["import", str(manifests.parent), "-o", str(out), "--force"]).exit_code == 1
    # A hand-written file where import would write: --force stops, naming it, and writes nothing.
    team = out / "teams" / "team.yaml"
    team.write_text("# mine\nkind: Team\n")
    before = {p: p.read_text() for p in out.rglob("*.yaml")}
    result = runner.invoke(main, ["import", str(manifests.parent), "-o", str(out), "--force"])
    assert result.exit_code == 2 and "teams/team.yaml" in result.output and "not written by" in result.output
    assert {p: p.read_text() for p in out.rglob("*.yaml")} == before
    # Nor through a symlink to a file elsewhere.
    elsewhere = tmp_path / "elsewhere.yaml"
    elsewhere.write_text("precious\n")
    team.unlink()
    team.symlink_to(elsewhere)
    result = runner.invoke(main, ["import", str(manifests.parent), "-o", str(out), "--force"])
    assert result.exit_code == 2 and "symlink" in result.output and elsewhere.read_text() == "precious\n"


# --------------------------------------------------------------------------- reading inputs


@pytest.mark.parametrize("command", [["build", "environments", "-o", "gen"], ["validate", "environments"],
                                     ["check", "environments", "--no-drift"]])
def test_inputs_never_follow_a_symlink_out_of_the_repository(tmp_path: Path, command: list[str]) -> None:
    repo = _repo(tmp_path)
    (repo / ".git").mkdir()  # the repository's root
    secret = tmp_path / "runner-secret.yaml"
    secret.write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: leaked-secret-value}\n")
    (repo / "environments" / "leak.yaml").symlink_to(secret)
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        result = CliRunner().invoke(main, command)
    finally:
        os.chdir(cwd)
    assert result.exit_code == 2 and "leak.yaml" in result.output and "outside" in result.output, result.output
    assert "leaked-secret-value" not in result.output


def test_a_symlink_inside_the_repository_is_read(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / ".git").mkdir()
    shared = repo / "shared"
    shared.mkdir()
    (repo / "environments" / "priorities.yaml").rename(shared / "priorities.yaml")
    (repo / "environments" / "priorities.yaml").symlink_to(shared / "priorities.yaml")
    assert _build(repo)[0] == 0


def test_policies_and_crds_folders_never_follow_a_symlink_out(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "policies").mkdir()
    outside = tmp_path / "p.yaml"
    outside.write_text("apiVersion: policy.kueueplan.io/v1alpha1\nkind: PlatformPolicy\nmetadata: {name: p}\n"
                       "spec: {}\n")
    (repo / "policies" / "p.yaml").symlink_to(outside)
    (repo / "crds").mkdir()
    (repo / "crds" / "c.yaml").symlink_to(outside)
    (repo / "ns.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n")
    for args in (["--policies", "policies"], ["--crds", "crds"]):
        cwd = os.getcwd()
        os.chdir(repo)
        try:
            result = CliRunner().invoke(main, ["validate", "ns.yaml", *args])
        finally:
            os.chdir(cwd)
        assert result.exit_code == 2 and "outside" in result.output, (args, result.output)
