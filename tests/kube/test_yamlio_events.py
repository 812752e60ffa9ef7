"""The event-stream builder (load_text without anchors) gives exactly what PyYAML's full safe loader gives, leaves
everything unusual to that loader, and knows the lines of a large document's shallow key paths from its one parse."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kueueplan.kube import yamlio
from kueueplan.kube.yamlio import YamlError, load_text
from tests.kube.test_yamlio_lines import _check, _oracle, _paths


def _full(text: str) -> list[Any]:
    """The full loader's documents (the path taken before the event builder, and still its fallback)."""
    return [d for d in yaml.load_all(text, Loader=yamlio._Loader) if d is not None]


SCALARS = """\
bools: [yes, No, ON, off, true, False, y, n]
ints: [0x1F, 0o17, 017, 1_000, -12, +3, 1:20, 0b101]
floats: [1.5, .inf, -.Inf, .nan, 1e3, 6.8523015e+5, 1_0.5, 190:20:30.15]
nulls: [~, null, Null, ""]
empty:
stamps: [2001-12-14t21:59:43.10-05:00, 2002-12-14]
quoted: ["1", '0x1F', "yes", 'null', "~"]
strings: [cpu, 100m, 1Gi, "a: b", 'it''s', "\\u00e9", 0.5Gi, 1e, <<x]
nonspecific: ! 12
block: |
  line one
    indented
folded: >-
  a
  b
flow: {a: [1, {b: c}], d: []}
nested:
  - - 1
    - [2, 3]
  - {}
---
- only
- a list
---
plain scalar document
---
---
42
"""


def test_scalars_and_shapes_match_the_full_loader() -> None:
    docs = load_text(SCALARS, "s.yaml")
    assert [d.data for d in docs] == _full(SCALARS)
    assert [d.index for d in docs] == [0, 1, 2, 4]  # the empty document keeps its index
    data = docs[0].data
    assert data["bools"] == [True, False, True, False, True, False, "y", "n"]
    assert data["ints"] == [31, "0o17", 15, 1000, -12, 3, 80, 5]  # YAML 1.1, as PyYAML reads it
    assert data["floats"][4:] == ["1e3", 685230.15, 10.5, 685230.15]
    assert data["stamps"] == ["2001-12-14t21:59:43.10-05:00", "2002-12-14"]  # kept as text
    assert data["nonspecific"] == 12 and data["empty"] is None  # libyaml resolves `! 12` as a plain scalar


@pytest.mark.parametrize("text", [
    "a: !!str 3\n",                         # an explicit tag
    "a: !!binary aGk=\n",
    "base: &b {x: 1}\nc:\n  <<: *b\n  y: 2\n",  # anchors take the composing path anyway
    "c:\n  <<: {x: 1}\n  y: 2\n",           # a merge key without anchors
    "a: !!set {x, y}\n",
    "k: =\n",                               # the value tag, which the safe loader refuses
])
def test_what_the_builder_leaves_to_the_full_loader_still_loads_the_same(text: str) -> None:
    try:
        expected: Any = _full(text)
    except yaml.YAMLError as err:
        expected = type(err)
    try:
        got: Any = [d.data for d in load_text(text, "t.yaml")]
    except YamlError:
        got = "YamlError"
    if isinstance(expected, type):
        assert got == "YamlError"
    else:
        assert got == expected


@pytest.mark.parametrize("text, line, words", [
    ("a: 1\nb: 2\na: 3\n", 3, "duplicate key 'a'"),
    ("x:\n  1: a\n  true: b\n", 3, "duplicate key True"),  # 1 == True, as the API server's decoder would not tell
    ("? [a, b]\n: c\n", 1, "a mapping key must be a scalar"),
    ("a: *nope\n", 1, "alias"),
    ("a: [1, 2\n", 2, "not closed"),
])
def test_errors_keep_their_lines(text: str, line: int, words: str) -> None:
    with pytest.raises(YamlError) as err:
        load_text(text, "bad.yaml")
    assert err.value.file == "bad.yaml" and err.value.line == line and words in err.value.message


yaml_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6) | st.integers(), inner,
                                                                 max_size=4),
    max_leaves=20)


@settings(max_examples=300)
@given(yaml_values, st.booleans())
def test_any_dumped_data_loads_as_the_full_loader_loads_it(value: Any, flow: bool) -> None:
    text = yaml.safe_dump(value, default_flow_style=flow)
    assert [d.data for d in load_text(text, "h.yaml")] == _full(text)


def _scenario_text(entries: int) -> str:
    workloads = [{"at": f"{i}ms", "count": 2, "manifest": {"kind": "Job", "metadata": {"name": f"j{i}"},
                                                            "spec": {"parallelism": 1}}} for i in range(entries)]
    return "# a comment\n" + yaml.safe_dump({"kind": "Scenario", "spec": {"workloads": workloads,
                                                                          "until": "1h"}}, sort_keys=False)


def test_a_large_document_knows_its_shallow_lines_from_the_one_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every key path's line agrees with a whole-file composition; paths up to SHALLOW_DEPTH long never
    stream the document again (that made a 3,000-entry scenario take minutes: one pass per entry)."""
    text = _scenario_text(60)
    monkeypatch.setattr(yamlio, "POSITIONS_FULL_BYTES", 1000)  # this document counts as large
    located: list[tuple[Any, ...]] = []
    real_locate = yamlio._locate

    def locate(text: str, index: int, target: tuple[Any, ...]) -> Any:
        located.append(target)
        return real_locate(text, index, target)

    monkeypatch.setattr(yamlio, "_locate", locate)
    docs = load_text(text, "big.yaml")
    assert docs[0]._lines is not None and yamlio._LOCATE_EACH in docs[0]._lines
    assert _check(docs, text) == len(_paths(docs[0].data)) - 1
    assert located and all(len(p) > yamlio.SHALLOW_DEPTH for p in located)
    assert docs[0].line_of(("spec", "workloads", 999)) == _oracle(text)[0][("spec", "workloads")]
    for path in [("spec", "workloads", 3), ("spec", "workloads", 3, "manifest", "metadata", "name"), ("spec", "until")]:
        assert (docs[0].line_of(path), docs[0].column_of(path)) == real_locate(text, 0, path)


def test_a_small_document_still_composes_its_lines_lazily() -> None:
    docs = load_text(_scenario_text(3), "small.yaml")
    assert docs[0]._lines is None
    assert _check(docs, _scenario_text(3)) > 20
