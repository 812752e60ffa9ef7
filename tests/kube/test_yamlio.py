"""YAML loading: data, lines on demand, and refusal of hostile input with file and line."""

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from kueueplan.kube.yamlio import YamlError, load_file, load_text

MULTI = """\
apiVersion: v1
kind: Namespace
metadata:
  name: a
---
# comment only
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: cq
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources:
      - name: cpu
        nominalQuota: 9
"""


def test_documents_and_lines() -> None:
    docs = load_text(MULTI, "m.yaml")
    assert [d.data["kind"] for d in docs] == ["Namespace", "ClusterQueue"]
    cq = docs[1]
    assert cq.line == 8
    assert cq.line_of(("spec", "resourceGroups", 0, "flavors", 0, "resources", 0, "nominalQuota")) == 19
    assert cq.column_of(("spec", "resourceGroups", 0, "flavors", 0, "name")) == 7
    # A missing path falls back to its nearest ancestor.
    assert cq.line_of(("spec", "cohortName")) == 12


@pytest.mark.parametrize("text,line,words", [
    ("a: 1\na: 2\n", 2, "duplicate key"),
    ("a: &x {k: 1}\nb:\n  <<: *x\n  k: 3\n  k: 4\n", 5, "duplicate key"),  # written twice beside a merge
    ("a:\n\t- b\n", 2, "invalid YAML"),
    ("a: [1, 2\n", None, "invalid YAML"),
    ("a: !!python/object/apply:os.system ['touch /tmp/kueueplan-pwned']\n", 1, "unsupported YAML tag"),
    ("a: !foo bar\n", 1, "unsupported YAML tag"),
    ("[" * 400 + "]" * 400, 1, "nesting deeper"),
])
def test_hostile_yaml_is_refused_with_location(text: str, line: int | None, words: str) -> None:
    with pytest.raises(YamlError) as info:
        load_text(text, "bad.yaml")
    assert words in info.value.message
    assert info.value.file == "bad.yaml"
    if line is not None:
        assert info.value.line == line
    assert not Path("/tmp/kueueplan-pwned").exists()


def test_merge_keys_may_be_overridden_as_yaml_allows() -> None:
    """`<<: *anchor` then the same key written in the mapping is an override, not a duplicate (the
    scenario files' count/template idiom); among several merged anchors the first wins, as the YAML merge
    type says (https://yaml.org/type/merge.html). This is kueueplan's own rule: PyYAML 6.0.4 let the last win."""
    text = "base: &job {name: j, cpu: 1}\nother: &o {cpu: 2, gpu: 1}\none:\n  <<: *job\n  name: k\n" \
           "two:\n  <<: [*job, *o]\n"
    data = load_text(text, "m.yaml")[0].data
    assert data["one"] == {"name": "k", "cpu": 1} and data["two"] == {"name": "j", "cpu": 1, "gpu": 1}


def test_merge_keys_nest_and_refuse_non_mappings() -> None:
    text = "a: &a {x: 1, y: 1}\nb: &b {<<: *a, y: 2, z: 2}\nc: {<<: [*b, {x: 9, w: 3}], z: 5}\n"
    assert load_text(text, "m.yaml")[0].data["c"] == {"x": 1, "y": 2, "z": 5, "w": 3}
    with pytest.raises(YamlError, match="merges only mappings") as info:
        load_text("a: &a [1, 2]\nb:\n  <<: *a\n", "m.yaml")
    assert info.value.line == 1


def test_billion_laughs_is_refused_quickly() -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        prev = f"*a{i-1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 9)}]")
    with pytest.raises(YamlError, match="alias bomb"):
        load_text("\n".join(lines) + "\n", "lol.yaml")


def test_binary_and_non_utf8_files(tmp_path: Path) -> None:
    (tmp_path / "bin.yaml").write_bytes(b"\x00\x01\x02")
    (tmp_path / "latin1.yaml").write_bytes("a: 1\nb: caf\xe9\n".encode("latin-1"))
    with pytest.raises(YamlError, match="binary"):
        load_file(tmp_path / "bin.yaml")
    with pytest.raises(YamlError, match="UTF-8") as info:
        load_file(tmp_path / "latin1.yaml")
    assert info.value.line == 2


def test_missing_file_is_a_clean_error(tmp_path: Path) -> None:
    with pytest.raises(YamlError, match="cannot read"):
        load_file(tmp_path / "nope.yaml")


@settings(max_examples=200)
@given(st.text(max_size=200))
def test_loader_never_crashes(text: str) -> None:
    try:
        load_text(text, "fuzz.yaml")
    except YamlError:
        pass
