"""Every command meets broken and hostile input with exit 1 or 2 and a clear message: no traceback, no hang.

The corpus below is the list the README's "Hardening" section counts; keep the two in step.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from kueueplan.cli import main

ALIAS_BOMB = "\n".join(
    ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"a{i}: &a{i} [{', '.join([f'*a{i-1}'] * 9)}]" for i in range(1, 10)]
) + "\n"

SPEC_HEADER = "apiVersion: kueueplan.io/v1alpha1\n"

# name -> file content (bytes or text). Each is dropped into a folder as `input.yaml`.
CORPUS: dict[str, bytes | str] = {
    "malformed": "apiVersion: v1\nkind: [Namespace\n",
    "tabs": "apiVersion: v1\nkind: Namespace\nmetadata:\n\tname: x\n",
    "duplicate-keys": "apiVersion: v1\nkind: Namespace\nkind: Pod\nmetadata: {name: x}\n",
    "alias-bomb": ALIAS_BOMB,
    "deep-nesting": "a: " + "[" * 5000 + "]" * 5000 + "\n",
    "very-deep-nesting": "a: " + "[" * 200_000 + "]" * 200_000 + "\n",
    "huge-number": "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q}\nspec:\n"
                   "  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
                   "    - name: f\n      resources:\n      - name: cpu\n        nominalQuota: " + "9" * 4000 + "\n",
    "huge-quantity": "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q}\nspec:\n"
                     "  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
                     "    - name: f\n      resources:\n      - name: cpu\n        nominalQuota: 1e999999999\n",
    "binary": b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00",
    "non-utf8": "apiVersion: v1\nkind: Namespace\nmetadata: {name: caf\xe9}\n".encode("latin-1"),
    "top-level-list": "- a\n- b\n",
    "top-level-string": "just a string\n",
    "top-level-number": "42\n",
    "missing-kind": "apiVersion: v1\nmetadata: {name: x}\n",
    "spec-missing-kind": SPEC_HEADER + "metadata: {name: x}\n",
    "spec-unknown-kind": SPEC_HEADER + "kind: Teem\nmetadata: {name: x}\n",
    "python-tag": "apiVersion: v1\nkind: Namespace\nmetadata: !!python/object/apply:os.system ['touch /tmp/kueueplan-pwned']\n",
    "python-name-tag": "apiVersion: v1\nkind: !!python/name:os.system Namespace\n",
    "empty": "",
    "null-document": "~\n",
}

SCENARIO_CORPUS: dict[str, str] = {
    "huge-count": """\
apiVersion: kueueplan.io/v1alpha1
kind: Scenario
metadata: {name: huge}
spec:
  manifests: []
  workloads:
  - at: 0s
    count: 1000000000000
    manifest: {apiVersion: batch/v1, kind: Job, metadata: {name: j, namespace: default}, spec: {template: {spec: {containers: [{name: c, image: x}]}}}}
""",
    "absurd-duration": """\
apiVersion: kueueplan.io/v1alpha1
kind: Scenario
metadata: {name: absurd}
spec:
  manifests: []
  until: 99999999999999999999h
  workloads:
  - at: 1e308
    runFor: -5m
    manifest: {apiVersion: batch/v1, kind: Job, metadata: {name: j, namespace: default}, spec: {template: {spec: {containers: [{name: c, image: x}]}}}}
""",
    "absolute-manifest-file": """\
apiVersion: kueueplan.io/v1alpha1
kind: Scenario
metadata: {name: escape}
spec:
  manifestFiles: [/etc/passwd]
  workloads: []
""",
    "dotdot-manifest-file": """\
apiVersion: kueueplan.io/v1alpha1
kind: Scenario
metadata: {name: escape}
spec:
  manifestFiles: [../../../../../../../../etc/passwd]
  workloads: []
""",
    "symlink-manifest-file": """\
apiVersion: kueueplan.io/v1alpha1
kind: Scenario
metadata: {name: escape}
spec:
  manifestFiles: [link.yaml]
  workloads: []
""",
    "wrong-types": """\
apiVersion: kueueplan.io/v1alpha1
kind: Scenario
metadata: {name: types}
spec:
  manifests: {not: a list}
  workloads: 7
""",
}


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail instead of hanging: a hostile input must never stall a CI runner."""
    def on_alarm(signum: int, frame: object) -> None:
        raise TimeoutError(f"command still running after {seconds}s")
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run_cli(args: list[str], cwd: Path) -> tuple[int, str]:
    runner = CliRunner()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with deadline(60):
            result = runner.invoke(main, args, catch_exceptions=True)
    finally:
        os.chdir(old)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback
        tb = "".join(traceback.format_exception(result.exception))
        pytest.fail(f"kueueplan {' '.join(args)} raised instead of a clean error:\n{tb}")
    return result.exit_code, result.output


def _write(folder: Path, content: bytes | str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "input.yaml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


COMMANDS: dict[str, Callable[[Path, Path], list[str]]] = {
    "validate": lambda f, tmp: ["validate", str(f)],
    "validate-dir": lambda f, tmp: ["validate", str(f.parent)],
    "build": lambda f, tmp: ["build", str(f.parent), "-o", str(tmp / "out")],
    "simulate": lambda f, tmp: ["simulate", str(f), "-o", "json"],
    "graph": lambda f, tmp: ["graph", str(f.parent)],
    "import": lambda f, tmp: ["import", str(f.parent), "-o", str(tmp / "imported")],
    "diff": lambda f, tmp: ["diff", str(f.parent), str(f.parent)],
    "check": lambda f, tmp: ["check", str(f.parent)],
}


@pytest.mark.parametrize("name", sorted(CORPUS))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_hostile_file(command: str, name: str, tmp_path: Path) -> None:
    path = _write(tmp_path / "in", CORPUS[name])
    code, output = run_cli(COMMANDS[command](path, tmp_path), tmp_path)
    assert "Traceback" not in output
    if name in ("empty", "null-document"):
        assert code in (0, 1, 2)  # nothing to do is not an error everywhere; it must still be clean
    else:
        assert code in (1, 2), f"{command} accepted {name}: exit {code}\n{output}"
    assert not Path("/tmp/kueueplan-pwned").exists(), "a YAML tag was executed"
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.tmp")), "half-written output"


@pytest.mark.parametrize("name", sorted(SCENARIO_CORPUS))
def test_hostile_scenario(name: str, tmp_path: Path) -> None:
    folder = tmp_path / "repo" / "scenarios"
    folder.mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir()  # the repository root that references may not leave
    (folder / "link.yaml").symlink_to("/etc/passwd")
    path = folder / "scenario.yaml"
    path.write_text(SCENARIO_CORPUS[name])
    code, output = run_cli(["simulate", str(path), "-o", "json"], tmp_path)
    assert code == 2, f"{name}: exit {code}\n{output}"
    assert "Traceback" not in output
    assert "root:x:0" not in output, "the contents of another file were echoed"
    assert "scenario.yaml" in output, "the error must name the file"
