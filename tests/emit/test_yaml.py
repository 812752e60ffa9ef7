"""The YAML emitter: whatever it writes loads back (PyYAML) as exactly the data given, and strings that other
YAML loaders would read as numbers, booleans or null are quoted."""

from __future__ import annotations

import re

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kueueplan.emit.yaml import dump, dump_manifests, scalar_text

scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**63, max_value=2**63),
                    st.floats(allow_nan=False), st.text(max_size=30),
                    st.sampled_from(["8Gi", "500m", "1e3", "0o17", "y", "no", "~", "2.46.0", "a: b", "x #y",
                                     "- item", "line1\nline2\n", "trailing \n", "  indented\nx", "ünïcode",
                                     "tab\there", "", "null", "0x1F", "@at", "*star", "&amp", "!tag", "%pct"]))
data = st.recursive(scalars, lambda children: st.one_of(
    st.lists(children, max_size=4), st.dictionaries(st.text(max_size=12), children, max_size=4)), max_leaves=25)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.text(max_size=12), data, max_size=5))
def test_round_trip_through_pyyaml(obj: dict) -> None:
    assert yaml.safe_load(dump(obj)) == (obj or {})


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=8), data, min_size=1, max_size=4), max_size=4))
def test_multi_document_round_trip(objects: list) -> None:
    loaded = [d for d in yaml.safe_load_all(dump_manifests(objects))]
    assert [d for d in loaded if d is not None] == objects


def test_yaml_line_breaks_beyond_newline_are_escaped() -> None:
    # YAML 1.1 reads NEL, U+2028 and U+2029 as line breaks: unescaped in a key or value they broke the document
    # (found by hypothesis: a key '\u2028').
    for ch in ("\x85", "\u2028", "\u2029"):
        objects = [{"a": {ch: ch + "x", "k": f"a{ch}b"}}]
        assert list(yaml.safe_load_all(dump_manifests(objects))) == objects, repr(ch)


def test_other_loaders_never_see_a_number_boolean_or_null() -> None:
    for text in ("1e3", "0o17", "y", "N", "on", "Off", "~", "NULL", ".5", "+1", "1_000", "123", "0.5", "True"):
        assert scalar_text(text).startswith('"'), text
    for text in ("8Gi", "500m", "cpu", "nvidia.com/gpu", "team-a", "0.0.0.0x", "rayproject/ray:2.9.0"):
        rendered = scalar_text(text)
        assert yaml.safe_load(rendered) == text
    assert scalar_text("8Gi") == "8Gi" and scalar_text("cpu") == "cpu"


def test_multiline_text_is_a_literal_block() -> None:
    text = dump({"runtimeEnvYAML": "pip:\n  - numpy\n"})
    assert text == "runtimeEnvYAML: |\n  pip:\n    - numpy\n"
    assert re.search(r"^k: \|-$", dump({"k": "a\nb"}), re.M)
