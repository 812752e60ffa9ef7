"""Inputs that used to end in a traceback (exit 1) end with exit 2 and a message, or with valid output."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.dom.minidom
from pathlib import Path

import pytest
from click.testing import CliRunner

from kueueplan.cli import main

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[2]


def _git(repo: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e", "HOME": str(repo), "PATH": os.environ["PATH"]}
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_base_commit_holding_an_absolute_symlink_is_exit_2(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(REPO / "environments", repo / "environments")
    (repo / "environments" / "extra.yaml").symlink_to("/etc/hostname")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    (repo / "environments" / "extra.yaml").unlink()
    _git(repo, "commit", "-q", "-am", "head")
    done = subprocess.run([str(BIN / "kueueplan"), "diff", "--base", "HEAD~1", "environments"], cwd=repo,
                          capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "environments/extra.yaml -> /etc/hostname" in done.stderr and "link" in done.stderr


@pytest.mark.skipif(sys.platform == "darwin", reason="APFS refuses file names that are not UTF-8")
def test_junit_and_every_format_survive_file_names_that_are_not_utf8(tmp_path: Path) -> None:
    name = os.fsdecode(b"caf\xe9.yaml")
    (tmp_path / name).write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  name: b\n")
    for fmt in ("junit", "text", "json", "sarif", "github"):
        done = subprocess.run([str(BIN / "kueueplan"), "validate", ".", "-o", fmt], cwd=tmp_path,
                              capture_output=True, env={**os.environ, "LC_ALL": "C"})
        assert done.returncode == 1 and b"Traceback" not in done.stderr, done.stderr
        text = done.stdout.decode("utf-8")  # valid UTF-8, whatever the file names
        assert "caf\ufffd.yaml" in text or "caf\\ufffd.yaml" in text, text  # JSON writes the \\u escape
        if fmt == "junit":
            xml.dom.minidom.parseString(done.stdout)


MALFORMED_CRDS = {
    "version-without-name": "versions:\n  - served: true\n",
    "schema-not-a-mapping": "versions:\n  - name: v1\n    schema: 5\n",
    "versions-not-a-list": "versions: 5\n",
    "openapi-not-a-mapping": "versions:\n  - name: v1\n    schema: {openAPIV3Schema: [1]}\n",
}


@pytest.mark.parametrize("case", sorted(MALFORMED_CRDS))
def test_a_malformed_crd_is_exit_2_naming_the_file(tmp_path: Path, case: str) -> None:
    crd = tmp_path / "crd.yaml"
    crd.write_text("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: xs.x.io}\n"
                   "spec:\n  group: x.io\n  names: {kind: X, plural: xs}\n  "
                   + MALFORMED_CRDS[case].replace("\n", "\n  ").rstrip() + "\n")
    obj = tmp_path / "x.yaml"
    obj.write_text("apiVersion: x.io/v1\nkind: X\nmetadata: {name: a, namespace: d}\n")
    result = CliRunner().invoke(main, ["validate", str(obj), "--crds", str(crd)])
    assert result.exit_code == 2 and "crd.yaml" in result.output and "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
