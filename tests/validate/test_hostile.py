"""Broken and hostile input: clean findings or exit 2, never a traceback, never executing anything."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kueueplan.cli import main

CASES = {
    "duplicate-keys": b"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  name: b\n",
    "tabs": b"apiVersion: v1\nkind: Namespace\nmetadata:\n\tname: a\n",
    "python-tag": b"!!python/object/apply:os.system ['touch /tmp/kueueplan-pwned']\n",
    "alias-bomb": b"a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                  b"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                  b"e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                  b"g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n",
    "deep-nesting": b"a: " + b"[" * 5000 + b"]" * 5000 + b"\n",
    "binary": b"\x00\x01\x02\xff" * 64,
    "not-utf8": b"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: caf\xe9\n",
    "scalar-document": b"just a string\n",
    "list-document": b"- 1\n- 2\n",
    "missing-kind": b"apiVersion: v1\nmetadata:\n  name: a\n",
    "huge-quantity": b"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n"
                     b"  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
                     b"    - name: f\n      resources:\n      - name: cpu\n        nominalQuota: 1e999999999\n",
    "wrong-types": b"apiVersion: 5\nkind: [1]\nmetadata: 7\n",
    "weird-metadata": b"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: [a]\n  labels: [1]\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_file_is_a_finding_not_a_crash(name: str, tmp_path: Path, crd_paths: list[str]) -> None:
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(CASES[name])
    result = CliRunner().invoke(main, ["validate", "--no-policies", "--crds", crd_paths[0], str(path),
                                       "-o", "json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    # Over a resource limit the file is unusable input (exit 2); otherwise it is a finding (exit 1).
    assert result.exit_code == (2 if name in ("alias-bomb", "deep-nesting") else 1), result.output
    assert "Traceback" not in result.output
    assert not Path("/tmp/kueueplan-pwned").exists()
