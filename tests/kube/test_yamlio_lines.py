"""Per-document line lookup agrees with an independent whole-file composition on every key of real files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.nodes import MappingNode, SequenceNode

from kueueplan.kube.yamlio import YamlError, load_file, load_text


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, path + (i,))
    return out


def _oracle(text: str) -> list[dict[tuple[Any, ...], int]]:
    """Line of every key path per document, composing the whole file with ruamel's pure-Python parser."""
    maps = []
    for root in YAML(typ="safe", pure=True).compose_all(text):
        lines: dict[tuple[Any, ...], int] = {}
        stack = [(root, ())]
        while stack:
            node, path = stack.pop()
            if isinstance(node, MappingNode):
                for k, v in node.value:
                    lines.setdefault(path + (k.value,), k.start_mark.line + 1)
                    stack.append((v, path + (k.value,)))
            elif isinstance(node, SequenceNode):
                for i, item in enumerate(node.value):
                    lines.setdefault(path + (i,), item.start_mark.line + 1)
                    stack.append((item, path + (i,)))
        maps.append(lines)
    return maps


def _check(docs: list[Any], text: str) -> int:
    oracle = _oracle(text)
    checked = 0
    for doc in docs:
        for path in _paths(doc.data)[1:]:
            assert doc.line_of(path) == oracle[doc.index][path], (doc.file, path)
            checked += 1
    return checked


def test_lines_match_on_upstream_files(shared_dir: Path) -> None:
    checked = 0
    for f in sorted((shared_dir / "upstream").rglob("*.yaml")):
        if "crds" in f.parts:
            continue
        try:
            docs = load_file(f)
        except YamlError:
            continue  # invalid upstream fragments are not this test's subject
        checked += _check(docs, f.read_text(encoding="utf-8-sig"))
    assert checked > 1000


def test_document_start_lines_skip_comment_preambles(shared_dir: Path) -> None:
    path = shared_dir / "upstream/kueue/examples/admin/shared-quota-setup.yaml"
    text = path.read_text()
    for doc in load_file(path):
        first = text.splitlines()[doc.line - 1]
        assert first.strip() and not first.lstrip().startswith(("#", "---")), (doc.index, doc.line, first)


def test_comments_empty_documents_and_end_markers() -> None:
    text = ("# head\n---\n# c\na: 1\nb:\n  - x\n  - y: 2\n...\n---\n---\nc:\n  d: |\n    --- not a separator\n"
            "  e: 3\n")
    docs = load_text(text, "t")
    assert [d.line for d in docs] == [4, 11]
    assert _check(docs, text) == 8
